//! The AVX2 block kernel: the scalar test, eight probes per step, and the
//! striped probes' 512-bit mask from one multiply per half.
//!
//! Inserts build the key's 512-bit mask in one AVX-512 register where the
//! CPU has AVX-512F (detected with AVX2, same bits and answers): measured
//! (`insert_anatomy`, a program since removed; see the git history),
//! building the mask is where a one-key insert's time beyond a lookup goes,
//! not the block's size, the test or the store.
//!
//! The `unsafe` code here: calls into `#[target_feature(enable = "avx2")]`
//! (and `"avx512f,avx2"`) functions, made only through [`Avx2`], a value
//! that exists only after runtime detection found AVX2 (and records whether
//! it found AVX-512F); and, in those functions, unaligned vector loads from
//! arrays the caller lends.

use super::probes::{ContainsKey, InsertKey, KeyBlocks, Lanes, Stripes, ViewContainsKey};

/// Proof that the running CPU supports AVX2, and whether it supports
/// AVX-512F (the second field is `Some` only then): only [`Avx2::detect`]
/// makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2(Detected, Option<Detected>);

/// Uninhabited where AVX2 cannot exist, so no `Avx2` value can be made there.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Detected;
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Detected {}

impl Avx2 {
    /// `Some` when this CPU (and OS) supports AVX2.
    pub(crate) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let avx512 = std::arch::is_x86_feature_detected!("avx512f").then_some(Detected);
            return Some(Self(Detected, avx512));
        }
        None
    }

    /// This proof without AVX-512: inserts build their mask with AVX2 alone
    /// (so that tests cover that path on AVX-512 machines too).
    #[cfg(test)]
    pub(crate) fn without_avx512(self) -> Self {
        Self(self.0, None)
    }

    /// Whether inserts build their mask with AVX-512.
    #[cfg(test)]
    pub(crate) fn uses_avx512(self) -> bool {
        self.1.is_some()
    }

    /// Runs `work` compiled for AVX2: once inlined here, its calls to
    /// [`contains`](Self::contains) are inlined too, so a batch pays for one
    /// call and one `vzeroupper` instead of one per key.
    #[inline]
    pub(crate) fn run<R>(self, work: impl FnOnce() -> R) -> R {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected, _) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature `with_avx2` enables.
            unsafe { x86_64::with_avx2(work) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = work;
            match self.0 {}
        }
    }

    /// Whether every probe bit of the key with this block seed is set in
    /// `block`: the same answer as the scalar kernel, eight probes per step.
    /// `lanes` were made from `multipliers[..k]`; `multipliers` is the whole
    /// table, which later groups of eight load from.
    ///
    /// # Panics
    ///
    /// When `multipliers` is shorter than k rounded up to a multiple of 8
    /// (never with the 64 multipliers of the format).
    #[inline]
    pub(crate) fn contains(
        self,
        block: &[u64; 8],
        seed: u32,
        lanes: &Lanes,
        table: &[u32],
    ) -> bool {
        self.call(x86_64::contains, block, seed, lanes, table)
    }

    /// Sets the key's probe bits in `block`; whether any of them was clear
    /// (the same answer and the same bits as the scalar insert). One pass:
    /// the probes' bits are gathered into a 512-bit mask in registers (one
    /// AVX-512 register where the CPU has AVX-512F, else two AVX2 ones),
    /// then the block is loaded, tested against the mask and stored back
    /// once. `lanes` and `table` as for [`contains`](Self::contains).
    ///
    /// # Panics
    ///
    /// As [`contains`](Self::contains).
    #[inline]
    pub(crate) fn insert(
        self,
        block: &mut [u64; 8],
        seed: u32,
        lanes: &Lanes,
        table: &[u32],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Self(Detected, Some(Detected)) = self {
            // SAFETY: `self` proves that the CPU supports AVX2 and AVX-512F,
            // the target features `insert_avx512` enables.
            return unsafe { x86_64::insert_avx512(block, seed, lanes, table) };
        }
        self.call(x86_64::insert, block, seed, lanes, table)
    }

    /// Calls `block_fn`, one of the AVX2 block functions of `x86_64`, with
    /// the probes of `lanes`: the one place where the proof `self` turns
    /// into a call of a function compiled for AVX2. Inlined, so `block_fn`
    /// is a direct call in each caller.
    #[inline]
    fn call<B, R>(
        self,
        block_fn: BlockFn<B, R>,
        block: B,
        seed: u32,
        lanes: &Lanes,
        table: &[u32],
    ) -> R {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected, _) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature the block functions (the only `BlockFn`s, all
            // private to this file) enable.
            unsafe { block_fn(block, seed, &lanes.first, lanes.num_hashes, table) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (block_fn, block, seed, lanes, table);
            match self.0 {}
        }
    }
}

