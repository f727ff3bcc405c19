//! Stable, seeded key hashing and the derivation of probe indexes from one hash.
//!
//! Every filter stores the [`KeyHasher`] it was built with (algorithm id and
//! seed) in its binary format, so a filter written on one machine answers the
//! same on any other. Keys are fed to the hash as explicit little-endian bytes:
//! a key never hashes differently because of the platform's word size or byte
//! order.
//!
//! Integer keys hash by value (hasher ids 2 and 3): `5i32`, `5u8` and
//! `5u64` are one key, see [`Key`]. Filters written with id 1 keep hashing
//! integers by width, as they did when written. The default, id 3, hashes
//! an integer key with a seeded folded multiply, a third of XXH3's work for
//! the same statistical quality in the filters (see
//! [`HashAlgorithm::FoldedMultiply`]); byte keys hash with XXH3 under every
//! id.

use std::hash::{Hash, Hasher};

use xxhash_rust::xxh3;

use crate::{Error, ErrorKind};

/// The hash algorithm behind a [`KeyHasher`], recorded in the binary format by its id.
///
/// Every id hashes bytes and strings with XXH3-64 and the 64-bit seed
/// (xxhash-rust), and is stable across platforms and versions. They differ
/// in integer keys (see [`Key`]): by width (id 1) or by value (ids 2 and
/// 3), and for values in `0..=u64::MAX` through XXH3 (ids 1 and 2) or a
/// seeded folded multiply (id 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashAlgorithm {
    /// Id 1: integer keys hashed as the little-endian bytes of their own
    /// type, so `5u32` and `5u64` are different keys. What every filter
    /// was written with before id 2; such files read and answer as before.
    Xxh3,
    /// Id 2: integer keys hashed by value, whatever their type, so
    /// `5i32`, `5u8` and `5u64` are one key and no negative value is an
    /// unsigned one. The default from id 2 until id 3; such files read and
    /// answer as before.
    Xxh3ByValue,
    /// Id 3, the default: integer keys by value as under id 2, a value in
    /// `0..=u64::MAX` through two folded multiplies (the construction of
    /// foldhash and wyhash: the 128-bit product's halves XORed) after XOR
    /// with the mixed seed, about 6 instructions where XXH3 takes 17. Other
    /// integer values and byte keys hash as under id 2.
    ///
    /// One folded multiply is not enough: sequential keys, or keys that
    /// differ in one bit, then land in a filter's blocks more evenly than
    /// random keys, or in correlated bits, and the FPP leaves its exact
    /// formula (measured: blocked Bloom 0.89×, split block 0.72× the
    /// theory, cuckoo 3.2× on keys differing in bit 40). Two pass every
    /// statistical test the filters have, on sequential, one-bit and random
    /// keys alike (`tests/hash_quality.rs` in filterlab-bloom).
    FoldedMultiply,
}

impl HashAlgorithm {
    /// The id stored in the binary format.
    pub const fn id(self) -> u16 {
        match self {
            Self::Xxh3 => 1,
            Self::Xxh3ByValue => 2,
            Self::FoldedMultiply => 3,
        }
    }

    /// The algorithm with the given format id.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`] for an id this build does not know.
    pub fn from_id(id: u16) -> Result<Self, Error> {
        match id {
            1 => Ok(Self::Xxh3),
            2 => Ok(Self::Xxh3ByValue),
            3 => Ok(Self::FoldedMultiply),
            other => Err(Error::new(
                ErrorKind::InvalidHeader,
                format!("unknown hash algorithm id {other}"),
            )),
        }
    }
}

/// The seeded, stable hasher a filter uses to turn keys into 64-bit hashes.
///
/// # Examples
///
/// ```
/// use filterlab_core::KeyHasher;
///
/// let hasher = KeyHasher::new(42);
/// // The same key and seed give the same hash on every platform and run.
/// assert_eq!(hasher.hash("apple"), KeyHasher::new(42).hash("apple"));
/// assert_ne!(hasher.hash("apple"), KeyHasher::new(43).hash("apple"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHasher {
    algorithm: HashAlgorithm,
    seed: u64,
    /// XXH3's seed-dependent constant for 4- to 8-byte inputs, computed once
    /// so that hashing an integer key costs only the avalanche.
    flip: u64,
    /// Id 3's mixed seed, XORed into an integer key before its multiplies.
    fold_seed: u64,
}

