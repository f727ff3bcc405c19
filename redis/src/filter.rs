//! `RedisBloomFilter`: a handle on one shared filter, its lookups, inserts,
//! counters and lifecycle (delete, rename, expire).

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;
use std::time::Duration;

use filterlab_bloom::BloomConfig;
use filterlab_core::theory::{bloom_estimate_items, bloom_fpp_given_fill};
use filterlab_core::{ErrorKind as CoreKind, Key, KeyHasher, Probes};
use redis::{Client, FromRedisValue, Script};

use crate::error::{Error, ErrorKind};
use crate::info::{Fill, Info};
use crate::layout::{Layout, check_name, config_key, keys, redis_offset};
use crate::link::Link;
use crate::scripts::{
    CONTAINS_SCRIPT, Call, DELETE_SCRIPT, EXPIRE_SCRIPT, INSERT_SCRIPT, READ_SCRIPT, RENAME_SCRIPT,
};

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
    pub(crate) layout: Layout,
    /// The configuration key, then the parts.
    pub(crate) keys: Vec<String>,
    /// The values every script compares with the stored configuration.
    checked: [String; 7],
    bits_per_call: usize,
}

impl RedisBloomFilter {
    /// A handle on `name` with the given layout (not checked against the server).
    pub(crate) fn with_layout(link: Link, name: &str, layout: Layout) -> Self {
        Self {
            link,
            name: name.to_owned(),
            keys: keys(name, layout.parts()),
            checked: layout.checked_values(),
            layout,
            bits_per_call: DEFAULT_BITS_PER_CALL,
        }
    }

    /// Opens the existing filter `name`: reads its configuration and caches it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotFound`] when there is no such filter,
    /// [`ErrorKind::WrongType`] when its configuration key is not a hash,
    /// [`ErrorKind::Damaged`] when the configuration cannot be read,
    /// `Filter(UnsupportedVersion)` for a layout of another version,
    /// `Filter(InvalidParameter)` for a name that is empty or has a brace,
    /// [`ErrorKind::Connection`].
    pub fn open(client: &Client, name: &str) -> Result<Self, Error> {
        check_name(name)?;
        let mut link = Link::new(client);
        let fields: HashMap<String, String> =
            link.run(|con| redis::cmd("HGETALL").arg(config_key(name)).query(con))?;
        let (layout, _) = Layout::from_fields(name, &fields)?;
        Ok(Self::with_layout(link, name, layout))
    }

    /// A call of `script` with this filter's keys and configuration.
    pub(crate) fn call(&self, script: &'static LazyLock<Script>) -> Call {
        let mut call = Call::new(script, &self.keys);
        call.arg(&self.checked[..]);
        call
    }

    /// Runs a call on the connection.
    pub(crate) fn run<T: FromRedisValue>(&mut self, call: &Call) -> Result<T, Error> {
        self.link.run(|con| call.invoke(con))
    }

