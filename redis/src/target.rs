//! What one script call names: the keys and stored configuration of a plain
//! filter or of one shard of a sharded filter, and the calls that insert
//! and look up keys in it.

use std::time::Duration;

use filterlab_core::Probes;
use redis::{Script, Value};

use crate::error::{Error, ErrorKind};
use crate::layout::{Layout, keys, redis_offset};
use crate::link::Link;
use crate::scripts::{Call, PLAIN, SHARD, Scripts};

/// The key-level methods of a handle, over its `hasher`, `insert_hashes`
/// and `contains_hashes`: one copy for the plain and the sharded filter.
/// `$insert_errors` documents the errors of an insert.
macro_rules! key_methods {
    ($insert_errors:literal) => {
        /// Adds `key`; returns `true` when it was new (one of its bits was
        /// clear), which also counts it in [`len`](Self::len) (BF.ADD).
        ///
        /// # Errors
        ///
        #[doc = $insert_errors]
        pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
            let hash = self.hasher().hash(key);
            Ok(self.insert_hashes_each([hash])?.first() == Some(&true))
        }

        /// Adds every key, batched as [`insert_hashes`](Self::insert_hashes)
        /// says; whether each was new, in order (BF.MADD).
        ///
        /// # Errors
        ///
        /// As [`insert`](Self::insert).
        pub fn insert_each<I>(&mut self, keys: I) -> Result<Vec<bool>, Error>
        where
            I: IntoIterator,
            I::Item: Key,
        {
            let hasher = *self.hasher();
            self.insert_hashes_each(keys.into_iter().map(|key| hasher.hash(&key)))
        }

        /// Adds keys given by their hashes under [`hasher`](Self::hasher),
        /// batched as [`insert_hashes_each`](Self::insert_hashes_each)
        /// says; returns how many were new.
        ///
        /// # Errors
        ///
        /// As [`insert`](Self::insert).
        pub fn insert_hashes(
            &mut self,
            hashes: impl IntoIterator<Item = u64>,
        ) -> Result<usize, Error> {
            let new = self.insert_hashes_each(hashes)?;
            Ok(new.iter().filter(|&&new| new).count())
        }

        /// Adds every key, batched as [`insert_hashes_each`](Self::insert_hashes_each)
        /// says; returns how many were new.
        ///
        /// # Errors
        ///
        /// As [`insert`](Self::insert).
        pub fn insert_many<I>(&mut self, keys: I) -> Result<usize, Error>
        where
            I: IntoIterator,
            I::Item: Key,
        {
            let hasher = *self.hasher();
            self.insert_hashes(keys.into_iter().map(|key| hasher.hash(&key)))
        }

        /// Whether `key` may be present: never `false` for an inserted key.
        ///
        /// # Errors
        ///
        /// As [`insert`](Self::insert): on any doubt an error, never an answer.
        pub fn contains<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
            let hash = self.hasher().hash(key);
            Ok(self.contains_hashes([hash])?.first() == Some(&true))
        }

        /// Looks up every key, batched as
        /// [`contains_hashes`](Self::contains_hashes) says; one answer per
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
            let hasher = *self.hasher();
            self.contains_hashes(keys.into_iter().map(|key| hasher.hash(&key)))
        }
    };
}
pub(crate) use key_methods;

/// The connection settings of a handle, over its `link` and `bits_per_call`
/// fields: one copy for the plain and the sharded filter.
macro_rules! link_methods {
    () => {
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
        pub fn set_bits_per_call(&mut self, bits: usize) -> Result<(), $crate::Error> {
            self.bits_per_call = $crate::target::check_bits_per_call(bits)?;
            Ok(())
        }

        /// The timeout of connecting and of each read and write.
        pub fn timeout(&self) -> Option<::std::time::Duration> {
            self.link.timeout()
        }

        /// Sets the timeout of connecting and of each read and write (default
        /// [`DEFAULT_TIMEOUT`](crate::DEFAULT_TIMEOUT); `None` waits forever).
        /// Reconnects on the next call.
        pub fn set_timeout(&mut self, timeout: Option<::std::time::Duration>) {
            self.link.set_timeout(timeout);
        }
    };
}
pub(crate) use link_methods;

/// What the read script reports of a filter or shard.
#[derive(Clone, Copy, Debug)]
pub(crate) struct State {
    /// The exact counter.
    pub(crate) items: u64,
    /// The bits set, when counted.
    pub(crate) set_bits: Option<u64>,
    /// The configuration's time to live, if any.
    pub(crate) ttl: Option<Duration>,
}

/// A bit array in Redis with its configuration hash: the keys, the values
/// every script compares with the stored configuration, and the family of
/// scripts that act on it.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) layout: Layout,
    /// The hash tag (without braces) every key of it shares.
    pub(crate) tag: String,
    /// The configuration key, then the parts.
    pub(crate) keys: Vec<String>,
    /// The values of the family's checked fields.
    pub(crate) checked: Vec<String>,
    pub(crate) scripts: &'static Scripts,
}