/// XOR of the XXH3 default secret's words at byte offsets 8 and 16 (the
/// XXH3 specification's `kSecret`).
const XXH3_SECRET_8_XOR_16: u64 = 0x1cad_21f7_2c81_017c ^ 0xdb97_9083_e96d_d4de;

/// XXH3-64's final mix for inputs of 4 to 8 bytes.
#[inline]
const fn xxh3_avalanche(mut value: u64, len: u64) -> u64 {
    const PRIME: u64 = 0x9fb2_1c65_1e98_df25;
    value ^= value.rotate_left(49) ^ value.rotate_left(24);
    value = value.wrapping_mul(PRIME);
    value ^= (value >> 35).wrapping_add(len);
    value = value.wrapping_mul(PRIME);
    value ^ (value >> 28)
}

/// Id 3's two multipliers: the first two odd 64-bit words of π's
/// fractional hexadecimal digits (0x243f6a88..., 0x082efa98...), nothing
/// chosen. Part of the format of every filter written with id 3.
const FOLD_MULTIPLIERS: [u64; 2] = [0x243f_6a88_85a3_08d3, 0x082e_fa98_ec4e_6c89];

/// The 128-bit product of `x` and `y`, its high half XORed into its low
/// half: a multiply whose every output bit depends on every input bit.
#[inline]
const fn folded_multiply(x: u64, y: u64) -> u64 {
    let full = x as u128 * y as u128;
    full as u64 ^ (full >> 64) as u64
}

impl Default for KeyHasher {
    /// The default algorithm ([`HashAlgorithm::FoldedMultiply`], id 3),
    /// seed 0.
    fn default() -> Self {
        Self::new(0)
    }
}

impl KeyHasher {
    /// The default hasher with the given seed: integer keys by value
    /// through a seeded folded multiply, byte keys through XXH3
    /// ([`HashAlgorithm::FoldedMultiply`], id 3).
    pub const fn new(seed: u64) -> Self {
        Self::with_algorithm(HashAlgorithm::FoldedMultiply, seed)
    }

    /// A hasher of the given algorithm and seed: [`HashAlgorithm::Xxh3`]
    /// (id 1) or [`HashAlgorithm::Xxh3ByValue`] (id 2) to build a filter
    /// that hashes integer keys as filters written with those ids do (one
    /// that must equal or merge with such a filter).
    pub const fn with_algorithm(algorithm: HashAlgorithm, seed: u64) -> Self {
        let mixed_seed = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
        Self {
            algorithm,
            seed,
            flip: XXH3_SECRET_8_XOR_16.wrapping_sub(mixed_seed),
            // Mixed, so that seeds differing in a few bits give unrelated
            // functions, not one function on XOR-shifted keys (a retry with
            // the next seed must not meet the same collisions); offset by
            // the golden gamma first, so that seed 0 is no fixed point.
            fold_seed: mix64(seed.wrapping_add(GOLDEN_GAMMA)),
        }
    }

    /// A hasher from its stored algorithm id and seed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`] for an unknown algorithm id.
    pub fn from_parts(algorithm_id: u16, seed: u64) -> Result<Self, Error> {
        Ok(Self::with_algorithm(
            HashAlgorithm::from_id(algorithm_id)?,
            seed,
        ))
    }

    /// The hash algorithm.
    pub const fn algorithm(&self) -> HashAlgorithm {
        self.algorithm
    }

