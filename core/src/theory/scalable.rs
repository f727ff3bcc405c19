//! Scalable Bloom filters (Almeida, Baquero, Preguiça and Hutchison 2007,
//! "Scalable Bloom Filters"): a sequence of Bloom filters ("layers") of
//! growing capacity and tightening FPP targets. Layer i holds n0·s^i keys at
//! FPP target P0·r^i with P0 = P·(1 − r), so the compound FPP stays below
//! P0 / (1 − r) = P however many layers are added.
//!
//! A key is a false positive when any layer answers yes. Each layer holds
//! different keys, so the layers answer a never-inserted key independently
//! and the compound FPP is exactly 1 − Π(1 − p_i) over the layers' exact
//! FPPs at their loads ([`scalable_bloom_fpp`]). Layers that fill by count
//! (layer i takes keys until it holds n0·s^i) split any number of items
//! deterministically ([`scalable_bloom_loads`]).

/// The FPP target of layer `index` of a scalable filter with compound
/// target `fpp` (P) and tightening ratio `tightening` (r): P·(1 − r)·r^i.
///
/// Computed by repeated multiplication, so the same inputs give the same
/// bits on every platform (filters store these targets in their files).
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::scalable_layer_fpp;
///
/// assert!((scalable_layer_fpp(0.01, 0.5, 0) - 0.005).abs() < 1e-15);
/// assert!((scalable_layer_fpp(0.01, 0.5, 2) - 0.00125).abs() < 1e-15);
/// ```
pub fn scalable_layer_fpp(fpp: f64, tightening: f64, index: u32) -> f64 {
    let mut layer = fpp * (1.0 - tightening);
    for _ in 0..index {
        layer *= tightening;
    }
    layer
}

/// The compound FPP of independent layers with FPPs `layer_fpps`:
/// 1 − Π(1 − p_i), evaluated as −expm1(Σ ln(1 − p_i)) so that it stays
/// accurate for FPPs far below 1e-16.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::scalable_bloom_fpp;
///
/// let compound = scalable_bloom_fpp([0.01, 0.02]);
/// assert!((compound - (1.0 - 0.99 * 0.98)).abs() < 1e-15);
/// assert_eq!(scalable_bloom_fpp([]), 0.0);
/// assert!((scalable_bloom_fpp([1e-20, 1e-20]) / 2e-20 - 1.0).abs() < 1e-12);
/// ```
pub fn scalable_bloom_fpp<I: IntoIterator<Item = f64>>(layer_fpps: I) -> f64 {
    let log_none: f64 = layer_fpps
        .into_iter()
        .map(|p| (-p.clamp(0.0, 1.0)).ln_1p())
        .sum();
    (-log_none.exp_m1()).clamp(0.0, 1.0)
}

/// The compound FPP bound of the first `layers` layers, each at its target
/// (see [`scalable_layer_fpp`]): 1 − Π_{i<L}(1 − P0·r^i). It grows with L
/// and stays at most Σ P0·r^i < P0 / (1 − r) = `fpp`.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::scalable_bloom_fpp_bound;
///
/// let one = scalable_bloom_fpp_bound(0.01, 0.85, 1);
/// let ten = scalable_bloom_fpp_bound(0.01, 0.85, 10);
/// assert!((one - 0.0015).abs() < 1e-12);
/// assert!(one < ten && ten < 0.01);
/// ```
pub fn scalable_bloom_fpp_bound(fpp: f64, tightening: f64, layers: u32) -> f64 {
    scalable_bloom_fpp((0..layers).map(|i| scalable_layer_fpp(fpp, tightening, i)))
}

