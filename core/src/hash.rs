//! Stable, seeded key hashing and the derivation of probe indexes from one hash.
//!
//! Every filter stores the [`KeyHasher`] it was built with (algorithm id and
//! seed) in its binary format, so a filter written on one machine answers the
//! same on any other. Keys are fed to the hash as explicit little-endian bytes:
//! a key never hashes differently because of the platform's word size or byte
//! order.

use std::hash::{Hash, Hasher};

use xxhash_rust::xxh3;

use crate::{Error, ErrorKind};

/// The hash algorithm behind a [`KeyHasher`], recorded in the binary format by its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashAlgorithm {
    /// XXH3-64 with a 64-bit seed (xxhash-rust). Stable across platforms and versions.
    Xxh3,
}

impl HashAlgorithm {
    /// The id stored in the binary format.
    pub const fn id(self) -> u16 {
        match self {
            Self::Xxh3 => 1,
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

impl Default for KeyHasher {
    /// XXH3 with seed 0.
    fn default() -> Self {
        Self::new(0)
    }
}

impl KeyHasher {
    /// An XXH3 hasher with the given seed.
    pub const fn new(seed: u64) -> Self {
        let mixed_seed = seed ^ (((seed as u32).swap_bytes() as u64) << 32);
        Self {
            algorithm: HashAlgorithm::Xxh3,
            seed,
            flip: XXH3_SECRET_8_XOR_16.wrapping_sub(mixed_seed),
        }
    }

    /// A hasher from its stored algorithm id and seed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidHeader`] for an unknown algorithm id.
    pub fn from_parts(algorithm_id: u16, seed: u64) -> Result<Self, Error> {
        match HashAlgorithm::from_id(algorithm_id)? {
            HashAlgorithm::Xxh3 => Ok(Self::new(seed)),
        }
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
        match self.algorithm {
            HashAlgorithm::Xxh3 => xxh3::xxh3_64_with_seed(bytes, self.seed),
        }
    }

    /// Hashes a `u64` as its 8 little-endian bytes: equal to
    /// `hash_bytes(&value.to_le_bytes())`, computed without the byte detour.
    #[inline]
    pub fn hash_u64(&self, value: u64) -> u64 {
        match self.algorithm {
            HashAlgorithm::Xxh3 => xxh3_avalanche(value.rotate_left(32) ^ self.flip, 8),
        }
    }

    /// Hashes a `u32` as its 4 little-endian bytes: equal to
    /// `hash_bytes(&value.to_le_bytes())`.
    #[inline]
    pub fn hash_u32(&self, value: u32) -> u64 {
        match self.algorithm {
            HashAlgorithm::Xxh3 => {
                let input = u64::from(value) | (u64::from(value) << 32);
                xxh3_avalanche(input ^ self.flip, 4)
            }
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
/// Implemented for byte slices, strings and the primitive integers (as their
/// little-endian bytes; `usize`/`isize` as 64-bit values so 32- and 64-bit
/// platforms agree). Integers of different widths hash differently: insert and
/// query with the same type. For other types wrap the value in [`ViaHash`] or
/// hash your own canonical bytes.
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

macro_rules! integer_keys {
    ($($t:ty => $as:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn key_hash(&self, hasher: &KeyHasher) -> u64 {
                hasher.hash_bytes(&(*self as $as).to_le_bytes())
            }
        }
    )*};
}

integer_keys!(u8 => u8, u16 => u16, u128 => u128, i8 => i8, i16 => i16, i128 => i128);

macro_rules! word_keys {
    ($($t:ty => $as:ty, $method:ident),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn key_hash(&self, hasher: &KeyHasher) -> u64 {
                hasher.$method(*self as $as)
            }
        }
    )*};
}

word_keys!(
    u32 => u32, hash_u32, i32 => u32, hash_u32,
    u64 => u64, hash_u64, i64 => u64, hash_u64, usize => u64, hash_u64, isize => u64, hash_u64,
);

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
        let h = KeyHasher::new(99);
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
        assert_eq!(
            KeyHasher::new(0x5eed).hash(&42u64),
            xxh3::xxh3_64_with_seed(&42u64.to_le_bytes(), 0x5eed)
        );
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
    }

    /// The integer fast paths compute exactly XXH3-64 of the little-endian bytes.
    #[test]
    fn integer_fast_paths_equal_xxh3() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for seed in [0, 1, 42, u64::MAX, 0xdead_beef_0000_0001] {
            let h = KeyHasher::new(seed);
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
        assert_eq!(KeyHasher::from_parts(1, 5).unwrap(), KeyHasher::new(5));
    }
}
