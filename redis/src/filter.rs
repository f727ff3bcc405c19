//! `RedisBloomFilter`: a handle on one shared filter, its lookups, inserts,
//! counters and lifecycle (delete, rename, expire).

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use filterlab_bloom::BloomConfig;
use filterlab_core::theory::{bloom_estimate_items, bloom_fpp_given_fill};
use filterlab_core::{Key, KeyHasher};
use redis::{FromRedisValue, Script};

use crate::endpoint::Endpoint;
use crate::error::{Error, ErrorKind};
use crate::info::{Fill, Info};
use crate::layout::{Layout, check_name, config_key, keys};
use crate::link::Link;
use crate::scripts::Call;
use crate::target::{State, Target, answers, key_methods, link_methods};

/// Bit positions (k per key) sent in one script call by default: 65,536,
/// about 9,000 keys at k = 7, a few milliseconds of server time.
pub const DEFAULT_BITS_PER_CALL: usize = 1 << 16;

/// A Bloom filter kept in Redis and shared by every process that opens it.
///
/// The handle caches the filter's configuration; every call runs one Lua
/// script that checks the stored configuration against it first, so a filter
/// re-created with other parameters gives [`ErrorKind::ConfigDrift`], never a
/// wrong answer. Keys hash and probe exactly as in
/// [`filterlab_bloom::BloomFilter`] of the same bits, hashes and seed.
///
/// A handle holds one connection, opened on first use and opened again after
/// a connection error. Calls take `&mut self`; give each thread its own
/// handle with [`Clone`] (a clone opens its own connection).
///
/// # Examples
///
/// ```no_run
/// # // no_run: needs a Redis server.
/// use filterlab_redis::RedisBloomFilter;
///
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// let (mut seen, _created) = RedisBloomFilter::try_init(&client, "orders", 1_000_000, 0.01)?;
/// assert!(seen.insert("order-1")?);        // new
/// assert!(!seen.insert("order-1")?);       // already present
/// assert!(seen.contains("order-1")?);
/// assert_eq!(seen.insert_many(["order-2", "order-3"])?, 2);
/// # Ok::<(), filterlab_redis::Error>(())
/// ```
pub struct RedisBloomFilter {
    pub(crate) link: Link,
    pub(crate) name: String,
    pub(crate) target: Target,
    bits_per_call: usize,
}

impl RedisBloomFilter {
    /// A handle on `name` with the given layout (not checked against the server).
    pub(crate) fn with_layout(link: Link, name: &str, layout: Layout) -> Self {
        Self {
            link,
            name: name.to_owned(),
            target: Target::plain(name, layout),
            bits_per_call: DEFAULT_BITS_PER_CALL,
        }
    }

    /// Opens the existing filter `name` on a server, or in a cluster (every
    /// key of a filter is in one slot): reads its configuration and caches it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotFound`] when there is no such filter,
    /// [`ErrorKind::WrongType`] when its configuration key is not a hash,
    /// [`ErrorKind::Damaged`] when the configuration cannot be read,
    /// `Filter(UnsupportedVersion)` for a layout of another version,
    /// `Filter(InvalidParameter)` for a name that is empty or has a brace,
    /// [`ErrorKind::Connection`].
    pub fn open(endpoint: &(impl Into<Endpoint> + Clone), name: &str) -> Result<Self, Error> {
        check_name(name)?;
        let mut link = Link::new(endpoint);
        let fields: HashMap<String, String> =
            link.run(|con| redis::cmd("HGETALL").arg(config_key(name)).query(con))?;
        let (layout, _) = Layout::from_fields(name, &fields)?;
        Ok(Self::with_layout(link, name, layout))
    }

    /// A call of `script` with this filter's keys and configuration.
    pub(crate) fn call(&self, script: &'static Script) -> Call {
        self.target.call(script)
    }

    /// Runs a call on the connection.
    pub(crate) fn run<T: FromRedisValue>(&mut self, call: &Call) -> Result<T, Error> {
        self.link.run(|con| call.invoke(con))
    }

    key_methods!(
        "[`ErrorKind::ConfigDrift`], [`ErrorKind::NotFound`], [`ErrorKind::Damaged`], \
         [`ErrorKind::WrongType`] (nothing was changed); [`ErrorKind::Connection`] (the key \
         may or may not have been added)."
    );

