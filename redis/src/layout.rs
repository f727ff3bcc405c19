//! Where a filter lives in Redis: the configuration hash and the bit array
//! strings of one name, their sizes, and how a bit index of
//! filterlab-bloom's array maps to a Redis bit offset.
//!
//! A filter `name` is the keys `{name}:config` (a hash) and
//! `{name}:bits:0` .. `{name}:bits:<parts - 1>` (strings). The braces are a
//! Redis Cluster hash tag: every key of a filter hashes to one slot, so one
//! script may touch them all.

use std::collections::HashMap;

use filterlab_bloom::BloomConfig;
use filterlab_core::sizing::{check_fpp, check_hashes};
use filterlab_core::{ErrorKind as CoreKind, KeyHasher};

use crate::error::{Error, ErrorKind};

/// The version of the key layout and configuration fields this build
/// writes, and the only one it reads. Stored in the field `version`.
pub const LAYOUT_VERSION: u32 = 1;

/// Bits per string key by default: 2^32, Redis' limit (512 MiB per string
/// and bit offsets below 2^32).
pub const DEFAULT_PART_BITS: u64 = 1 << 32;

/// The most string keys one filter may span: 1024 keys of 2^32 bits, 512 GiB.
pub const MAX_PARTS: u64 = 1024;

/// The configuration fields every script compares with the caller's, in
/// the order the scripts receive their values (ARGV[1..7]).
pub(crate) const CHECKED_FIELDS: [&str; 7] = [
    "version",
    "num_bits",
    "num_hashes",
    "hasher",
    "seed",
    "part_bits",
    "parts",
];

/// The layout version of a shard of a sharded filter, stored in its field
/// `version`: shard layouts count from 1001, so that a plain handle never
/// takes a shard for a filter of its own (it refuses the version).
pub const SHARD_LAYOUT_VERSION: u32 = 1001;

/// The fields every script on a shard compares, in order: a plain
/// filter's, then the shard count, the shard's index and the creation's
/// epoch (a shard re-created under the filter is another epoch).
pub(crate) const SHARD_FIELDS: [&str; 10] = join(CHECKED_FIELDS, ["shards", "shard", "epoch"]);

/// The fields written at creation beside the checked ones (ARGV[8..9] of
/// the scripts that create a filter): what the filter was sized for. They
/// change no bit a key maps to.
pub(crate) const SIZING_FIELDS: [&str; 2] = ["capacity", "target_fpp"];

/// The exact item counter's field.
pub(crate) const ITEMS_FIELD: &str = "items";

/// A filter's stored configuration: everything in its configuration hash
/// but the counter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Layout {
    /// Bits, probes per key and the key hasher: filterlab-bloom's configuration.
    pub(crate) bloom: BloomConfig,
    /// Bits per string key (a multiple of 64, at most 2^32).
    pub(crate) part_bits: u64,
    /// The items the filter was sized for.
    pub(crate) capacity: u64,
    /// The FPP it was sized for, if any.
    pub(crate) target_fpp: Option<f64>,
}

impl Layout {
    /// Validates a layout: a bit array split into parts of `part_bits` bits,
    /// at most [`MAX_PARTS`] of them.
    pub(crate) fn new(
        bloom: BloomConfig,
        part_bits: u64,
        capacity: u64,
        target_fpp: Option<f64>,
    ) -> Result<Self, Error> {
        if part_bits == 0 || !part_bits.is_multiple_of(64) || part_bits > DEFAULT_PART_BITS {
            return Err(Error::filter(
                CoreKind::InvalidParameter,
                format!("part_bits must be a multiple of 64 in 64..=2^32, got {part_bits}"),
            ));
        }
        let layout = Self {
            bloom,
            part_bits,
            capacity,
            target_fpp,
        };
        if layout.parts() > MAX_PARTS {
            return Err(Error::filter(
                CoreKind::TooLarge,
                format!(
                    "{} bits in parts of {part_bits} would take {} string keys, at most {MAX_PARTS} allowed",
                    bloom.num_bits,
                    layout.parts()
                ),
            ));
        }
        Ok(layout)
    }

