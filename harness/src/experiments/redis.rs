//! The Redis experiment: `filterlab-redis`'s shared Bloom filter over
//! loopback against the local filter of the same configuration, on the same
//! keys: keys per second for a batched insert of n keys and batched lookups
//! of n present and n absent keys, and the same one call per key (Redisson's
//! shape) on a prefix of the keys, with the round trips (commands counted by
//! the servers) each took. Three deployments: one server with the scripts,
//! the same server driven by the raw BITFIELD reference (no script: the
//! speed limit of a filter on plain Redis), and the sharded filter on a
//! 3-master Redis Cluster, whose false positives are also held to the exact
//! sharded theory. Every answer is compared with the local filter's.
//!
//! Beside them, when `filterlab-redis-module` is built (or
//! `FILTERLAB_REDIS_MODULE` names its `.so`), the module's BF.* commands
//! do the same in a server of their own and on the cluster (its nodes load
//! the module): BF.MADD / BF.MEXISTS in commands of [`MODULE_BATCH`] keys,
//! and BF.ADD / BF.EXISTS one key a call, every answer compared with a
//! local `ScalableBloomFilter` of the filter's configuration.
//!
//! It needs a server: the one `FILTERLAB_REDIS_URL` names, else a private
//! `redis-server` started from the PATH on a free loopback port (see
//! `filterlab_redis::testing`); without either it is skipped with a note.
//! The cluster is always private (it also needs `redis-cli`); without it
//! the cluster rows are left out with a note.

use std::error::Error;
use std::time::Instant;

use std::path::PathBuf;

use filterlab_bloom::{BloomBuilder, BloomFilter};
use filterlab_core::Filter;
use filterlab_core::Membership;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::theory::wilson_interval;
use filterlab_redis::testing::{BitfieldReference, Cluster, Server, URL_VARIABLE, unique};
use filterlab_redis::{Endpoint, KeyHasher, RedisBloomFilter, RedisShardedBloomFilter};
use filterlab_scalable::ScalableBloomFilter;
use serde::Serialize;

use crate::config::RunConfig;
use crate::experiments::accuracy::derive_seed;
use crate::experiments::speed::Operation;
use crate::progress::{Stage, Tracker};
use crate::registry::Entry;

/// The local filter the shared one is compared with (a registry name).
pub const LOCAL: &str = "BloomFilter";

/// Masters of the cluster the sharded filter is measured on.
pub const CLUSTER_MASTERS: usize = 3;

/// Confidence of the interval the cluster's false positives must hold the
/// exact theory in.
pub const FPP_CONFIDENCE: f64 = 0.999;

/// Keys in one BF.MADD or BF.MEXISTS of the module's batched shapes (as in
/// the measurements of RedisBloom this compares with).
pub const MODULE_BATCH: usize = 1000;

/// Filters the module's keys are spread over on the cluster: four a master,
/// so every master's slots hold some.
pub const MODULE_CLUSTER_FILTERS: usize = CLUSTER_MASTERS * 4;

/// The variable naming the module's `.so` (else it is looked for beside
/// this program, where cargo builds it).
pub const MODULE_VARIABLE: &str = "FILTERLAB_REDIS_MODULE";

/// The first layer's share of the module's scaling filters, given to it as
/// a module argument and to the local twins its answers are checked
/// against, so a change of the module's default cannot make the two differ.
const MODULE_FIRST_SHARE: f64 = 0.65;

/// How the keys reach the filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// The local `BloomFilter`, batched (`insert_many`, `contains_many`).
    Local,
    /// The shared filter on one server, batched: one script call per
    /// `bits_per_call` bit positions.
    RedisBatched,
    /// The shared filter on one server, one script call per key (Redisson's shape).
    RedisPerKey,
    /// The raw BITFIELD reference on the same server, batched: one
    /// pipeline per `bits_per_call` bit positions.
    ReferenceBatched,
    /// The raw BITFIELD reference, one pipeline per key.
    ReferencePerKey,
    /// The sharded filter on the cluster, batched: one script call per
    /// shard touched (and per `bits_per_call` positions).
    ClusterBatched,
    /// The sharded filter on the cluster, one script call per key.
    ClusterPerKey,
    /// filterlab-redis-module on a server of its own, batched: BF.MADD /
    /// BF.MEXISTS of [`MODULE_BATCH`] keys.
    ModuleBatched,
    /// The module, one BF.ADD / BF.EXISTS per key.
    ModulePerKey,
    /// The module on the cluster, batched, the keys spread over
    /// [`MODULE_CLUSTER_FILTERS`] filters.
    ModuleClusterBatched,
    /// The module on the cluster, one command per key.
    ModuleClusterPerKey,
}

