#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

#[cfg(feature = "bench")]
pub mod bench;
mod bloom_crate;
mod counting_fastbloom;
mod cuckoo;
mod fast_bloom;
mod growable;
mod ours;
mod peer;
mod quotient;
mod scalable_cuckoo;
mod split_block;
mod subject;
mod xor_filters;

pub use bloom_crate::BloomFilterCrate;
pub use counting_fastbloom::FastBloomRsCounting;
pub use cuckoo::Cuckoo;
pub use fast_bloom::FastBloom;
pub use growable::Growable;
pub use ours::{FilterlabSubject, SharedInsert, StaticSubject};
pub use peer::{Inserted, PeerFilter, PeerSubject};
pub use quotient::{QFILTER_GROWTH_CEILING, QFilter};
pub use scalable_cuckoo::ScalableCuckoo;
pub use split_block::{SplitBlock, sbbf_bits_per_key};
pub use subject::{Mode, Subject, Theory, Workload};
pub use xor_filters::{BinaryFuse8, BinaryFuse16, Xor8, Xorf, XorfFilter};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_block_formula_is_sane() {
        // Parquet's table: 10 bits per key gives about 1.2% (measured 1.27%
        // for sbbf in the design notes).
        let ten_bits = SplitBlock::with_bits_per_key(10, 1_000_000, 1);
        let fpp = ten_bits.theory(1_000_000).unwrap().fpp();
        assert!((0.009..0.014).contains(&fpp), "{fpp}");
        let bits = sbbf_bits_per_key(1_000_000, 0.01).unwrap();
        assert!((10..=12).contains(&bits), "{bits}");
    }

    #[test]
    fn peers_hold_their_keys() {
        let workload = Workload {
            items: 2000,
            fpp: 0.01,
            seed: 9,
        };
        let keys: Vec<u64> = (0..2000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let mut subjects = vec![
            PeerSubject::boxed(FastBloom::new(&workload)),
            PeerSubject::boxed(FastBloom::with_bits(20_000, 2000, 9)),
            PeerSubject::boxed(BloomFilterCrate::new(&workload).unwrap()),
            PeerSubject::boxed(BloomFilterCrate::with_bits(20_000, 2000, 9).unwrap()),
            PeerSubject::boxed(SplitBlock::new(&workload).unwrap()),
            PeerSubject::boxed(Growable::new(&workload)),
            // Room to spare: near its capacity it refuses keys at random.
            PeerSubject::boxed(Cuckoo::new(&Workload {
                items: 4000,
                ..workload
            })),
            PeerSubject::boxed(FastBloomRsCounting::new(&workload)),
            PeerSubject::boxed(QFilter::new(&workload).unwrap()),
            PeerSubject::boxed(QFilter::resizeable(&workload).unwrap()),
            PeerSubject::boxed(ScalableCuckoo::new(&workload)),
        ];
        for subject in &mut subjects {
            let mut refused = Vec::new();
            let new = subject.insert_keys(&keys, Mode::OneKey, &mut refused);
            assert!(refused.is_empty());
            assert!(new > 1900, "{new}");
            assert_eq!(subject.count_contained(&keys, Mode::OneKey), 2000);
            assert_eq!(subject.count_contained(&keys, Mode::Batched), 2000);
            assert!(!subject.has_batch_api());
            assert!(subject.memory_usage() > 2000);
            assert_eq!(
                subject.insert_keys_concurrently(&keys, 2, Mode::OneKey),
                None
            );
            if let Some(fill) = subject.fill_fpp() {
                assert!(fill > 0.0 && fill < 0.05, "{fill}");
            }
            assert!(subject.clear());
            assert!(subject.count_contained(&keys, Mode::OneKey) < 100);
        }
        let mut cuckoo = PeerSubject::boxed(Cuckoo::new(&workload));
        cuckoo.insert_keys(&keys[..1000], Mode::OneKey, &mut Vec::new());
        // It evicts with thread_rng: almost always all 100 are found.
        assert!(
            cuckoo
                .remove_keys(&keys[..100])
                .is_some_and(|removed| removed > 90)
        );
        assert_eq!(subjects[0].remove_keys(&keys), None);
        // The peers that delete find every key they hold (the quotient
        // filter may have skipped a key sharing a stored fingerprint).
        for subject in &mut subjects[7..] {
            subject.insert_keys(&keys, Mode::OneKey, &mut Vec::new());
            let removed = subject.remove_keys(&keys).unwrap();
            assert!(removed > 1990, "{removed}");
        }
        let small = Workload {
            items: 1000,
            ..workload
        };
        let mut fixed = PeerSubject::boxed(QFilter::new(&small).unwrap());
        let mut refused = Vec::new();
        fixed.insert_keys(&keys, Mode::OneKey, &mut refused);
        assert!(
            !refused.is_empty(),
            "a fixed qfilter is full at its capacity"
        );
        let mut grows = PeerSubject::boxed(QFilter::resizeable(&small).unwrap());
        refused.clear();
        grows.insert_keys(&keys, Mode::OneKey, &mut refused);
        assert!(refused.is_empty());
        let statics = [
            (
                PeerSubject::boxed(BinaryFuse8::build(&keys).unwrap()),
                8,
                9.0,
            ),
            (
                PeerSubject::boxed(BinaryFuse16::build(&keys).unwrap()),
                16,
                18.0,
            ),
            (PeerSubject::boxed(Xor8::build(&keys).unwrap()), 8, 9.84),
        ];
        for (mut fuse, bits, bits_per_key) in statics {
            assert_eq!(fuse.count_contained(&keys, Mode::OneKey), 2000);
            assert!(!fuse.clear());
            let mut refused = Vec::new();
            assert_eq!(fuse.insert_keys(&keys[..3], Mode::OneKey, &mut refused), 0);
            assert_eq!(refused, [0, 1, 2]);
            assert_eq!(fuse.theory(2000), Some(Theory::Exact(2f64.powi(-bits))));
            // Sized by its crate's rule, more per key at this small n.
            let measured = fuse.memory_usage() as f64 * 8.0 / 2000.0;
            assert!(
                (bits_per_key..bits_per_key * 1.4).contains(&measured),
                "{measured}"
            );
        }
    }

    #[test]
    fn growing_peers_state_their_theory() {
        let workload = Workload {
            items: 1000,
            fpp: 0.01,
            seed: 3,
        };
        let quotient = QFilter::resizeable(&workload).unwrap();
        let grown = quotient.theory(1_000_000).unwrap();
        assert!(grown.is_exact() && grown.fpp() < 0.01, "{grown:?}");
        let scalable = ScalableCuckoo::new(&workload);
        let compound = scalable.theory(1_000_000).unwrap().fpp();
        assert!(compound < 0.01 && compound > 0.001, "{compound}");
    }

    #[test]
    fn seeded_hashers_repeat() {
        let hash = |seed| {
            std::hash::BuildHasher::hash_one(&foldhash::fast::FixedState::with_seed(seed), 7u64)
        };
        assert_eq!(hash(5), hash(5));
        let workload = Workload {
            items: 1000,
            fpp: 0.01,
            seed: 4,
        };
        let keys: Vec<u64> = (0..1000).collect();
        let queries: Vec<u64> = (1000..200_000).collect();
        let positives = || {
            let mut a = PeerSubject::boxed(BloomFilterCrate::new(&workload).unwrap());
            a.insert_keys(&keys, Mode::OneKey, &mut Vec::new());
            a.count_contained(&queries, Mode::OneKey)
        };
        assert_eq!(positives(), positives());
    }
}

/// The repository's README, whose examples run as doctests here: this
/// crate is not published, so the path outside the package is fine.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct RootReadmeDoctests;
