//! The lookup compiled with POPCNT where the CPU has it: the workspace's
//! default target (x86-64 baseline) has no population count instruction,
//! and without it each column's parity costs a dozen instructions instead
//! of one. The only `unsafe` of the crate: calling a function compiled for
//! a feature that runtime detection found.
//!
//! Detected once, when a filter is built or read, and kept in the filter as
//! a [`Popcnt`] value (as filterlab-bloom keeps its AVX2 kernel): a lookup
//! branches on it, always the same way, and a batch runs whole inside the
//! POPCNT-compiled function.

use super::Ribbon;
use super::band::Banding;
use super::words::Words;
use crate::storage::Payload;

/// Proof that the CPU has POPCNT: made only by [`Popcnt::detect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Popcnt(());

impl Popcnt {
    /// A `Popcnt` when this CPU has the instruction.
    pub(crate) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            return Some(Self(()));
        }
        None
    }

    /// [`Ribbon::test`] compiled with POPCNT.
    #[inline]
    pub(crate) fn test<S: Payload, const R: usize>(
        self,
        ribbon: &Ribbon<S>,
        bytes: &[u8],
        hash: u64,
    ) -> bool {
        let Self(()) = self;
        // SAFETY: a `Popcnt` exists only where `is_x86_feature_detected!`
        // found POPCNT on this CPU, the one feature the function enables.
        unsafe { test::<S, R>(ribbon, bytes, hash) }
    }

    /// [`Banding::solve_into`] compiled with POPCNT: a parity per column
    /// and slot.
    pub(crate) fn solve_into(
        self,
        banding: &Banding,
        first: u64,
        columns: u32,
        words: &mut Words<'_>,
    ) {
        let Self(()) = self;
        // SAFETY: as in `test`.
        unsafe { solve_into(banding, first, columns, words) }
    }

    /// [`Ribbon::test_batch`] compiled with POPCNT.
    pub(crate) fn test_batch<S: Payload, const R: usize>(
        self,
        ribbon: &Ribbon<S>,
        hashes: &[u64],
        found: &mut [bool],
    ) {
        let Self(()) = self;
        // SAFETY: as in `test`.
        unsafe { test_batch::<S, R>(ribbon, hashes, found) }
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
fn test<S: Payload, const R: usize>(ribbon: &Ribbon<S>, bytes: &[u8], hash: u64) -> bool {
    ribbon.test::<R>(bytes, hash)
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
fn test_batch<S: Payload, const R: usize>(ribbon: &Ribbon<S>, hashes: &[u64], found: &mut [bool]) {
    ribbon.test_batch::<R>(hashes, found);
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
fn solve_into(banding: &Banding, first: u64, columns: u32, words: &mut Words<'_>) {
    banding.solve_into(first, columns, words);
}

#[cfg(test)]
mod tests {
    use filterlab_core::{Membership, mix64};

    use super::*;
    use crate::RibbonFilter;

    /// Run under Miri by `.ci/run`, with and without POPCNT enabled: the
    /// kernel builds (its back-substitution) and answers (one key and
    /// batched) exactly as the portable code, on a filter with wide and
    /// narrow partitions.
    #[test]
    fn the_popcnt_kernel_answers_as_the_portable_code() {
        let keys: Vec<u64> = (0..2100).map(mix64).collect();
        let filter = RibbonFilter::with_fpp(0.4).seed(3).build(&keys).unwrap();
        assert_eq!(filter.partitions(), (2, 1));
        let ribbon = &filter.inner;
        let bytes = &ribbon.payload[..];
        let probes: Vec<u64> = (0..200)
            .map(|i| mix64(i ^ 0xabc))
            .chain(keys.iter().copied().take(100))
            .collect();
        let hasher = *filter.hasher();
        let hashes: Vec<u64> = probes.iter().map(|key| hasher.hash(key)).collect();
        let portable: Vec<bool> = hashes
            .iter()
            .map(|&hash| ribbon.test::<2>(bytes, hash))
            .collect();
        assert!(portable[200..].iter().all(|&hit| hit));
        if let Some(popcnt) = Popcnt::detect() {
            let fast: Vec<bool> = hashes
                .iter()
                .map(|&hash| popcnt.test::<_, 2>(ribbon, bytes, hash))
                .collect();
            assert_eq!(fast, portable);
            let mut batched = vec![false; hashes.len()];
            popcnt.test_batch::<_, 2>(ribbon, &hashes, &mut batched);
            assert_eq!(batched, portable);
        }
        let mut batched = vec![false; hashes.len()];
        ribbon.test_batch::<2>(&hashes, &mut batched);
        assert_eq!(batched, portable);
    }
}
