//! The block kernels of the blocked and split-block Bloom filters behind
//! one interface, one file per instruction set (hashbrown's layout):
//!
//! - [`scalar`]: portable code, the reference (inserts test and set each
//!   probe's word in one pass);
//! - [`avx2`]: x86_64 with AVX2, eight probes per step, behind a value that
//!   proves runtime detection found AVX2; its insert builds the key's
//!   512-bit mask in registers (one AVX-512 register where the CPU has
//!   AVX-512F), then tests and sets the block with one load and one store
//!   per half (or one of each); a split block's eight bits are one 256-bit
//!   mask, tested with one `testc` and set with one OR and one store.
//!
//! Both are pure functions of a block, a key's block seed and the probe
//! multipliers, and import nothing from here. This module holds what the
//! filter sees: the public [`Kernel`] choice and its runtime selection
//! ([`Select`], [`SplitSelect`]), the probe [`MULTIPLIERS`] and the
//! split-block [`SALT`]s (both part of the format). (The
//! cache hint of batched operations is core's [`filterlab_core::prefetch`].)
//!
//! # Where dispatch happens
//!
//! At run time, not at compile time as in hashbrown: a portable build must
//! still use AVX2 where the CPU has it. The kernel is detected once, when a
//! filter is built or read, and kept in the filter as a [`Select`]. A single
//! lookup branches on it, a branch that always goes the same way. A batch
//! dispatches once ([`Select::run_batch`]): the AVX2 arm runs the whole loop
//! inside a function compiled for AVX2, where the kernel inlines, instead of
//! paying a call and a `vzeroupper` per key. Split-block batches do the same
//! for inserts too ([`SplitSelect::run_batch`]).

mod avx2;
mod scalar;

use filterlab_core::Error;
#[cfg(test)]
use filterlab_core::mix64;

use crate::blocks::{BLOCK_WORDS, SPLIT_WORDS};

use self::avx2::{Avx2, Lanes};

/// The probe multipliers, core's: probe j is bit
/// `(seed · MULTIPLIERS[j] mod 2^32) >> 23` of the block.
pub(crate) use filterlab_core::BLOCK_MULTIPLIERS as MULTIPLIERS;

/// The split-block salts: the bit a key sets in 32-bit word w of its block
/// is the top 5 bits of `seed · SALT[w] mod 2^32`. These are the eight
/// constants of the Parquet format's split block Bloom filter
/// (<https://github.com/apache/parquet-format/blob/master/BloomFilter.md>,
/// "Technical Approach"), also Impala's, Arrow's and sbbf-rs'; part of
/// `SplitBlockBloomFilter`'s format.
pub(crate) const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// Sets the key's `num_hashes` probe bits in the block with the scalar
/// code; whether any was clear (the key was new).
#[cfg(test)]
fn block_insert(block: &mut [u64; BLOCK_WORDS], seed: u32, num_hashes: u32) -> bool {
    scalar::insert(block, seed, &MULTIPLIERS[..num_hashes as usize])
}

/// How a `BlockedBloomFilter` tests a key's bits inside its block. Every
/// kernel gives the same answers; they differ in speed only.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BlockedBloomFilter, Kernel};
///
/// // The default is the fastest kernel this CPU supports.
/// let filter = BlockedBloomFilter::with_fpp(0.01).expected_items(1000).build()?;
/// assert_eq!(filter.kernel(), Kernel::detect());
/// assert!(Kernel::Scalar.is_available());
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Portable code: one load and test per probe.
    Scalar,
    /// x86_64 with AVX2: eight probes per step from one load of the block.
    Avx2,
}

impl Kernel {
    /// The fastest kernel this CPU supports.
    pub fn detect() -> Self {
        Select::detect(1).kernel()
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        self.select(1).is_ok()
    }

    /// The kernel ready to test keys of `num_hashes` probes.
    pub(crate) fn select(self, num_hashes: u32) -> Result<Select, Error> {
        match self {
            Self::Scalar => Ok(Select::Scalar),
            Self::Avx2 => Avx2::detect()
                .map(|avx2| Select::Avx2(avx2, lanes(num_hashes)))
                .ok_or_else(|| Error::invalid("the AVX2 kernel needs a CPU with AVX2")),
        }
    }
}

/// A kernel this CPU was found to support.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Select {
    Scalar,
    /// With the probes as the kernel loads them.
    Avx2(Avx2, Lanes),
}

/// The AVX2 kernel's lanes for keys of `num_hashes` probes (at least one:
/// filters have 1 to 64).
fn lanes(num_hashes: u32) -> Lanes {
    Lanes::new(&MULTIPLIERS[..(num_hashes as usize).max(1)])
}