impl Shape {
    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Local => "local BloomFilter, batched",
            Self::RedisBatched => "one server, scripts, batched",
            Self::RedisPerKey => "one server, scripts, one call per key",
            Self::ReferenceBatched => "one server, raw BITFIELD reference, batched",
            Self::ReferencePerKey => "one server, raw BITFIELD reference, one pipeline per key",
            Self::ClusterBatched => "3-master cluster, sharded scripts, batched",
            Self::ClusterPerKey => "3-master cluster, sharded scripts, one call per key",
            Self::ModuleBatched => "one server, module (BF.MADD/BF.MEXISTS), batched",
            Self::ModulePerKey => "one server, module (BF.ADD/BF.EXISTS), one call per key",
            Self::ModuleClusterBatched => "3-master cluster, module, batched",
            Self::ModuleClusterPerKey => "3-master cluster, module, one call per key",
        }
    }

    /// Whether keys go in batches (else one round trip per key).
    pub fn batched(self) -> bool {
        matches!(
            self,
            Self::Local
                | Self::RedisBatched
                | Self::ReferenceBatched
                | Self::ClusterBatched
                | Self::ModuleBatched
                | Self::ModuleClusterBatched
        )
    }

    /// The raw reference measured beside this shape (the one server's, in
    /// the same batching), for the scripted shapes.
    pub fn reference(self) -> Option<Self> {
        match self {
            Self::RedisBatched
            | Self::ClusterBatched
            | Self::ModuleBatched
            | Self::ModuleClusterBatched => Some(Self::ReferenceBatched),
            Self::RedisPerKey
            | Self::ClusterPerKey
            | Self::ModulePerKey
            | Self::ModuleClusterPerKey => Some(Self::ReferencePerKey),
            _ => None,
        }
    }
}

/// Where one Redis row was measured: the shape, the operation, the sizing.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RedisPoint {
    /// How the keys reached the filter.
    pub shape: Shape,
    /// Insert, lookup of inserted keys, or lookup of never-inserted keys.
    pub op: Operation,
    /// Keys sent: all n of the run batched (the filters are sized for n
    /// at `target_fpp`), a prefix of them one call per key.
    pub keys: u64,
    /// The target FPP.
    pub target_fpp: f64,
}

/// What one operation took and answered.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RedisOutcome {
    /// Wall time for all of the keys.
    pub seconds: f64,
    /// Commands the servers ran meanwhile: script calls, or BITFIELD
    /// commands for the reference (none for the local filter; every
    /// client's on a server this run did not start).
    pub round_trips: Option<u64>,
    /// Keys answered new (insert) or present (lookups).
    pub positives: u64,
    /// Answers that differ from the local filter's on the same keys (none
    /// for the local filter itself).
    pub disagreements: Option<u64>,
}

/// One row of `redis.csv`: one operation in one shape, written flat (the
/// point's columns, then the outcome's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedisRow {
    /// Where it was measured.
    pub at: RedisPoint,
    /// What it took and answered.
    pub outcome: RedisOutcome,
}

impl RedisRow {
    /// Keys per second.
    pub fn keys_per_second(&self) -> f64 {
        self.at.keys as f64 / self.outcome.seconds
    }

    /// Keys per round trip, when counted.
    pub fn keys_per_round_trip(&self) -> Option<f64> {
        self.outcome
            .round_trips
            .filter(|&trips| trips > 0)
            .map(|trips| self.at.keys as f64 / trips as f64)
    }
}

impl Serialize for RedisRow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.at, &self.outcome).serialize(serializer)
    }
}

/// The cluster's false positives against the exact sharded theory: the n
/// absent keys looked up after the n inserts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterFpp {
    /// Shards of the filter.
    pub shards: u64,
    /// Bits of each shard.
    pub shard_bits: u64,
    /// Probes per key.
    pub hashes: u32,
    /// Keys inserted, and absent keys looked up.
    pub keys: u64,
    /// Absent keys answered present.
    pub false_positives: u64,
    /// The exact sharded FPP after `keys` inserts.
    pub theory: f64,
    /// The Wilson interval of the measured rate at [`FPP_CONFIDENCE`].
    pub interval: (f64, f64),
}

impl ClusterFpp {
    /// The measured rate.
    pub fn measured(&self) -> f64 {
        self.false_positives as f64 / self.keys as f64
    }

    /// Whether the theory lies in the measured rate's interval.
    pub fn holds(&self) -> bool {
        (self.interval.0..=self.interval.1).contains(&self.theory)
    }
}

/// What the Redis experiment measured.
pub struct RedisResults {
    /// The server: its URL and version, and whether this run started it;
    /// `None` when there was none.
    pub server: Option<String>,
    /// The cluster, when one was started.
    pub cluster: Option<String>,
    /// The module's server, when the module was found.
    pub module: Option<String>,
    /// Bit positions per script call of the batched shapes.
    pub bits_per_call: usize,
    /// One row per shape and operation.
    pub rows: Vec<RedisRow>,
    /// The cluster's false positives against the theory, when measured.
    pub cluster_fpp: Option<ClusterFpp>,
    /// Why it was skipped or stopped, and what the counts include.
    pub notes: Vec<String>,
}