impl Target {
    /// A plain filter named `name`.
    pub(crate) fn plain(name: &str, layout: Layout) -> Self {
        Self {
            layout,
            tag: name.to_owned(),
            keys: keys(name, layout.parts()),
            checked: layout.checked_values().to_vec(),
            scripts: &PLAIN,
        }
    }

    /// Shard `shard` of `shards` of the sharded filter created as `epoch`,
    /// under the hash tag `tag`.
    pub(crate) fn shard(tag: &str, layout: Layout, shards: u64, shard: u64, epoch: u64) -> Self {
        let mut checked = layout.checked_values().to_vec();
        checked.extend([shards.to_string(), shard.to_string(), epoch.to_string()]);
        Self {
            layout,
            tag: tag.to_owned(),
            keys: keys(tag, layout.parts()),
            checked,
            scripts: &SHARD,
        }
    }

    /// A call of `script` on this target's keys, with its configuration.
    pub(crate) fn call(&self, script: &'static Script) -> Call {
        let mut call = Call::new(script, &self.keys);
        call.arg(&self.checked[..]);
        call
    }

    /// The call that creates this target (its bits zeroed, its configuration
    /// with the sizing target) unless it exists; it answers 1 when it did.
    pub(crate) fn init_call(&self) -> Call {
        let mut call = self.call(&self.scripts.init);
        call.arg(&self.layout.sizing_values()[..]);
        call
    }

    /// The calls that insert (or, when `contains`, look up) the keys of
    /// `hashes`, as many keys per call as `bits_per_call` bit positions
    /// allow (at least one), with the number of keys each carries. The
    /// offsets go key by key (k per key) to the insert script, round by
    /// round (probe 0 of every key, then probe 1, ...) to the contains script.
    pub(crate) fn probe_calls(
        &self,
        hashes: &[u64],
        contains: bool,
        bits_per_call: usize,
    ) -> Vec<(Call, usize)> {
        let bloom = self.layout.bloom;
        let k = bloom.num_hashes as usize;
        let script = if contains {
            &self.scripts.contains
        } else {
            &self.scripts.insert
        };
        let mut offsets = Vec::new();
        hashes
            .chunks((bits_per_call / k).max(1))
            .map(|chunk| {
                offsets.clear();
                for &hash in chunk {
                    offsets.extend(Probes::new(hash, bloom.num_bits).take(k).map(redis_offset));
                }
                let mut call = self.call(script);
                if contains {
                    for round in 0..k {
                        for key in 0..chunk.len() {
                            call.arg(offsets[key * k + round]);
                        }
                    }
                } else {
                    for &offset in &offsets {
                        call.arg(offset);
                    }
                }
                (call, chunk.len())
            })
            .collect()
    }
}

impl Target {
    /// The counter, the bits set when `count_bits` (BITCOUNT over every
    /// part), and the time to live, read with the configuration check.
    pub(crate) fn read(&self, link: &mut Link, count_bits: bool) -> Result<State, Error> {
        let mut call = self.call(&self.scripts.read);
        call.arg(if count_bits { "bits" } else { "" });
        let (items, set_bits, ttl): (Option<u64>, i64, i64) = link.run(|con| call.invoke(con))?;
        let items = items.ok_or_else(|| {
            Error::new(
                ErrorKind::Damaged,
                format!("{}: no item counter", self.keys[0]),
            )
        })?;
        Ok(State {
            items,
            set_bits: u64::try_from(set_bits).ok(),
            ttl: u64::try_from(ttl).ok().map(Duration::from_millis),
        })
    }
}

/// The answers of an insert or contains call of `keys` keys, one byte '0'
/// or '1' per key (new, or present); anything else is refused: never a guess.
pub(crate) fn answers(
    reply: &Value,
    keys: usize,
) -> Result<impl Iterator<Item = bool> + '_, Error> {
    let Value::BulkString(bytes) = reply else {
        return Err(unexpected_reply(&format!("{reply:?} for {keys} keys")));
    };
    if bytes.len() != keys || bytes.iter().any(|answer| !b"01".contains(answer)) {
        return Err(unexpected_reply(&format!(
            "{} answers for {keys} keys",
            bytes.len()
        )));
    }
    Ok(bytes.iter().map(|&answer| answer == b'1'))
}

/// `bits` as a number of bit positions per script call: at least 1.
pub(crate) fn check_bits_per_call(bits: usize) -> Result<usize, Error> {
    if bits == 0 {
        return Err(Error::filter(
            filterlab_core::ErrorKind::InvalidParameter,
            "bits_per_call must be at least 1",
        ));
    }
    Ok(bits)
}

/// A reply of the wrong shape (a server that is not Redis, or a bug).
pub(crate) fn unexpected_reply(what: &str) -> Error {
    Error::new(ErrorKind::Script, format!("unexpected reply: {what}"))
}