/// How `items` keys split over layers that fill by count, the first holding
/// `initial` keys and each next one `growth` times as many: layer i holds
/// min(what is left, initial·growth^i). Always at least one layer (holding
/// 0 keys when `items` is 0); a layer whose capacity overflows `u64` takes
/// all that is left.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::scalable_bloom_loads;
///
/// assert_eq!(scalable_bloom_loads(0, 100, 2), [0]);
/// assert_eq!(scalable_bloom_loads(100, 100, 2), [100]);
/// assert_eq!(scalable_bloom_loads(101, 100, 2), [100, 1]);
/// assert_eq!(scalable_bloom_loads(1000, 100, 2), [100, 200, 400, 300]);
/// ```
pub fn scalable_bloom_loads(items: u64, initial: u64, growth: u64) -> Vec<u64> {
    let mut loads = Vec::new();
    let mut left = items;
    let mut capacity = Some(initial.max(1));
    loop {
        let load = capacity.map_or(left, |capacity| left.min(capacity));
        loads.push(load);
        left -= load;
        if left == 0 {
            return loads;
        }
        capacity = capacity.and_then(|capacity| capacity.checked_mul(growth.max(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::{bloom_fpp_exact, wilson_interval};
    use crate::{mix64, reduce};

    #[test]
    fn compound_equals_the_direct_product() {
        let layers = [0.3, 1e-3, 0.05, 0.0, 0.2];
        let direct = 1.0 - layers.iter().map(|p| 1.0 - p).product::<f64>();
        assert!((scalable_bloom_fpp(layers) - direct).abs() < 1e-15);
        assert_eq!(scalable_bloom_fpp([1.0, 0.5]), 1.0);
        // Tiny FPPs: the direct product would round to 0; this keeps them.
        let tiny = scalable_bloom_fpp([1e-18, 2e-18, 3e-18]);
        assert!((tiny / 6e-18 - 1.0).abs() < 1e-12, "{tiny}");
    }

    #[test]
    fn bound_grows_towards_the_target_and_stays_below_it() {
        for &(fpp, r) in &[(0.01, 0.5), (0.01, 0.85), (1e-4, 0.9), (0.2, 0.8)] {
            let mut previous = 0.0;
            for layers in 1..200 {
                let bound = scalable_bloom_fpp_bound(fpp, r, layers);
                let sum: f64 = (0..layers).map(|i| scalable_layer_fpp(fpp, r, i)).sum();
                // Strictly growing until the next layer's FPP drowns in rounding.
                let growing =
                    bound > previous || scalable_layer_fpp(fpp, r, layers - 1) < 1e-15 * bound;
                assert!(growing && bound >= previous, "{fpp} {r} {layers}");
                assert!(
                    bound <= sum && sum <= fpp * (1.0 + 1e-12),
                    "{fpp} {r} {layers}"
                );
                previous = bound;
            }
            // Σ P0 r^i → P: the bound approaches P (from below, by the
            // products of the layer FPPs).
            let sum: f64 = (0..2000).map(|i| scalable_layer_fpp(fpp, r, i)).sum();
            assert!((sum / fpp - 1.0).abs() < 1e-9);
        }
        // The layer targets are exact products, the same bits every time.
        assert_eq!(
            scalable_layer_fpp(0.01, 0.85, 3).to_bits(),
            (0.01 * (1.0 - 0.85) * 0.85 * 0.85 * 0.85f64).to_bits()
        );
    }

    #[test]
    fn loads_fill_layers_in_order() {
        assert_eq!(scalable_bloom_loads(7, 1, 2), [1, 2, 4]);
        assert_eq!(scalable_bloom_loads(8, 1, 2), [1, 2, 4, 1]);
        assert_eq!(scalable_bloom_loads(50, 10, 4), [10, 40]);
        // Capacities overflowing u64: the last layer takes the rest.
        let loads = scalable_bloom_loads(u64::MAX, u64::MAX / 2, 3);
        assert_eq!(loads, [u64::MAX / 2, u64::MAX - u64::MAX / 2]);
        for items in [0, 1, 999, 1000, 1001, 123_456_789] {
            let loads = scalable_bloom_loads(items, 1000, 2);
            assert_eq!(loads.iter().sum::<u64>(), items);
        }
    }

    /// Layers of a few dozen bits with k independent probes each, filled
    /// with random keys; a random query is a false positive when any layer
    /// has all its probes set. The mean over many instances matches the
    /// compound formula over the layers' exact FPPs, and rejects the union
    /// bound Σ p_i (which is what treating the layers as additive gives).
    #[test]
    fn simulated_small_layers_match_the_compound_formula() {
        let layers: [(u64, u32, u64); 3] = [(64, 2, 10), (96, 3, 12), (128, 2, 30)];
        let exact: Vec<f64> = layers
            .iter()
            .map(|&(m, k, n)| bloom_fpp_exact(m, k, n).unwrap())
            .collect();
        let compound = scalable_bloom_fpp(exact.iter().copied());
        let union_bound: f64 = exact.iter().sum();

        let mut state = 0x5ca1_ab1e_u64;
        let mut random = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        let trials = 400_000u64;
        let mut positives = 0;
        let mut bits = [[0u64; 2]; 3];
        for _ in 0..trials {
            for (layer, &(m, k, n)) in bits.iter_mut().zip(&layers) {
                *layer = [0, 0];
                for _ in 0..n * u64::from(k) {
                    let bit = reduce(random(), m);
                    layer[(bit / 64) as usize] |= 1 << (bit % 64);
                }
            }
            let hit = bits.iter().zip(&layers).any(|(layer, &(m, k, _))| {
                (0..k).all(|_| {
                    let bit = reduce(random(), m);
                    layer[(bit / 64) as usize] >> (bit % 64) & 1 == 1
                })
            });
            positives += u64::from(hit);
        }
        let (low, high) = wilson_interval(positives, trials, 0.999);
        let measured = positives as f64 / trials as f64;
        let context = format!(
            "simulated {measured:.5} in [{low:.5}, {high:.5}], compound {compound:.5}, Σp {union_bound:.5}"
        );
        assert!(low <= compound && compound <= high, "{context}");
        assert!(union_bound > high, "{context}");
    }
}
