//! The exact-FPP size search: the smallest array, in whole units, and the
//! best k whose exact FPP meets a target, for every filter family that sizes
//! a bit or counter array by its exact formula.

use std::f64::consts::LN_2;

use crate::sizing::rules::{MAX_HASHES, human_bytes};
use crate::theory::{bloom_optimal_bits, hash_bits_needed};
use crate::{Error, ErrorKind};

/// The exact FPP of (array bits, probes per key) at the load being sized for.
pub type FppOf<'a> = &'a dyn Fn(u64, u32) -> Result<f64, Error>;

/// A sizing problem: the smallest array, in whole units, and the best k whose
/// exact FPP at `items` meets `fpp`. Every filter family that sizes a bit or
/// counter array by its exact formula (standard, blocked, counting, the
/// layers of a scalable filter) searches with this.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::SizeSearch;
/// use filterlab_core::theory::bloom_fpp_exact;
///
/// let fpp_of = |bits: u64, k: u32| bloom_fpp_exact(bits, k, 1_000_000);
/// let search = SizeSearch::new(1_000_000, 0.01, 64, u64::MAX, &fpp_of);
/// let (bits, k, fpp) = search.smallest()?;
/// assert_eq!(k, 7);
/// assert!(fpp <= 0.01 && bits % 64 == 0);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub struct SizeSearch<'a> {
    items: u64,
    fpp: f64,
    unit_bits: u64,
    max_bits: u64,
    fpp_of: FppOf<'a>,
    hashes_near: Option<&'a dyn Fn(u64) -> u32>,
}

impl<'a> SizeSearch<'a> {
    /// A search for `items` at `fpp` over arrays that are whole multiples of
    /// `unit_bits` (64 for word arrays, 512 for blocks), at most `max_bits`,
    /// judged by `fpp_of`.
    pub fn new(items: u64, fpp: f64, unit_bits: u64, max_bits: u64, fpp_of: FppOf<'a>) -> Self {
        Self {
            items,
            fpp,
            unit_bits: unit_bits.max(1),
            max_bits,
            fpp_of,
            hashes_near: None,
        }
    }

    /// Where to start looking for the best k for a number of bits, instead
    /// of the standard filter's optimum (m/n)·ln 2 (a blocked filter's best
    /// k is well below it at many bits per item).
    #[must_use]
    pub fn starting_hashes(mut self, near: &'a dyn Fn(u64) -> u32) -> Self {
        self.hashes_near = Some(near);
        self
    }

