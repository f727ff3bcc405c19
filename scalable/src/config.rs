//! The configuration of a scalable filter, its builder, and the sizing
//! record of a planned growth.

use std::fmt;
use std::marker::PhantomData;

use filterlab_bloom::BloomSizing;
use filterlab_core::memory::DEFAULT_MEMORY_LIMIT;
use filterlab_core::sizing::{check_fpp, check_items, ensure, memory_summary};
use filterlab_core::theory::{scalable_bloom_fpp, scalable_bloom_loads, scalable_layer_fpp};
use filterlab_core::{Error, ErrorKind, FilterKind, KeyHasher};

use crate::layer::{DefaultLayer, Layer};

/// The growth factor s unless set: each layer holds twice the keys of the
/// one before (RedisBloom's default EXPANSION).
pub const DEFAULT_GROWTH: u64 = 2;

/// The tightening ratio r unless set: layer i is sized for P·(1 − r)·r^i.
///
/// Chosen by `examples/tightening.rs`, which sizes the layers of a filter
/// growing 1000× from 1,000 keys at P = 1e-2 and 1e-4 for r from 0.5 to
/// 0.95: at s = 2 memory per item is flat from r = 0.75 to 0.9 and rises on
/// both sides; 0.85 takes the least at 100× growth, is within 1% of the
/// least at 1000× and within 0.4% of the best mean over every doubling (the
/// crate README has the table). It is also the authors' choice for s = 2.
pub const DEFAULT_TIGHTENING: f64 = 0.85;

/// The most layers a filter may have. No workload needs more: with s = 2,
/// 64 layers hold 2^64 times the first layer's capacity.
pub const MAX_LAYERS: u32 = 64;

/// The largest growth factor accepted.
pub const MAX_GROWTH: u64 = 1 << 16;

/// The largest memory cap accepted, 2^56 bytes (64 PiB): more than any
/// machine addresses. A larger cap given to the builder is lowered to it.
pub const MAX_MEMORY_CAP: u64 = 1 << 56;

/// Everything that decides a scalable filter's layers and behaviour: the
/// same configuration gives the same layer sizes, the same answers and the
/// same refusals. [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting) compares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableConfig {
    /// Keys the first layer holds (n0).
    pub initial_capacity: u64,
    /// The compound FPP target P.
    pub target_fpp: f64,
    /// The growth factor s: layer i holds n0·s^i keys.
    pub growth: u64,
    /// The tightening ratio r: layer i is sized for P·(1 − r)·r^i, or,
    /// with a first-layer share, layer i ≥ 1 for (1 − f)·P·(1 − r)·r^(i−1).
    pub tightening: f64,
    /// The first layer's share f of the target: `Some(f)` sizes layer 0
    /// for f·P and shares (1 − f)·P geometrically among the layers after
    /// it; `None` (the default) is the geometric schedule, whose first
    /// share is 1 − r. See [`ScalableBloomBuilder::first_layer_share`].
    pub first_share: Option<f64>,
    /// Whether the filter refuses keys past its first layer instead of
    /// growing (RedisBloom's NONSCALING); its one layer is sized for P.
    pub non_scaling: bool,
    /// The most layers the filter may have (1 when non-scaling).
    pub max_layers: u32,
    /// The most bytes all layers together may take.
    pub max_memory: u64,
    /// The layer type's format kind.
    pub layer_kind: FilterKind,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

