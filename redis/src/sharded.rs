//! `RedisShardedBloomFilter`: one Bloom filter spread over the masters of a
//! Redis Cluster (or kept on one server) as S shards, each key's probes in
//! the one shard its hash picks; created, deleted and expired as a whole
//! under a marker written first and removed last.

use std::collections::HashMap;
use std::fmt;
use std::thread::sleep;
use std::time::{Duration, Instant};

use filterlab_bloom::{BloomBuilder, BloomConfig, BloomFilter};
use filterlab_core::theory::sharded_bloom_fpp;
use filterlab_core::{Key, KeyHasher, Membership, mix64};
use redis::Value;

use crate::DEFAULT_BITS_PER_CALL;
use crate::endpoint::Endpoint;
use crate::error::{Error, ErrorKind};
use crate::layout::{DEFAULT_PART_BITS, Layout, SHARD_LAYOUT_VERSION, check_name};
use crate::link::Link;
use crate::local::ShardedBloomFilter;
use crate::scripts::{Call, MARKER};
use crate::shards::{
    DEFAULT_SHARDS, ShardedLayout, marker_key, shard_capacity, shard_of, shard_tag,
};
use crate::target::{Target, answers, key_methods, link_methods};
use crate::transfer::{bloom_header, export, import};

/// How long a creation may go without renewing its lease before another
/// client takes it over, by default: 30 s, renewed after every group of shards.
pub const DEFAULT_CREATION_LEASE: Duration = Duration::from_secs(30);
const LEASE: Duration = DEFAULT_CREATION_LEASE;

/// Shards created between renewals of the creation lease.
const SHARDS_PER_LEASE: usize = 16;

/// How often a client waiting for another's creation looks again.
const POLL: Duration = Duration::from_millis(50);

/// Script calls' worth of bit positions routed per round of a batch: the
/// memory a batch holds (about 16 bytes per position) stays near 8 MB.
const WINDOW_CALLS: usize = 8;

/// Durable mode: an insert is acknowledged only once this many replicas
/// have it (WAIT), within the timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Durability {
    /// Replicas that must acknowledge every write (of each master written to).
    pub replicas: u32,
    /// How long to wait for them.
    pub timeout: Duration,
}

/// A Bloom filter spread over the masters of a Redis Cluster as S shards,
/// each a plain filter of m/S bits under a hash tag of its own; a key's k
/// probes all fall in the one shard its hash picks, so a key is one script
/// call, and a batch one call per shard it touches.
///
/// Every call checks the shard's stored configuration, the creation it
/// belongs to (its epoch) included: a shard deleted, damaged or re-created
/// under a running handle gives a typed error, never a false "absent".
///
/// # Examples
///
/// ```no_run
/// # // no_run: needs a Redis Cluster (or a server).
/// use filterlab_redis::{BloomFilter, Endpoint, RedisShardedBloomFilter};
///
/// let endpoint = Endpoint::open("redis://127.0.0.1:7000/")?;
/// let sizing = BloomFilter::with_fpp(0.001).expected_items(1_000_000_000);
/// let (mut seen, _created) = RedisShardedBloomFilter::builder(sizing).try_init(&endpoint, "events")?;
/// assert!(seen.insert("evt-1")?);
/// assert!(seen.contains("evt-1")?);
/// # Ok::<(), filterlab_redis::Error>(())
/// ```
pub struct RedisShardedBloomFilter {
    link: Link,
    name: String,
    layout: ShardedLayout,
    epoch: u64,
    shards: Vec<Target>,
    bits_per_call: usize,
    durability: Option<Durability>,
}

/// Configures a sharded filter: a [`BloomBuilder`] for the sizing, the
/// number of shards and their parts. Made by
/// [`RedisShardedBloomFilter::builder`].
#[derive(Clone, Debug)]
#[must_use]
pub struct RedisShardedBloomBuilder {
    bloom: BloomBuilder,
    shards: u64,
    part_bits: u64,
    lease: Duration,
}