    /// The seed.
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// Hashes any [`Key`].
    #[inline]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.key_hash(self)
    }

    /// Hashes raw bytes.
    #[inline]
    pub fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        xxh3::xxh3_64_with_seed(bytes, self.seed)
    }

    /// Hashes a `u64` as its 8 little-endian bytes: equal to
    /// `hash_bytes(&value.to_le_bytes())`, computed without the byte detour.
    #[inline]
    pub fn hash_u64(&self, value: u64) -> u64 {
        xxh3_avalanche(value.rotate_left(32) ^ self.flip, 8)
    }

    /// Hashes a `u64` key as id 3 does ([`HashAlgorithm::FoldedMultiply`],
    /// whatever this hasher's algorithm): two folded multiplies of the value
    /// XORed with the mixed seed.
    #[inline]
    pub const fn hash_u64_folded(&self, value: u64) -> u64 {
        let [first, second] = FOLD_MULTIPLIERS;
        folded_multiply(folded_multiply(value ^ self.fold_seed, first), second)
    }

    /// Hashes a `u32` as its 4 little-endian bytes: equal to
    /// `hash_bytes(&value.to_le_bytes())`.
    #[inline]
    pub fn hash_u32(&self, value: u32) -> u64 {
        let input = u64::from(value) | (u64::from(value) << 32);
        xxh3_avalanche(input ^ self.flip, 4)
    }

    /// Hashes an integer key by value (the rule of ids 2 and 3, whatever
    /// this hasher's algorithm): a value in `0..=u64::MAX` as the `u64` key
    /// (under id 3 [`hash_u64_folded`](Self::hash_u64_folded), else
    /// [`hash_u64`](Self::hash_u64)); any other (negative, or above
    /// `u64::MAX`) as 17 bytes, the 16 little-endian bytes of its 128-bit
    /// two's complement and a sign tag (1 for negative, 0 otherwise), so
    /// that `-1` and `u128::MAX` differ.
    #[inline]
    pub fn hash_integer(&self, negative: bool, bits: u128) -> u64 {
        match u64::try_from(bits) {
            Ok(small) if !negative => self.hash_value(small),
            _ => {
                let mut tagged = [0u8; 17];
                tagged[..16].copy_from_slice(&bits.to_le_bytes());
                tagged[16] = u8::from(negative);
                self.hash_bytes(&tagged)
            }
        }
    }

    /// Whether integer keys hash by value (ids 2 and 3) rather than by
    /// width (id 1).
    #[inline]
    const fn by_value(&self) -> bool {
        !matches!(self.algorithm, HashAlgorithm::Xxh3)
    }

    /// The hash of the `u64` key `value` under this hasher's algorithm.
    #[inline]
    fn hash_value(&self, value: u64) -> u64 {
        if matches!(self.algorithm, HashAlgorithm::FoldedMultiply) {
            self.hash_u64_folded(value)
        } else {
            self.hash_u64(value)
        }
    }

    /// Hashes a value through its [`std::hash::Hash`] implementation, fed as a
    /// portable byte stream (integers little-endian, `usize` as 64 bits).
    ///
    /// Prefer [`Key`] for filters that are persisted: `Hash` implementations
    /// of std types are not promised to stay the same across Rust versions.
    pub fn hash_std<T: Hash + ?Sized>(&self, value: &T) -> u64 {
        let mut state = PortableHasher {
            inner: xxh3::Xxh3::with_seed(self.seed),
        };
        value.hash(&mut state);
        state.inner.digest()
    }
}

/// Feeds `std::hash::Hash` output into XXH3 with fixed widths and byte order.
struct PortableHasher {
    inner: xxh3::Xxh3,
}

impl Hasher for PortableHasher {
    fn finish(&self) -> u64 {
        self.inner.digest()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.inner.update(bytes);
    }
    fn write_u8(&mut self, i: u8) {
        self.inner.update(&[i]);
    }
    fn write_u16(&mut self, i: u16) {
        self.inner.update(&i.to_le_bytes());
    }
    fn write_u32(&mut self, i: u32) {
        self.inner.update(&i.to_le_bytes());
    }
    fn write_u64(&mut self, i: u64) {
        self.inner.update(&i.to_le_bytes());
    }
    fn write_u128(&mut self, i: u128) {
        self.inner.update(&i.to_le_bytes());
    }
    fn write_usize(&mut self, i: usize) {
        self.inner.update(&(i as u64).to_le_bytes());
    }
    fn write_isize(&mut self, i: isize) {
        self.inner.update(&(i as i64).to_le_bytes());
    }
}

