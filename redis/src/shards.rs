//! Where a sharded filter lives: S shards, each a plain filter's keys under
//! a hash tag of its own, the tags chosen so that the shards' slots are
//! spread evenly over Redis Cluster's 16,384 slots; a marker under the
//! filter's name holds the configuration and the state of the filter as a
//! whole; and which shard a key goes to.

use std::collections::HashMap;

use filterlab_core::{ErrorKind as CoreKind, mix64, reduce};

use crate::error::{Error, ErrorKind};
use crate::layout::{CHECKED_FIELDS, LAYOUT_VERSION, Layout, check_stored, join, number_field};

/// The version of the sharded layout (marker and shards) this build writes
/// and reads, stored in the marker's field `version`.
pub const SHARDED_LAYOUT_VERSION: u32 = 1;

/// Shards per filter by default: 64, about 21 per master of a 3-master
/// cluster, enough to stay balanced within a few percent as masters are
/// added up to a dozen or so (slots move between masters with their shards).
pub const DEFAULT_SHARDS: u64 = 64;

/// The most shards a filter may have (each a round trip per batch on a
/// cluster, and a hash tag found by a search that grows with their number).
pub const MAX_SHARDS: u64 = 1024;

/// Redis Cluster's hash slots.
const SLOTS: u64 = 16_384;

/// Salt of the hash that picks a key's shard, so that the shard is
/// independent of the probes (which use the key hash itself).
const SHARD_SALT: u64 = 0x5348_4152_4445_4421;

/// The marker's configuration fields, in the order the marker scripts
/// receive them; the marker also holds `epoch` and `state`.
pub(crate) const MARKER_FIELDS: [&str; 10] =
    join(CHECKED_FIELDS, ["shards", "capacity", "target_fpp"]);

/// A sharded filter's configuration: the layout of each shard, the number
/// of shards and what the whole filter was sized for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ShardedLayout {
    /// Each shard: its bits, probes, hasher, parts, and its share of the
    /// sizing (capacity ⌈n/S⌉, the target FPP).
    pub(crate) shard: Layout,
    pub(crate) shards: u64,
    /// The items the whole filter was sized for.
    pub(crate) capacity: u64,
}

impl ShardedLayout {
    /// Validates the number of shards.
    pub(crate) fn new(shard: Layout, shards: u64, capacity: u64) -> Result<Self, Error> {
        if shards == 0 || shards > MAX_SHARDS {
            return Err(Error::filter(
                CoreKind::InvalidParameter,
                format!("a sharded filter has 1..={MAX_SHARDS} shards, got {shards}"),
            ));
        }
        Ok(Self {
            shard,
            shards,
            capacity,
        })
    }

    /// Bits over all shards.
    pub(crate) fn total_bits(&self) -> u64 {
        self.shard.bloom.num_bits * self.shards
    }

    /// The values of [`MARKER_FIELDS`], as stored.
    pub(crate) fn marker_values(&self) -> [String; 10] {
        let shard = self.shard.checked_values();
        [
            SHARDED_LAYOUT_VERSION.to_string(),
            shard[1].clone(),
            shard[2].clone(),
            shard[3].clone(),
            shard[4].clone(),
            shard[5].clone(),
            shard[6].clone(),
            self.shards.to_string(),
            self.capacity.to_string(),
            self.shard.sizing_values()[1].clone(),
        ]
    }

