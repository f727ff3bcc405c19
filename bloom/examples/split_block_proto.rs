//! A prototype split-block Bloom filter (Parquet's layout, the one
//! sbbf-rs-safe uses: 256-bit blocks of eight 32-bit words, each key sets
//! one bit in each word, the bit of word w taken from the top 5 bits of
//! seed · SALT[w]) beside `BlockedBloomFilter`, both sized for the same FPP
//! target by their own exact theory, one key at a time.
//!
//! The split-block filter is sized by its exact FPP: the block load is
//! Binomial(n, 1/blocks), and a block holding i keys answers yes for a new key
//! with probability (1 − (31/32)^i)^8 (eight independent 32-bit words with
//! one probe each), `filterlab_core::theory::split_block_bloom_fpp`; the fewest blocks
//! meeting the target. Its block is the key hash's multiply-shift over all
//! 64 bits (as `BlockedBloomFilter`), the block seed its low 32 bits.
//!
//! Each round empties both filters and inserts the n keys one at a time
//! (each answer counted), then looks up a million inserted and a million
//! never-inserted keys one at a time; the two take turns, and each cell is
//! the minimum over the rounds. Both call an AVX2-compiled block function
//! per key, as the filter does (no inlining into the portable caller). The
//! FPP is measured on ten million never-inserted keys.
//!
//! ```text
//! cargo run --release -p filterlab-bloom --example split_block_proto [-- ITEMS,... [ROUNDS [FPP]]]
//! ```
//!
//! x86_64 with AVX2 only. Defaults: 1e7, 5 rounds, FPP 0.01.

use std::hint::black_box;
use std::time::Instant;

use filterlab_bloom::{BlockedBloomFilter, Filter, Kernel};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::theory::split_block_bloom_fpp as split_block_fpp;
use filterlab_core::{KeyHasher, reduce};

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256i, _mm256_load_si256, _mm256_mullo_epi32, _mm256_or_si256, _mm256_set1_epi32,
    _mm256_setr_epi32, _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_store_si256,
    _mm256_testc_si256,
};

/// Parquet's (and sbbf's) salts: word w's bit is the top 5 bits of
/// seed · SALT[w].
const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The seed of every hasher.
const SEED: u64 = 1;

/// Lookups per timing.
const LOOKUPS: u64 = 1_000_000;

/// Never-inserted keys per FPP measurement.
const FPP_QUERIES: u64 = 10_000_000;

/// One 256-bit block.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Bucket([u32; 8]);

/// The prototype split-block filter.
struct SplitBlockProto {
    buckets: Vec<Bucket>,
    hasher: KeyHasher,
    len: u64,
}

impl SplitBlockProto {
    /// The fewest blocks whose exact FPP at `items` meets `fpp`.
    fn with_fpp(fpp: f64, items: u64, seed: u64) -> Self {
        let (mut low, mut high) = (1u64, 1u64);
        while split_block_fpp(high, items) > fpp {
            low = high;
            high *= 2;
        }
        // The smallest count in (low, high] meeting the target.
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if split_block_fpp(mid, items) > fpp {
                low = mid;
            } else {
                high = mid;
            }
        }
        assert!(std::arch::is_x86_feature_detected!("avx2"), "needs AVX2");
        Self {
            buckets: vec![Bucket([0; 8]); high as usize],
            hasher: KeyHasher::new(seed),
            len: 0,
        }
    }

    fn clear(&mut self) {
        self.buckets.fill(Bucket([0; 8]));
        self.len = 0;
    }

    fn bucket(&self, hash: u64) -> usize {
        reduce(hash, self.buckets.len() as u64) as usize
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        let hash = self.hasher.hash_u64(key);
        let index = self.bucket(hash);
        let bucket = &mut self.buckets[index];
        // SAFETY: AVX2 was detected in `with_fpp`.
        let new = unsafe { avx2::insert(bucket, hash as u32) };
        self.len += u64::from(new);
        new
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        let hash = self.hasher.hash_u64(key);
        // SAFETY: AVX2 was detected in `with_fpp`.
        unsafe { avx2::contains(&self.buckets[self.bucket(hash)], hash as u32) }
    }

    fn bits_per_key(&self, items: u64) -> f64 {
        self.buckets.len() as f64 * 256.0 / items as f64
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{
        __m256i, _mm256_load_si256, _mm256_mullo_epi32, _mm256_or_si256, _mm256_set1_epi32,
        _mm256_setr_epi32, _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_store_si256,
        _mm256_testc_si256, Bucket, SALT,
    };

    #[inline]
    #[target_feature(enable = "avx2")]
    fn mask(seed: u32) -> __m256i {
        let salt = _mm256_setr_epi32(
            SALT[0] as i32,
            SALT[1] as i32,
            SALT[2] as i32,
            SALT[3] as i32,
            SALT[4] as i32,
            SALT[5] as i32,
            SALT[6] as i32,
            SALT[7] as i32,
        );
        let product = _mm256_mullo_epi32(salt, _mm256_set1_epi32(seed as i32));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
    }

    /// Tests and sets the key's eight bits; whether any was clear.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert(bucket: &mut Bucket, seed: u32) -> bool {
        let mask = mask(seed);
        let words = std::ptr::from_mut(bucket).cast::<__m256i>();
        // SAFETY: a `Bucket` is 32 bytes aligned to 32, borrowed exclusively.
        unsafe {
            let old = _mm256_load_si256(words);
            _mm256_store_si256(words, _mm256_or_si256(old, mask));
            _mm256_testc_si256(old, mask) == 0
        }
    }

    /// Whether the key's eight bits are all set.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(bucket: &Bucket, seed: u32) -> bool {
        // SAFETY: a `Bucket` is 32 bytes aligned to 32.
        let old = unsafe { _mm256_load_si256(std::ptr::from_ref(bucket).cast::<__m256i>()) };
        _mm256_testc_si256(old, mask(seed)) != 0
    }
}