/// A key a filter can hash portably.
///
/// Implemented for byte slices, strings (their bytes), `bool`, `char` (its
/// code point as 4 bytes) and the primitive integers. For other types wrap
/// the value in [`ViaHash`] or hash your own canonical bytes.
///
/// **Integers hash by value**, whatever their type: `insert(&5)` (an
/// `i32`) then `contains(&5u64)` finds the key, as do `5u8`, `5usize` and
/// `5i128`; a negative value is never an unsigned one (`-1i32` is not
/// `u32::MAX`). Non-negative values up to `u64::MAX` hash exactly as the
/// `u64` of the same value; other values hash as
/// [`KeyHasher::hash_integer`] says.
///
/// Why by value rather than refusing the call at compile time: an integer
/// literal is an `i32` unless its context says otherwise, and the width of
/// a key rarely means anything to the caller (an id read as `u32` in one
/// service and `u64` in another is the same id). Requiring one key type per
/// filter in the type system would make every filter generic over its key,
/// and still let `u64` keys and `i64` keys of the same ids differ. Hashing
/// by value makes the mistake impossible instead.
///
/// The rule is that of the format's hasher ids 2
/// ([`HashAlgorithm::Xxh3ByValue`]) and 3 ([`HashAlgorithm::FoldedMultiply`],
/// the default), which differ only in the function a `u64` value goes
/// through. A filter read from a file of id 1, or built with
/// [`KeyHasher::with_algorithm`]`(`[`HashAlgorithm::Xxh3`]`, seed)`, hashes
/// integers as it always did, as the little-endian bytes of their own type
/// (`usize`/`isize` as 64-bit values), so it keeps answering as before; one
/// of id 2 keeps hashing `u64` values with XXH3.
pub trait Key {
    /// This key's 64-bit hash under `hasher`.
    fn key_hash(&self, hasher: &KeyHasher) -> u64;
}

impl Key for [u8] {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_bytes(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_bytes(self)
    }
}

impl Key for Vec<u8> {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_bytes(self)
    }
}

impl Key for str {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_bytes(self.as_bytes())
    }
}

impl Key for String {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_bytes(self.as_bytes())
    }
}

impl<K: Key + ?Sized> Key for &K {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        (**self).key_hash(hasher)
    }
}

impl<K: Key + ?Sized> Key for Box<K> {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        (**self).key_hash(hasher)
    }
}

/// The integer keys: by value ([`KeyHasher::hash_integer`]) under ids 2
/// and 3, by width under id 1 (`$by_width(hasher, value)`). `u64` and
/// `usize` take the `u64` path directly (the same under ids 1 and 2).
macro_rules! integer_keys {
    ($($t:ty => $by_width:expr),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn key_hash(&self, hasher: &KeyHasher) -> u64 {
                let value = *self;
                if hasher.by_value() {
                    // Sign-extended to 128 bits (`u128` keeps its bits).
                    #[allow(unused_comparisons, clippy::cast_lossless)]
                    let (negative, bits) = (value < 0, value as i128 as u128);
                    hasher.hash_integer(negative, bits)
                } else {
                    let by_width: fn(&KeyHasher, $t) -> u64 = $by_width;
                    by_width(hasher, value)
                }
            }
        }
    )*};
}

integer_keys!(
    u8 => |h, v| h.hash_bytes(&v.to_le_bytes()),
    u16 => |h, v| h.hash_bytes(&v.to_le_bytes()),
    u32 => KeyHasher::hash_u32,
    u128 => |h, v| h.hash_bytes(&v.to_le_bytes()),
    i8 => |h, v| h.hash_bytes(&v.to_le_bytes()),
    i16 => |h, v| h.hash_bytes(&v.to_le_bytes()),
    i32 => |h, v| h.hash_u32(v as u32),
    i64 => |h, v| h.hash_u64(v as u64),
    isize => |h, v| h.hash_u64(v as u64),
    i128 => |h, v| h.hash_bytes(&v.to_le_bytes()),
);

impl Key for u64 {
    /// Its 8 little-endian bytes under ids 1 and 2, the folded multiply
    /// under id 3.
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_value(*self)
    }
}

impl Key for usize {
    /// As the `u64` of the same value, on every platform.
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_value(*self as u64)
    }
}

impl Key for bool {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_bytes(&[u8::from(*self)])
    }
}