    /// Adds `key`; returns `true` when it was new (one of its bits was
    /// clear), which also counts it in [`len`](Self::len) (BF.ADD).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ConfigDrift`], [`ErrorKind::NotFound`],
    /// [`ErrorKind::Damaged`], [`ErrorKind::WrongType`] (nothing was
    /// changed); [`ErrorKind::Connection`] (the key may or may not have been
    /// added).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
        let hash = self.layout.bloom.hasher.hash(key);
        Ok(self.insert_hashes(std::iter::once(hash))? == 1)
    }

    /// Adds every key, in one script call per
    /// [`bits_per_call`](Self::bits_per_call) bit positions (one round trip
    /// for batches up to that size); returns how many were new.
    ///
    /// Each call is atomic; a batch of several calls is not: when one fails,
    /// the keys of the calls before it stay inserted.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_many<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        let hasher = self.layout.bloom.hasher;
        self.insert_hashes(keys.into_iter().map(|key| hasher.hash(&key)))
    }

    /// Adds keys given by their hashes under [`hasher`](Self::hasher); see
    /// [`insert_many`](Self::insert_many).
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_hashes(&mut self, hashes: impl IntoIterator<Item = u64>) -> Result<usize, Error> {
        let mut new = 0;
        self.batched(&INSERT_SCRIPT, hashes, |count: usize, keys| {
            if count > keys {
                return Err(unexpected_reply(&format!("{count} new keys of {keys}")));
            }
            new += count;
            Ok(())
        })?;
        Ok(new)
    }

    /// Whether `key` may be present: never `false` for an inserted key.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert): on any doubt an error, never an answer.
    pub fn contains<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
        let hash = self.layout.bloom.hasher.hash(key);
        let found = self.contains_hashes(std::iter::once(hash))?;
        Ok(found.first() == Some(&true))
    }

    /// Looks up every key, in one script call per
    /// [`bits_per_call`](Self::bits_per_call) bit positions; one answer per
    /// key, in order.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn contains_many<I>(&mut self, keys: I) -> Result<Vec<bool>, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        let hasher = self.layout.bloom.hasher;
        self.contains_hashes(keys.into_iter().map(|key| hasher.hash(&key)))
    }

    /// Looks up keys given by their hashes under [`hasher`](Self::hasher);
    /// see [`contains_many`](Self::contains_many).
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn contains_hashes(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<bool>, Error> {
        let mut found = Vec::new();
        self.batched(&CONTAINS_SCRIPT, hashes, |answers: Vec<u8>, keys| {
            // Anything but one '0' or '1' per key is refused: never a guess.
            if answers.len() != keys || answers.iter().any(|answer| !b"01".contains(answer)) {
                return Err(unexpected_reply(&format!(
                    "{} answers for {keys} keys",
                    answers.len()
                )));
            }
            found.extend(answers.iter().map(|&answer| answer == b'1'));
            Ok(())
        })?;
        Ok(found)
    }

    /// Runs `script` on the keys' bit offsets, as many keys per call as
    /// `bits_per_call` allows (at least one), and hands each reply to
    /// `reply` with the number of keys the call carried.
    fn batched<T: FromRedisValue>(
        &mut self,
        script: &'static LazyLock<Script>,
        hashes: impl IntoIterator<Item = u64>,
        mut reply: impl FnMut(T, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let BloomConfig {
            num_bits,
            num_hashes,
            ..
        } = self.layout.bloom;
        let keys_per_call = (self.bits_per_call / num_hashes as usize).max(1);
        let mut hashes = hashes.into_iter().peekable();
        while hashes.peek().is_some() {
            let mut call = self.call(script);
            let mut keys = 0;
            for hash in hashes.by_ref().take(keys_per_call) {
                for index in Probes::new(hash, num_bits).take(num_hashes as usize) {
                    call.arg(redis_offset(index));
                }
                keys += 1;
            }
            reply(self.run(&call)?, keys)?;
        }
        Ok(())
    }

    /// The counter, the bits set when `count_bits` (BITCOUNT over every
    /// part), and the time to live.
    fn read(&mut self, count_bits: bool) -> Result<(u64, Option<u64>, Option<Duration>), Error> {
        let mut call = self.call(&READ_SCRIPT);
        call.arg(if count_bits { "bits" } else { "" });
        let (items, set_bits, ttl): (Option<u64>, i64, i64) = self.run(&call)?;
        let items = items.ok_or_else(|| {
            Error::new(
                ErrorKind::Damaged,
                format!("{}: no item counter", self.keys[0]),
            )
        })?;
        let set_bits = u64::try_from(set_bits).ok();
        let ttl = u64::try_from(ttl).ok().map(Duration::from_millis);
        Ok((items, set_bits, ttl))
    }

    /// The exact number of inserts that returned `true` (BF.CARD), counted
    /// on the server by the same step that set the bits.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn len(&mut self) -> Result<u64, Error> {
        Ok(self.read(false)?.0)
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
            .1
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
        } = self.layout.bloom;
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
        let (items, set_bits, ttl) = self.read(count_bits)?;
        let layout = self.layout;
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
        let deleted: u64 = self.run(&self.call(&DELETE_SCRIPT))?;
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
        let new_keys = keys(new_name, self.layout.parts());
        let mut call = Call::new(
            &RENAME_SCRIPT,
            &[self.keys.clone(), new_keys.clone()].concat(),
        );
        call.arg(&self.checked[..]);
        let _: u64 = self.run(&call)?;
        new_name.clone_into(&mut self.name);
        self.keys = new_keys;
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
        let mut call = self.call(&EXPIRE_SCRIPT);
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
        self.layout.bloom
    }

    /// The key hasher (XXH3-64 with the filter's seed).
    pub fn hasher(&self) -> &KeyHasher {
        &self.layout.bloom.hasher
    }

    /// Bits in the array.
    pub fn num_bits(&self) -> u64 {
        self.layout.bloom.num_bits
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.layout.bloom.num_hashes
    }

    /// The items the filter was sized for.
    pub fn capacity(&self) -> u64 {
        self.layout.capacity
    }

    /// The FPP the filter was sized for, if any.
    pub fn target_fpp(&self) -> Option<f64> {
        self.layout.target_fpp
    }

    /// The number of string keys the bit array is split into.
    pub fn parts(&self) -> u64 {
        self.layout.parts()
    }

    /// Bits per string key (the last one may hold fewer).
    pub fn part_bits(&self) -> u64 {
        self.layout.part_bits
    }

    /// Bit positions sent per script call by the batched operations.
    pub fn bits_per_call(&self) -> usize {
        self.bits_per_call
    }

    /// Sets the bit positions (k per key) sent per script call by the
    /// batched operations: larger batches take fewer round trips, smaller
    /// ones hold the server for less time per call (Redis runs one script
    /// at a time). A call carries at least one key.
    ///
    /// # Errors
    ///
    /// `Filter(InvalidParameter)` for zero.
    pub fn set_bits_per_call(&mut self, bits: usize) -> Result<(), Error> {
        if bits == 0 {
            return Err(Error::filter(
                CoreKind::InvalidParameter,
                "bits_per_call must be at least 1",
            ));
        }
        self.bits_per_call = bits;
        Ok(())
    }

    /// The timeout of connecting and of each read and write.
    pub fn timeout(&self) -> Option<Duration> {
        self.link.timeout()
    }

    /// Sets the timeout of connecting and of each read and write (default
    /// [`DEFAULT_TIMEOUT`](crate::DEFAULT_TIMEOUT); `None` waits forever).
    /// Reconnects on the next call.
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.link.set_timeout(timeout);
    }
}

/// A reply of the wrong shape (a server that is not Redis, or a bug).
fn unexpected_reply(what: &str) -> Error {
    Error::new(ErrorKind::Script, format!("unexpected reply: {what}"))
}

impl Clone for RedisBloomFilter {
    /// A handle on the same filter with its own connection, opened on first use.
    fn clone(&self) -> Self {
        let mut clone = Self::with_layout(self.link.clone(), &self.name, self.layout);
        clone.bits_per_call = self.bits_per_call;
        clone
    }
}

impl fmt::Debug for RedisBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBloomFilter")
            .field("name", &self.name)
            .field("num_bits", &self.layout.bloom.num_bits)
            .field("num_hashes", &self.layout.bloom.num_hashes)
            .field("hasher", &self.layout.bloom.hasher)
            .field("parts", &self.layout.parts())
            .field("capacity", &self.layout.capacity)
            .field("target_fpp", &self.layout.target_fpp)
            .finish_non_exhaustive()
    }
}