    /// Bytes of the whole array: ⌈m/64⌉ words, as in filterlab-bloom's payload.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.bloom.num_bits.div_ceil(64) * 8
    }

    /// Bytes of each part but the last.
    pub(crate) fn part_bytes(&self) -> u64 {
        self.part_bits / 8
    }

    /// The number of string keys.
    pub(crate) fn parts(&self) -> u64 {
        self.total_bytes().div_ceil(self.part_bytes())
    }

    /// Bytes of part `part`.
    pub(crate) fn part_len(&self, part: u64) -> u64 {
        let start = part * self.part_bytes();
        self.part_bytes().min(self.total_bytes() - start)
    }

    /// The values of [`CHECKED_FIELDS`], as stored.
    pub(crate) fn checked_values(&self) -> [String; 7] {
        [
            LAYOUT_VERSION.to_string(),
            self.bloom.num_bits.to_string(),
            self.bloom.num_hashes.to_string(),
            self.bloom.hasher.algorithm().id().to_string(),
            self.bloom.hasher.seed().to_string(),
            self.part_bits.to_string(),
            self.parts().to_string(),
        ]
    }

    /// The values of [`SIZING_FIELDS`], as stored (the target FPP as its
    /// IEEE-754 bits, 0 for none, as in filterlab-bloom's format).
    pub(crate) fn sizing_values(&self) -> [String; 2] {
        [
            self.capacity.to_string(),
            self.target_fpp.map_or(0, f64::to_bits).to_string(),
        ]
    }

    /// Reads a configuration hash (HGETALL's reply): the layout and the
    /// item counter.
    pub(crate) fn from_fields(
        name: &str,
        fields: &HashMap<String, String>,
    ) -> Result<(Self, u64), Error> {
        let key = config_key(name);
        check_stored(name, &key, fields, "", LAYOUT_VERSION)?;
        let field = |field: &str| number_field(fields, &key, field);
        let damaged = |what: String| Error::new(ErrorKind::Damaged, format!("{name:?}: {what}"));
        let num_bits = field("num_bits")?;
        let num_hashes = u32::try_from(field("num_hashes")?)
            .ok()
            .filter(|&k| check_hashes(k).is_ok())
            .ok_or_else(|| damaged("num_hashes outside 1..=64".into()))?;
        // An id this build does not know is core's InvalidHeader.
        let hasher_id = u16::try_from(field("hasher")?).unwrap_or(0);
        let hasher = KeyHasher::from_parts(hasher_id, field("seed")?)?;
        let target = field("target_fpp")?;
        let target_fpp = (target != 0).then(|| f64::from_bits(target));
        if num_bits == 0 || target_fpp.is_some_and(|p| check_fpp(p).is_err()) {
            return Err(damaged(format!(
                "num_bits {num_bits}, target_fpp {target_fpp:?}"
            )));
        }
        let bloom = BloomConfig {
            num_bits,
            num_hashes,
            hasher,
        };
        let layout = Self::new(bloom, field("part_bits")?, field("capacity")?, target_fpp)
            .map_err(|err| damaged(err.to_string()))?;
        if field("parts")? != layout.parts() {
            return Err(damaged(format!(
                "{} parts stored, the sizes imply {}",
                field("parts")?,
                layout.parts()
            )));
        }
        Ok((layout, field(ITEMS_FIELD)?))
    }
}

/// Checks that the hash `key` of the filter `name` (HGETALL's reply) exists
/// and has layout `version`; `sharded` ("" or "sharded ") names the kind
/// in the errors.
pub(crate) fn check_stored(
    name: &str,
    key: &str,
    fields: &HashMap<String, String>,
    sharded: &str,
    version: u32,
) -> Result<(), Error> {
    if fields.is_empty() {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!("no {sharded}filter named {name:?}: {key} does not exist"),
        ));
    }
    let stored = number_field(fields, key, "version")?;
    if stored != u64::from(version) {
        return Err(Error::filter(
            CoreKind::UnsupportedVersion,
            format!("{name:?} has {sharded}layout version {stored}, this build reads {version}"),
        ));
    }
    Ok(())
}

/// Field `field` of the hash `key` (HGETALL's reply), a number; missing or
/// not a number is damage.
pub(crate) fn number_field(
    fields: &HashMap<String, String>,
    key: &str,
    field: &str,
) -> Result<u64, Error> {
    let value = fields
        .get(field)
        .ok_or_else(|| Error::new(ErrorKind::Damaged, format!("{key}: no field {field}")))?;
    value.parse().map_err(|_| {
        Error::new(
            ErrorKind::Damaged,
            format!("{key}: field {field} is {value:?}, not a number"),
        )
    })
}