/// The sizing of a sharded filter.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ShardedSizing {
    /// Shards.
    pub shards: u64,
    /// Bits per shard (a multiple of 64).
    pub shard_bits: u64,
    /// Probes per key.
    pub num_hashes: u32,
    /// Items sized for.
    pub expected_items: u64,
    /// The target FPP, when sized for one.
    pub target_fpp: Option<f64>,
    /// The exact sharded FPP at `expected_items`.
    pub expected_fpp: f64,
}

impl RedisShardedBloomFilter {
    /// A builder for a sharded filter sized by `bloom` (any of
    /// `BloomFilter::with_fpp(p).expected_items(n)`, `BloomFilter::with_bits(m)`,
    /// with `.seed(s)`, `.hashes(k)`), in [`DEFAULT_SHARDS`] shards.
    pub fn builder(bloom: BloomBuilder) -> RedisShardedBloomBuilder {
        RedisShardedBloomBuilder {
            bloom,
            shards: DEFAULT_SHARDS,
            part_bits: DEFAULT_PART_BITS,
            lease: LEASE,
        }
    }

    fn with_layout(link: Link, name: &str, layout: ShardedLayout, epoch: u64) -> Self {
        let shards = (0..layout.shards)
            .map(|shard| {
                let tag = shard_tag(name, shard, layout.shards);
                let mut target = Target::shard(&tag, layout.shard, layout.shards, shard, epoch);
                target.checked[0] = SHARD_LAYOUT_VERSION.to_string();
                target
            })
            .collect();
        Self {
            link,
            name: name.to_owned(),
            layout,
            epoch,
            shards,
            bits_per_call: DEFAULT_BITS_PER_CALL,
            durability: None,
        }
    }

    /// Opens the existing filter `name`: reads its marker and caches the
    /// configuration and the creation's epoch.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotFound`] when there is no such filter,
    /// [`ErrorKind::Incomplete`] while it is being created or deleted (or
    /// after either stopped half-way), [`ErrorKind::Damaged`],
    /// [`ErrorKind::WrongType`], `Filter(UnsupportedVersion)`,
    /// [`ErrorKind::Connection`].
    pub fn open(endpoint: &(impl Into<Endpoint> + Clone), name: &str) -> Result<Self, Error> {
        check_name(name)?;
        let mut link = Link::new(endpoint);
        let (layout, epoch, state) = read_marker(&mut link, name)?;
        if state != "ready" {
            return Err(incomplete(name, &state));
        }
        Ok(Self::with_layout(link, name, layout, epoch))
    }

    /// Deletes the filter `name` whatever state it is in: the way to finish
    /// a delete that stopped half-way (or to clear an abandoned creation).
    /// Returns whether there was anything to delete.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Damaged`], [`ErrorKind::WrongType`] for a marker that
    /// cannot be read, [`ErrorKind::Connection`].
    pub fn destroy(endpoint: &(impl Into<Endpoint> + Clone), name: &str) -> Result<bool, Error> {
        check_name(name)?;
        let mut link = Link::new(endpoint);
        let (layout, epoch, _) = match read_marker(&mut link, name) {
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(false),
            marker => marker?,
        };
        Self::with_layout(link, name, layout, epoch).delete_as("")
    }

    key_methods!(
        "[`ErrorKind::ConfigDrift`] (the shard was re-created), [`ErrorKind::NotFound`] (the \
         shard was deleted), [`ErrorKind::Damaged`], [`ErrorKind::WrongType`] (nothing was \
         changed); [`ErrorKind::Connection`] (the key may or may not have been added; during \
         a failover, until the replica is promoted); [`ErrorKind::NotReplicated`] in durable mode."
    );