impl ScalableConfig {
    /// Checks every rule a builder applies.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        let Self {
            tightening,
            growth,
            non_scaling,
            max_layers,
            max_memory,
            ..
        } = *self;
        check_fpp(self.target_fpp)?;
        check_items(self.initial_capacity)?;
        ensure(tightening > 0.0 && tightening < 1.0, || {
            format!("the tightening ratio must be in (0, 1), got {tightening}")
        })?;
        if let Some(share) = self.first_share {
            ensure(share > 0.0 && share < 1.0 && !non_scaling, || {
                format!(
                    "the first layer's share must be in (0, 1), and unset for a non-scaling filter, got {share}"
                )
            })?;
        }
        ensure((1..=MAX_GROWTH).contains(&growth), || {
            format!("the growth factor must be in 1..={MAX_GROWTH}, got {growth}")
        })?;
        ensure(
            (1..=MAX_LAYERS).contains(&max_layers) && !(non_scaling && max_layers != 1),
            || {
                format!(
                    "the layer cap must be in 1..={MAX_LAYERS} (1 for a non-scaling filter), got {max_layers}"
                )
            },
        )?;
        ensure((1..=MAX_MEMORY_CAP).contains(&max_memory), || {
            format!("the memory cap must be in 1..={MAX_MEMORY_CAP} bytes, got {max_memory}")
        })
    }

    /// The capacity of layer `index`, n0·s^i; `None` when it overflows `u64`.
    pub fn layer_capacity(&self, index: u32) -> Option<u64> {
        self.growth
            .checked_pow(index)
            .and_then(|factor| factor.checked_mul(self.initial_capacity))
    }

    /// The FPP target of layer `index`: P·(1 − r)·r^i; with a first-layer
    /// share f, f·P for layer 0 and (1 − f)·P·(1 − r)·r^(i−1) for layer
    /// i ≥ 1 ([`first_share_layer_fpp`]); P for the one layer of a
    /// non-scaling filter.
    pub fn layer_fpp(&self, index: u32) -> f64 {
        match (self.non_scaling, self.first_share) {
            (true, _) => self.target_fpp,
            (false, None) => scalable_layer_fpp(self.target_fpp, self.tightening, index),
            (false, Some(share)) => {
                first_share_layer_fpp(self.target_fpp, share, self.tightening, index)
            }
        }
    }

    /// The compound bound of the first `layers` layers, each at its
    /// target: 1 − Π(1 − p_i), or P for a non-scaling filter. Never above
    /// P: the sum it stays under (Σ P·(1 − r)·r^i, or f·P + (1 − f)·P·Σ
    /// (1 − r)·r^i) is below P, but the product rounds, up to an ulp above
    /// P when a layer's target is close to P (r near 0, f near 1, or the
    /// one layer of a non-scaling filter), so it is capped at P.
    pub(crate) fn fpp_bound(&self, layers: u32) -> f64 {
        if self.non_scaling {
            self.target_fpp
        } else {
            let bound = scalable_bloom_fpp((0..layers).map(|index| self.layer_fpp(index)));
            bound.min(self.target_fpp)
        }
    }

    /// How `items` counted keys split over the layers (at least one);
    /// `None` when they need more than `max_layers` layers. Checked before
    /// splitting, so a huge count with growth 1 (a non-scaling filter, or a
    /// corrupt file) costs at most `max_layers` steps, not one per layer.
    pub(crate) fn loads(&self, items: u64) -> Option<Vec<u64>> {
        // `None` here: the capacities overflow u64, so any count fits.
        let held = (0..self.max_layers).try_fold(0u64, |held, index| {
            self.layer_capacity(index)
                .and_then(|capacity| held.checked_add(capacity))
        });
        if held.is_some_and(|held| items > held) {
            return None;
        }
        Some(scalable_bloom_loads(
            items,
            self.initial_capacity,
            self.growth,
        ))
    }
}

/// The FPP target of layer `index` when the first layer takes the share
/// `first_share` (f) of the compound target `fpp` (P): f·P for layer 0,
/// (1 − f)·P·(1 − r)·r^(i−1) for layer i ≥ 1, r = `tightening`. The layers
/// after the first split (1 − f)·P as the geometric schedule splits P, so
/// the targets sum to less than f·P + (1 − f)·P = P at every size, and the
/// compound FPP 1 − Π(1 − p_i) ≤ Σ p_i stays below P. f = 1 − r gives the
/// geometric schedule's targets P·(1 − r)·r^i (up to rounding: 1 − f is
/// then r only approximately).
///
/// Computed by repeated multiplication, so the same inputs give the same
/// bits on every platform (the layers store their targets in their files).
///
/// # Examples
///
/// ```
/// use filterlab_scalable::first_share_layer_fpp;
///
/// assert_eq!(first_share_layer_fpp(0.01, 0.5, 0.8, 0), 0.005);
/// assert!((first_share_layer_fpp(0.01, 0.5, 0.8, 1) - 0.001).abs() < 1e-15);
/// assert!((first_share_layer_fpp(0.01, 0.5, 0.8, 2) - 0.0008).abs() < 1e-15);
/// let sum: f64 = (0..2000).map(|i| first_share_layer_fpp(0.01, 0.5, 0.8, i)).sum();
/// assert!(sum <= 0.01 && sum > 0.01 * (1.0 - 1e-12));
/// ```
pub fn first_share_layer_fpp(fpp: f64, first_share: f64, tightening: f64, index: u32) -> f64 {
    if index == 0 {
        return fpp * first_share;
    }
    let mut layer = fpp * (1.0 - first_share) * (1.0 - tightening);
    for _ in 1..index {
        layer *= tightening;
    }
    layer
}

