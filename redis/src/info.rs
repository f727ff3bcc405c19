//! What `RedisBloomFilter::info` reports: BF.INFO's fields and the layout.

use std::fmt;
use std::time::Duration;

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
/// assert!(info.items <= info.set_bits.unwrap());
/// # Ok::<(), filterlab_redis::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Info {
    /// BF.INFO Capacity: the items the filter was sized for.
    pub capacity: u64,
    /// BF.INFO Size: bytes of bit array (⌈m/64⌉ · 8, over every part).
    pub size: u64,
    /// BF.INFO Number of filters: always 1 (the filter does not grow).
    pub filters: u32,
    /// BF.INFO Number of items inserted: the exact counter (BF.CARD).
    pub items: u64,
    /// BF.INFO Expansion rate: `None`, the filter does not grow.
    pub expansion_rate: Option<u32>,
    /// Bits in the array (m).
    pub num_bits: u64,
    /// Probes per key (k).
    pub num_hashes: u32,
    /// The XXH3-64 key hasher's seed.
    pub seed: u64,
    /// The FPP the filter was sized for, if any.
    pub target_fpp: Option<f64>,
    /// String keys holding the bits.
    pub parts: u64,
    /// Bits per string key.
    pub part_bits: u64,
    /// Bits set, when counted.
    pub set_bits: Option<u64>,
    /// The FPP given the bits set, (X/m)^k, when counted.
    pub expected_fpp: Option<f64>,
    /// Time to live, if the filter expires.
    pub ttl: Option<Duration>,
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Capacity                 {}", self.capacity)?;
        writeln!(f, "Size                     {}", self.size)?;
        writeln!(f, "Number of filters        {}", self.filters)?;
        writeln!(f, "Number of items inserted {}", self.items)?;
        writeln!(f, "Expansion rate           none (fixed size)")?;
        writeln!(
            f,
            "Bits, hashes, seed       {}, {}, {}",
            self.num_bits, self.num_hashes, self.seed
        )?;
        if let Some(fpp) = self.target_fpp {
            writeln!(f, "Target FPP               {fpp:e}")?;
        }
        write!(
            f,
            "Parts                    {} of {} bits",
            self.parts, self.part_bits
        )?;
        if let (Some(bits), Some(fpp)) = (self.set_bits, self.expected_fpp) {
            write!(
                f,
                "\nBits set                 {bits} (FPP given the fill {fpp:.3e})"
            )?;
        }
        if let Some(ttl) = self.ttl {
            write!(f, "\nTime to live             {ttl:?}")?;
        }
        Ok(())
    }
}