    /// Adds keys given by their hashes under [`hasher`](Self::hasher): one
    /// script call per shard touched (and per
    /// [`bits_per_call`](Self::bits_per_call) positions); whether each was
    /// new, in order. Each call is atomic, a batch is not: when a call
    /// fails, the calls before it stay applied. In durable mode, returns
    /// once the replicas have every write.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_hashes_each(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<bool>, Error> {
        let new = self.answered(hashes, false)?;
        if let Some(durability) = self.durability {
            self.wait(durability)?;
        }
        Ok(new)
    }

    /// Looks up keys given by their hashes under [`hasher`](Self::hasher):
    /// one script call per shard touched; one answer per key, in order.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn contains_hashes(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<bool>, Error> {
        self.answered(hashes, true)
    }

    /// One answer per key, in order, of the insert (or contains) calls.
    fn answered(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
        contains: bool,
    ) -> Result<Vec<bool>, Error> {
        let mut found = Vec::new();
        self.batched(hashes, contains, |reply, positions| {
            for (answer, &at) in answers(reply, positions.len())?.zip(positions) {
                if found.len() <= at {
                    found.resize(at + 1, false);
                }
                found[at] = answer;
            }
            Ok(())
        })?;
        Ok(found)
    }

    /// Routes the keys to their shards a window at a time and runs the
    /// insert (or contains) calls of each window together: on one server in
    /// one pipeline, on a cluster one call after another. Hands each reply
    /// to `reply` with the positions (in the whole batch) of its keys.
    fn batched(
        &mut self,
        hashes: impl IntoIterator<Item = u64>,
        contains: bool,
        mut reply: impl FnMut(&Value, &[usize]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let k = self.layout.shard.bloom.num_hashes as usize;
        let window = (self.bits_per_call * WINDOW_CALLS / k).max(1);
        let shards = self.layout.shards;
        let mut hashes = hashes.into_iter().peekable();
        let mut start = 0;
        let mut routed: Vec<(Vec<u64>, Vec<usize>)> =
            vec![(Vec::new(), Vec::new()); self.shards.len()];
        while hashes.peek().is_some() {
            for (keys, positions) in &mut routed {
                keys.clear();
                positions.clear();
            }
            for (at, hash) in (start..).zip(hashes.by_ref().take(window)) {
                let (keys, positions) = &mut routed[shard_of(hash, shards)];
                keys.push(hash);
                positions.push(at);
                start = at + 1;
            }
            let mut calls = Vec::new();
            let mut carried = Vec::new();
            for (target, (keys, positions)) in self.shards.iter().zip(&routed) {
                let mut from = 0;
                for (call, count) in target.probe_calls(keys, contains, self.bits_per_call) {
                    calls.push(call);
                    carried.push(&positions[from..from + count]);
                    from += count;
                }
            }
            let replies = self.link.run_calls(&calls)?;
            for (value, positions) in replies.iter().zip(carried) {
                reply(value, positions)?;
            }
        }
        Ok(())
    }

    /// WAIT for `durability.replicas` replicas on every master (the
    /// cluster client asks them all and keeps the least count).
    fn wait(&mut self, durability: Durability) -> Result<(), Error> {
        let millis = u64::try_from(durability.timeout.as_millis()).unwrap_or(u64::MAX);
        let acknowledged: u64 = self.link.run(|con| {
            redis::cmd("WAIT")
                .arg(durability.replicas)
                .arg(millis.max(1))
                .query(con)
        })?;
        if acknowledged < u64::from(durability.replicas) {
            return Err(Error::new(
                ErrorKind::NotReplicated,
                format!(
                    "{acknowledged} of {} replicas acknowledged within {:?}",
                    durability.replicas, durability.timeout
                ),
            ));
        }
        Ok(())
    }

    /// Runs one read call per shard; their states in order.
    fn read_all(&mut self, count_bits: bool) -> Result<Vec<(u64, Option<u64>)>, Error> {
        let calls: Vec<Call> = self
            .shards
            .iter()
            .map(|target| {
                let mut call = target.call(&target.scripts.read);
                call.arg(if count_bits { "bits" } else { "" });
                call
            })
            .collect();
        self.link
            .run_calls(&calls)?
            .into_iter()
            .zip(&self.shards)
            .map(|(value, target)| {
                let (items, set_bits, _ttl): (Option<u64>, i64, i64) =
                    redis::FromRedisValue::from_redis_value(value)
                        .map_err(|err| Error::new(ErrorKind::Script, err.to_string()))?;
                let items = items.ok_or_else(|| {
                    Error::new(
                        ErrorKind::Damaged,
                        format!("{}: no item counter", target.keys[0]),
                    )
                })?;
                Ok((items, u64::try_from(set_bits).ok()))
            })
            .collect()
    }

    /// The exact number of inserts that returned `true`: the sum of the
    /// shards' counters, each counted by the step that set the bits.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn len(&mut self) -> Result<u64, Error> {
        Ok(self.read_all(false)?.iter().map(|(items, _)| items).sum())
    }

    /// Whether no insert has counted yet.
    ///
    /// # Errors
    ///
    /// As [`len`](Self::len).
    pub fn is_empty(&mut self) -> Result<bool, Error> {
        Ok(self.len()? == 0)
    }

    /// Bits set in each shard (BITCOUNT on the servers: O(m) in all).
    ///
    /// # Errors
    ///
    /// As [`len`](Self::len).
    pub fn shard_set_bits(&mut self) -> Result<Vec<u64>, Error> {
        self.read_all(true)?
            .into_iter()
            .map(|(_, set_bits)| {
                set_bits
                    .ok_or_else(|| Error::new(ErrorKind::Script, "the read script counted no bits"))
            })
            .collect()
    }

    /// The FPP given the fill, exact for the filter as it is now: the mean
    /// over the shards of (X_s/m_s)^k (a query lands in a uniform shard).
    ///
    /// # Errors
    ///
    /// As [`shard_set_bits`](Self::shard_set_bits).
    pub fn fpp_given_fill(&mut self) -> Result<f64, Error> {
        let fills = self.shard_set_bits()?;
        let bloom = self.layout.shard.bloom;
        Ok(filterlab_core::theory::bloom_fpp_given_block_fills(
            fills,
            bloom.num_bits,
            bloom.num_hashes,
        ))
    }

    /// The exact sharded FPP after `items` distinct inserts: the shard
    /// loads are multinomial, and a shard holding i keys has the exact FPP
    /// of a standard filter of its size (core's `sharded_bloom_fpp`).
    ///
    /// # Errors
    ///
    /// `Filter(InvalidParameter)` for more probes than the exact formula takes.
    pub fn theoretical_fpp(&self, items: u64) -> Result<f64, Error> {
        let bloom = self.layout.shard.bloom;
        Ok(sharded_bloom_fpp(
            self.layout.shards,
            bloom.num_bits,
            bloom.num_hashes,
            items,
        )?)
    }

    /// Deletes the filter: the marker is set to "deleting" first (no one
    /// opens or re-creates the name meanwhile), then every shard's keys go,
    /// then the marker. A delete that stops half-way (its process dies)
    /// leaves the marker: [`destroy`](Self::destroy) finishes it. Returns
    /// whether anything was deleted.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ConfigDrift`] when the name now holds another filter
    /// (nothing is deleted), [`ErrorKind::Connection`].
    pub fn delete(&mut self) -> Result<bool, Error> {
        let epoch = self.epoch.to_string();
        self.delete_as(&epoch)
    }

    /// Deletes the shards under a marker of epoch `epoch` (any when empty).
    fn delete_as(&mut self, epoch: &str) -> Result<bool, Error> {
        let marker = vec![marker_key(&self.name)];
        let mut mark = Call::new(&MARKER.mark_deleting, &marker);
        mark.arg(epoch);
        let marked: u64 = self.link.run(|con| mark.invoke(con))?;
        let deletes: Vec<Call> = self
            .shards
            .iter()
            .map(|target| {
                let mut del = redis::cmd("DEL");
                del.arg(&target.keys);
                Call::command(del)
            })
            .collect();
        let mut deleted = marked > 0;
        for value in self.link.run_calls(&deletes)? {
            deleted |= matches!(value, Value::Int(count) if count > 0);
        }
        let mut drop = Call::new(&MARKER.drop, &marker);
        drop.arg(epoch);
        let _: u64 = self.link.run(|con| drop.invoke(con))?;
        Ok(deleted)
    }

    /// Sets every key of the filter (marker and shards) to expire at one
    /// deadline, `ttl` from now by a server's clock: the shards first, then
    /// the marker. Later inserts keep it.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn expire(&mut self, ttl: Duration) -> Result<(), Error> {
        let (seconds, micros): (u64, u64) = self.link.run(|con| redis::cmd("TIME").query(con))?;
        let now = seconds * 1000 + micros / 1000;
        let deadline = now.saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        self.expire_with(&format!("@{deadline}"))
    }

    /// Removes the time to live of every key of the filter.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn persist(&mut self) -> Result<(), Error> {
        self.expire_with("persist")
    }

    fn expire_with(&mut self, argument: &str) -> Result<(), Error> {
        let calls: Vec<Call> = self
            .shards
            .iter()
            .map(|target| {
                let mut call = target.call(&target.scripts.expire);
                call.arg(argument);
                call
            })
            .collect();
        self.link.run_calls(&calls)?;
        let mut call = Call::new(&MARKER.expire, &[marker_key(&self.name)]);
        call.arg(self.epoch).arg(argument);
        let _: u64 = self.link.run(|con| call.invoke(con))?;
        Ok(())
    }

    /// Copies the filter into a local [`ShardedBloomFilter`] that answers
    /// every lookup exactly as this one: shard by shard, each read as
    /// [`RedisBloomFilter::export`](crate::RedisBloomFilter::export) reads
    /// (counter first, then the bits in chunks). Not a snapshot: keys
    /// inserted by others meanwhile may be partly copied.
    ///
    /// # Errors
    ///
    /// As [`contains`](Self::contains).
    pub fn export(&mut self) -> Result<ShardedBloomFilter, Error> {
        let mut shards = Vec::with_capacity(self.shards.len());
        for target in &self.shards {
            shards.push(export(&mut self.link, target)?);
        }
        ShardedBloomFilter::from_shards(shards)
    }

    /// Creates the filter `name` from a local one of the same layout: a
    /// creation under a lease like [`RedisShardedBloomBuilder::try_init`]'s,
    /// each shard uploaded to temporary keys and published with its
    /// configuration in one script; the filter opens only once every shard
    /// is in place.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AlreadyExists`] when a filter of the name exists,
    /// `Filter(InvalidParameter)` for a bad name,
    /// [`ErrorKind::Connection`].
    pub fn import(
        endpoint: &(impl Into<Endpoint> + Clone),
        name: &str,
        filter: &ShardedBloomFilter,
    ) -> Result<Self, Error> {
        check_name(name)?;
        let first = &filter.shards()[0];
        let shards = filter.shards().len() as u64;
        let capacity = first.capacity().map_or(0, |capacity| capacity as u64);
        let shard = Layout::new(
            first.config(),
            DEFAULT_PART_BITS,
            capacity,
            first.target_fpp(),
        )?;
        let layout = ShardedLayout::new(shard, shards, capacity * shards)?;
        let mut link = Link::new(endpoint);
        let epoch = new_epoch();
        match begin(&mut link, name, &layout, epoch, LEASE) {
            Ok(Begun::Create) => {}
            Ok(Begun::Ready(_) | Begun::Creating) => return Err(taken(name)),
            Err(err) if err.kind() == ErrorKind::ConfigDrift => return Err(taken(name)),
            Err(err) => return Err(err),
        }
        let mut sharded = Self::with_layout(link, name, layout, epoch);
        for (group, shards) in sharded.shards.chunks(SHARDS_PER_LEASE).enumerate() {
            for (target, local) in shards
                .iter()
                .zip(&filter.shards()[group * SHARDS_PER_LEASE..])
            {
                import(&mut sharded.link, target, local)?;
            }
            lease(&mut sharded.link, name, epoch, Some(LEASE))?;
        }
        lease(&mut sharded.link, name, epoch, None)?;
        Ok(sharded)
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key hasher (XXH3-64 with the filter's seed).
    pub fn hasher(&self) -> &KeyHasher {
        &self.layout.shard.bloom.hasher
    }

    /// Shards.
    pub fn shards(&self) -> u64 {
        self.layout.shards
    }

    /// Each shard's configuration (its bits, hashes, hasher).
    pub fn shard_config(&self) -> BloomConfig {
        self.layout.shard.bloom
    }

    /// The hash tag of shard `shard`'s keys (`{tag}:config`, `{tag}:bits:0`, ...).
    ///
    /// # Panics
    ///
    /// For a shard beyond [`shards`](Self::shards).
    pub fn shard_tag(&self, shard: u64) -> &str {
        &self.shards[shard as usize].tag
    }

    /// The shard a key goes to.
    pub fn shard_of<K: Key + ?Sized>(&self, key: &K) -> u64 {
        shard_of(self.hasher().hash(key), self.layout.shards) as u64
    }

    /// Bits over all shards.
    pub fn num_bits(&self) -> u64 {
        self.layout.total_bits()
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.layout.shard.bloom.num_hashes
    }

    /// The items the filter was sized for.
    pub fn capacity(&self) -> u64 {
        self.layout.capacity
    }

    /// The FPP the filter was sized for, if any.
    pub fn target_fpp(&self) -> Option<f64> {
        self.layout.shard.target_fpp
    }

    /// Durable mode, if on.
    pub fn durability(&self) -> Option<Durability> {
        self.durability
    }

    /// Turns durable mode on (`Some`) or off. When on, an insert returns
    /// only once `replicas` replicas of every master have every write
    /// (WAIT), or fails with [`ErrorKind::NotReplicated`]: an acknowledged
    /// insert then survives the failover of a master.
    pub fn set_durability(&mut self, durability: Option<Durability>) {
        self.durability = durability;
    }

    link_methods!();
}

impl Clone for RedisShardedBloomFilter {
    /// A handle on the same filter with its own connection, opened on first use.
    fn clone(&self) -> Self {
        let mut clone = Self::with_layout(self.link.clone(), &self.name, self.layout, self.epoch);
        clone.bits_per_call = self.bits_per_call;
        clone.durability = self.durability;
        clone
    }
}

impl fmt::Debug for RedisShardedBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisShardedBloomFilter")
            .field("name", &self.name)
            .field("endpoint", self.link.endpoint())
            .field("shards", &self.layout.shards)
            .field("shard_bits", &self.layout.shard.bloom.num_bits)
            .field("num_hashes", &self.layout.shard.bloom.num_hashes)
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl RedisShardedBloomBuilder {
    /// The number of shards, 1 to [`MAX_SHARDS`](crate::MAX_SHARDS)
    /// ([`DEFAULT_SHARDS`] by default). More shards spread better over more
    /// masters; each costs a script call per batch that touches it.
    pub fn shards(mut self, shards: u64) -> Self {
        self.shards = shards;
        self
    }

    /// How long a creation may go without renewing its lease before another
    /// client takes it over ([`DEFAULT_CREATION_LEASE`] by default; at
    /// least 1 ms): longer than creating 16 shards takes.
    pub fn creation_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// Bits per string key of each shard (see
    /// [`RedisBloomBuilder::part_bits`](crate::RedisBloomBuilder::part_bits)).
    pub fn part_bits(mut self, bits: u64) -> Self {
        self.part_bits = bits;
        self
    }

    /// The sizing, without touching a server: the [`BloomBuilder`]'s bits
    /// split over the shards (rounded up to 64 per shard) and, for a target
    /// FPP, grown until the exact sharded FPP at the expected items meets it
    /// (the shard loads' spread costs a little: under 0.1% more bits at
    /// 10^5 keys per shard).
    ///
    /// # Errors
    ///
    /// The `BloomBuilder`'s; `Filter(InvalidParameter)` for a shard count
    /// out of range.
    pub fn sizing(&self) -> Result<ShardedSizing, Error> {
        let bloom = self.bloom.sizing()?;
        let shards = self.shards;
        ShardedLayout::new(
            Layout::new(self.bloom.config()?, self.part_bits, 0, None)?,
            shards,
            0,
        )?;
        let k = bloom.num_hashes;
        let n = bloom.expected_items;
        let mut shard_bits = bloom.num_bits.div_ceil(shards).div_ceil(64).max(1) * 64;
        let mut fpp = sharded_bloom_fpp(shards, shard_bits, k, n)?;
        if let Some(target) = bloom.target_fpp {
            // ln F falls by about k·ln 2 per unit of ln m near the optimum.
            while fpp > target {
                let grow = (fpp / target).ln() / (f64::from(k) * std::f64::consts::LN_2);
                let more = ((shard_bits as f64 * grow).ceil() as u64)
                    .div_ceil(64)
                    .max(1)
                    * 64;
                shard_bits += more;
                fpp = sharded_bloom_fpp(shards, shard_bits, k, n)?;
            }
        }
        Ok(ShardedSizing {
            shards,
            shard_bits,
            num_hashes: k,
            expected_items: n,
            target_fpp: bloom.target_fpp,
            expected_fpp: fpp,
        })
    }

    /// The layout this builder makes.
    fn layout(&self) -> Result<ShardedLayout, Error> {
        let sizing = self.sizing()?;
        let config = self.bloom.config()?;
        let shard = Layout::new(
            BloomConfig {
                num_bits: sizing.shard_bits,
                ..config
            },
            self.part_bits,
            shard_capacity(sizing.expected_items, sizing.shards),
            sizing.target_fpp,
        )?;
        ShardedLayout::new(shard, sizing.shards, sizing.expected_items)
    }

    /// An empty local filter of this layout (to fill offline and
    /// [`import`](RedisShardedBloomFilter::import)).
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing); `Filter(TooLarge)` when the memory
    /// cannot be allocated.
    pub fn build_local(&self) -> Result<ShardedBloomFilter, Error> {
        let layout = self.layout()?;
        let shard = layout.shard;
        let shards = (0..layout.shards)
            .map(|_| empty_bloom(shard))
            .collect::<Result<Vec<_>, _>>()?;
        ShardedBloomFilter::from_shards(shards)
    }

    /// Creates the filter `name` unless it exists, race-free across shards:
    /// a marker is written first (state "creating", with a lease), then
    /// every shard, then the marker turns "ready"; only a ready filter
    /// opens. Of many clients racing, one creates it and the others wait
    /// for it to be ready (up to the handle's timeout, 30 s by default); a
    /// creation abandoned half-way (its process died) is taken over once
    /// its lease (30 s) runs out. Returns the handle and whether this call
    /// created the filter.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ConfigDrift`] when the filter exists with another
    /// configuration; [`ErrorKind::Incomplete`] when another client's
    /// creation did not end in time, or a delete is under way or stopped
    /// half-way; the sizing's errors; [`ErrorKind::Connection`].
    pub fn try_init(
        &self,
        endpoint: &(impl Into<Endpoint> + Clone),
        name: &str,
    ) -> Result<(RedisShardedBloomFilter, bool), Error> {
        check_name(name)?;
        let layout = self.layout()?;
        let mut link = Link::new(endpoint);
        let deadline = link.timeout().map(|timeout| Instant::now() + timeout);
        let epoch = new_epoch();
        loop {
            match begin(&mut link, name, &layout, epoch, self.lease)? {
                Begun::Ready(epoch) => {
                    return Ok((
                        RedisShardedBloomFilter::with_layout(link, name, layout, epoch),
                        false,
                    ));
                }
                Begun::Creating if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                    return Err(incomplete(name, "creating"));
                }
                Begun::Creating => sleep(POLL),
                Begun::Create => break,
            }
        }
        let mut filter = RedisShardedBloomFilter::with_layout(link, name, layout, epoch);
        for group in filter.shards.chunks(SHARDS_PER_LEASE) {
            let calls: Vec<Call> = group.iter().map(Target::init_call).collect();
            filter.link.run_calls(&calls)?;
            lease(&mut filter.link, name, epoch, Some(self.lease))?;
        }
        lease(&mut filter.link, name, epoch, None)?;
        Ok((filter, true))
    }
}