/// Configures a `ScalableBloomFilter` with layers of type `L`; made by
/// `ScalableBloomFilter::with_fpp` (default layers) or [`Self::new`].
#[derive(Clone, Debug)]
#[must_use]
pub struct ScalableBloomBuilder<L = DefaultLayer> {
    config: ScalableConfig,
    initial_set: bool,
    layer: PhantomData<L>,
}

impl<L: Layer> ScalableBloomBuilder<L> {
    /// A builder for a compound FPP target `fpp`; give it
    /// [`initial_capacity`](Self::initial_capacity).
    pub fn new(fpp: f64) -> Self {
        Self {
            config: ScalableConfig {
                initial_capacity: 0,
                target_fpp: fpp,
                growth: DEFAULT_GROWTH,
                tightening: DEFAULT_TIGHTENING,
                first_share: None,
                non_scaling: false,
                max_layers: MAX_LAYERS,
                max_memory: DEFAULT_MEMORY_LIMIT,
                layer_kind: L::KIND,
                hasher: KeyHasher::default(),
            },
            initial_set: false,
            layer: PhantomData,
        }
    }

    /// Layers of another type: `.layers::<BloomFilter>()` for the fewest
    /// bits, `.layers::<BlockedBloomFilter>()` for one cache line per layer.
    pub fn layers<M: Layer>(self) -> ScalableBloomBuilder<M> {
        ScalableBloomBuilder {
            config: ScalableConfig {
                layer_kind: M::KIND,
                ..self.config
            },
            initial_set: self.initial_set,
            layer: PhantomData,
        }
    }

    /// Keys the first layer holds (n0): required, at least 1.
    pub fn initial_capacity(mut self, items: u64) -> Self {
        self.config.initial_capacity = items;
        self.initial_set = true;
        self
    }

    filterlab_core::builder_setters! {
        /// The growth factor s (default [`DEFAULT_GROWTH`]): layer i holds
        /// n0·s^i keys. 1 adds layers of the first one's size (RedisBloom's
        /// EXPANSION 1), each tighter, up to the layer cap.
        growth(factor: u64) => config.growth = factor;
        /// The tightening ratio r in (0, 1) (default
        /// [`DEFAULT_TIGHTENING`]): layer i is sized for P·(1 − r)·r^i
        /// (layer i ≥ 1 for (1 − f)·P·(1 − r)·r^(i−1) with a
        /// [`first_layer_share`](Self::first_layer_share) f).
        tightening(ratio: f64) => config.tightening = ratio;
        /// Sizes the first layer for the share f in (0, 1) of the target,
        /// f·P, and layer i ≥ 1 for (1 − f)·P·(1 − r)·r^(i−1): the compound
        /// FPP still stays below P at every size (the targets sum to less
        /// than P), but the first layer's size is no longer tied to r. The
        /// geometric schedule (the default) gives the first layer 1 − r
        /// (0.15·P at r = 0.85), which makes a filter reserved for n0 keys
        /// 1.2–1.4× the size of one sized for P/2 (RedisBloom's first
        /// layer); f = 0.5 sizes it as RedisBloom does and keeps the
        /// growth's guarantee, for more memory per key once the filter has
        /// grown (the crate README has the measurements). Ignored, and not
        /// recorded, for a non-scaling filter (its one layer takes P).
        first_layer_share(share: f64) => config.first_share = Some(share);
        /// Refuse keys past the first layer with [`ErrorKind::Full`]
        /// instead of growing (RedisBloom's NONSCALING); the one layer is
        /// then sized for P itself.
        non_scaling(enabled: bool) => config.non_scaling = enabled;
        /// The most layers (default and maximum [`MAX_LAYERS`]); a key
        /// that would need another is refused with [`ErrorKind::Full`].
        max_layers(layers: u32) => config.max_layers = layers;
        /// The most bytes all layers together may take (default 64 GiB); a
        /// key whose layer would not fit is refused with
        /// [`ErrorKind::Full`]. Values above [`MAX_MEMORY_CAP`] are lowered
        /// to it.
        max_memory(bytes: u64) => config.max_memory = bytes.min(MAX_MEMORY_CAP);
    }

    filterlab_core::builder_setters!(config => seed, hasher);

    /// The configuration this builder would produce (for
    /// [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting)), without allocating.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] for an FPP outside (0, 1), a missing
    /// or zero initial capacity, a tightening ratio or first-layer share
    /// outside (0, 1), a growth
    /// factor of 0 or above [`MAX_GROWTH`], or a
    /// layer cap outside 1..=[`MAX_LAYERS`].
    pub fn config(&self) -> Result<ScalableConfig, Error> {
        if !self.initial_set {
            return Err(Error::invalid(
                "a scalable filter needs initial_capacity(n)",
            ));
        }
        let mut config = self.config;
        if config.non_scaling {
            config.max_layers = 1;
            config.first_share = None;
        }
        config.validate()?;
        Ok(config)
    }

