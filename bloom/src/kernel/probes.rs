//! Where a `BlockedBloomFilter` key's bits go, as every kernel reads it:
//! the block and in-block seed a key hash maps to, and the probes of each
//! layout (part of the format). The scalar kernel is the reference; the
//! AVX2 one computes the same bits.
//!
//! - **Independent** probes (every file before striped probes): probe j
//!   is bit `(s · M[j] mod 2^32) >> 23` of the block, anywhere in it.
//! - **Striped** probes: the key's rotation r is bits 6..9 of s; its probe
//!   j lies in 64-bit word `(r + j) mod 8`, so word t takes the probes of
//!   the rounds g = 0, 1, ... in which `8g + (t − r) mod 8 < k`, and its
//!   bit in round g is `(s · M[8g + t] mod 2^32) >> 26`.
//!
//! M is core's [`BLOCK_MULTIPLIERS`](filterlab_core::BLOCK_MULTIPLIERS) and
//! s the key's block seed.

use filterlab_core::{BLOCK_MULTIPLIERS, reduce};

use crate::blocks::{Block, BlockStorage};

/// The block a key hash maps to, of `num_blocks`: multiply-shift over the
/// high bits.
#[inline]
pub(crate) fn block_index(hash: u64, num_blocks: u64) -> usize {
    reduce(hash, num_blocks) as usize
}

/// The seed of a key's probes inside its block: the low 32 bits of the key
/// hash, which the block index (taken from the high bits) does not use.
#[inline]
pub(crate) fn block_seed(hash: u64) -> u32 {
    hash as u32
}

/// A filter's independent probes as the kernels load them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// The multipliers of the first eight probes: lanes past the last probe
    /// repeat probe 0, so they test a bit already tested instead of needing
    /// a lane mask.
    pub(crate) first: [u32; 8],
    /// Probes per key.
    pub(crate) num_hashes: u32,
}

impl Lanes {
    /// The lanes of keys with `num_hashes` probes (at least one: filters
    /// have 1 to 64).
    pub(crate) fn new(num_hashes: u32) -> Self {
        let probes = (num_hashes as usize).clamp(1, 8);
        Self {
            first: core::array::from_fn(|lane| {
                BLOCK_MULTIPLIERS[if lane < probes { lane } else { 0 }]
            }),
            num_hashes: num_hashes.max(1),
        }
    }

    /// The multipliers of the key's probes.
    pub(crate) fn multipliers(&self) -> &'static [u32] {
        &BLOCK_MULTIPLIERS[..self.num_hashes as usize]
    }
}

/// The words of a striped key's last round, per rotation r (row r): 1 for
/// a word that holds a probe, 0 for one that does not.
pub(crate) type ActiveRows = [[u64; 8]; 8];

/// [`ActiveRows`] for each number of probes in the last round, 1 to 8
/// (entry e − 1): word t holds one iff `(t − r) mod 8 < e`. Aligned to
/// the 64 bytes a row is, so a row's two vector loads share a cache line.
#[repr(C, align(64))]
pub(crate) struct StripeTable(pub(crate) [ActiveRows; 8]);

/// The one [`StripeTable`].
pub(crate) static STRIPE_ACTIVE: StripeTable = StripeTable(active_rows());

const fn active_rows() -> [ActiveRows; 8] {
    let mut table = [[[0; 8]; 8]; 8];
    let mut last = 0;
    while last < 8 {
        let mut rotation = 0;
        while rotation < 8 {
            let mut word = 0;
            while word < 8 {
                if (word + 8 - rotation) % 8 <= last {
                    table[last][rotation][word] = 1;
                }
                word += 1;
            }
            rotation += 1;
        }
        last += 1;
    }
    table
}

/// A filter's striped probes as the kernels read them: how many rounds of
/// eight a key's probes fill (1 or 2: k ≤ 16), and the active words of the
/// last round for each rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stripes {
    pub(crate) rounds: u32,
    pub(crate) active: &'static ActiveRows,
}

impl Stripes {
    /// The stripes of keys with `num_hashes` probes, 1 to 16.
    pub(crate) fn new(num_hashes: u32) -> Self {
        let k = num_hashes.clamp(1, 16);
        let rounds = k.div_ceil(8);
        Self {
            rounds,
            active: &STRIPE_ACTIVE.0[(k - 8 * (rounds - 1) - 1) as usize],
        }
    }

    /// The key's active words in its last round: row r of [`ActiveRows`]
    /// for its rotation, bits 6..9 of the block seed (every round's bits,
    /// the top six of a product with the seed, stay uniform whatever those
    /// three bits are).
    #[inline]
    pub(crate) fn last_round(&self, seed: u32) -> &'static [u64; 8] {
        Self::row(self.active, seed)
    }

    /// Row r of `active` for the rotation of a key with this block seed.
    #[inline]
    pub(crate) fn row(active: &'static ActiveRows, seed: u32) -> &'static [u64; 8] {
        &active[((seed >> 6) & 7) as usize]
    }
}