impl Key for char {
    #[inline]
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_u32(u32::from(*self))
    }
}

/// Adapts any [`std::hash::Hash`] type into a [`Key`], hashing it through a
/// portable byte stream (see [`KeyHasher::hash_std`]).
///
/// # Examples
///
/// ```
/// use filterlab_core::{KeyHasher, ViaHash};
///
/// #[derive(Hash)]
/// struct UserId { tenant: u32, id: u64 }
///
/// let hasher = KeyHasher::new(7);
/// let a = hasher.hash(&ViaHash(UserId { tenant: 1, id: 9 }));
/// let b = hasher.hash(&ViaHash(UserId { tenant: 1, id: 9 }));
/// assert_eq!(a, b);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ViaHash<T: ?Sized>(pub T);

impl<T: Hash + ?Sized> Key for ViaHash<T> {
    fn key_hash(&self, hasher: &KeyHasher) -> u64 {
        hasher.hash_std(&self.0)
    }
}

/// Maps a uniform 64-bit value onto `0..range` (Lemire's multiply-shift):
/// uses the high bits, so it stays uniform for ranges far beyond 2^32.
#[inline]
pub const fn reduce(x: u64, range: u64) -> u64 {
    ((x as u128 * range as u128) >> 64) as u64
}

/// A strong 64-bit finaliser (the SplitMix64 output function). Derives a
/// second, independent-looking hash from the first.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 2^64 / φ, odd: the multiplier that derives the second hash.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The probe sequence of one key: double hashing with a rotation, each value
/// reduced onto the range with [`reduce`].
///
/// With `h1` the key hash and `h2 = ((h1 ⊕ h1 >> 32) · γ) | 1` (γ = 2^64/φ),
/// the values are
/// `x₀ = h1`, `xᵢ₊₁ = rotl(xᵢ, 23) + h2 (mod 2^64)`, and the i-th probe is
/// `reduce(xᵢ, range)`. The reduction uses all 64 bits, so arrays beyond 2^32
/// positions stay uniform (Guava, RedisBloom and Spark once lost accuracy
/// there).
///
/// Why the rotation: plain and "enhanced" double hashing (`h1 + i·h2`, plus a
/// cubic term) were measured here and rejected. Reduced by multiply-shift, a
/// key's probes form an arithmetic progression in the high bits, and the FPP
/// came out 49% above the exact formula at m = 64, k = 12 and 22% above at
/// m = 19,200, k = 13. Rotating moves low bits into the high ones at every
/// step, which breaks the progression: the FPP then matches the exact formula
/// (independent probes) within ±0.5% at m = 64 to 256, as a full hash per
/// probe does, for one multiplication per probe instead of three.
///
/// # Examples
///
/// ```
/// use filterlab_core::Probes;
///
/// let probes: Vec<u64> = Probes::new(0x1234_5678_9abc_def0, 1 << 40).take(4).collect();
/// assert_eq!(probes.len(), 4);
/// assert!(probes.iter().all(|&i| i < 1 << 40));
/// ```
#[derive(Clone, Debug)]
pub struct Probes {
    x: u64,
    step: u64,
    range: u64,
}

impl Probes {
    /// The probe sequence for `hash` over `0..range`.
    #[inline]
    pub const fn new(hash: u64, range: u64) -> Self {
        Self {
            x: hash,
            step: (hash ^ (hash >> 32)).wrapping_mul(GOLDEN_GAMMA) | 1,
            range,
        }
    }

    /// The sequence for `hash` from its second probe on: `new(hash, range)`
    /// after one step. The first probe is `reduce(hash, range)`, known
    /// without the second hash, so a lookup that stops at its first probe
    /// never derives it.
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_core::{Probes, reduce};
    ///
    /// let (hash, range) = (0x1234_5678_9abc_def0, 1000);
    /// let all: Vec<u64> = Probes::new(hash, range).take(4).collect();
    /// assert_eq!(all[0], reduce(hash, range));
    /// assert_eq!(all[1..], Probes::after_first(hash, range).take(3).collect::<Vec<_>>());
    /// ```
    #[inline]
    pub const fn after_first(hash: u64, range: u64) -> Self {
        let first = Self::new(hash, range);
        Self {
            x: hash.rotate_left(23).wrapping_add(first.step),
            ..first
        }
    }