    /// Reads a marker (HGETALL's reply): the layout, the epoch and the state.
    pub(crate) fn from_marker(
        name: &str,
        fields: &HashMap<String, String>,
    ) -> Result<(Self, u64, String), Error> {
        let key = marker_key(name);
        check_stored(name, &key, fields, "sharded ", SHARDED_LAYOUT_VERSION)?;
        let number = |field: &str| number_field(fields, &key, field);
        let shards = number("shards")?;
        let capacity = number("capacity")?;
        // A shard's configuration is a plain filter's, with its share of the
        // capacity.
        let mut shard_fields = fields.clone();
        shard_fields.insert("version".into(), LAYOUT_VERSION.to_string());
        shard_fields.insert(
            "capacity".into(),
            shard_capacity(capacity, shards.max(1)).to_string(),
        );
        shard_fields.insert("items".into(), "0".into());
        let (shard, _) = Layout::from_fields(name, &shard_fields)?;
        let layout = Self::new(shard, shards, capacity)
            .map_err(|err| Error::new(ErrorKind::Damaged, format!("{name:?}: {err}")))?;
        let epoch = number("epoch")?;
        let state = fields.get("state").cloned().unwrap_or_default();
        Ok((layout, epoch, state))
    }
}

/// A shard's share of the capacity: ⌈n/S⌉.
pub(crate) fn shard_capacity(capacity: u64, shards: u64) -> u64 {
    capacity.div_ceil(shards)
}

/// The key of a sharded filter's marker.
pub(crate) fn marker_key(name: &str) -> String {
    format!("{{{name}}}:sharded")
}

/// The shard a key hash goes to: its salted mix, reduced onto the shards
/// by multiply-shift.
#[inline]
pub(crate) fn shard_of(hash: u64, shards: u64) -> usize {
    reduce(mix64(hash ^ SHARD_SALT), shards) as usize
}

/// The hash tag of shard `shard` of `shards`: `<name>#<shard>.<j>` with the
/// least j whose slot falls in the shard's even share of the slots,
/// [shard·16384/S, (shard+1)·16384/S). Every client computes the same tags.
pub(crate) fn shard_tag(name: &str, shard: u64, shards: u64) -> String {
    let low = shard * SLOTS / shards;
    let high = (shard + 1) * SLOTS / shards;
    // Each try hits with probability 1/S (or more): about S tries.
    (0..u64::MAX)
        .map(|j| format!("{name}#{shard}.{j}"))
        .find(|tag| (low..high).contains(&u64::from(slot(tag.as_bytes()))))
        .expect("some tag falls in every range")
}

/// The Redis Cluster slot of a hash tag: CRC16 (XMODEM) mod 16,384.
pub(crate) fn slot(tag: &[u8]) -> u16 {
    crc16(tag) % SLOTS as u16
}

/// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster uses.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::cluster_routing::Slot;

    #[test]
    fn slots_are_redis_clusters() {
        // The check value of CRC16/XMODEM, and Redis's own example.
        assert_eq!(crc16(b"123456789"), 0x31c3);
        for tag in ["user1000", "events#3.17", "a"] {
            let ours = Slot::new(slot(tag.as_bytes())).unwrap();
            assert_eq!(ours, Slot::for_key(format!("{{{tag}}}:config")), "{tag}");
        }
    }

    #[test]
    fn tags_spread_shards_over_the_slots() {
        for shards in [1, 3, 64, 1000] {
            let slots: Vec<u64> = (0..shards)
                .map(|shard| u64::from(slot(shard_tag("events", shard, shards).as_bytes())))
                .collect();
            for (shard, &slot) in (0..shards).zip(&slots) {
                assert!(slot >= shard * SLOTS / shards && slot < (shard + 1) * SLOTS / shards);
            }
        }
        assert_eq!(shard_tag("x", 0, 1), "x#0.0");
    }

    #[test]
    fn keys_spread_over_the_shards() {
        let shards = 64;
        let mut counts = vec![0u64; shards as usize];
        let hasher = filterlab_core::KeyHasher::new(3);
        let n = 640_000u64;
        for key in 0..n {
            counts[shard_of(hasher.hash(&key), shards)] += 1;
        }
        // Binomial(640,000, 1/64): mean 10,000, σ ≈ 99; 6σ on either side.
        assert!(
            counts.iter().all(|&count| count.abs_diff(10_000) < 600),
            "{counts:?}"
        );
    }
}