impl Avx2 {
    /// The one-key lookup and insert of independent probes, compiled for
    /// AVX2 with the block's index computed inside, so that a caller pays
    /// one call per key (the insert builds its mask in an AVX-512 register
    /// where the CPU has AVX-512F).
    pub(crate) fn independent_keys(self) -> (ContainsKey, InsertKey, ViewContainsKey) {
        #[cfg(target_arch = "x86_64")]
        {
            let insert: InsertKey = match self {
                Self(Detected, Some(Detected)) => x86_64::insert_key_avx512,
                Self(Detected, None) => x86_64::insert_key,
            };
            (
                x86_64::contains_key::<KeyBlocks>,
                insert,
                x86_64::view_contains_key,
            )
        }
        #[cfg(not(target_arch = "x86_64"))]
        match self.0 {}
    }

    /// The one-key lookup and insert of striped probes, k of them (1 to
    /// 16), as [`independent_keys`](Self::independent_keys): one pair of
    /// functions per k, each with its rounds and active words compiled in,
    /// so that a call reads nothing of the filter but its blocks.
    pub(crate) fn striped_keys(self, num_hashes: u32) -> (ContainsKey, InsertKey, ViewContainsKey) {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected, _) = self;
            x86_64::STRIPED_KEYS[(num_hashes.clamp(1, 16) - 1) as usize]
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = num_hashes;
            match self.0 {}
        }
    }

    /// Whether every bit of the striped key with this block seed is set in
    /// `block` (the scalar `striped_contains`'s answer), in `ROUNDS` rounds
    /// (the filter's `stripes.rounds`).
    #[inline]
    pub(crate) fn striped_contains<const ROUNDS: usize>(
        self,
        block: &[u64; 8],
        seed: u32,
        stripes: &Stripes,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected, _) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature `striped_contains` enables.
            unsafe { x86_64::striped_contains::<ROUNDS>(block, seed, stripes) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (block, seed, stripes);
            match self.0 {}
        }
    }

    /// Sets the striped key's bits in `block`; whether any was clear (the
    /// scalar `striped_insert`'s bits and answer).
    #[inline]
    pub(crate) fn striped_insert<const ROUNDS: usize>(
        self,
        block: &mut [u64; 8],
        seed: u32,
        stripes: &Stripes,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected, _) = self;
            // SAFETY: as in `striped_contains`.
            unsafe { x86_64::striped_insert::<ROUNDS>(block, seed, stripes) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (block, seed, stripes);
            match self.0 {}
        }
    }
}

impl Avx2 {
    /// Whether all eight of the key's bits are set in the split block: the
    /// scalar `split_contains`'s answer, from one 256-bit mask (the seed
    /// times the eight salts, shifted right by 27, one bit each) and one
    /// `testc` against the block.
    #[inline]
    pub(crate) fn split_contains(self, block: &[u64; 4], seed: u32, salts: &[u32; 8]) -> bool {
        self.call_split(x86_64::split_contains, block, seed, salts)
    }

    /// Sets the key's eight bits in the split block; whether any was clear
    /// (the scalar `split_insert`'s bits and answer): one load, one OR and
    /// one store.
    #[inline]
    pub(crate) fn split_insert(self, block: &mut [u64; 4], seed: u32, salts: &[u32; 8]) -> bool {
        self.call_split(x86_64::split_insert, block, seed, salts)
    }

    /// Calls `split_fn`, one of the AVX2 split-block functions of `x86_64`:
    /// as [`call`](Self::call) does for the 512-bit block functions.
    #[inline]
    fn call_split<B>(self, split_fn: SplitFn<B>, block: B, seed: u32, salts: &[u32; 8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected, _) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature the split-block functions (the only
            // `SplitFn`s, private to this file) enable.
            unsafe { split_fn(block, seed, salts) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (split_fn, block, seed, salts);
            match self.0 {}
        }
    }
}

/// An AVX2 split-block function: a 256-bit block, the key's block seed and
/// the eight salts.
type SplitFn<B> = unsafe fn(B, u32, &[u32; 8]) -> bool;

/// An AVX2 block function: a block, the key's block seed, the multipliers
/// of the first eight probes, k, and the whole multiplier table.
type BlockFn<B, R> = unsafe fn(B, u32, &[u32; 8], u32, &[u32]) -> R;

/// Where AVX2 cannot exist, stand-ins with the block functions' signatures,
/// so that the wrappers compile: no `Avx2` value can exist to call them.
#[cfg(not(target_arch = "x86_64"))]
mod x86_64 {
    pub(super) unsafe fn contains(_: &[u64; 8], _: u32, _: &[u32; 8], _: u32, _: &[u32]) -> bool {
        unreachable!("no Avx2 value exists on this target")
    }