    /// The layers needed to hold `items` keys, sized without allocating.
    ///
    /// # Errors
    ///
    /// As [`config`](Self::config); [`ErrorKind::TooLarge`] when the caps
    /// (layers, memory, a non-scaling filter's one layer) do not hold that
    /// many keys.
    pub fn sizing_for(&self, items: u64) -> Result<ScalableSizing, Error> {
        let config = self.config()?;
        plan::<L>(&config, items, &[])?.ok_or_else(|| {
            let caps = if config.non_scaling {
                format!(
                    "one layer of {} items (non-scaling)",
                    config.initial_capacity
                )
            } else {
                format!(
                    "{} layers from {} items growing ×{}, and {} bytes",
                    config.max_layers, config.initial_capacity, config.growth, config.max_memory
                )
            };
            Error::new(
                ErrorKind::TooLarge,
                format!("{items} items need more than the caps allow: {caps}"),
            )
        })
    }

    /// The sizing of the first layer alone (what [`build`](Self::build) allocates).
    ///
    /// # Errors
    ///
    /// As [`sizing_for`](Self::sizing_for).
    pub fn sizing(&self) -> Result<ScalableSizing, Error> {
        self.sizing_for(self.config.initial_capacity)
    }
}

/// The sizing of one layer in a [`ScalableSizing`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LayerSizing {
    /// Keys the layer holds when full (n0·s^i).
    pub capacity: u64,
    /// Keys it holds at the planned item count.
    pub load: u64,
    /// Its FPP target (P·(1 − r)·r^i, see [`ScalableConfig::layer_fpp`]).
    pub target_fpp: f64,
    /// Its exact FPP at `load`.
    pub fpp_at_load: f64,
    /// The layer's own sizing record.
    pub sizing: BloomSizing,
}

/// The layers a scalable filter needs for a number of items, computed
/// without allocating: what `ScalableBloomFilter::params` and
/// [`ScalableBloomBuilder::sizing_for`] return.
///
/// # Examples
///
/// ```
/// use filterlab_scalable::ScalableBloomFilter;
///
/// let plan = ScalableBloomFilter::with_fpp(0.01).initial_capacity(1000).sizing_for(1_000_000)?;
/// assert_eq!(plan.layers.len(), 10);
/// assert!(plan.fpp_at_items <= plan.fpp_bound && plan.fpp_bound < 0.01);
/// println!("{plan}");
/// # Ok::<(), filterlab_scalable::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScalableSizing {
    /// The layer type, e.g. "BlockedBloomFilter".
    pub layer_type: &'static str,
    /// The configuration planned for.
    pub config: ScalableConfig,
    /// The item count planned for.
    pub items: u64,
    /// The layers that hold them, oldest first.
    pub layers: Vec<LayerSizing>,
    /// Bytes of all those layers.
    pub bytes: u64,
    /// The exact compound FPP at `items`: 1 − Π(1 − p_i) over the layers'
    /// exact FPPs at their loads.
    pub fpp_at_items: f64,
    /// The compound bound of those layers, 1 − Π(1 − p_i) over their
    /// targets (P for a non-scaling filter): never above the target.
    pub fpp_bound: f64,
}

impl ScalableSizing {
    /// Bits per planned item (per first-layer capacity when planning for
    /// fewer items).
    pub fn bits_per_item(&self) -> f64 {
        let items = self.items.max(1);
        self.bytes as f64 * 8.0 / items as f64
    }
}

/// Sizes the layers for `items` counted keys: the `existing` layers as
/// they are, further ones as the filter would build them. `None` when the
/// caps stop the filter before it holds `items`.
pub(crate) fn plan<L: Layer>(
    config: &ScalableConfig,
    items: u64,
    existing: &[L],
) -> Result<Option<ScalableSizing>, Error> {
    let Some(loads) = config.loads(items) else {
        return Ok(None);
    };
    let mut layers = Vec::with_capacity(loads.len());
    let mut bytes = 0u64;
    for (index, &load) in (0u32..).zip(&loads) {
        let Some(capacity) = config.layer_capacity(index) else {
            return Ok(None);
        };
        let target_fpp = config.layer_fpp(index);
        let budget = config.max_memory.saturating_sub(bytes);
        let sizing = match L::sizing(capacity, target_fpp, budget) {
            Ok(sizing) => sizing,
            Err(err) if err.kind() == ErrorKind::TooLarge && index > 0 => return Ok(None),
            Err(err) => return Err(err),
        };
        let fpp_at_load = match existing.get(index as usize) {
            Some(layer) => layer.theoretical_fpp(load).ok_or_else(|| {
                Error::invalid(format!(
                    "layer {index} has no exact formula at {load} items"
                ))
            })?,
            None => L::fpp_of(&sizing, load)?,
        };
        bytes = bytes.saturating_add(sizing.bytes());
        layers.push(LayerSizing {
            capacity,
            load,
            target_fpp,
            fpp_at_load,
            sizing,
        });
    }
    Ok(Some(ScalableSizing {
        layer_type: L::NAME,
        config: *config,
        items,
        fpp_at_items: scalable_bloom_fpp(layers.iter().map(|layer| layer.fpp_at_load)),
        fpp_bound: config.fpp_bound(layers.len() as u32),
        layers,
        bytes,
    }))
}