    /// The next raw 64-bit probe value, before reduction onto the range.
    #[inline]
    pub fn next_raw(&mut self) -> u64 {
        let value = self.x;
        self.x = self.x.rotate_left(23).wrapping_add(self.step);
        value
    }

    /// The next index in `0..range`.
    #[inline]
    pub fn next_index(&mut self) -> u64 {
        reduce(self.next_raw(), self.range)
    }
}

impl Iterator for Probes {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        Some(self.next_index())
    }
}

/// The odd multipliers that spread a key's 32-bit block seed over its probes
/// inside one 64-byte block, in the blocked filters: probe j of a block of
/// 2^b places is `(seed · BLOCK_MULTIPLIERS[j] mod 2^32) >> (32 − b)`. Each
/// probe is one multiplication of the seed, independent of the others, so
/// vector code computes a key's probes in one instruction. Multiplier j is
/// the high half of SplitMix64's output for j + 1 ([`mix64`]), forced odd.
/// Part of the binary format of every blocked filter: they decide which
/// places a key uses. One per probe a key may have (64,
/// [`MAX_HASHES`](crate::sizing::MAX_HASHES)).
pub static BLOCK_MULTIPLIERS: [u32; 64] = block_multipliers();

const fn block_multipliers() -> [u32; 64] {
    let mut table = [0; 64];
    let mut j = 0;
    while j < table.len() {
        table[j] = (mix64(j as u64 + 1) >> 32) as u32 | 1;
        j += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_hash_as_little_endian_bytes() {
        let h = KeyHasher::with_algorithm(HashAlgorithm::Xxh3ByValue, 99);
        assert_eq!(h.hash(&7u64), h.hash_bytes(&7u64.to_le_bytes()));
        assert_eq!(h.hash(&7usize), h.hash(&7u64));
        assert_eq!(h.hash(&-3isize), h.hash(&-3i64));
        assert_eq!(h.hash("ab"), h.hash(&String::from("ab")));
        assert_eq!(h.hash(&b"ab"[..]), h.hash("ab"));
        assert_eq!(h.hash(&&&5u32), h.hash(&5u32));
    }

    /// Golden values: these hashes are part of the on-disk contract. If this
    /// test fails, every persisted filter would answer differently.
    #[test]
    fn hashes_are_stable() {
        let h = KeyHasher::new(0);
        assert_eq!(h.hash_bytes(b""), 0x2d06_8005_38d3_94c2);
        let by_value = KeyHasher::with_algorithm(HashAlgorithm::Xxh3ByValue, 0x5eed);
        assert_eq!(
            by_value.hash(&42u64),
            xxh3::xxh3_64_with_seed(&42u64.to_le_bytes(), 0x5eed)
        );
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
        // Id 3, computed independently (Python integers) from its
        // definition: mix64(seed + γ) XORed in, two folded multiplies.
        for (seed, key, hash) in [
            (0, 0, 0x7d81_2fd5_0e98_01e6),
            (0, 1, 0xafc8_da40_0eca_070c),
            (0, 42, 0xa103_3498_beaf_a39f),
            (0x5eed, 42, 0x64ca_67c2_d524_59f0),
            (7, u64::MAX, 0x5abe_b2ed_3d90_51ed),
        ] {
            assert_eq!(KeyHasher::new(seed).hash(&key), hash, "{seed} {key}");
        }
        // Bytes keep XXH3 under id 3.
        assert_eq!(KeyHasher::new(0).hash_bytes(b""), 0x2d06_8005_38d3_94c2);
    }

    /// The integer fast paths compute exactly XXH3-64 of the little-endian
    /// bytes (id 1 hashes every integer that way).
    #[test]
    fn integer_fast_paths_equal_xxh3() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for seed in [0, 1, 42, u64::MAX, 0xdead_beef_0000_0001] {
            let h = KeyHasher::with_algorithm(HashAlgorithm::Xxh3, seed);
            for _ in 0..2000 {
                x = mix64(x.wrapping_add(1));
                assert_eq!(
                    h.hash_u64(x),
                    xxh3::xxh3_64_with_seed(&x.to_le_bytes(), seed)
                );
                let y = x as u32;
                assert_eq!(
                    h.hash_u32(y),
                    xxh3::xxh3_64_with_seed(&y.to_le_bytes(), seed)
                );
                assert_eq!(h.hash(&(x as i64)), h.hash_bytes(&x.to_le_bytes()));
                assert_eq!(h.hash(&(y as i32)), h.hash_bytes(&y.to_le_bytes()));
            }
            assert_eq!(h.hash(&'é'), h.hash_bytes(&u32::from('é').to_le_bytes()));
        }
    }

    #[test]
    fn std_hash_path_is_portable_for_usize() {
        let h = KeyHasher::new(1);
        assert_eq!(h.hash_std(&5usize), h.hash_std(&5u64));
    }

    #[test]
    fn probes_cover_ranges_beyond_u32() {
        // With range 2^40, indexes must reach the top of the range: count the
        // probes landing in each of 16 equal slices.
        let range = 1u64 << 40;
        let mut slices = [0u32; 16];
        for key in 0..4096u64 {
            for index in Probes::new(KeyHasher::new(3).hash(&key), range).take(4) {
                assert!(index < range);
                slices[(index >> 36) as usize] += 1;
            }
        }
        // 16384 probes over 16 slices: 1024 each, sd 31; 6 sd bounds.
        for count in slices {
            assert!((830..=1220).contains(&count), "slice counts {slices:?}");
        }
    }

    #[test]
    fn unknown_algorithm_id_is_an_error() {
        assert_eq!(
            KeyHasher::from_parts(9, 0).unwrap_err().kind(),
            ErrorKind::InvalidHeader
        );
        assert_eq!(
            KeyHasher::from_parts(1, 5).unwrap(),
            KeyHasher::with_algorithm(HashAlgorithm::Xxh3, 5)
        );
        let by_value = KeyHasher::with_algorithm(HashAlgorithm::Xxh3ByValue, 5);
        assert_eq!(KeyHasher::from_parts(2, 5).unwrap(), by_value);
        assert_eq!(KeyHasher::from_parts(3, 5).unwrap(), KeyHasher::new(5));
        assert_eq!(KeyHasher::default().algorithm().id(), 3);
        assert_eq!(HashAlgorithm::FoldedMultiply.id(), 3);
    }

    /// Id 3's integer hash avalanches: flipping any one input bit flips
    /// each output bit of the folded multiply with probability 1/2, over
    /// random keys (within 5 standard deviations, every one of the 64 × 64
    /// pairs). One folded multiply alone fails this: flipping the input's
    /// lowest bit flips the output's in 86% of keys.
    #[test]
    fn folded_multiply_avalanches() {
        let hasher = KeyHasher::new(0x0dd_5eed);
        let samples = 4000u32;
        let mut flips = [[0u32; 64]; 64];
        let mut key = 1u64;
        for _ in 0..samples {
            key = mix64(key);
            let hash = hasher.hash_u64_folded(key);
            for (input_bit, counts) in flips.iter_mut().enumerate() {
                let changed = hash ^ hasher.hash_u64_folded(key ^ 1 << input_bit);
                for (output_bit, count) in counts.iter_mut().enumerate() {
                    *count += (changed >> output_bit & 1) as u32;
                }
            }
        }
        let half = f64::from(samples) / 2.0;
        let allowed = 5.0 * half.sqrt() / std::f64::consts::SQRT_2;
        for (input_bit, counts) in flips.iter().enumerate() {
            for (output_bit, &count) in counts.iter().enumerate() {
                let off = (f64::from(count) - half).abs();
                assert!(
                    off < allowed,
                    "bit {input_bit} -> {output_bit}: {count} of {samples}"
                );
            }
        }
    }

    /// `v` hashed as every integer type that holds it.
    #[allow(irrefutable_let_patterns)] // `v` as its own type
    fn as_every_integer(h: &KeyHasher, v: i128) -> Vec<u64> {
        let mut hashes = Vec::new();
        macro_rules! each {
            ($($t:ty),*) => {$(
                if let Ok(value) = <$t>::try_from(v) {
                    hashes.push(h.hash(&value));
                }
            )*};
        }
        each!(
            i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
        );
        hashes
    }

    /// Under ids 2 and 3 an integer is one key whatever its type. Under
    /// id 2, non-negative values up to `u64::MAX` hash as the `u64` always
    /// has (id 1's), so filters of `u64` keys keep their bits; under id 3
    /// they go through the folded multiply, and everything else hashes as
    /// under id 2.
    #[test]
    fn integers_hash_by_value() {
        let legacy = KeyHasher::with_algorithm(HashAlgorithm::Xxh3, 42);
        let v2 = KeyHasher::with_algorithm(HashAlgorithm::Xxh3ByValue, 42);
        let v3 = KeyHasher::new(42);
        let edges = [i128::MIN, i128::from(i64::MIN), -129, -1, 0, 1, 255, 256];
        let more = [i128::from(u32::MAX), i128::from(u64::MAX), i128::MAX];
        for v in edges.into_iter().chain(more).chain(-300..300) {
            let [by_xxh3, by_fold] = [v2, v3].map(|h| as_every_integer(&h, v));
            for hashes in [&by_xxh3, &by_fold] {
                assert!(hashes.iter().all(|&hash| hash == hashes[0]), "{v}");
            }
            if let Ok(small) = u64::try_from(v) {
                assert_eq!(by_xxh3[0], legacy.hash(&small), "{v}");
                assert_eq!(by_fold[0], v3.hash_u64_folded(small), "{v}");
            } else {
                assert_eq!(by_fold, by_xxh3, "{v}");
            }
        }
        let mut x = 1u64;
        for _ in 0..1000 {
            x = mix64(x);
            assert_eq!(v2.hash(&x), legacy.hash(&x));
            assert_eq!(v2.hash(&(x as usize)), legacy.hash(&x));
            assert_eq!(v3.hash(&(x as usize)), v3.hash_u64_folded(x));
        }
        for h in [v2, v3] {
            // No negative value is an unsigned one of the same bits.
            assert_ne!(h.hash(&-1i32), h.hash(&u32::MAX));
            assert_ne!(h.hash(&-1i64), h.hash(&u64::MAX));
            assert_ne!(h.hash(&-1i128), h.hash(&u128::MAX));
            assert_ne!(h.hash(&i128::MIN), h.hash(&(1u128 << 127)));
            // The seed still matters, on both paths.
            let other = KeyHasher::with_algorithm(h.algorithm(), 43);
            assert_ne!(h.hash(&-1i8), other.hash(&-1i8));
            assert_ne!(h.hash(&1u8), other.hash(&1u8));
        }
    }

    /// Golden values of the by-value rule beyond `u64` (the rest is the
    /// `u64` path, pinned above): part of the on-disk contract of id 2.
    #[test]
    fn wide_integer_hashes_are_stable() {
        let h = KeyHasher::new(0);
        let mut negative_one = [0xff; 17];
        negative_one[16] = 1;
        assert_eq!(h.hash(&-1i32), h.hash_bytes(&negative_one));
        let mut big = [0; 17];
        big[8] = 1;
        assert_eq!(h.hash(&(1u128 << 64)), h.hash_bytes(&big));
        assert_eq!(h.hash(&-1i32), WIDE_GOLDEN[0]);
        assert_eq!(h.hash(&(1u128 << 64)), WIDE_GOLDEN[1]);
    }

    /// XXH3-64 (seed 0) of -1 and of 2^64 by the 17-byte rule, computed
    /// independently by `xxhsum -H3` (xxHash 0.8.1) over those 17 bytes.
    const WIDE_GOLDEN: [u64; 2] = [0x496d_bac1_fa1a_0d8a, 0xe664_2245_1396_549c];

    proptest::proptest! {
        /// Any `i64` is one key as every type that holds it.
        #[test]
        fn any_integer_is_one_key(v: i64, seed: u64) {
            let hashes = as_every_integer(&KeyHasher::new(seed), i128::from(v));
            proptest::prop_assert!(hashes.iter().all(|&hash| hash == hashes[0]));
        }
    }
}