/// A batched operation over blocks, given the selected kernel's block test
/// by [`Select::run_batch`].
pub(crate) trait BlockBatch {
    /// What the batch returns.
    type Output;

    /// Runs the batch; `contains(block, seed)` tells whether every probe bit
    /// of the key with that block seed is set in the block.
    fn run(self, contains: impl Fn(&[u64; BLOCK_WORDS], u32) -> bool) -> Self::Output;
}

impl Select {
    /// The fastest kernel this CPU supports, ready for keys of `num_hashes`
    /// probes.
    ///
    /// (An AVX-512 lookup, the block in one register, was measured no
    /// faster than AVX2 here and left out; inserts build their mask with
    /// AVX-512 where the CPU has it, see `avx2`.)
    pub(crate) fn detect(num_hashes: u32) -> Self {
        Avx2::detect().map_or(Self::Scalar, |avx2| Self::Avx2(avx2, lanes(num_hashes)))
    }

    /// The public name of this kernel.
    pub(crate) fn kernel(self) -> Kernel {
        match self {
            Self::Scalar => Kernel::Scalar,
            Self::Avx2(..) => Kernel::Avx2,
        }
    }

    /// Whether every one of the key's `num_hashes` probe bits is set in
    /// `block`.
    #[inline]
    pub(crate) fn contains(&self, block: &[u64; BLOCK_WORDS], seed: u32, num_hashes: u32) -> bool {
        match self {
            Self::Scalar => scalar::contains(block, seed, &MULTIPLIERS[..num_hashes as usize]),
            Self::Avx2(avx2, lanes) => avx2.contains(block, seed, lanes, &MULTIPLIERS),
        }
    }

    /// Sets the key's `num_hashes` probe bits in `block`; whether any was
    /// clear (the key was new). Same bits and answer with every kernel.
    #[inline]
    pub(crate) fn insert(
        &self,
        block: &mut [u64; BLOCK_WORDS],
        seed: u32,
        num_hashes: u32,
    ) -> bool {
        match self {
            Self::Scalar => scalar::insert(block, seed, &MULTIPLIERS[..num_hashes as usize]),
            Self::Avx2(avx2, lanes) => avx2.insert(block, seed, lanes, &MULTIPLIERS),
        }
    }

    /// Runs `batch` with this kernel's test of keys of `num_hashes` probes;
    /// with AVX2, the whole batch runs in one AVX2-compiled function.
    // Always inlined, and so must `batch.run` be: the AVX2 arm's closure is
    // compiled for AVX2 only where its body is inlined into it.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn run_batch<B: BlockBatch>(&self, num_hashes: u32, batch: B) -> B::Output {
        match self {
            Self::Scalar => {
                let multipliers = &MULTIPLIERS[..num_hashes as usize];
                batch.run(|block, seed| scalar::contains(block, seed, multipliers))
            }
            Self::Avx2(avx2, lanes) => avx2
                .run(|| batch.run(|block, seed| avx2.contains(block, seed, lanes, &MULTIPLIERS))),
        }
    }
}

/// The kernel of a `SplitBlockBloomFilter`, found once when the filter is
/// built or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitSelect {
    Scalar,
    Avx2(Avx2),
}

/// A split-block kernel's test and set of a block, as a batch runs them.
pub(crate) trait SplitKernel: Copy {
    /// Whether the key with this block seed has all its bits in `block`.
    fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool;
    /// Sets the key's bits in `block`; whether any was clear.
    fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool;
}

/// The portable split-block kernel.
#[derive(Clone, Copy)]
struct ScalarSplit;

impl SplitKernel for ScalarSplit {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        scalar::split_contains(block, seed, &SALT)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
        scalar::split_insert(block, seed, &SALT)
    }
}

impl SplitKernel for Avx2 {
    // Always inlined, so that inside `Avx2::run` the AVX2 functions inline
    // into the batch's loop.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        self.split_contains(block, seed, &SALT)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
        self.split_insert(block, seed, &SALT)
    }
}

/// A batched split-block operation, given the selected kernel by
/// [`SplitSelect::run_batch`].
pub(crate) trait SplitBatch {
    /// What the batch returns.
    type Output;

    /// Runs the batch with `kernel`'s test and set.
    fn run(self, kernel: impl SplitKernel) -> Self::Output;
}

impl Kernel {
    /// The kernel ready for split blocks.
    pub(crate) fn select_split(self) -> Result<SplitSelect, Error> {
        Ok(match self.select(1)? {
            Select::Scalar => SplitSelect::Scalar,
            Select::Avx2(avx2, _) => SplitSelect::Avx2(avx2),
        })
    }
}

impl SplitSelect {
    /// The fastest split-block kernel this CPU supports.
    pub(crate) fn detect() -> Self {
        Avx2::detect().map_or(Self::Scalar, Self::Avx2)
    }