/// `first` then `then`: field lists that extend a plain filter's.
pub(crate) const fn join<const A: usize, const B: usize, const C: usize>(
    first: [&'static str; A],
    then: [&'static str; B],
) -> [&'static str; C] {
    assert!(A + B == C, "the joined list has the length of both");
    let mut joined = [""; C];
    let mut i = 0;
    while i < A {
        joined[i] = first[i];
        i += 1;
    }
    while i < C {
        joined[i] = then[i - A];
        i += 1;
    }
    joined
}

/// The key of a filter's configuration hash.
pub(crate) fn config_key(name: &str) -> String {
    format!("{{{name}}}:config")
}

/// The keys of a filter, config first, then the parts in order.
pub(crate) fn keys(name: &str, parts: u64) -> Vec<String> {
    let mut keys = vec![config_key(name)];
    keys.extend((0..parts).map(|part| format!("{{{name}}}:bits:{part}")));
    keys
}

/// Refuses names the hash tag could not hold: empty, or with a brace.
pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    if name.is_empty() || name.contains(['{', '}']) {
        return Err(Error::filter(
            CoreKind::InvalidParameter,
            format!("a filter name must be non-empty and without braces, got {name:?}"),
        ));
    }
    Ok(())
}

/// The Redis bit offset (over the concatenated parts) of bit `index` of
/// filterlab-bloom's array.
///
/// filterlab-bloom keeps bit i in bit i mod 64 of little-endian word i / 64,
/// that is in byte i / 8 at bit i mod 8 counted from the least significant
/// bit. Redis' SETBIT/GETBIT count from the most significant bit of each
/// byte. Flipping the low three bits of the index makes the Redis string
/// byte for byte the filterlab-bloom payload, so export and import copy
/// bytes and never reorder bits.
#[inline]
pub(crate) const fn redis_offset(index: u64) -> u64 {
    index ^ 7
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(num_bits: u64, part_bits: u64) -> Result<Layout, Error> {
        let bloom = BloomConfig {
            num_bits,
            num_hashes: 3,
            hasher: KeyHasher::new(1),
        };
        Layout::new(bloom, part_bits, 100, Some(0.01))
    }

    #[test]
    fn parts_cover_the_payload() {
        let one = layout(1000, DEFAULT_PART_BITS).unwrap();
        assert_eq!(
            (one.total_bytes(), one.parts(), one.part_len(0)),
            (128, 1, 128)
        );
        let split = layout(1000, 256).unwrap();
        assert_eq!(split.parts(), 4);
        let lens: Vec<u64> = (0..4).map(|p| split.part_len(p)).collect();
        assert_eq!(lens, [32, 32, 32, 32]);
        let uneven = layout(1000, 384).unwrap();
        assert_eq!((uneven.parts(), uneven.part_len(2)), (3, 32));
        let huge = layout(40_000_000_000, DEFAULT_PART_BITS).unwrap();
        assert_eq!(huge.parts(), 10);
        assert_eq!(huge.part_len(9), 5_000_000_000 - 9 * (1 << 29));
    }

    #[test]
    fn bad_layouts_are_refused() {
        for part_bits in [0, 8, 100, DEFAULT_PART_BITS + 64] {
            let err = layout(1000, part_bits).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Filter(CoreKind::InvalidParameter));
        }
        let err = layout(MAX_PARTS * 64 + 1, 64).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Filter(CoreKind::TooLarge));
    }

    #[test]
    fn redis_offsets_match_the_payload_bytes() {
        // Redis bit offset o is bit 7 - o % 8 of byte o / 8.
        for index in 0..256u64 {
            let offset = redis_offset(index);
            assert_eq!(offset / 8, index / 8);
            assert_eq!(7 - offset % 8, index % 8);
        }
    }

    #[test]
    fn fields_round_trip() {
        let original = layout(1000, 256).unwrap();
        let mut fields: HashMap<String, String> = CHECKED_FIELDS
            .iter()
            .chain(&SIZING_FIELDS)
            .map(|f| (*f).to_owned())
            .zip(
                original
                    .checked_values()
                    .into_iter()
                    .chain(original.sizing_values()),
            )
            .collect();
        fields.insert(ITEMS_FIELD.into(), "5".into());
        assert_eq!(Layout::from_fields("x", &fields).unwrap(), (original, 5));
        fields.insert("parts".into(), "3".into());
        assert_eq!(
            Layout::from_fields("x", &fields).unwrap_err().kind(),
            ErrorKind::Damaged
        );
        fields.insert("version".into(), "2".into());
        let err = Layout::from_fields("x", &fields).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Filter(CoreKind::UnsupportedVersion));
        let err = Layout::from_fields("x", &HashMap::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
    }

    #[test]
    fn names_with_braces_are_refused() {
        assert!(check_name("users").is_ok());
        for name in ["", "a{b", "a}b"] {
            assert!(check_name(name).is_err());
        }
        assert_eq!(keys("u", 2), ["{u}:config", "{u}:bits:0", "{u}:bits:1"]);
    }
}