/// What the first step of a creation found.
enum Begun {
    /// The filter exists, ready, created as this epoch.
    Ready(u64),
    /// Another client is creating it.
    Creating,
    /// This client holds the creation lease.
    Create,
}

/// Runs the marker's first creation step with a proposed `epoch`.
fn begin(
    link: &mut Link,
    name: &str,
    layout: &ShardedLayout,
    epoch: u64,
    lease: Duration,
) -> Result<Begun, Error> {
    let mut call = Call::new(&MARKER.begin, &[marker_key(name)]);
    call.arg(&layout.marker_values()[..])
        .arg(epoch)
        .arg(millis(lease));
    let (state, stored, _lease_left): (String, u64, i64) = link.run(|con| call.invoke(con))?;
    Ok(match state.as_str() {
        "ready" => Begun::Ready(stored),
        "creating" => Begun::Creating,
        _ => Begun::Create,
    })
}

/// Renews the creation lease of `epoch` for `lease`, or with `None` ends the creation.
fn lease(link: &mut Link, name: &str, epoch: u64, lease: Option<Duration>) -> Result<(), Error> {
    let mut call = Call::new(&MARKER.lease, &[marker_key(name)]);
    call.arg(epoch);
    match lease {
        Some(lease) => call.arg(millis(lease)),
        None => call.arg("ready"),
    };
    link.run(|con| call.invoke::<u64>(con))?;
    Ok(())
}