/// Why the Redis gate fails: any answer of a shared filter that differs
/// from the local filter's (it must hash and probe exactly alike, so this
/// includes every false negative), and a cluster FPP whose interval misses
/// the exact theory; empty when it passes.
pub fn gate(rows: &[RedisRow], cluster_fpp: Option<&ClusterFpp>) -> Vec<String> {
    let mut failures: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            let at = &row.at;
            let wrong = row.outcome.disagreements.filter(|&wrong| wrong > 0)?;
            Some(format!(
                "{} ({:?}): {wrong} of {} answers differ from the local filter's",
                at.shape.describe(),
                at.op,
                at.keys
            ))
        })
        .collect();
    if let Some(fpp) = cluster_fpp.filter(|fpp| !fpp.holds()) {
        failures.push(format!(
            "3-master cluster: {} false positives of {} absent keys, [{:.3e}, {:.3e}] at {}, \
             miss the exact sharded FPP {:.3e}",
            fpp.false_positives,
            fpp.keys,
            fpp.interval.0,
            fpp.interval.1,
            FPP_CONFIDENCE,
            fpp.theory
        ));
    }
    failures
}

/// Runs the Redis experiment when `LOCAL` is among `entries` and a server
/// can be found; otherwise returns the note saying why not.
pub fn run(entries: &[Entry], config: &RunConfig, progress: &Tracker) -> RedisResults {
    let mut results = RedisResults {
        server: None,
        cluster: None,
        module: None,
        bits_per_call: filterlab_redis::DEFAULT_BITS_PER_CALL,
        rows: Vec::new(),
        cluster_fpp: None,
        notes: Vec::new(),
    };
    if !entries.iter().any(|entry| entry.name == LOCAL) {
        results.notes.push(format!(
            "not run: it compares with {LOCAL}, which was not selected"
        ));
        return results;
    }
    let server = match Server::discover() {
        Ok(server) => server,
        Err(err) => {
            results.notes.push(format!(
                "skipped: no Redis server ({err}); put redis-server on the PATH or set \
                 {URL_VARIABLE} to measure the shared filter"
            ));
            return results;
        }
    };
    let version = server
        .version()
        .unwrap_or_else(|err| format!("unknown ({err})"));
    results.server = Some(if server.is_private() {
        format!("redis-server {version}, started by this run on a free loopback port")
    } else {
        format!("redis-server {version}, the one {URL_VARIABLE} names")
    });
    if !server.is_private() {
        results.notes.push(
            "round trips on the one server are its commands from every client while each step ran"
                .to_owned(),
        );
    }
    let stage = progress.stage("redis", 11);
    let keys = Keys::new(config);
    let mut run = Run {
        config,
        keys: &keys,
        rows: Vec::new(),
        progress: &stage,
    };
    if let Err(err) = run.one_server(&server) {
        results.notes.push(format!(
            "stopped by a Redis error (the rows before it stand): {err}"
        ));
        results.rows = run.rows;
        stage.finish(&format!("{} rows", results.rows.len()));
        return results;
    }
    let module = module_path();
    let module_args: Vec<String> = module
        .iter()
        .flat_map(|path| ["--loadmodule".to_owned(), path.display().to_string()])
        .chain(module.iter().flat_map(|_| module_arguments()))
        .collect();
    let module_args: Vec<&str> = module_args.iter().map(String::as_str).collect();
    if let Some(path) = &module {
        results.module = run.on_module_server(path, &module_args, &version, &mut results.notes);
    } else {
        results.notes.push(format!(
            "module rows left out: no libfilterlab_redis_module.so beside this program (build \
             it with `cargo build --release -p filterlab-redis-module`) and {MODULE_VARIABLE} \
             is unset"
        ));
    }
    run.cluster_rows(&module_args, module.is_some(), &version, &mut results);
    results.rows = run.rows;
    stage.finish(&format!("{} rows", results.rows.len()));
    results
}

/// What stops a step: a Redis or a sizing error.
type Failure = Box<dyn Error>;

/// The keys of a run: n to insert and n never inserted, from one seed.
struct Keys {
    seed: u64,
    inserted: Vec<u64>,
    absent: Vec<u64>,
}

impl Keys {
    fn new(config: &RunConfig) -> Self {
        let items = config.redis_items;
        let seed = derive_seed(config.seed, &[items, 0x7ed1_5000]);
        Self {
            seed,
            inserted: (0..items).map(|i| insert_key(seed, i)).collect(),
            absent: (0..items).map(|i| query_key(seed, i)).collect(),
        }
    }

    /// Every filter's sizing: n keys at the target FPP, the run's seed.
    fn sizing(&self, config: &RunConfig) -> BloomBuilder {
        BloomFilter::with_fpp(config.redis_fpp)
            .expected_items(config.redis_items)
            .seed(self.seed)
    }

