//! `--redis`: the filter kept in Redis (a server, or a cluster's masters as
//! shards) and shared by every `dedup` that names it, so that processes
//! reading parts of one stream share their duplicates. Each key's verdict
//! comes from the insert script's per-key answer: of all the processes, the
//! first to insert a key hears that it was new, in one atomic step.

use std::time::Duration;

use filterlab_dedup::{Metrics, Verdict};
use filterlab_redis::{BloomFilter, Durability, Endpoint, RedisShardedBloomFilter};

use crate::cli::Args;

/// How long a block waits for the replicas in durable mode.
const WAIT: Duration = Duration::from_secs(5);

/// The shared filter and this run's verdicts on it.
pub(crate) struct Shared {
    filter: RedisShardedBloomFilter,
    expected: u64,
    unique: u64,
    duplicate: u64,
}

impl Shared {
    /// Opens (or creates, for the first process) the filter the flags
    /// describe; returns it and a line saying what it is.
    pub(crate) fn open(args: &Args, url: &str) -> Result<(Self, String), String> {
        let endpoint = Endpoint::open(url).map_err(|err| format!("--redis {url}: {err}"))?;
        let sizing = BloomFilter::with_fpp(args.fpp)
            .expected_items(args.expected)
            .seed(args.seed);
        let builder = RedisShardedBloomFilter::builder(sizing).shards(args.redis_shards);
        let (mut filter, created) = builder
            .try_init(&endpoint, &args.redis_name)
            .map_err(|err| format!("--redis {url} --redis-name {}: {err}", args.redis_name))?;
        if let Some(replicas) = args.redis_replicas {
            filter.set_durability(Some(Durability {
                replicas,
                timeout: WAIT,
            }));
        }
        let config = filter.shard_config();
        let line = format!(
            "dedup: shared filter {:?} in the Redis {} at {url} ({}): {} shards of {} bits, k = {}, \
             {} bytes on the servers, exact FPP at N = {:.3e}{}",
            args.redis_name,
            if endpoint.is_cluster() {
                "cluster"
            } else {
                "server"
            },
            if created {
                "created by this run"
            } else {
                "opened"
            },
            filter.shards(),
            config.num_bits,
            config.num_hashes,
            filter.num_bits() / 8,
            filter.theoretical_fpp(args.expected).unwrap_or(f64::NAN),
            args.redis_replicas
                .map_or(String::new(), |replicas| format!(
                    ", durable: WAIT for {replicas} replica(s)"
                )),
        );
        let shared = Self {
            filter,
            expected: args.expected,
            unique: 0,
            duplicate: 0,
        };
        Ok((shared, line))
    }

    /// Inserts the hashes and appends a verdict for each: unique when this
    /// insert set one of its bits, else duplicate.
    pub(crate) fn check(
        &mut self,
        hashes: &[u64],
        verdicts: &mut Vec<Verdict>,
    ) -> Result<(), String> {
        let new = self
            .filter
            .insert_hashes_each(hashes.iter().copied())
            .map_err(|err| format!("cannot check in Redis: {err}"))?;
        for new in new {
            if new {
                self.unique += 1;
                verdicts.push(Verdict::Unique);
            } else {
                self.duplicate += 1;
                verdicts.push(Verdict::Duplicate);
            }
        }
        Ok(())
    }

    /// The metrics of this run, with the shared filter's counter (every
    /// process's uniques) for the uniques stored; `local` gives the faults.
    pub(crate) fn metrics(&mut self, local: &Metrics) -> Metrics {
        let stored = self.filter.len().unwrap_or(self.unique);
        let mut metrics = local.clone();
        metrics.memory_bytes = self.filter.num_bits() / 8;
        metrics.uniques_configured = self.expected;
        metrics.uniques_stored = stored;
        metrics.fill_level = stored as f64 * 100.0 / self.expected as f64;
        metrics.checks = self.unique + self.duplicate;
        metrics.unique = self.unique;
        metrics.duplicate = self.duplicate;
        metrics.partitions = 1;
        metrics
    }

    /// This run's uniques over N, in percent (the other processes' are not
    /// counted: the progress line costs no round trip).
    pub(crate) fn own_fill_level(&self) -> f64 {
        self.unique as f64 * 100.0 / self.expected as f64
    }
}
