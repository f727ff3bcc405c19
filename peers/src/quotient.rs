//! qfilter 0.3's quotient filter, fixed-size or resizeable.

use filterlab_core::{Error, ErrorKind};
use foldhash::fast::FixedState;

use crate::peer::{Inserted, PeerFilter};
use crate::subject::{Theory, Workload};

/// How far a resizeable qfilter may grow: this many times its initial
/// capacity (the 1000× growth the growth experiment asks of every growing
/// filter). qfilter must be told its maximum when it is built, and pays
/// for it in every fingerprint: log2(1000) ≈ 10 extra remainder bits.
pub const QFILTER_GROWTH_CEILING: u64 = 1000;

/// qfilter 0.3 (a rank-select quotient filter) with foldhash, seeded from
/// the workload so runs repeat (its default is a fixed-seed foldhash).
///
/// Inserted with `insert`, its BF.ADD: a key whose fingerprint is already
/// stored is not stored again, so removing the other key later removes the
/// shared fingerprint and makes this one a false negative (its
/// `insert_duplicated` would count copies instead, without saying whether a
/// key was new).
pub struct QFilter {
    filter: qfilter::Filter<Box<[u8]>, FixedState>,
    /// Query fingerprints are this many bits (quotient and remainder).
    fingerprint_bits: u8,
    /// The `Workload` it was built for, to rebuild on `clear`.
    initial: u64,
    maximum: u64,
    fpp: f64,
    seed: u64,
}

fn refused(err: &qfilter::Error) -> Error {
    Error::new(ErrorKind::InvalidParameter, format!("qfilter: {err}"))
}

impl QFilter {
    /// A fixed-size filter for `workload` (qfilter's `new`): full at its capacity.
    ///
    /// # Errors
    ///
    /// The crate's error when it refuses the parameters.
    pub fn new(workload: &Workload) -> Result<Self, Error> {
        Self::build(workload.items, workload.items, workload.fpp, workload.seed)
    }

    /// A resizeable filter starting at the workload's capacity and allowed to
    /// grow to [`QFILTER_GROWTH_CEILING`] times it, with the target FPP at
    /// that maximum (qfilter's `new_resizeable`).
    ///
    /// # Errors
    ///
    /// The crate's error when it refuses the parameters.
    pub fn resizeable(workload: &Workload) -> Result<Self, Error> {
        let maximum = workload.items.saturating_mul(QFILTER_GROWTH_CEILING);
        Self::resizeable_to(workload, maximum)
    }

    /// A resizeable filter starting at the workload's capacity, allowed to
    /// grow to `maximum` items, with the target FPP at that maximum.
    ///
    /// # Errors
    ///
    /// The crate's error when it refuses the parameters.
    pub fn resizeable_to(workload: &Workload, maximum: u64) -> Result<Self, Error> {
        let maximum = maximum.max(workload.items);
        Self::build(workload.items, maximum, workload.fpp, workload.seed)
    }

    fn build(initial: u64, maximum: u64, fpp: f64, seed: u64) -> Result<Self, Error> {
        let hasher = FixedState::with_seed(seed);
        let filter = qfilter::Filter::new_resizeable_with_hasher(initial, maximum, fpp, hasher)
            .map_err(|e| refused(&e))?;
        Ok(Self {
            fingerprint_bits: filter.fingerprint_size(),
            filter,
            initial,
            maximum,
            fpp,
            seed,
        })
    }

    /// 1 − (1 − 2^−F)^stored: a query matches one of `stored` F-bit fingerprints.
    fn matching(&self, stored: u64) -> f64 {
        let miss = 1.0 - 0.5f64.powi(i32::from(self.fingerprint_bits));
        1.0 - miss.powf(stored as f64)
    }
}

impl PeerFilter for QFilter {
    const REMOVABLE: bool = true;

    fn insert(&mut self, key: u64) -> Inserted {
        match self.filter.insert(key) {
            Ok(new) => Inserted::unless_present(!new),
            Err(_) => Inserted::Refused,
        }
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(key)
    }

    fn remove(&mut self, key: u64) -> bool {
        self.filter.remove(key)
    }

    /// A resizeable filter that grew cannot shrink back: a new one.
    fn clear(&mut self) -> bool {
        match Self::build(self.initial, self.maximum, self.fpp, self.seed) {
            Ok(fresh) => *self = fresh,
            Err(_) => self.filter.clear(),
        }
        true
    }

    fn memory_usage(&self) -> usize {
        self.filter.memory_usage()
    }

    /// Exact under ideal hashing: a never-inserted key is a false positive
    /// when its F-bit fingerprint equals one of the `items` keys' (growth
    /// moves a bit from remainder to quotient and keeps F).
    fn theory(&self, items: u64) -> Option<Theory> {
        Some(Theory::Exact(self.matching(items)))
    }

    /// The same over the fingerprints it stores (a skipped duplicate stores none).
    fn fill_fpp(&self) -> Option<f64> {
        Some(self.matching(self.filter.len()))
    }
}