/// A duration in whole milliseconds, at least 1.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Reads the marker of `name`: the layout, the epoch and the state.
fn read_marker(link: &mut Link, name: &str) -> Result<(ShardedLayout, u64, String), Error> {
    let fields: HashMap<String, String> =
        link.run(|con| redis::cmd("HGETALL").arg(marker_key(name)).query(con))?;
    ShardedLayout::from_marker(name, &fields)
}

/// The error for a filter not ready in `state`.
fn incomplete(name: &str, state: &str) -> Error {
    let what = match state {
        "creating" => "is being created (or its creation stopped half-way and awaits takeover)",
        "deleting" => "is being deleted, or a delete stopped half-way (destroy it to finish)",
        _ => "is in an unknown state",
    };
    Error::new(
        ErrorKind::Incomplete,
        format!("the sharded filter {name:?} {what}"),
    )
}

/// The error for an import onto a taken name.
fn taken(name: &str) -> Error {
    Error::new(
        ErrorKind::AlreadyExists,
        format!("a sharded filter named {name:?} exists"),
    )
}

/// An empty `BloomFilter` of a shard's layout (its bits, hashes, hasher,
/// capacity and target), read from a zero payload.
fn empty_bloom(shard: Layout) -> Result<BloomFilter, Error> {
    use filterlab_core::Persist;
    let zeros = std::io::Read::take(std::io::repeat(0), shard.total_bytes());
    Ok(BloomFilter::read_payload_from(
        bloom_header(shard, 0),
        zeros,
    )?)
}

/// An epoch no other creation uses: the time, the process and a counter, mixed.
fn new_epoch() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Below 2^53, so that Lua's numbers would hold it exactly too.
    mix64(nanos ^ mix64(u64::from(std::process::id()) ^ mix64(count))) >> 11
}