    /// The keys `shape` sends: all of them batched, a prefix one per call.
    fn len(&self, shape: Shape, config: &RunConfig) -> usize {
        if shape.batched() {
            self.inserted.len()
        } else {
            config.redis_per_key.min(config.redis_items) as usize
        }
    }

    /// The first `len` keys `op` looks up (or inserts).
    fn of(&self, op: Operation, len: usize) -> &[u64] {
        if op == Operation::LookupNegative {
            &self.absent[..len]
        } else {
            &self.inserted[..len]
        }
    }
}

/// The answers of a local filter on the first keys, which every shape on
/// as many keys must give.
#[derive(Clone, Default)]
struct Answers {
    new: usize,
    present: Vec<bool>,
    absent: Vec<bool>,
}

impl Answers {
    /// A fresh local filter's answers on the first `len` keys.
    fn of<F: Filter>(mut filter: F, keys: &Keys, len: usize) -> Result<Self, Failure> {
        let hasher = *filter.hasher();
        let hashes: Vec<u64> = keys.inserted[..len]
            .iter()
            .map(|key| hasher.hash(key))
            .collect();
        Ok(Self {
            new: filter.insert_hashes(&hashes)?,
            present: filter.contains_many(&keys.inserted[..len]),
            absent: filter.contains_many(&keys.absent[..len]),
        })
    }

    fn answers(&self, op: Operation) -> &[bool] {
        if op == Operation::LookupPositive {
            &self.present
        } else {
            &self.absent
        }
    }
}

/// A filter in Redis as the experiment drives it: batched, or one round
/// trip per key.
trait Remote {
    /// Inserts the keys; how many were new.
    fn insert_keys(&mut self, keys: &[u64], batched: bool) -> Result<usize, Failure>;
    /// Looks the keys up; one answer per key, in order.
    fn contains_keys(&mut self, keys: &[u64], batched: bool) -> Result<Vec<bool>, Failure>;
    /// Removes it from Redis.
    fn remove(&mut self) -> Result<(), Failure>;
}

/// The scripted filters: `insert_many` and `contains_many` batched,
/// `insert` and `contains` one script call per key.
macro_rules! scripted {
    ($filter:ty) => {
        impl Remote for $filter {
            fn insert_keys(&mut self, keys: &[u64], batched: bool) -> Result<usize, Failure> {
                if batched {
                    return Ok(self.insert_many(keys)?);
                }
                keys.iter()
                    .try_fold(0, |new, key| Ok(new + usize::from(self.insert(key)?)))
            }

            fn contains_keys(&mut self, keys: &[u64], batched: bool) -> Result<Vec<bool>, Failure> {
                if batched {
                    return Ok(self.contains_many(keys)?);
                }
                keys.iter().map(|key| Ok(self.contains(key)?)).collect()
            }

            fn remove(&mut self) -> Result<(), Failure> {
                self.delete()?;
                Ok(())
            }
        }
    };
}

scripted!(RedisBloomFilter);
scripted!(RedisShardedBloomFilter);

/// The raw BITFIELD reference with the hasher of the filter it stands for.
struct Reference {
    raw: BitfieldReference,
    hasher: KeyHasher,
}

impl Reference {
    fn hashes(&self, keys: &[u64]) -> Vec<u64> {
        keys.iter().map(|key| self.hasher.hash(key)).collect()
    }
}

impl Remote for Reference {
    fn insert_keys(&mut self, keys: &[u64], batched: bool) -> Result<usize, Failure> {
        let hashes = self.hashes(keys);
        let size = if batched { hashes.len().max(1) } else { 1 };
        hashes
            .chunks(size)
            .try_fold(0, |new, chunk| Ok(new + self.raw.insert_hashes(chunk)?))
    }

    fn contains_keys(&mut self, keys: &[u64], batched: bool) -> Result<Vec<bool>, Failure> {
        let hashes = self.hashes(keys);
        let size = if batched { hashes.len().max(1) } else { 1 };
        let mut found = Vec::with_capacity(hashes.len());
        for chunk in hashes.chunks(size) {
            found.extend(self.raw.contains_hashes(chunk)?);
        }
        Ok(found)
    }

    fn remove(&mut self) -> Result<(), Failure> {
        Ok(self.raw.delete()?)
    }
}