    pub(super) unsafe fn insert(_: &mut [u64; 8], _: u32, _: &[u32; 8], _: u32, _: &[u32]) -> bool {
        unreachable!("no Avx2 value exists on this target")
    }

    pub(super) unsafe fn split_contains(_: &[u64; 4], _: u32, _: &[u32; 8]) -> bool {
        unreachable!("no Avx2 value exists on this target")
    }

    pub(super) unsafe fn split_insert(_: &mut [u64; 4], _: u32, _: &[u32; 8]) -> bool {
        unreachable!("no Avx2 value exists on this target")
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    // The AVX2 and AVX-512F intrinsics, some forty of them.
    #[allow(clippy::wildcard_imports)]
    use core::arch::x86_64::*;

    use filterlab_core::BLOCK_MULTIPLIERS;

    use super::{ContainsKey, InsertKey, Lanes, Stripes};
    use crate::kernel::probes::{
        ActiveRows, KeyBlocks, KeySource, KeyView, STRIPE_ACTIVE, ViewContainsKey, block_index,
        block_seed,
    };

    /// Calls `work` in a function compiled for AVX2.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn with_avx2<R>(work: impl FnOnce() -> R) -> R {
        work()
    }

    /// The lanes holding probes in a group of `r` probes: all ones in lanes
    /// 0..r, so that the lanes past the last probe test no bit.
    static ACTIVE: [[u32; 8]; 9] = active_lanes();

    const fn active_lanes() -> [[u32; 8]; 9] {
        let mut table = [[0; 8]; 9];
        let mut r = 0;
        while r < 9 {
            let mut lane = 0;
            while lane < r {
                table[r][lane] = u32::MAX;
                lane += 1;
            }
            r += 1;
        }
        table
    }