    fn too_large(&self, bits: f64) -> Error {
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "{} items at FPP {:e} need about {} of bits, over the memory limit of {}",
                self.items,
                self.fpp,
                human_bytes((bits / 8.0).min(u64::MAX as f64) as u64),
                human_bytes(self.max_bits / 8)
            ),
        )
    }

    /// The k near the optimum for `bits` with the lowest exact FPP, and that FPP.
    ///
    /// Searches ± 2 around the starting point (by default (m/n)·ln 2) and
    /// follows the slope beyond that window when the best k lies on its edge.
    ///
    /// # Errors
    ///
    /// Those of the FPP function.
    pub fn best_hashes(&self, bits: u64) -> Result<(u32, f64), Error> {
        let center = if let Some(near) = self.hashes_near {
            near(bits).clamp(1, MAX_HASHES)
        } else {
            let optimum = bits as f64 / self.items as f64 * LN_2;
            optimum.round().clamp(1.0, f64::from(MAX_HASHES)) as u32
        };
        let low = center.saturating_sub(2).max(1);
        let high = (center + 2).min(MAX_HASHES);
        let mut best = (center, f64::INFINITY);
        for k in low..=high {
            let fpp = (self.fpp_of)(bits, k)?;
            if fpp < best.1 {
                best = (k, fpp);
            }
        }
        let beyond: Vec<u32> = if best.0 == low {
            (1..low).rev().collect()
        } else if best.0 == high {
            (high + 1..=MAX_HASHES).collect()
        } else {
            Vec::new()
        };
        for k in beyond {
            let fpp = (self.fpp_of)(bits, k)?;
            if fpp >= best.1 {
                break;
            }
            best = (k, fpp);
        }
        Ok(best)
    }

    /// The fewest bits any array can meet the target with: where the
    /// classic FPP (1 − e^{−kn/m})^k, which lies below the exact one,
    /// minimised over k ≤ [`MAX_HASHES`], reaches it.
    ///
    /// That is the textbook −n ln p / ln²2 while its optimal k,
    /// log2(1/p), is at most [`MAX_HASHES`]; below p ≈ 5.4e-20 the cap
    /// binds and the bound is −kn / ln(1 − p^{1/k}) at k = [`MAX_HASHES`].
    fn least_bits(&self) -> f64 {
        let optimum = bloom_optimal_bits(self.items, self.fpp);
        let hashes = f64::from(MAX_HASHES);
        if optimum.is_nan() || optimum / self.items as f64 * LN_2 <= hashes {
            return optimum;
        }
        let per_hash = (self.fpp.ln() / hashes).exp();
        -hashes * self.items as f64 / (-per_hash).ln_1p()
    }

    /// The smallest whole-unit array (in bits), its best k and exact FPP,
    /// meeting the target.
    ///
    /// Starts from the fewest bits any array could meet the target with (the
    /// classic FPP, a lower bound on the exact one, minimised over k up to
    /// [`MAX_HASHES`]), grows with steps that double (3% at first) until the
    /// target is met, then bisects: at most about 2 log2(array units) + 2
    /// evaluations of [`best_hashes`](Self::best_hashes).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooLarge`] when no array within `max_bits` meets it;
    /// those of the FPP function.
    pub fn smallest(&self) -> Result<(u64, u32, f64), Error> {
        let least = self.least_bits();
        if least.is_nan() || least >= self.max_bits as f64 {
            return Err(self.too_large(least));
        }
        let units = |bits: f64| (bits / self.unit_bits as f64).ceil().max(1.0) as u64;
        let meets = |unit_count: u64| -> Result<Option<(u32, f64)>, Error> {
            let (k, fpp) = self.best_hashes(unit_count * self.unit_bits)?;
            Ok((fpp <= self.fpp).then_some((k, fpp)))
        };
        let max_units = self.max_bits / self.unit_bits;
        let mut low = units(least).min(max_units);
        if let Some((k, fpp)) = meets(low)? {
            return Ok((low * self.unit_bits, k, fpp));
        }
        // Grow until the target is met, then bisect.
        let mut high = low;
        let mut step = low / 32 + 1;
        let found = loop {
            if high == max_units {
                return Err(self.too_large(high as f64 * self.unit_bits as f64 * 1.01));
            }
            low = high;
            high = high.saturating_add(step).min(max_units);
            step = step.saturating_mul(2);
            if let Some(found) = meets(high)? {
                break found;
            }
        };
        let (mut best_units, mut best) = (high, found);
        let mut lo = low; // does not meet
        while best_units - lo > 1 {
            let mid = lo + (best_units - lo) / 2;
            match meets(mid)? {
                Some(found) => (best_units, best) = (mid, found),
                None => lo = mid,
            }
        }
        Ok((best_units * self.unit_bits, best.0, best.1))
    }

    /// The smallest k meeting the target with `bits` (power-of-two sizing),
    /// or the best k when none does.
    ///
    /// # Errors
    ///
    /// Those of the FPP function.
    pub fn smallest_hashes(&self, bits: u64) -> Result<(u32, f64), Error> {
        for k in 1..=MAX_HASHES {
            let fpp = (self.fpp_of)(bits, k)?;
            if fpp <= self.fpp {
                return Ok((k, fpp));
            }
        }
        self.best_hashes(bits)
    }

    /// Bits of key hash the target needs: log2(n/p).
    pub fn hash_bits_needed(&self) -> f64 {
        hash_bits_needed(self.items, self.fpp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (items, target, the search's answer, the FPP evaluations it made).
    type Search = (u64, f64, Result<(u64, u32, f64), Error>, u32);

    /// The standard filter's search over a grid of targets.
    fn searches() -> impl Iterator<Item = Search> {
        let targets = [1e-1, 1e-5, 1e-19, 1e-20, 1e-40, 1e-100, 1e-200, 1e-300];
        let loads = [1u64, 1000, 1_000_000, 1_000_000_000_000];
        targets.into_iter().flat_map(move |fpp| {
            loads.into_iter().map(move |items| {
                let calls = std::cell::Cell::new(0u32);
                let fpp_of = |bits: u64, k: u32| {
                    calls.set(calls.get() + 1);
                    crate::theory::bloom_fpp_exact(bits, k, items)
                };
                let search = SizeSearch::new(items, fpp, 64, 1 << 40, &fpp_of);
                let found = search.smallest();
                (items, fpp, found, calls.get())
            })
        })
    }

    #[test]
    fn the_search_starts_below_every_answer_and_stays_short() {
        use crate::theory::bloom_fpp_classic;
        for (items, fpp, found, calls) in searches() {
            let fpp_of = |bits: u64, k: u32| crate::theory::bloom_fpp_exact(bits, k, items);
            let least = SizeSearch::new(items, fpp, 64, 1 << 40, &fpp_of).least_bits();
            // No k up to the cap meets the target below the starting point.
            let below = (least * (1.0 - 1e-9)).floor() as u64;
            if below > 0 {
                for k in 1..=MAX_HASHES {
                    assert!(
                        bloom_fpp_classic(below, k, items) > fpp,
                        "n={items} p={fpp:e} k={k}: {below} bits meet it"
                    );
                }
            }
            match found {
                Ok((bits, k, claimed)) => {
                    assert!(
                        bits as f64 >= least && claimed <= fpp,
                        "n={items} p={fpp:e}"
                    );
                    assert!(claimed >= bloom_fpp_classic(bits, k, items) * (1.0 - 1e-9));
                }
                Err(err) => assert_eq!(err.kind(), ErrorKind::TooLarge, "n={items} p={fpp:e}"),
            }
            // The growing steps double and the bisection halves: a few dozen
            // sizes, about five k each, whatever the start's distance.
            assert!(calls < 600, "n={items} p={fpp:e}: {calls} evaluations");
        }
    }
}
