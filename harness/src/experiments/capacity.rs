//! The over-capacity experiment: one filter per entry, configured for a
//! capacity, filled from 0% to 300% of it; at each point the FPP over a fixed
//! set of never-inserted keys, the memory, refused inserts, and false
//! negatives among the keys it accepted. A Bloom filter degrades, a cuckoo
//! filter refuses (or, for the cuckoofilter crate, drops items), a scalable
//! filter grows.

use filterlab_core::keys::{insert_key, query_key};
use filterlab_peers::{Mode, Theory, Workload};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::error::Error;
use crate::experiments::accuracy::{count_false_negatives, derive_seed};
use crate::parallel::map_in_order;
use crate::progress::Tracker;
use crate::registry::{Build, Entry, Origin};
use crate::text::plural;

/// One row of `capacity.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// The configured capacity.
    pub capacity: u64,
    /// The configured target FPP.
    pub target_fpp: f64,
    /// Keys offered so far / capacity.
    pub load: f64,
    /// Keys offered so far.
    pub offered: u64,
    /// Keys refused as full so far.
    pub refused: u64,
    /// Bytes of storage now.
    pub memory_bytes: u64,
    /// Measured FPP now.
    pub empirical_fpp: f64,
    /// The filter's theory at the accepted load (empty when unknown).
    pub theoretical_fpp: Option<f64>,
    /// Accepted keys now reported absent.
    pub false_negatives: u64,
}

/// The result: rows, and notes on filters this experiment does not apply to.
pub struct CapacityResults {
    /// One row per filter and load point.
    pub rows: Vec<CapacityRow>,
    /// Filters skipped, and why.
    pub notes: Vec<String>,
}

/// Runs the over-capacity experiment over `entries`.
///
/// # Errors
///
/// When a filter cannot be built for the configured capacity.
pub fn run(
    entries: &[Entry],
    config: &RunConfig,
    progress: &Tracker,
) -> Result<CapacityResults, Error> {
    let mut notes = Vec::new();
    let dynamic: Vec<&Entry> = entries
        .iter()
        .filter(|entry| match entry.build {
            Build::Empty(_) => true,
            Build::FromKeys(_) => {
                notes.push(format!(
                    "{}: static (built once from the key set), so it has no over-capacity behaviour to measure",
                    entry.name
                ));
                false
            }
        })
        .collect();
    let stage = progress.stage("capacity", dynamic.len() as u64);
    let order: Vec<usize> = (0..dynamic.len()).collect();
    let results = map_in_order(&order, config.threads, |index| {
        let rows = measure(dynamic[index], config);
        stage.step(dynamic[index].name);
        rows
    });
    stage.finish(&plural(dynamic.len() as u64, "filter", "filters"));
    let mut rows = Vec::new();
    for result in results {
        rows.extend(result?);
    }
    Ok(CapacityResults { rows, notes })
}

/// Fills one filter from 0% to 300% of its capacity.
fn measure(entry: &Entry, config: &RunConfig) -> Result<Vec<CapacityRow>, Error> {
    let capacity = config.capacity_items;
    let seed = derive_seed(config.seed, &[capacity, 0xca9a_c174]);
    let workload = Workload {
        items: capacity,
        fpp: config.capacity_fpp,
        seed,
    };
    let Build::Empty(build) = entry.build else {
        return Ok(Vec::new());
    };
    let mut subject = build(&workload)?;
    let steps = config.capacity_steps_per_capacity.max(1);
    let last = 3 * u64::from(steps);
    let offered_at = |step: u64| capacity * step / u64::from(steps);
    let keys: Vec<u64> = (0..offered_at(last)).map(|i| insert_key(seed, i)).collect();
    let queries: Vec<u64> = (0..config.capacity_queries)
        .map(|i| query_key(seed, i))
        .collect();
    let mut refused = Vec::new();
    let mut rows = Vec::new();
    for step in 0..=last {
        let (from, to) = (
            offered_at(step.saturating_sub(1)) as usize,
            offered_at(step) as usize,
        );
        if step > 0 {
            let mut refused_now = Vec::new();
            subject.insert_keys(&keys[from..to], Mode::Batched, &mut refused_now);
            refused.extend(refused_now.into_iter().map(|position| from + position));
        }
        let accepted = to as u64 - refused.len() as u64;
        let positives = subject.count_contained(&queries, Mode::Batched);
        rows.push(CapacityRow {
            filter: entry.name.to_owned(),
            origin: entry.origin,
            capacity,
            target_fpp: config.capacity_fpp,
            load: to as f64 / capacity as f64,
            offered: to as u64,
            refused: refused.len() as u64,
            memory_bytes: subject.memory_usage() as u64,
            empirical_fpp: positives as f64 / queries.len() as f64,
            theoretical_fpp: subject.theory(accepted).map(Theory::fpp),
            false_negatives: count_false_negatives(subject.as_ref(), &keys[..to], &refused),
        });
    }
    Ok(rows)
}