/// The bit of word `word` in round `round` of a striped key with this
/// block seed.
#[inline]
pub(crate) fn stripe_bit(seed: u32, round: u32, word: usize) -> u32 {
    seed.wrapping_mul(BLOCK_MULTIPLIERS[8 * round as usize + word]) >> 26
}

/// What a kernel reads of a filter's probes, kept beside its blocks: both
/// layouts' (the filter's own and a default for the other), so that every
/// kernel function has one signature, and the one-key functions the kernel
/// selected, so that a one-key call reaches its function, its parameters
/// and its blocks through one pointer. Made only by the kernel
/// (`Select::params`), which sets the functions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub(crate) lanes: Lanes,
    pub(crate) stripes: Stripes,
    /// Only the kernel sets these: a scalar function, or one compiled for
    /// a target feature the CPU was found to have.
    pub(super) contains_key: ContainsKey,
    pub(super) insert_key: InsertKey,
    /// The same lookup as `contains_key` for a view's aligned blocks.
    pub(super) view_contains_key: ViewContainsKey,
    /// The same lookup for a view's little-endian bytes, with the portable
    /// kernel.
    pub(super) bytes_contains_key: ViewContainsKey,
}

/// A `BlockedBloomFilter`'s blocks with its probes' parameters beside them:
/// what a one-key function reads, through one pointer (so that a caller
/// passes it and the hash, and keeps nothing else live across the call).
pub(crate) type KeyBlocks = BlockStorage<Block, Params>;

/// A one-key lookup: whether every bit of the key with this hash is set in
/// its block of the array. Unsafe only because some are compiled for a
/// target feature; the kernel hands out each only where the CPU has it.
pub(crate) type ContainsKey = unsafe fn(&KeyBlocks, u64) -> bool;

/// A one-key insert: sets the bits of the key with this hash in its block
/// of the array; whether any was clear. Unsafe as [`ContainsKey`].
pub(crate) type InsertKey = unsafe fn(&mut KeyBlocks, u64) -> bool;

/// A view's blocks with its probes' parameters beside them: what a view's
/// one-key function reads, through one pointer, as [`KeyBlocks`]. The
/// blocks are aligned words read in place, or (when the payload is not
/// aligned, or the CPU big-endian) little-endian bytes; the one-key
/// function is chosen for them, so a lookup does not branch on which.
#[derive(Clone, Copy)]
pub(crate) struct KeyView<'a> {
    /// The aligned blocks; empty when read from `bytes`.
    pub(crate) blocks: &'a [[u64; 8]],
    /// The little-endian blocks; empty when read from `blocks`.
    pub(crate) bytes: &'a [[[u8; 8]; 8]],
    pub(crate) params: Params,
}

impl<'a> KeyView<'a> {
    /// A view of aligned blocks: one-key lookups with the kernel's function.
    pub(crate) fn aligned(blocks: &'a [[u64; 8]], params: Params) -> Self {
        Self {
            blocks,
            bytes: &[],
            params,
        }
    }

    /// A view of little-endian blocks: each one-key lookup decodes the
    /// key's block and tests it with the portable kernel (every kernel
    /// gives the same answer).
    pub(crate) fn bytes(bytes: &'a [[[u8; 8]; 8]], mut params: Params) -> Self {
        params.view_contains_key = params.bytes_contains_key;
        Self {
            blocks: &[],
            bytes,
            params,
        }
    }
}

/// A view's one-key lookup, as [`ContainsKey`].
pub(crate) type ViewContainsKey = unsafe fn(&KeyView<'_>, u64) -> bool;

/// What a one-key lookup reads through its one pointer: an owned filter's
/// [`KeyBlocks`] or a view's [`KeyView`].
pub(crate) trait KeySource {
    /// The probes' parameters.
    fn key_params(&self) -> &Params;
    /// The block of the key with this hash: `blocks[block_index(hash, b)]`
    /// for the array's b blocks, without a bounds check.
    fn key_block(&self, hash: u64) -> &[u64; 8];
}

impl KeySource for KeyBlocks {
    #[inline]
    fn key_params(&self) -> &Params {
        self.params()
    }

    #[inline]
    fn key_block(&self, hash: u64) -> &[u64; 8] {
        let blocks = self.blocks();
        let index = block_index(hash, blocks.len() as u64);
        // SAFETY: `block_index` reduces onto 0..blocks.len() (a
        // multiply-shift: ⌊h · b / 2^64⌋ < b), so `index` is in bounds.
        unsafe { &blocks.get_unchecked(index).0 }
    }
}

impl KeySource for KeyView<'_> {
    #[inline]
    fn key_params(&self) -> &Params {
        &self.params
    }

    #[inline]
    fn key_block(&self, hash: u64) -> &[u64; 8] {
        let index = block_index(hash, self.blocks.len() as u64);
        // SAFETY: as for `KeyBlocks`.
        unsafe { self.blocks.get_unchecked(index) }
    }
}
