//! The Ribbon filter's work compiled for the CPU it runs on: the
//! workspace's default target (x86-64 baseline) has neither a population
//! count instruction nor 256-bit vectors, and a lookup is r parities of
//! 128-bit windows. With AVX2 the lookups compute four columns a vector
//! (AND, XOR) and fold eight parities together ([`Vectors`]); with POPCNT
//! alone each parity is one instruction; without either, a dozen.
//!
//! The only `unsafe` of the crate: calling functions compiled for a
//! feature that runtime detection found, and the AVX2 loads of the words a
//! lookup already holds as arrays. The [`Level`] is detected once,
//! when a filter is built or read, and a filter keeps its two lookup entry
//! points ([`Lookups`]) for that level and its width as function pointers:
//! a lookup is one indirect call, with no branch on the level or the width
//! (a 32-way choice the one-key path would otherwise pay every time), and
//! a batch runs whole inside the function compiled for the level.

/// The instruction sets the kernels use, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// AVX2 and POPCNT (every CPU with AVX2 has POPCNT).
    Avx2,
    /// POPCNT only.
    Popcnt,
    /// The baseline instruction set.
    Portable,
}

impl Level {
    /// The best level this CPU runs.
    pub(crate) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let popcnt = std::arch::is_x86_feature_detected!("popcnt");
            if popcnt && std::arch::is_x86_feature_detected!("avx2") {
                return Self::Avx2;
            }
            if popcnt {
                return Self::Popcnt;
            }
        }
        Self::Portable
    }

    /// How many columns the lookups of this level compute together: the
    /// width they are instantiated for is rounded up to it (the extra
    /// columns read words the layout pads and are masked off).
    pub(crate) fn lanes(self) -> usize {
        match self {
            Self::Avx2 => 4,
            Self::Popcnt | Self::Portable => 1,
        }
    }

    /// Runs `work` compiled for this level.
    #[inline]
    pub(crate) fn run<W: Counting>(self, work: W) -> W::Output {
        match self {
            // SAFETY: `Level::Avx2` comes only from `detect`, which found
            // AVX2 and POPCNT on this CPU: the features the function enables.
            Self::Avx2 => unsafe { run_with_avx2(work) },
            // SAFETY: as above, POPCNT was found.
            Self::Popcnt => unsafe { run_with_popcnt(work) },
            Self::Portable => work.run(),
        }
    }
}

/// Work to compile for a [`Level`]: [`Level::run`] runs it inside a
/// function compiled for the level's features, so its `run` must be
/// `#[inline(always)]`.
pub(crate) trait Counting {
    /// What the work returns.
    type Output;