    /// The block test with eight probes per step. Lane j multiplies the seed
    /// by multiplier j; the product's top 4 bits pick one of the block's
    /// sixteen 32-bit words and the next 5 bits a bit in it. That is bit
    /// q = product >> 23 of the block, as in the scalar code (on
    /// little-endian x86, bit q of the block is bit q & 31 of its 32-bit word
    /// q >> 5). Each half of the block is permuted into the lanes, and the
    /// product's top bit (the word index's bit 3) picks the half per lane.
    ///
    /// Single lookups are bound by how many fit in the out-of-order window,
    /// so instructions count: the first group (`first`, padded by repeating
    /// probe 0: see `Lanes`) needs no lane mask, and the loop serves only
    /// k > 8, loading later groups from `table`.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    // The loads are `loadu`, which take any alignment.
    #[allow(clippy::cast_ptr_alignment)]
    // Inlined where the caller is compiled for AVX2 too (`with_avx2`).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(
        block: &[u64; 8],
        seed: u32,
        first: &[u32; 8],
        num_hashes: u32,
        table: &[u32],
    ) -> bool {
        let words = block.as_ptr();
        // SAFETY: `block` is 64 readable bytes; each load reads 32 of them
        // (words 0..4 and 4..8), and `first` is 32 bytes; `loadu` has no
        // alignment requirement.
        let (low, high, first) = unsafe {
            (
                _mm256_loadu_si256(words.cast::<__m256i>()),
                _mm256_loadu_si256(words.add(4).cast::<__m256i>()),
                _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()),
            )
        };
        let seed = _mm256_set1_epi32(seed as i32);
        let all = _mm256_set1_epi32(-1);
        if !group_holds(low, high, _mm256_mullo_epi32(seed, first), all) {
            return false;
        }
        let probes = num_hashes as usize;
        let mut start = 8;
        while start < probes {
            let (product, lanes) = later_group(seed, table, probes, start);
            if !group_holds(low, high, product, lanes) {
                return false;
            }
            start += 8;
        }
        true
    }

    /// The products of the group of up to eight probes from probe `start`
    /// (of `probes`) with `seed`, and its lanes: all ones in the lanes that
    /// hold a probe. The step both kernels take for each group after the first.
    // The loads are `loadu`, which take any alignment.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    fn later_group(
        seed: __m256i,
        table: &[u32],
        probes: usize,
        start: usize,
    ) -> (__m256i, __m256i) {
        // Panics (safely) only if a filter had more probes than multipliers.
        let factors = &table[start..start + 8];
        let lanes = &ACTIVE[(probes - start).min(8)];
        // SAFETY: `factors` and `lanes` are 8 u32s each, the 32 bytes
        // read; `loadu` has no alignment requirement.
        let (factors, lanes) = unsafe {
            (
                _mm256_loadu_si256(factors.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(lanes.as_ptr().cast::<__m256i>()),
            )
        };
        (_mm256_mullo_epi32(seed, factors), lanes)
    }

    /// Whether the block (`low`, `high` halves) has the bits of the probes
    /// whose products are `product`, in the `lanes` set to all ones.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn group_holds(low: __m256i, high: __m256i, product: __m256i, lanes: __m256i) -> bool {
        let word = _mm256_srli_epi32::<28>(product);
        let bit = _mm256_and_si256(_mm256_srli_epi32::<23>(product), _mm256_set1_epi32(31));
        let mask = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(1), bit), lanes);
        let from_low = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low, word));
        let from_high = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high, word));
        let upper = _mm256_castsi256_ps(product);
        let tested = _mm256_castps_si256(_mm256_blendv_ps(from_low, from_high, upper));
        // testc is 1 when every bit of `mask` is set in `tested`.
        _mm256_testc_si256(tested, mask) != 0
    }

    /// The one-pass insert: the probes' bits, eight per step, ORed into a
    /// 512-bit mask held in two registers (`low`: the block's 32-bit words
    /// 0..8, `high`: words 8..16), then one test of the block against the
    /// mask and one store of their OR. Nothing is stored until every probe
    /// is known, so no load waits on a store of the same key (the scalar
    /// insert's loads of a word an earlier probe just wrote do: with k = 7
    /// probes over 8 words, 98% of keys probe some word twice).
    ///
    /// Only the group's real probes are added to the mask (`group_mask`
    /// takes their count), not the eight lanes a group loads: the mask's
    /// instructions are what a one-key insert pays beyond a lookup.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert(
        block: &mut [u64; 8],
        seed: u32,
        first: &[u32; 8],
        num_hashes: u32,
        table: &[u32],
    ) -> bool {
        let none = _mm256_setzero_si256();
        let (mut low, mut high) = (none, none);
        for_each_group(seed, first, num_hashes, table, |bits, count| {
            (low, high) = group_mask(bits, count, (low, high));
        });
        let words = block.as_mut_ptr();
        // SAFETY: `block` is 64 bytes, readable and writable through the
        // exclusive borrow; each access reads or writes 32 of them (words
        // 0..4 and 4..8); `loadu`/`storeu` have no alignment requirement.
        unsafe {
            let (old_low, old_high) = (
                _mm256_loadu_si256(words.cast::<__m256i>()),
                _mm256_loadu_si256(words.add(4).cast::<__m256i>()),
            );
            // testc is 1 when every bit of the mask is already set.
            let present = _mm256_testc_si256(old_low, low) & _mm256_testc_si256(old_high, high);
            _mm256_storeu_si256(words.cast::<__m256i>(), _mm256_or_si256(old_low, low));
            _mm256_storeu_si256(
                words.add(4).cast::<__m256i>(),
                _mm256_or_si256(old_high, high),
            );
            present == 0
        }
    }

    /// Calls `add(bits, count)` for each group of up to eight of a key's
    /// `num_hashes` probes, in order: lane j of `bits` holds probe j's bit
    /// in the block (`seed · multiplier >> 23`), `count` is how many of the
    /// group's lanes are real probes. The first group's multipliers are
    /// `first`; later ones come from `table` ([`later_group`]).
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    fn for_each_group(
        seed: u32,
        first: &[u32; 8],
        num_hashes: u32,
        table: &[u32],
        mut add: impl FnMut(__m256i, usize),
    ) {
        // SAFETY: `first` is 32 bytes; `loadu` has no alignment requirement.
        let first = unsafe { _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()) };
        let seed = _mm256_set1_epi32(seed as i32);
        let probes = num_hashes as usize;
        let mut product = _mm256_mullo_epi32(seed, first);
        let mut start = 0;
        loop {
            add(_mm256_srli_epi32::<23>(product), (probes - start).min(8));
            start += 8;
            if start >= probes {
                return;
            }
            product = later_group(seed, table, probes, start).0;
        }
    }

    /// `$mask::<N>($args)` for N = `$probes` (1..=8; 0 counts as 1, more
    /// as 8): one copy of the mask builder unrolled for each count.
    macro_rules! unrolled {
        ($probes:expr, $mask:ident($($arg:expr),*)) => {
            match $probes {
                0 | 1 => $mask::<1>($($arg),*),
                2 => $mask::<2>($($arg),*),
                3 => $mask::<3>($($arg),*),
                4 => $mask::<4>($($arg),*),
                5 => $mask::<5>($($arg),*),
                6 => $mask::<6>($($arg),*),
                7 => $mask::<7>($($arg),*),
                _ => $mask::<8>($($arg),*),
            }
        };
    }

    /// `masks` with the bits of the group's first `probes` lanes of `bits`
    /// (each a probe's bit q = product >> 23) added; `probes` is 1..=8 (more
    /// count as 8). Dispatches once to a copy unrolled for that count, so
    /// that no step is spent on lanes without a probe.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn group_mask(bits: __m256i, probes: usize, masks: (__m256i, __m256i)) -> (__m256i, __m256i) {
        unrolled!(probes, lanes_mask(bits, masks))
    }

    /// `masks` with the bits of lanes 0..N of `bits` added: probe bit q is
    /// bit q - 32·t of 32-bit word t, for the one t with 0 <= q - 32·t < 32.
    /// Each probe in turn is broadcast, and `sllv` shifts 1 by q - 32·t in
    /// lane t: a count outside 0..32 (negative ones wrap to large unsigned)
    /// gives 0, so only the probe's own word gets a bit.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lanes_mask<const N: i32>(
        bits: __m256i,
        (mut low, mut high): (__m256i, __m256i),
    ) -> (__m256i, __m256i) {
        let one = _mm256_set1_epi32(1);
        let base_low = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
        let base_high = _mm256_setr_epi32(256, 288, 320, 352, 384, 416, 448, 480);
        for lane in 0..N {
            let bit = _mm256_permutevar8x32_epi32(bits, _mm256_set1_epi32(lane));
            low = _mm256_or_si256(low, _mm256_sllv_epi32(one, _mm256_sub_epi32(bit, base_low)));
            high = _mm256_or_si256(
                high,
                _mm256_sllv_epi32(one, _mm256_sub_epi32(bit, base_high)),
            );
        }
        (low, high)
    }

    /// The one-pass insert with the mask in one AVX-512 register: the same
    /// bits and answer as [`insert`], each probe a broadcast, a subtract, a
    /// shift and an OR over all sixteen 32-bit words at once (the AVX2 mask
    /// takes two of each but the broadcast). Measured at 1e7 keys
    /// (`insert_anatomy`, since removed, k = 6): a one-key insert of 11.4-12.6
    /// ns against 17.2-20.1 ns with the AVX2 mask of eight lanes, and 8.8-9.9
    /// ns with sbbf's 8-bit mask in the same blocks.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2 and AVX-512F.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn insert_avx512(
        block: &mut [u64; 8],
        seed: u32,
        lanes: &Lanes,
        table: &[u32],
    ) -> bool {
        let mut mask = _mm512_setzero_si512();
        for_each_group(
            seed,
            &lanes.first,
            lanes.num_hashes,
            table,
            |bits, count| {
                // Lanes 8..16 of the widened `bits` are never read: only lanes
                // 0..8 are broadcast.
                mask = wide_group_mask(_mm512_castsi256_si512(bits), count, mask);
            },
        );
        let words = block.as_mut_ptr().cast::<__m512i>();
        // SAFETY: `block` is 64 bytes, readable and writable through the
        // exclusive borrow; `loadu`/`storeu` have no alignment requirement.
        unsafe {
            let old = _mm512_loadu_si512(words);
            let missing = _mm512_andnot_si512(old, mask);
            _mm512_storeu_si512(words, _mm512_or_si512(old, mask));
            _mm512_test_epi32_mask(missing, missing) != 0
        }
    }

    /// [`group_mask`] with the mask in one AVX-512 register.
    #[inline]
    #[target_feature(enable = "avx512f,avx2")]
    fn wide_group_mask(bits: __m512i, probes: usize, mask: __m512i) -> __m512i {
        unrolled!(probes, wide_lanes_mask(bits, mask))
    }

    /// [`lanes_mask`] with the mask in one AVX-512 register (word t in lane
    /// t of sixteen).
    #[inline]
    #[target_feature(enable = "avx512f,avx2")]
    fn wide_lanes_mask<const N: i32>(bits: __m512i, mut mask: __m512i) -> __m512i {
        let one = _mm512_set1_epi32(1);
        let base = _mm512_setr_epi32(
            0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480,
        );
        for lane in 0..N {
            let bit = _mm512_permutexvar_epi32(_mm512_set1_epi32(lane), bits);
            mask = _mm512_or_si512(mask, _mm512_sllv_epi32(one, _mm512_sub_epi32(bit, base)));
        }
        mask
    }

    /// A key's bits in a split block: lane w (32-bit word w of the block,
    /// little-endian as x86 loads it) holds `1 << ((seed · salts[w]) >> 27)`.
    // The load is `loadu`, which takes any alignment.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    fn split_mask(seed: u32, salts: &[u32; 8]) -> __m256i {
        // SAFETY: `salts` is 32 bytes; `loadu` has no alignment requirement.
        let salts = unsafe { _mm256_loadu_si256(salts.as_ptr().cast::<__m256i>()) };
        let product = _mm256_mullo_epi32(_mm256_set1_epi32(seed as i32), salts);
        _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
    }

    /// Whether every bit of the key's split-block mask is set in `block`.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn split_contains(block: &[u64; 4], seed: u32, salts: &[u32; 8]) -> bool {
        // SAFETY: `block` is 32 readable bytes; `loadu` has no alignment
        // requirement (the filter's blocks are 32-byte aligned anyway).
        let old = unsafe { _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()) };
        // testc is 1 when every bit of the mask is set in the block.
        _mm256_testc_si256(old, split_mask(seed, salts)) != 0
    }

    /// Sets the key's split-block mask in `block`; whether any of its bits
    /// was clear.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn split_insert(block: &mut [u64; 4], seed: u32, salts: &[u32; 8]) -> bool {
        let mask = split_mask(seed, salts);
        let words = block.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `block` is 32 bytes, readable and writable through the
        // exclusive borrow; `loadu`/`storeu` have no alignment requirement.
        unsafe {
            let old = _mm256_loadu_si256(words);
            _mm256_storeu_si256(words, _mm256_or_si256(old, mask));
            _mm256_testc_si256(old, mask) == 0
        }
    }

    /// [`KeySource::key_block`], mutably.
    #[inline]
    fn key_block_mut(storage: &mut KeyBlocks, hash: u64) -> &mut [u64; 8] {
        let blocks = storage.blocks_mut();
        let index = block_index(hash, blocks.len() as u64);
        // SAFETY: `block_index` reduces onto 0..blocks.len() (a
        // multiply-shift: ⌊h · b / 2^64⌋ < b), so `index` is in bounds; the
        // borrow of `blocks` is exclusive.
        unsafe { &mut blocks.get_unchecked_mut(index).0 }
    }

    /// One key's independent-probe lookup, its block found here: one call
    /// per key from code not compiled for AVX2.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains_key<S: KeySource>(blocks: &S, hash: u64) -> bool {
        let lanes = &blocks.key_params().lanes;
        let block = blocks.key_block(hash);
        // SAFETY: the CPU supports AVX2 (this function's contract).
        unsafe {
            contains(
                block,
                block_seed(hash),
                &lanes.first,
                lanes.num_hashes,
                &BLOCK_MULTIPLIERS,
            )
        }
    }

    /// [`contains_key`] in a view's blocks (a function of its own, so that
    /// its pointer takes a view of any lifetime).
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn view_contains_key(view: &KeyView<'_>, hash: u64) -> bool {
        // SAFETY: the CPU supports AVX2 (this function's contract).
        unsafe { contains_key(view, hash) }
    }

    /// One key's independent-probe insert, as [`contains_key`].
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert_key(blocks: &mut KeyBlocks, hash: u64) -> bool {
        let lanes = blocks.params().lanes;
        let block = key_block_mut(blocks, hash);
        // SAFETY: the CPU supports AVX2 (this function's contract).
        unsafe {
            insert(
                block,
                block_seed(hash),
                &lanes.first,
                lanes.num_hashes,
                &BLOCK_MULTIPLIERS,
            )
        }
    }

    /// [`insert_key`] with the mask in an AVX-512 register.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2 and AVX-512F.
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn insert_key_avx512(blocks: &mut KeyBlocks, hash: u64) -> bool {
        let lanes = blocks.params().lanes;
        let block = key_block_mut(blocks, hash);
        // SAFETY: the CPU supports AVX2 and AVX-512F (this function's
        // contract).
        unsafe { insert_avx512(block, block_seed(hash), &lanes, &BLOCK_MULTIPLIERS) }
    }

    /// The multipliers of striped round g, as `vpmulld` multiplies them into
    /// the 64-bit lanes of word t: 32-bit lane 2t + 1 of round g holds
    /// multiplier 8g + t, lane 2t holds 0, so that the product lands in the
    /// high half of 64-bit lane t and a 64-bit shift by 58 leaves its top
    /// six bits, the word's bit (words 0..4 in the first 32 bytes, 4..8 in
    /// the next).
    static STRIPE_LANES: [[u32; 16]; 2] = stripe_lanes();

    const fn stripe_lanes() -> [[u32; 16]; 2] {
        let mut table = [[0; 16]; 2];
        let mut round = 0;
        while round < 2 {
            let mut word = 0;
            while word < 8 {
                table[round][2 * word + 1] = BLOCK_MULTIPLIERS[8 * round + word];
                word += 1;
            }
            round += 1;
        }
        table
    }

    /// The bits of striped round `round` for the key whose seed is in every
    /// 32-bit lane of `seed`, one per 64-bit word, as two 256-bit halves
    /// (words 0..4 and 4..8): per half one multiply and one shift.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    fn round_bits(seed: __m256i, round: usize) -> (__m256i, __m256i) {
        let lanes = STRIPE_LANES[round].as_ptr();
        // SAFETY: a round's lanes are 16 u32s, 64 bytes: each load reads 32
        // of them; `loadu` has no alignment requirement.
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(lanes.cast::<__m256i>()),
                _mm256_loadu_si256(lanes.add(8).cast::<__m256i>()),
            )
        };
        (
            _mm256_srli_epi64::<58>(_mm256_mullo_epi32(seed, low)),
            _mm256_srli_epi64::<58>(_mm256_mullo_epi32(seed, high)),
        )
    }

    /// The mask of the words a round probes (`words`, 1 or 0 per 64-bit
    /// word) at the round's `bits`: one variable shift per half.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn round_mask(words: (__m256i, __m256i), bits: (__m256i, __m256i)) -> (__m256i, __m256i) {
        (
            _mm256_sllv_epi64(words.0, bits.0),
            _mm256_sllv_epi64(words.1, bits.1),
        )
    }

    /// The last round's active words of the key with this seed, as two
    /// halves (row r of `active` for its rotation).
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    fn last_words(active: &'static ActiveRows, key_seed: u32) -> (__m256i, __m256i) {
        let row = Stripes::row(active, key_seed).as_ptr();
        // SAFETY: a row of active words is 8 u64s, 64 bytes: each load reads
        // 32 of them; `loadu` has no alignment requirement.
        unsafe {
            (
                _mm256_loadu_si256(row.cast::<__m256i>()),
                _mm256_loadu_si256(row.add(4).cast::<__m256i>()),
            )
        }
    }

    /// The striped key's 512-bit mask as two 256-bit halves, in `ROUNDS`
    /// rounds (every word probed in all but the last).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn striped_mask<const ROUNDS: usize>(
        key_seed: u32,
        active: &'static ActiveRows,
    ) -> (__m256i, __m256i) {
        let seed = _mm256_set1_epi32(key_seed as i32);
        let last = round_bits(seed, ROUNDS - 1);
        let (mut low, mut high) = round_mask(last_words(active, key_seed), last);
        if ROUNDS == 2 {
            let one = _mm256_set1_epi64x(1);
            let (first_low, first_high) = round_mask((one, one), round_bits(seed, 0));
            low = _mm256_or_si256(low, first_low);
            high = _mm256_or_si256(high, first_high);
        }
        (low, high)
    }

    /// Whether every bit of the striped key is set in `block`. Each word is
    /// shifted right by its round's bit, so that the bit tested lands in
    /// bit 0, which the round's active words (1 or 0 per word) must all
    /// find set: no mask is built, and the last round's active words are
    /// read straight from memory by the test. With two rounds the first
    /// (every word) is tested alone first: a never-inserted key almost
    /// always misses one of its eight bits, and then the second round's
    /// multiplies are never made.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn striped_contains<const ROUNDS: usize>(
        block: &[u64; 8],
        key_seed: u32,
        stripes: &Stripes,
    ) -> bool {
        let words = block.as_ptr();
        // SAFETY: `block` is 64 readable bytes; each load reads 32 of them;
        // `loadu` has no alignment requirement.
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(words.cast::<__m256i>()),
                _mm256_loadu_si256(words.add(4).cast::<__m256i>()),
            )
        };
        let seed = _mm256_set1_epi32(key_seed as i32);
        let tested = |round: usize| {
            let (bits_low, bits_high) = round_bits(seed, round);
            (
                _mm256_srlv_epi64(low, bits_low),
                _mm256_srlv_epi64(high, bits_high),
            )
        };
        if ROUNDS == 2 {
            // testc is 1 when bit 0 of every word is set.
            let (first_low, first_high) = tested(0);
            let both = _mm256_and_si256(first_low, first_high);
            if _mm256_testc_si256(both, _mm256_set1_epi64x(1)) == 0 {
                return false;
            }
        }
        let (last_low, last_high) = tested(ROUNDS - 1);
        let row = stripes.last_round(key_seed).as_ptr();
        // SAFETY: a row of active words is 8 u64s, 64 bytes: each load reads
        // 32 of them; `loadu` has no alignment requirement.
        let (active_low, active_high) = unsafe {
            (
                _mm256_loadu_si256(row.cast::<__m256i>()),
                _mm256_loadu_si256(row.add(4).cast::<__m256i>()),
            )
        };
        let missing = _mm256_or_si256(
            _mm256_andnot_si256(last_low, active_low),
            _mm256_andnot_si256(last_high, active_high),
        );
        _mm256_testz_si256(missing, missing) != 0
    }

    /// Sets the striped key's mask in `block`: one load, OR and store per
    /// half; whether any of its bits was clear.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[allow(clippy::cast_ptr_alignment)]
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn striped_insert<const ROUNDS: usize>(
        block: &mut [u64; 8],
        seed: u32,
        stripes: &Stripes,
    ) -> bool {
        let (low, high) = striped_mask::<ROUNDS>(seed, stripes.active);
        let words = block.as_mut_ptr();
        // SAFETY: `block` is 64 bytes, readable and writable through the
        // exclusive borrow; each access reads or writes 32 of them;
        // `loadu`/`storeu` have no alignment requirement.
        unsafe {
            let (old_low, old_high) = (
                _mm256_loadu_si256(words.cast::<__m256i>()),
                _mm256_loadu_si256(words.add(4).cast::<__m256i>()),
            );
            let missing = _mm256_or_si256(
                _mm256_andnot_si256(old_low, low),
                _mm256_andnot_si256(old_high, high),
            );
            _mm256_storeu_si256(words.cast::<__m256i>(), _mm256_or_si256(old_low, low));
            _mm256_storeu_si256(
                words.add(4).cast::<__m256i>(),
                _mm256_or_si256(old_high, high),
            );
            _mm256_testz_si256(missing, missing) == 0
        }
    }

    /// One key's striped lookup, its block found here, as [`contains_key`],
    /// for keys of `8 (ROUNDS − 1) + LAST` probes (the stripes compiled in:
    /// nothing but the blocks is read).
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn striped_contains_key<S: KeySource, const ROUNDS: usize, const LAST: usize>(
        blocks: &S,
        hash: u64,
    ) -> bool {
        let stripes = Stripes {
            rounds: ROUNDS as u32,
            active: &STRIPE_ACTIVE.0[LAST - 1],
        };
        let block = blocks.key_block(hash);
        // SAFETY: the CPU supports AVX2 (this function's contract).
        unsafe { striped_contains::<ROUNDS>(block, block_seed(hash), &stripes) }
    }

    /// [`striped_contains_key`] in a view's blocks, as
    /// [`view_contains_key`].
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn striped_view_contains_key<const ROUNDS: usize, const LAST: usize>(
        view: &KeyView<'_>,
        hash: u64,
    ) -> bool {
        // SAFETY: the CPU supports AVX2 (this function's contract).
        unsafe { striped_contains_key::<KeyView<'_>, ROUNDS, LAST>(view, hash) }
    }

    /// One key's striped insert, as [`striped_contains_key`].
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn striped_insert_key<const ROUNDS: usize, const LAST: usize>(
        blocks: &mut KeyBlocks,
        hash: u64,
    ) -> bool {
        let stripes = Stripes {
            rounds: ROUNDS as u32,
            active: &STRIPE_ACTIVE.0[LAST - 1],
        };
        let block = key_block_mut(blocks, hash);
        // SAFETY: the CPU supports AVX2 (this function's contract).
        unsafe { striped_insert::<ROUNDS>(block, block_seed(hash), &stripes) }
    }

    /// The striped one-key functions for k = 1 to 16 (entry k − 1).
    pub(super) static STRIPED_KEYS: [(ContainsKey, InsertKey, ViewContainsKey); 16] = {
        macro_rules! keys {
            ($(($rounds:literal, $last:literal)),*) => {
                [$((
                    striped_contains_key::<KeyBlocks, $rounds, $last> as ContainsKey,
                    striped_insert_key::<$rounds, $last> as InsertKey,
                    striped_view_contains_key::<$rounds, $last> as ViewContainsKey,
                )),*]
            };
        }
        keys!(
            (1, 1),
            (1, 2),
            (1, 3),
            (1, 4),
            (1, 5),
            (1, 6),
            (1, 7),
            (1, 8),
            (2, 1),
            (2, 2),
            (2, 3),
            (2, 4),
            (2, 5),
            (2, 6),
            (2, 7),
            (2, 8)
        )
    };
}