/// `filterlab-redis-module`'s `.so`: the one [`MODULE_VARIABLE`] names,
/// else one beside this program (or in its `deps/`, where cargo leaves it
/// when it builds the crate for a test).
pub fn module_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(MODULE_VARIABLE).filter(|path| !path.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!(
        "{}filterlab_redis_module{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    [dir.join(&name), dir.join("deps").join(&name)]
        .into_iter()
        .find(|path| path.exists())
}

/// Filters of filterlab-redis-module (BF.*), the keys spread over them by
/// their value, sent as their 8 little-endian bytes (which hash as the
/// `u64` keys do locally).
struct ModuleFilters {
    connection: Box<dyn redis::ConnectionLike>,
    names: Vec<String>,
}

impl ModuleFilters {
    /// Creates `parts` scaling filters of `capacity` keys each at `fpp`.
    fn create(
        mut connection: Box<dyn redis::ConnectionLike>,
        parts: usize,
        capacity: u64,
        fpp: f64,
    ) -> Result<Self, Failure> {
        let names: Vec<String> = (0..parts)
            .map(|part| unique(&format!("harness-module-{part}")))
            .collect();
        for name in &names {
            redis::cmd("BF.RESERVE")
                .arg(name)
                .arg(fpp)
                .arg(capacity)
                .exec(connection.as_mut())?;
        }
        Ok(Self { connection, names })
    }

    fn part(&self, key: u64) -> usize {
        (key % self.names.len() as u64) as usize
    }

    /// Sends `command` for `keys` (batched: [`MODULE_BATCH`] of one
    /// filter's keys a command; else one key a command); the answers, in
    /// the keys' order.
    fn send(&mut self, command: &str, keys: &[u64], batched: bool) -> Result<Vec<bool>, Failure> {
        let mut found = vec![false; keys.len()];
        if !batched {
            for (answer, &key) in found.iter_mut().zip(keys) {
                let name = &self.names[self.part(key)];
                let reply: i64 = redis::cmd(command)
                    .arg(name)
                    .arg(&key.to_le_bytes()[..])
                    .query(self.connection.as_mut())?;
                *answer = reply == 1;
            }
            return Ok(found);
        }
        let mut by_part: Vec<Vec<usize>> = vec![Vec::new(); self.names.len()];
        for (index, &key) in keys.iter().enumerate() {
            by_part[self.part(key)].push(index);
        }
        for (part, indexes) in by_part.iter().enumerate() {
            for chunk in indexes.chunks(MODULE_BATCH) {
                let bytes: Vec<[u8; 8]> = chunk
                    .iter()
                    .map(|&index| keys[index].to_le_bytes())
                    .collect();
                let items: Vec<&[u8]> = bytes.iter().map(|key| &key[..]).collect();
                let replies: Vec<i64> = redis::cmd(command)
                    .arg(&self.names[part])
                    .arg(&items)
                    .query(self.connection.as_mut())?;
                for (&index, reply) in chunk.iter().zip(replies) {
                    found[index] = reply == 1;
                }
            }
        }
        Ok(found)
    }
}

impl Remote for ModuleFilters {
    fn insert_keys(&mut self, keys: &[u64], batched: bool) -> Result<usize, Failure> {
        let command = if batched { "BF.MADD" } else { "BF.ADD" };
        Ok(count(&self.send(command, keys, batched)?))
    }

    fn contains_keys(&mut self, keys: &[u64], batched: bool) -> Result<Vec<bool>, Failure> {
        let command = if batched { "BF.MEXISTS" } else { "BF.EXISTS" };
        self.send(command, keys, batched)
    }

    fn remove(&mut self) -> Result<(), Failure> {
        for name in &self.names {
            redis::cmd("DEL").arg(name).exec(self.connection.as_mut())?;
        }
        Ok(())
    }
}

/// The module arguments of every server the module is measured on: the
/// configuration [`module_answers`] reproduces locally.
fn module_arguments() -> [String; 4] {
    [
        "bf-layers".to_owned(),
        "blocked".to_owned(),
        "bf-first-share".to_owned(),
        MODULE_FIRST_SHARE.to_string(),
    ]
}

/// What the module's filters answer on the first `len` keys: local
/// `ScalableBloomFilter`s of their configuration ([`module_arguments`]:
/// blocked layers, the first layer's share), the keys hashed as the bytes
/// the module receives and spread over the filters as [`ModuleFilters`] does.
fn module_answers(
    keys: &Keys,
    len: usize,
    parts: usize,
    capacity: u64,
    fpp: f64,
) -> Result<Answers, Failure> {
    let hasher = KeyHasher::default();
    let mut twins = (0..parts)
        .map(|_| {
            ScalableBloomFilter::with_fpp(fpp)
                .initial_capacity(capacity)
                .first_layer_share(MODULE_FIRST_SHARE)
                .build()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let part = |key: u64| (key % parts as u64) as usize;
    let mut answers = Answers::default();
    for &key in &keys.inserted[..len] {
        answers.new +=
            usize::from(twins[part(key)].insert_hash(hasher.hash_bytes(&key.to_le_bytes()))?);
    }
    let lookups = |of: &[u64]| {
        of.iter()
            .map(|&key| twins[part(key)].contains_hash(hasher.hash_bytes(&key.to_le_bytes())))
            .collect()
    };
    answers.present = lookups(&keys.inserted[..len]);
    answers.absent = lookups(&keys.absent[..len]);
    Ok(answers)
}

/// The module's commands, as INFO commandstats names them.
const MODULE_COMMANDS: [&str; 4] = ["bf.madd", "bf.mexists", "bf.add", "bf.exists"];

/// The servers a shape runs on, whose commands are counted.
enum Servers<'a> {
    One(&'a Server),
    Cluster(&'a Cluster),
}

impl Servers<'_> {
    /// Calls of `commands` the servers have run (`None` when INFO does not answer).
    fn calls(&self, commands: &[&str]) -> Option<u64> {
        commands
            .iter()
            .map(|command| match self {
                Self::One(server) => server.command_calls(command).ok(),
                Self::Cluster(cluster) => cluster.command_calls(command).ok(),
            })
            .sum()
    }
}

/// The experiment under way: what every step measures with (the
/// configuration, the keys, the progress) and the rows measured so far.
struct Run<'a> {
    config: &'a RunConfig,
    keys: &'a Keys,
    rows: Vec<RedisRow>,
    progress: &'a Stage<'a>,
}

impl Run<'_> {
    /// Measures the local `BloomFilter`, the scripts and the raw reference
    /// on one server: the reference right after the scripts, on the same
    /// keys, so that their ratio shares the machine's load.
    fn one_server(&mut self, server: &Server) -> Result<(), Failure> {
        let keys = self.keys;
        let sizing = keys.sizing(self.config);
        let n = keys.inserted.len();
        let mut local = sizing.build()?;
        let mut all = Answers::default();
        let (new, seconds) = timed(|| Ok(local.insert_many(&keys.inserted)))?;
        all.new = new;
        let insert = self.row(Shape::Local, Operation::Insert, n, seconds, None, new);
        self.rows.push(insert);
        for op in [Operation::LookupPositive, Operation::LookupNegative] {
            let (found, seconds) = timed(|| Ok(local.contains_many(keys.of(op, n))))?;
            let lookup = self.row(Shape::Local, op, n, seconds, None, count(&found));
            self.rows.push(lookup);
            if op == Operation::LookupPositive {
                all.present = found;
            } else {
                all.absent = found;
            }
        }
        self.progress.step(LOCAL);
        let per_key = keys.len(Shape::RedisPerKey, self.config);
        let prefix = Answers::of(sizing.build()?, keys, per_key)?;
        warm_up(server, &sizing)?;
        let servers = Servers::One(server);
        for shape in [
            Shape::RedisBatched,
            Shape::ReferenceBatched,
            Shape::RedisPerKey,
            Shape::ReferencePerKey,
        ] {
            let expected = if shape.batched() { &all } else { &prefix };
            let mut remote: Box<dyn Remote> = if shape.reference().is_some() {
                let builder = RedisBloomFilter::builder(sizing.clone());
                Box::new(builder.try_init(&server.client(), &unique("harness"))?.0)
            } else {
                Box::new(Reference {
                    raw: BitfieldReference::create(
                        &server.client(),
                        &unique("harness-reference"),
                        sizing.config()?,
                        filterlab_redis::DEFAULT_BITS_PER_CALL,
                    )?,
                    hasher: *local.hasher(),
                })
            };
            self.measure(remote.as_mut(), shape, &servers, expected)?;
            self.progress.step(shape.describe());
        }
        Ok(())
    }

    /// Measures the sharded filter on the cluster, against a local
    /// `ShardedBloomFilter` of its configuration; returns its false
    /// positives against the exact sharded theory.
    fn on_cluster(&mut self, cluster: &Cluster) -> Result<ClusterFpp, Failure> {
        let keys = self.keys;
        let endpoint = Endpoint::from(cluster.client());
        let builder = RedisShardedBloomFilter::builder(keys.sizing(self.config));
        // Every master loads the scripts before anything is counted.
        let (mut warm, _) = builder.try_init(&endpoint, &unique("harness-warm-up"))?;
        let warm_keys = &keys.inserted[..keys.inserted.len().min(4096)];
        warm.insert_keys(warm_keys, true)?;
        warm.contains_keys(warm_keys, true)?;
        warm.remove()?;
        let servers = Servers::Cluster(cluster);
        let mut fpp = None;
        for shape in [Shape::ClusterBatched, Shape::ClusterPerKey] {
            let len = keys.len(shape, self.config);
            let expected = Answers::of(builder.build_local()?, keys, len)?;
            let (mut filter, _) = builder.try_init(&endpoint, &unique("harness"))?;
            if shape.batched() {
                fpp = Some(ClusterFpp {
                    shards: filter.shards(),
                    shard_bits: filter.shard_config().num_bits,
                    hashes: filter.num_hashes(),
                    keys: len as u64,
                    false_positives: 0,
                    theory: filter.theoretical_fpp(len as u64)?,
                    interval: (0.0, 1.0),
                });
            }
            self.measure(&mut filter, shape, &servers, &expected)?;
            self.progress.step(shape.describe());
        }
        let mut fpp = fpp.ok_or("the batched cluster shape did not run")?;
        fpp.false_positives = self
            .rows
            .iter()
            .find(|row| {
                row.at.shape == Shape::ClusterBatched && row.at.op == Operation::LookupNegative
            })
            .map_or(0, |row| row.outcome.positives);
        fpp.interval = wilson_interval(fpp.false_positives, fpp.keys, FPP_CONFIDENCE);
        Ok(fpp)
    }

    /// Starts the cluster (its nodes loading the module when `args` name
    /// it) and measures the sharded filter there, and the module.
    fn cluster_rows(
        &mut self,
        args: &[&str],
        with_module: bool,
        version: &str,
        results: &mut RedisResults,
    ) {
        match Cluster::start_with(CLUSTER_MASTERS, 0, args) {
            Ok(cluster) => {
                results.cluster = Some(format!(
                    "{CLUSTER_MASTERS} masters (redis-server {version}, no replicas{}) started by \
                 this run on loopback, joined by redis-cli --cluster create",
                    if with_module {
                        ", the module loaded"
                    } else {
                        ""
                    }
                ));
                match self.on_cluster(&cluster) {
                    Ok(fpp) => results.cluster_fpp = Some(fpp),
                    Err(err) => results.notes.push(format!(
                        "cluster stopped by a Redis error (the rows before it stand): {err}"
                    )),
                }
                if with_module && let Err(err) = self.module_on_cluster(&cluster) {
                    results.notes.push(format!(
                    "module cluster rows stopped by a Redis error (the rows before it stand): {err}"
                ));
                }
            }
            Err(err) => results.notes.push(format!(
                "cluster rows left out: no Redis Cluster could be started ({err}); it needs \
             redis-server and redis-cli on the PATH"
            )),
        }
    }

    /// Starts a server with the module (`args` load it) and measures it
    /// there; what the report says of that server, or `None` (and a note)
    /// when it did not start.
    fn on_module_server(
        &mut self,
        path: &std::path::Path,
        args: &[&str],
        version: &str,
        notes: &mut Vec<String>,
    ) -> Option<String> {
        let server = match Server::private_with(false, args) {
            Ok(server) => server,
            Err(err) => {
                notes.push(format!(
                    "module rows left out: its server did not start ({err})"
                ));
                return None;
            }
        };
        if let Err(err) = self.module_server(&server) {
            notes.push(format!(
                "module rows stopped by a Redis error (the rows before it stand): {err}"
            ));
        }
        Some(format!(
            "{} loaded into a redis-server {version} of its own, started by this run",
            path.display()
        ))
    }

    /// Measures the module's filter on its own server, batched and one
    /// key per call, each against local twins.
    fn module_server(&mut self, server: &Server) -> Result<(), Failure> {
        let servers = Servers::One(server);
        let (fpp, items) = (self.config.redis_fpp, self.config.redis_items);
        for shape in [Shape::ModuleBatched, Shape::ModulePerKey] {
            let len = self.keys.len(shape, self.config);
            let expected = module_answers(self.keys, len, 1, items, fpp)?;
            let connection = Box::new(server.connection());
            let mut filters = ModuleFilters::create(connection, 1, items, fpp)?;
            self.measure(&mut filters, shape, &servers, &expected)?;
            self.progress.step(shape.describe());
        }
        Ok(())
    }

    /// Measures the module on the cluster: the keys spread over
    /// [`MODULE_CLUSTER_FILTERS`] filters, which the cluster routes by
    /// their names to every master.
    fn module_on_cluster(&mut self, cluster: &Cluster) -> Result<(), Failure> {
        let servers = Servers::Cluster(cluster);
        let parts = MODULE_CLUSTER_FILTERS;
        let fpp = self.config.redis_fpp;
        // Room for the binomial spread of the keys over the filters.
        let capacity = (self.config.redis_items / parts as u64) * 5 / 4 + 100;
        for shape in [Shape::ModuleClusterBatched, Shape::ModuleClusterPerKey] {
            let len = self.keys.len(shape, self.config);
            let expected = module_answers(self.keys, len, parts, capacity, fpp)?;
            let connection = Box::new(cluster.client().get_connection()?);
            let mut filters = ModuleFilters::create(connection, parts, capacity, fpp)?;
            self.measure(&mut filters, shape, &servers, &expected)?;
            self.progress.step(shape.describe());
        }
        Ok(())
    }

    /// Measures `shape`'s insert and two lookups through `remote` (fresh)
    /// on the keys the shape sends, each answer held to `expected`; then
    /// removes it.
    fn measure(
        &mut self,
        remote: &mut dyn Remote,
        shape: Shape,
        servers: &Servers<'_>,
        expected: &Answers,
    ) -> Result<(), Failure> {
        let commands: &[&str] = match shape {
            Shape::ReferenceBatched | Shape::ReferencePerKey => &["bitfield", "bitfield_ro"],
            Shape::ModuleBatched
            | Shape::ModulePerKey
            | Shape::ModuleClusterBatched
            | Shape::ModuleClusterPerKey => &MODULE_COMMANDS,
            _ => &["evalsha"],
        };
        let keys = self.keys;
        let (batched, len) = (shape.batched(), keys.len(shape, self.config));
        let (new, seconds, trips) = counted(servers, commands, || {
            remote.insert_keys(keys.of(Operation::Insert, len), batched)
        })?;
        let mut insert = self.row(shape, Operation::Insert, len, seconds, trips, new);
        insert.outcome.disagreements = Some(new.abs_diff(expected.new) as u64);
        self.rows.push(insert);
        for op in [Operation::LookupPositive, Operation::LookupNegative] {
            let (found, seconds, trips) = counted(servers, commands, || {
                remote.contains_keys(keys.of(op, len), batched)
            })?;
            let mut lookup = self.row(shape, op, len, seconds, trips, count(&found));
            lookup.outcome.disagreements = Some(differences(&found, expected.answers(op)));
            self.rows.push(lookup);
        }
        remote.remove()
    }

    /// A row with no disagreements counted yet.
    fn row(
        &self,
        shape: Shape,
        op: Operation,
        keys: usize,
        seconds: f64,
        round_trips: Option<u64>,
        positives: usize,
    ) -> RedisRow {
        RedisRow {
            at: RedisPoint {
                shape,
                op,
                keys: keys as u64,
                target_fpp: self.config.redis_fpp,
            },
            outcome: RedisOutcome {
                seconds,
                round_trips,
                positives: positives as u64,
                disagreements: None,
            },
        }
    }
}

/// Loads the insert and lookup scripts on the server through a throwaway
/// filter, so that the measured steps count only their own calls.
fn warm_up(server: &Server, sizing: &BloomBuilder) -> Result<(), Failure> {
    let (mut warm, _) = RedisBloomFilter::builder(sizing.clone())
        .try_init(&server.client(), &unique("harness-warm-up"))?;
    warm.insert(&0u64)?;
    warm.contains(&0u64)?;
    warm.remove()
}

/// `step`'s result and its wall time in seconds.
fn timed<T>(step: impl FnOnce() -> Result<T, Failure>) -> Result<(T, f64), Failure> {
    let start = Instant::now();
    let value = step()?;
    Ok((value, start.elapsed().as_secs_f64()))
}

/// [`timed`], and the calls of `commands` the servers ran meanwhile
/// (`None` when INFO does not answer).
fn counted<T>(
    servers: &Servers<'_>,
    commands: &[&str],
    step: impl FnOnce() -> Result<T, Failure>,
) -> Result<(T, f64, Option<u64>), Failure> {
    let before = servers.calls(commands);
    let (value, seconds) = timed(step)?;
    let after = servers.calls(commands);
    let trips = before.zip(after).map(|(before, after)| after - before);
    Ok((value, seconds, trips))
}

/// Answers that are `true`.
fn count(answers: &[bool]) -> usize {
    answers.iter().filter(|&&hit| hit).count()
}

/// Positions where `a` and `b` differ (and any length difference).
pub fn differences(a: &[bool], b: &[bool]) -> u64 {
    let unequal = a.iter().zip(b).filter(|(x, y)| x != y).count();
    (unequal + a.len().abs_diff(b.len())) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_count_mismatches_and_missing_answers() {
        assert_eq!(differences(&[true, false], &[true, false]), 0);
        assert_eq!(differences(&[true, false, true], &[false, false]), 2);
        assert_eq!(differences(&[], &[true]), 1);
    }

    #[test]
    fn the_gate_fails_on_any_disagreement_only() {
        let row = |shape, disagreements| RedisRow {
            at: RedisPoint {
                shape,
                op: Operation::LookupNegative,
                keys: 10,
                target_fpp: 0.01,
            },
            outcome: RedisOutcome {
                seconds: 1.0,
                round_trips: Some(2),
                positives: 0,
                disagreements,
            },
        };
        let rows = [
            row(Shape::Local, None),
            row(Shape::RedisBatched, Some(0)),
            row(Shape::RedisPerKey, Some(0)),
        ];
        assert!(gate(&rows, None).is_empty());
        let failures = gate(&[row(Shape::RedisPerKey, Some(3))], None);
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].contains("3 of 10 answers differ"),
            "{failures:?}"
        );
        assert_eq!(rows[1].keys_per_round_trip(), Some(5.0));
    }

    #[test]
    fn the_gate_fails_when_the_cluster_fpp_interval_misses_the_theory() {
        let fpp = |false_positives| {
            let keys = 10_000;
            ClusterFpp {
                shards: 64,
                shard_bits: 1_500,
                hashes: 7,
                keys,
                false_positives,
                theory: 0.01,
                interval: wilson_interval(false_positives, keys, FPP_CONFIDENCE),
            }
        };
        assert!(fpp(100).holds());
        assert!(gate(&[], Some(&fpp(100))).is_empty());
        assert!(!fpp(160).holds());
        let failures = gate(&[], Some(&fpp(160)));
        assert_eq!(failures.len(), 1);
        assert!(failures[0].contains("160 false positives"), "{failures:?}");
        assert!((fpp(160).measured() - 0.016).abs() < 1e-12);
    }
}