    /// The public name of this kernel.
    pub(crate) fn kernel(self) -> Kernel {
        match self {
            Self::Scalar => Kernel::Scalar,
            Self::Avx2(_) => Kernel::Avx2,
        }
    }

    /// Whether all eight of the key's bits are set in `block`. With AVX2,
    /// a call of an AVX2-compiled function.
    #[inline]
    pub(crate) fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        match self {
            Self::Scalar => ScalarSplit.contains(block, seed),
            Self::Avx2(avx2) => avx2.split_contains(block, seed, &SALT),
        }
    }

    /// Sets the key's eight bits in `block`; whether any was clear. Same
    /// bits and answer with every kernel.
    #[inline]
    pub(crate) fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
        match self {
            Self::Scalar => ScalarSplit.insert(block, seed),
            Self::Avx2(avx2) => avx2.split_insert(block, seed, &SALT),
        }
    }

    /// Runs `batch` with this kernel; with AVX2, the whole batch runs in
    /// one AVX2-compiled function.
    // Always inlined, and so must `batch.run` be (see `Select::run_batch`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn run_batch<B: SplitBatch>(self, batch: B) -> B::Output {
        match self {
            Self::Scalar => batch.run(ScalarSplit),
            Self::Avx2(avx2) => avx2.run(|| batch.run(avx2)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipliers_are_distinct_odd_and_pinned() {
        let mut sorted = MULTIPLIERS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), MULTIPLIERS.len());
        assert!(MULTIPLIERS.iter().all(|m| m % 2 == 1));
        // Part of the format: these decide which bits a key sets.
        assert_eq!(MULTIPLIERS[0], (mix64(1) >> 32) as u32 | 1);
        assert_eq!(MULTIPLIERS[0], 0x5692_161d);
    }

    #[test]
    fn insert_then_contains_in_one_block() {
        let mut block = [0u64; BLOCK_WORDS];
        for seed in [0u32, 1, 0xdead_beef, u32::MAX] {
            for k in [1, 6, 16, 64] {
                block_insert(&mut block, seed, k);
                assert!(Select::Scalar.contains(&block, seed, k));
                assert!(Select::detect(k).contains(&block, seed, k));
            }
        }
        let empty = [0u64; BLOCK_WORDS];
        assert!(!Select::Scalar.contains(&empty, 7, 1));
    }

    /// Random cases per kernel check (fewer under Miri, which is slow).
    const RANDOM_CASES: usize = if cfg!(miri) { 200 } else { 20_000 };

    /// A seeded stream of random 64-bit values for the kernel checks.
    fn random_stream(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state = mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        }
    }

    /// Checks a kernel against a bit-by-bit reference on random dense
    /// blocks, seeds and probe counts (including counts that are not
    /// multiples of the kernel's lane count), one key at a time and as a
    /// batch.
    fn matches_reference(kernel: Select) {
        let mut next = random_stream(0x1234_5678_9abc_def0);
        for case in 0..RANDOM_CASES {
            // Dense blocks so that both answers occur often.
            let block: [u64; BLOCK_WORDS] = core::array::from_fn(|_| next() | next() | next());
            let seed = next() as u32;
            let k = 1 + case % 64;
            let reference = MULTIPLIERS[..k].iter().all(|&m| {
                let q = seed.wrapping_mul(m) >> 23;
                block[(q >> 6) as usize] >> (q & 63) & 1 == 1
            });
            let Ok(kernel) = kernel.kernel().select(k as u32) else {
                unreachable!("a detected kernel stays available")
            };
            assert_eq!(
                kernel.contains(&block, seed, k as u32),
                reference,
                "case {case}"
            );
            let batched = kernel.run_batch(k as u32, OneBlock(&block, seed));
            assert_eq!(batched, reference, "case {case}, batched");
        }
    }

    /// Checks a kernel's insert against the scalar one (the reference):
    /// the same block afterwards and the same answer, on random sparse and
    /// dense blocks, seeds and probe counts 1..=64.
    fn insert_matches_reference(kernel: Select) {
        insert_matches_reference_with(|k| {
            let Ok(kernel) = kernel.kernel().select(k) else {
                unreachable!("a detected kernel stays available")
            };
            kernel
        });
    }

    /// [`insert_matches_reference`] with the kernel for k probes made by
    /// `select`.
    fn insert_matches_reference_with(select: impl Fn(u32) -> Select) {
        let mut next = random_stream(0x0fed_cba9_8765_4321);
        for case in 0..RANDOM_CASES {
            let mut block: [u64; BLOCK_WORDS] = core::array::from_fn(|_| match case % 3 {
                0 => next() & next() & next(),
                1 => next() | next() | next(),
                _ => next(),
            });
            let seed = next() as u32;
            let k = 1 + case % 64;
            let mut reference = block;
            let expected = scalar::insert(&mut reference, seed, &MULTIPLIERS[..k]);
            let kernel = select(k as u32);
            assert_eq!(
                kernel.insert(&mut block, seed, k as u32),
                expected,
                "case {case}"
            );
            assert_eq!(block, reference, "case {case}");
            // Inserted again: present, and nothing changes.
            assert!(!kernel.insert(&mut block, seed, k as u32), "case {case}");
            assert_eq!(block, reference, "case {case}");
        }
    }

    /// A batch of one key.
    struct OneBlock<'a>(&'a [u64; BLOCK_WORDS], u32);

    impl BlockBatch for OneBlock<'_> {
        type Output = bool;

        #[allow(clippy::inline_always)]
        #[inline(always)]
        fn run(self, contains: impl Fn(&[u64; BLOCK_WORDS], u32) -> bool) -> bool {
            contains(self.0, self.1)
        }
    }

    #[test]
    fn scalar_matches_reference() {
        matches_reference(Select::Scalar);
        insert_matches_reference(Select::Scalar);
    }

    #[test]
    fn avx2_matches_reference() {
        let Ok(avx2) = Kernel::Avx2.select(1) else {
            eprintln!("AVX2 not available: skipped");
            return;
        };
        matches_reference(avx2);
        insert_matches_reference(avx2);
        // The AVX2 mask too where inserts use AVX-512's.
        let Some(detected) = Avx2::detect() else {
            unreachable!("AVX2 was found above")
        };
        if detected.uses_avx512() {
            let avx2_only = detected.without_avx512();
            insert_matches_reference_with(|k| Select::Avx2(avx2_only, lanes(k)));
        } else {
            eprintln!("AVX-512F not available: its insert not checked");
        }
    }

    #[test]
    fn salts_are_parquets() {
        // The Parquet specification's eight salts, in order: part of the
        // split-block format.
        assert_eq!(SALT[0], 0x47b6_137b);
        assert_eq!(SALT[7], 0x5c6b_fb31);
        assert!(SALT.iter().all(|salt| salt % 2 == 1));
    }

    /// The split-block bit-by-bit reference: word w (32 bits) holds bit
    /// `(seed · SALT[w]) >> 27`.
    fn split_reference(block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        SALT.iter().enumerate().all(|(w, &salt)| {
            let word = (block[w / 2] >> (32 * (w % 2))) as u32;
            word >> (seed.wrapping_mul(salt) >> 27) & 1 == 1
        })
    }

    /// A batch of one lookup and one insert of the same key.
    struct OneSplit<'a>(&'a mut [u64; SPLIT_WORDS], u32);

    impl SplitBatch for OneSplit<'_> {
        type Output = (bool, bool);

        #[allow(clippy::inline_always)]
        #[inline(always)]
        fn run(self, kernel: impl SplitKernel) -> (bool, bool) {
            let found = kernel.contains(self.0, self.1);
            (found, kernel.insert(self.0, self.1))
        }
    }

    /// Checks a split-block kernel against the reference and the scalar
    /// insert on random sparse and dense blocks and seeds, one key at a
    /// time and as a batch.
    fn split_matches_reference(kernel: SplitSelect) {
        let mut next = random_stream(0x5b1f_b10c_0000_0001);
        for case in 0..RANDOM_CASES {
            let mut block: [u64; SPLIT_WORDS] = core::array::from_fn(|_| match case % 3 {
                0 => next() & next(),
                1 => next() | next() | next() | next(),
                _ => next(),
            });
            let seed = next() as u32;
            let present = split_reference(&block, seed);
            assert_eq!(kernel.contains(&block, seed), present, "case {case}");
            let mut reference = block;
            assert_eq!(scalar::split_insert(&mut reference, seed, &SALT), !present);
            assert!(split_reference(&reference, seed));
            let mut batched = block;
            assert_eq!(kernel.insert(&mut block, seed), !present, "case {case}");
            assert_eq!(block, reference, "case {case}");
            assert!(!kernel.insert(&mut block, seed), "case {case}");
            assert_eq!(block, reference, "case {case}");
            let answers = kernel.run_batch(OneSplit(&mut batched, seed));
            assert_eq!(answers, (present, !present), "case {case}, batched");
            assert_eq!(batched, reference, "case {case}, batched");
        }
    }

    #[test]
    fn split_scalar_matches_reference() {
        split_matches_reference(SplitSelect::Scalar);
    }

    #[test]
    fn split_avx2_matches_scalar() {
        let Ok(avx2) = Kernel::Avx2.select_split() else {
            eprintln!("AVX2 not available: skipped");
            return;
        };
        assert_eq!(avx2, SplitSelect::detect());
        split_matches_reference(avx2);
    }
}