impl fmt::Display for ScalableSizing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &self.config;
        writeln!(f, "ScalableBloomFilter<{}> sizing", self.layer_type)?;
        writeln!(f, "  target FPP          {:.3e}", config.target_fpp)?;
        writeln!(f, "  initial capacity    {}", config.initial_capacity)?;
        if config.non_scaling {
            writeln!(f, "  growth              none (non-scaling)")?;
        } else {
            let first = config
                .first_share
                .map_or_else(String::new, |share| format!(", first layer {share} of P"));
            writeln!(
                f,
                "  growth              ×{} per layer, FPP ×{} per layer{first} (P0 = {:.3e})",
                config.growth,
                config.tightening,
                config.layer_fpp(0)
            )?;
        }
        writeln!(f, "  items planned for   {}", self.items)?;
        let memory = memory_summary(self.bytes, self.bits_per_item());
        writeln!(f, "  memory              {memory}")?;
        writeln!(
            f,
            "  FPP                 {:.4e} exact at {} items; bound {:.4e} over {} layer{}",
            self.fpp_at_items,
            self.items,
            self.fpp_bound,
            self.layers.len(),
            if self.layers.len() == 1 { "" } else { "s" }
        )?;
        write!(
            f,
            "  layer     capacity         load         bits   k   FPP target  FPP at load"
        )?;
        for (index, layer) in self.layers.iter().enumerate() {
            write!(
                f,
                "\n  {index:>5} {:>12} {:>12} {:>12} {:>3}   {:>10.3e}   {:>10.3e}",
                layer.capacity,
                layer.load,
                layer.sizing.num_bits,
                layer.sizing.num_hashes,
                layer.target_fpp,
                layer.fpp_at_load
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(first_share: Option<f64>, tightening: f64) -> ScalableConfig {
        let builder = ScalableBloomBuilder::<DefaultLayer>::new(0.01)
            .initial_capacity(100)
            .tightening(tightening);
        let builder = match first_share {
            Some(share) => builder.first_layer_share(share),
            None => builder,
        };
        builder.config().unwrap()
    }

    #[test]
    fn a_first_share_of_one_minus_r_is_the_geometric_schedule() {
        for r in [0.5, 0.85, 0.9] {
            let (geometric, shared) = (config(None, r), config(Some(1.0 - r), r));
            for index in 0..64 {
                let (a, b) = (geometric.layer_fpp(index), shared.layer_fpp(index));
                assert!((a / b - 1.0).abs() < 1e-12, "r {r}, layer {index}: {a} {b}");
            }
        }
    }

    #[test]
    fn the_first_layer_takes_its_share_and_the_rest_stays_under_p() {
        for (share, r) in [(0.65, 0.85), (0.5, 0.5), (0.99, 0.99), (1e-3, 0.1)] {
            let config = config(Some(share), r);
            assert_eq!(config.layer_fpp(0), 0.01 * share);
            assert!((config.layer_fpp(1) / (0.01 * (1.0 - share) * (1.0 - r)) - 1.0).abs() < 1e-12);
            assert!((config.layer_fpp(2) / config.layer_fpp(1) - r).abs() < 1e-12);
            let mut previous = 0.0;
            for layers in 1..=MAX_LAYERS {
                let bound = config.fpp_bound(layers);
                let sum: f64 = (0..layers).map(|i| config.layer_fpp(i)).sum();
                // The sum reaches P within rounding once r^i vanishes.
                let under = sum <= 0.01 * (1.0 + 1e-12) && bound <= 0.01;
                assert!(
                    bound >= previous && bound <= sum * (1.0 + 1e-12) && under,
                    "{share} {r} {layers}: {bound:e} {sum:e}"
                );
                previous = bound;
            }
        }
    }
}