    /// Adds keys given by their hashes under [`hasher`](Self::hasher), in
    /// one script call per [`bits_per_call`](Self::bits_per_call) bit
    /// positions (one round trip for batches up to that size); whether each
    /// was new, in order.
    ///
    /// Each call is atomic; a batch of several calls is not: when one fails,
    /// the keys of the calls before it stay inserted.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_hashes_each(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<bool>, Error> {
        self.batched(hashes, false)
    }

    /// Looks up keys given by their hashes under [`hasher`](Self::hasher),
    /// in one script call per [`bits_per_call`](Self::bits_per_call) bit
    /// positions; one answer per key, in order.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn contains_hashes(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<bool>, Error> {
        self.batched(hashes, true)
    }

    /// Runs the insert (or, when `contains`, the contains) script on the
    /// keys, as many per call as `bits_per_call` allows; one answer per
    /// key, in order.
    fn batched(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
        contains: bool,
    ) -> Result<Vec<bool>, Error> {
        let mut found = Vec::new();
        let keys_per_call =
            (self.bits_per_call / self.target.layout.bloom.num_hashes as usize).max(1);
        let mut hashes = hashes.into_iter().peekable();
        let mut chunk = Vec::new();
        while hashes.peek().is_some() {
            chunk.clear();
            chunk.extend(hashes.by_ref().take(keys_per_call));
            for (call, keys) in self
                .target
                .probe_calls(&chunk, contains, self.bits_per_call)
            {
                let reply: redis::Value = self.run(&call)?;
                found.extend(answers(&reply, keys)?);
            }
        }
        Ok(found)
    }

    /// The counter, the bits set when `count_bits` (BITCOUNT over every
    /// part), and the time to live.
    fn read(&mut self, count_bits: bool) -> Result<State, Error> {
        self.target.read(&mut self.link, count_bits)
    }

    /// The exact number of inserts that returned `true` (BF.CARD), counted
    /// on the server by the same step that set the bits.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn len(&mut self) -> Result<u64, Error> {
        Ok(self.read(false)?.items)
    }

    /// Whether no insert has counted yet.
    ///
    /// # Errors
    ///
    /// As [`len`](Self::len).
    pub fn is_empty(&mut self) -> Result<bool, Error> {
        Ok(self.len()? == 0)
    }

    /// Bits set, counted on the server (BITCOUNT over every part: O(m), a
    /// few milliseconds per 100 MB, during which the server serves nobody else).
    ///
    /// # Errors
    ///
    /// As [`len`](Self::len).
    pub fn set_bits(&mut self) -> Result<u64, Error> {
        self.read(true)?
            .set_bits
            .ok_or_else(|| Error::new(ErrorKind::Script, "the read script counted no bits"))
    }

    /// The number of distinct items estimated from the bits set
    /// (Swamidass and Baldi, core's `bloom_estimate_items`); infinite when
    /// every bit is set. Costs a [`set_bits`](Self::set_bits).
    ///
    /// # Errors
    ///
    /// As [`set_bits`](Self::set_bits).
    pub fn estimated_len(&mut self) -> Result<f64, Error> {
        let set_bits = self.set_bits()?;
        let BloomConfig {
            num_bits,
            num_hashes,
            ..
        } = self.target.layout.bloom;
        Ok(bloom_estimate_items(set_bits, num_bits, num_hashes))
    }

    /// What BF.INFO says of a filter, and the layout: read from the server
    /// in one call, with the configuration check; the bits are counted when
    /// `count_bits` (see [`set_bits`](Self::set_bits) for the cost).
    ///
    /// # Errors
    ///
    /// As [`len`](Self::len).
    pub fn info(&mut self, count_bits: bool) -> Result<Info, Error> {
        let State {
            items,
            set_bits,
            ttl,
        } = self.read(count_bits)?;
        let layout = self.target.layout;
        let bloom = layout.bloom;
        Ok(Info {
            capacity: layout.capacity,
            size: layout.total_bytes(),
            items,
            config: bloom,
            target_fpp: layout.target_fpp,
            parts: layout.parts(),
            part_bits: layout.part_bits,
            fill: set_bits.map(|set_bits| Fill {
                set_bits,
                expected_fpp: bloom_fpp_given_fill(set_bits, bloom.num_bits, bloom.num_hashes),
            }),
            ttl,
        })
    }

    /// Deletes the filter, its configuration and bits together in one
    /// script: no key of it is left. Returns whether anything was deleted.
    /// Once the configuration is gone (deleted or expired), this deletes
    /// whatever parts of the name remain.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ConfigDrift`] when the name now holds a filter of
    /// another configuration (nothing is deleted), [`ErrorKind::WrongType`],
    /// [`ErrorKind::Connection`].
    pub fn delete(&mut self) -> Result<bool, Error> {
        let deleted: u64 = self.run(&self.call(&self.target.scripts.delete))?;
        Ok(deleted > 0)
    }

    /// Renames the filter, configuration and bits together in one script,
    /// and points this handle at the new name. In Redis Cluster both names
    /// must hash to one slot (the call fails with a cross-slot
    /// [`ErrorKind::Server`] error otherwise): a rename is atomic only
    /// within a node.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AlreadyExists`] when a key of the new name exists (no
    /// key is renamed), `Filter(InvalidParameter)` for a bad name, and
    /// those of [`contains`](Self::contains).
    pub fn rename(&mut self, new_name: &str) -> Result<(), Error> {
        check_name(new_name)?;
        if new_name == self.name {
            return Ok(());
        }
        let new_keys = keys(new_name, self.target.layout.parts());
        let mut call = Call::new(
            &self.target.scripts.rename,
            &[self.target.keys.clone(), new_keys].concat(),
        );
        call.arg(&self.target.checked[..]);
        let _: u64 = self.run(&call)?;
        self.target = Target::plain(new_name, self.target.layout);
        new_name.clone_into(&mut self.name);
        Ok(())
    }

    /// Sets the time to live of the configuration and every part to `ttl`
    /// (millisecond resolution), in one script: they expire together. Later
    /// inserts keep it. A zero `ttl` deletes the filter.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn expire(&mut self, ttl: Duration) -> Result<(), Error> {
        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self.expire_with(&millis.to_string())
    }

    /// Removes the time to live of the configuration and every part.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn persist(&mut self) -> Result<(), Error> {
        self.expire_with("persist")
    }

    fn expire_with(&mut self, argument: &str) -> Result<(), Error> {
        let mut call = self.call(&self.target.scripts.expire);
        call.arg(argument);
        let _: u64 = self.run(&call)?;
        Ok(())
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The configuration cached by this handle (bits, hashes, hasher): the
    /// one a local [`filterlab_bloom::BloomFilter`] needs to answer alike.
    pub fn config(&self) -> BloomConfig {
        self.target.layout.bloom
    }

    /// The key hasher (XXH3-64 with the filter's seed).
    pub fn hasher(&self) -> &KeyHasher {
        &self.target.layout.bloom.hasher
    }

    /// Bits in the array.
    pub fn num_bits(&self) -> u64 {
        self.target.layout.bloom.num_bits
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.target.layout.bloom.num_hashes
    }

    /// The items the filter was sized for.
    pub fn capacity(&self) -> u64 {
        self.target.layout.capacity
    }

    /// The FPP the filter was sized for, if any.
    pub fn target_fpp(&self) -> Option<f64> {
        self.target.layout.target_fpp
    }

    /// The number of string keys the bit array is split into.
    pub fn parts(&self) -> u64 {
        self.target.layout.parts()
    }

    /// Bits per string key (the last one may hold fewer).
    pub fn part_bits(&self) -> u64 {
        self.target.layout.part_bits
    }

    link_methods!();
}

impl Clone for RedisBloomFilter {
    /// A handle on the same filter with its own connection, opened on first use.
    fn clone(&self) -> Self {
        let mut clone = Self::with_layout(self.link.clone(), &self.name, self.target.layout);
        clone.bits_per_call = self.bits_per_call;
        clone
    }
}

impl fmt::Debug for RedisBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBloomFilter")
            .field("name", &self.name)
            .field("num_bits", &self.target.layout.bloom.num_bits)
            .field("num_hashes", &self.target.layout.bloom.num_hashes)
            .field("hasher", &self.target.layout.bloom.hasher)
            .field("parts", &self.target.layout.parts())
            .field("capacity", &self.target.layout.capacity)
            .field("target_fpp", &self.target.layout.target_fpp)
            .finish_non_exhaustive()
    }
}
