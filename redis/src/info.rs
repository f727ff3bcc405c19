//! What `RedisBloomFilter::info` reports: BF.INFO's fields and the layout.

use std::fmt;
use std::time::Duration;

use filterlab_bloom::BloomConfig;

/// A shared filter as BF.INFO describes one, plus its configuration and
/// layout.
///
/// # Examples
///
/// ```no_run
/// # // no_run: needs a Redis server.
/// use filterlab_redis::RedisBloomFilter;
///
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// let mut seen = RedisBloomFilter::open(&client, "orders")?;
/// let info = seen.info(true)?;
/// println!("{info}");
/// assert!(info.items <= info.fill.unwrap().set_bits);
/// # Ok::<(), filterlab_redis::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Info {
    /// BF.INFO Capacity: the items the filter was sized for (its
    /// `expected_items`).
    pub capacity: u64,
    /// BF.INFO Size: bytes of bit array (⌈m/64⌉ · 8, over every part).
    pub size: u64,
    /// BF.INFO Number of items inserted: the exact counter (BF.CARD).
    pub items: u64,
    /// Bits, probes per key and key hasher: the configuration a local
    /// `BloomFilter` needs to answer alike.
    pub config: BloomConfig,
    /// The FPP the filter was sized for, if any.
    pub target_fpp: Option<f64>,
    /// String keys holding the bits (see
    /// [`MAX_PARTS`](crate::MAX_PARTS)).
    pub parts: u64,
    /// Bits per string key (the last part may hold fewer).
    pub part_bits: u64,
    /// The bits set and the FPP they give, when counted.
    pub fill: Option<Fill>,
    /// Time to live, if the filter expires (the configuration's; every part
    /// has the same).
    pub ttl: Option<Duration>,
}

impl Info {
    /// BF.INFO Number of filters: always 1 (the filter does not grow).
    pub fn filters(&self) -> u32 {
        1
    }

    /// BF.INFO Expansion rate: `None`, the filter does not grow.
    pub fn expansion_rate(&self) -> Option<u32> {
        None
    }
}

/// How full a filter is: counted on the server by BITCOUNT.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Fill {
    /// Bits set (X).
    pub set_bits: u64,
    /// The FPP given the fill, (X/m)^k: exact for the filter as it is now.
    pub expected_fpp: f64,
}

impl fmt::Display for Info {
    /// BF.INFO's lines, then the layout's, one `label value` line each.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let BloomConfig {
            num_bits,
            num_hashes,
            hasher,
        } = self.config;
        let mut lines = vec![
            ("Capacity", self.capacity.to_string()),
            ("Size", self.size.to_string()),
            ("Number of filters", self.filters().to_string()),
            ("Number of items inserted", self.items.to_string()),
            ("Expansion rate", "none (fixed size)".to_owned()),
            (
                "Bits, hashes, seed",
                format!("{num_bits}, {num_hashes}, {}", hasher.seed()),
            ),
        ];
        lines.extend(
            self.target_fpp
                .map(|fpp| ("Target FPP", format!("{fpp:e}"))),
        );
        lines.push((
            "Parts",
            format!("{} of {} bits", self.parts, self.part_bits),
        ));
        lines.extend(self.fill.map(|fill| {
            let fpp = fill.expected_fpp;
            (
                "Bits set",
                format!("{} (FPP given the fill {fpp:.3e})", fill.set_bits),
            )
        }));
        lines.extend(self.ttl.map(|ttl| ("Time to live", format!("{ttl:?}"))));
        for (i, (label, value)) in lines.iter().enumerate() {
            let separator = if i == 0 { "" } else { "\n" };
            write!(f, "{separator}{label:<24} {value}")?;
        }
        Ok(())
    }
}