/// Minimum ns per key of each cell: insert, positive, negative.
#[derive(Clone, Copy)]
struct Best([f64; 3]);

impl Best {
    fn time(&mut self, cell: usize, keys: &[u64], mut op: impl FnMut(u64) -> bool) -> u64 {
        let start = Instant::now();
        let mut yes = 0;
        for &key in keys {
            yes += u64::from(op(black_box(key)));
        }
        let ns = start.elapsed().as_nanos() as f64 / keys.len() as f64;
        self.0[cell] = self.0[cell].min(ns);
        yes
    }
}

fn run(items: u64, rounds: usize, fpp: f64) {
    let keys: Vec<u64> = (0..items).map(|i| insert_key(7, i)).collect();
    let lookups = LOOKUPS.min(items);
    let present: Vec<u64> = (0..lookups)
        .map(|i| insert_key(7, i * (items / lookups)))
        .collect();
    let absent: Vec<u64> = (0..LOOKUPS).map(|i| query_key(7, i)).collect();
    let mut blocked = BlockedBloomFilter::with_fpp(fpp)
        .expected_items(items)
        .seed(SEED)
        .kernel(Kernel::detect())
        .build()
        .expect("valid sizes");
    let mut split = SplitBlockProto::with_fpp(fpp, items, SEED);
    let mut best = [Best([f64::INFINITY; 3]); 2];
    let mut new = [0; 2];
    for round in 0..rounds {
        for turn in 0..2 {
            let which = (round + turn) % 2;
            let cells = &mut best[which];
            if which == 0 {
                blocked.clear();
                new[0] = cells.time(0, &keys, |key| blocked.insert(&key));
                assert_eq!(blocked.len() as u64, new[0]);
                assert_eq!(
                    cells.time(1, &present, |key| blocked.contains(&key)),
                    lookups
                );
                black_box(cells.time(2, &absent, |key| blocked.contains(&key)));
            } else {
                split.clear();
                new[1] = cells.time(0, &keys, |key| split.insert(key));
                assert_eq!(split.len, new[1]);
                assert_eq!(cells.time(1, &present, |key| split.contains(key)), lookups);
                black_box(cells.time(2, &absent, |key| split.contains(key)));
            }
        }
    }
    let queries = || (0..FPP_QUERIES).map(|i| query_key(7, i));
    let measured = [
        queries().filter(|key| blocked.contains(key)).count(),
        queries().filter(|&key| split.contains(key)).count(),
    ]
    .map(|false_positives| false_positives as f64 / FPP_QUERIES as f64);
    let theory = [
        blocked.theoretical_fpp(items).unwrap_or(f64::NAN),
        split_block_fpp(split.buckets.len() as u64, items),
    ];
    let bits = [
        blocked.memory_usage() as f64 * 8.0 / items as f64,
        split.bits_per_key(items),
    ];
    let names = [
        format!("BlockedBloomFilter k={}", blocked.num_hashes()),
        "split-block prototype".to_owned(),
    ];
    println!(
        "\nn = {items:.0e}, target FPP {fpp}: ns/key, minimum over {rounds} rounds; FPP on {FPP_QUERIES:.0e} never-inserted keys"
    );
    println!(
        "{:<26} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "filter", "bits/key", "theory", "measured", "insert", "pos", "neg"
    );
    for i in 0..2 {
        let [insert, positive, negative] = best[i].0;
        println!(
            "{:<26} {:>8.2} {:>8.4}% {:>8.4}% {insert:>8.2} {positive:>8.2} {negative:>8.2}",
            names[i],
            bits[i],
            100.0 * theory[i],
            100.0 * measured[i],
        );
    }
    let ratio = |cell: usize| best[1].0[cell] / best[0].0[cell];
    println!(
        "split-block / blocked: insert {:.2}, pos {:.2}, neg {:.2}; memory {:.2}; new keys {} / {}",
        ratio(0),
        ratio(1),
        ratio(2),
        bits[1] / bits[0],
        new[1],
        new[0],
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sizes: Vec<u64> = args.next().map_or_else(
        || vec![10_000_000],
        |a| {
            a.split(',')
                .map(|n| n.parse::<f64>().expect("ITEMS") as u64)
                .collect()
        },
    );
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("ROUNDS"));
    let fpp: f64 = args.next().map_or(0.01, |a| a.parse().expect("FPP"));
    for items in sizes {
        run(items, rounds, fpp);
    }
}