    /// Does the work.
    fn run(self) -> Self::Output;
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
unsafe fn run_with_popcnt<W: Counting>(work: W) -> W::Output {
    work.run()
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,popcnt"))]
unsafe fn run_with_avx2<W: Counting>(work: W) -> W::Output {
    work.run()
}

/// What the lookups of a filter of `LANES` computed columns are, over a
/// filter `Q` and its payload bytes: implemented by the lookup code, which
/// knows nothing of levels but takes the column parities from `P`.
pub(crate) trait Lookup: Sized {
    /// Whether the key of `hash` may be present.
    fn test<P: Parities, const LANES: usize>(&self, parities: P, bytes: &[u8], hash: u64) -> bool;

    /// [`test`](Self::test) of every hash of a batch.
    fn test_batch<P: Parities, const LANES: usize>(
        &self,
        parities: P,
        bytes: &[u8],
        hashes: &[u64],
        found: &mut [bool],
    );
}

/// How a lookup computes its column parities: bit j of
/// [`parities`](Self::parities) is the parity of
/// `(c[0] & g[0][j]) ^ (c[1] & g[1][j]) ^ (c[2] & g[2][j])`, with the
/// words read little-endian.
pub(crate) trait Parities: Copy {
    /// The parities of `L` columns (at most 64).
    fn parities<const L: usize>(self, coefficients: [u64; 3], groups: [&[[u8; 8]; L]; 3]) -> u64;
}

/// One column after the other, each a population count: POPCNT where
/// the code is compiled with it.
#[derive(Clone, Copy)]
pub(crate) struct Scalar;

impl Parities for Scalar {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn parities<const L: usize>(self, c: [u64; 3], g: [&[[u8; 8]; L]; 3]) -> u64 {
        let [first, second, third] = g;
        let columns = first.iter().zip(second).zip(third);
        let mut result = 0;
        for (column, ((w0, w1), w2)) in columns.enumerate() {
            let word = |bytes: &[u8; 8]| u64::from_le_bytes(*bytes);
            let selected = (c[0] & word(w0)) ^ (c[1] & word(w1)) ^ (c[2] & word(w2));
            result |= u64::from(selected.count_ones() & 1) << column;
        }
        result
    }
}

/// Four columns a 256-bit vector, eight parities folded together: made
/// only inside the entry points compiled with AVX2, so holding one proves
/// the CPU has it.
#[derive(Clone, Copy)]
pub(crate) struct Vectors(());

impl Parities for Vectors {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn parities<const L: usize>(self, c: [u64; 3], g: [&[[u8; 8]; L]; 3]) -> u64 {
        let Self(()) = self;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Vectors` is made only by the AVX2 entry points, which
        // run only where `Level::detect` found AVX2.
        unsafe {
            avx2::parities::<L>(c, g)
        }
        #[cfg(not(target_arch = "x86_64"))]
        Scalar.parities::<L>(c, g)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_castps_si256, _mm256_castsi256_pd, _mm256_castsi256_ps,
        _mm256_loadu_si256, _mm256_movemask_pd, _mm256_movemask_ps, _mm256_permute4x64_epi64,
        _mm256_set1_epi64x, _mm256_shuffle_ps, _mm256_slli_epi32, _mm256_slli_epi64,
        _mm256_srli_epi64, _mm256_xor_si256,
    };

    /// The parities of `L` columns (a multiple of 4, at most 64): for each
    /// four, the AND of the three groups' words with the coefficients,
    /// XORed; then eight columns at a time, each 64-bit word folded to 32
    /// bits and the two vectors' halves packed into one in column order,
    /// each 32-bit lane folded onto its top bit, and the eight top bits
    /// taken at once (four, from 64-bit lanes, for a last four).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn parities<const L: usize>(c: [u64; 3], g: [&[[u8; 8]; L]; 3]) -> u64 {
        let coefficients = c.map(|word| _mm256_set1_epi64x(word as i64));
        let four = |first: usize| -> __m256i {
            let mut selected = _mm256_set1_epi64x(0);
            for (group, coefficient) in g.iter().zip(coefficients) {
                let words = &group[first..first + 4];
                // SAFETY: `words` is 4 words of 8 bytes: the 32 bytes read.
                let loaded = unsafe { _mm256_loadu_si256(words.as_ptr().cast()) };
                selected = _mm256_xor_si256(selected, _mm256_and_si256(coefficient, loaded));
            }
            selected
        };
        // Folds each 32-bit lane's bits onto its top bit (bit 31: their XOR).
        let fold_lanes = |mut lanes: __m256i| {
            lanes = _mm256_xor_si256(lanes, _mm256_slli_epi32::<16>(lanes));
            lanes = _mm256_xor_si256(lanes, _mm256_slli_epi32::<8>(lanes));
            lanes = _mm256_xor_si256(lanes, _mm256_slli_epi32::<4>(lanes));
            lanes = _mm256_xor_si256(lanes, _mm256_slli_epi32::<2>(lanes));
            _mm256_xor_si256(lanes, _mm256_slli_epi32::<1>(lanes))
        };
        let mut result = 0u64;
        let mut first = 0;
        while first + 8 <= L {
            // Columns first..+4 folded into the low half of each 64-bit
            // lane, first+4..+8 into the high half.
            let low = four(first);
            let low = _mm256_xor_si256(low, _mm256_srli_epi64::<32>(low));
            let high = four(first + 4);
            let high = _mm256_xor_si256(high, _mm256_slli_epi64::<32>(high));
            // Per 128-bit half: the two low halves of `low`, then the two
            // high halves of `high` (columns 0 1 4 5 | 2 3 6 7), then the
            // 64-bit pairs reordered to 0 1 2 3 4 5 6 7.
            let packed = _mm256_shuffle_ps::<0b11_01_10_00>(
                _mm256_castsi256_ps(low),
                _mm256_castsi256_ps(high),
            );
            let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_castps_si256(packed));
            let bits = _mm256_movemask_ps(_mm256_castsi256_ps(fold_lanes(ordered)));
            result |= u64::from(bits as u8) << first;
            first += 8;
        }
        if first < L {
            // Four columns: each 64-bit lane folded onto its high half,
            // then onto its top bit.
            let last = four(first);
            let last = fold_lanes(_mm256_xor_si256(last, _mm256_slli_epi64::<32>(last)));
            let bits = _mm256_movemask_pd(_mm256_castsi256_pd(last));
            result |= u64::from(bits as u8 & 0xf) << first;
        }
        result
    }
}

/// One filter's lookups, compiled for its level and width: two function
/// pointers, made only by [`Lookups::new`].
pub(crate) struct Lookups<Q> {
    one: unsafe fn(&Q, &[u8], u64) -> bool,
    batch: unsafe fn(&Q, &[u8], &[u64], &mut [bool]),
}

impl<Q> Clone for Lookups<Q> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q> Copy for Lookups<Q> {}

impl<Q> std::fmt::Debug for Lookups<Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lookups")
    }
}

impl<Q> PartialEq for Lookups<Q> {
    /// Always equal: the pointers follow from the level and the width.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<Q> Eq for Lookups<Q> {}

/// Runs `$body` with the const `$L` equal to `$lanes` (1 to 32); the
/// lookup loops are then unrolled for the filter's width.
macro_rules! with_lanes {
    ($lanes:expr, |$L:ident| $body:expr) => {
        seq_lanes!($lanes, $L, $body, 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
    };
}

/// The arms of [`with_lanes!`].
macro_rules! seq_lanes {
    ($lanes:expr, $L:ident, $body:expr, $($n:literal)*) => {
        match $lanes {
            $($n => { const $L: usize = $n; $body })*
            _ => unreachable!("a Ribbon lookup computes 1 to 32 columns"),
        }
    };
}

impl<Q: Lookup> Lookups<Q> {
    /// The lookups of `level` for a filter whose widest partitions have
    /// `columns` columns (1 to 32): instantiated for `columns` rounded up
    /// to the level's [`lanes`](Level::lanes).
    pub(crate) fn new(level: Level, columns: usize) -> Self {
        let lanes = columns.next_multiple_of(level.lanes()).clamp(1, 32);
        with_lanes!(lanes, |L| match level {
            Level::Avx2 => Self {
                one: one_avx2::<Q, L>,
                batch: batch_avx2::<Q, L>,
            },
            Level::Popcnt => Self {
                one: one_popcnt::<Q, L>,
                batch: batch_popcnt::<Q, L>,
            },
            Level::Portable => Self {
                one: one_portable::<Q, L>,
                batch: batch_portable::<Q, L>,
            },
        })
    }

    /// Whether the key of `hash` may be present in `filter`.
    #[inline]
    pub(crate) fn test(self, filter: &Q, bytes: &[u8], hash: u64) -> bool {
        // SAFETY: `new` chose the function for a level that `Level::detect`
        // found on this CPU (the portable ones need nothing).
        unsafe { (self.one)(filter, bytes, hash) }
    }

    /// [`test`](Self::test) of every hash of a batch.
    #[inline]
    pub(crate) fn test_batch(self, filter: &Q, bytes: &[u8], hashes: &[u64], found: &mut [bool]) {
        // SAFETY: as in `test`.
        unsafe { (self.batch)(filter, bytes, hashes, found) }
    }
}

// The entry points: the same portable code, compiled three ways. They are
// `unsafe fn` so that all six share the pointer types of `Lookups`.

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,popcnt"))]
unsafe fn one_avx2<Q: Lookup, const L: usize>(filter: &Q, bytes: &[u8], hash: u64) -> bool {
    filter.test::<_, L>(Vectors(()), bytes, hash)
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,popcnt"))]
unsafe fn batch_avx2<Q: Lookup, const L: usize>(
    filter: &Q,
    bytes: &[u8],
    hashes: &[u64],
    found: &mut [bool],
) {
    filter.test_batch::<_, L>(Vectors(()), bytes, hashes, found);
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
unsafe fn one_popcnt<Q: Lookup, const L: usize>(filter: &Q, bytes: &[u8], hash: u64) -> bool {
    filter.test::<_, L>(Scalar, bytes, hash)
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "popcnt"))]
unsafe fn batch_popcnt<Q: Lookup, const L: usize>(
    filter: &Q,
    bytes: &[u8],
    hashes: &[u64],
    found: &mut [bool],
) {
    filter.test_batch::<_, L>(Scalar, bytes, hashes, found);
}

unsafe fn one_portable<Q: Lookup, const L: usize>(filter: &Q, bytes: &[u8], hash: u64) -> bool {
    filter.test::<_, L>(Scalar, bytes, hash)
}

unsafe fn batch_portable<Q: Lookup, const L: usize>(
    filter: &Q,
    bytes: &[u8],
    hashes: &[u64],
    found: &mut [bool],
) {
    filter.test_batch::<_, L>(Scalar, bytes, hashes, found);
}
