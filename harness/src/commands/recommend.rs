//! `filterlab recommend`: the filterlab filters with the capabilities asked
//! for, ranked for a workload (the top three, each with its reason), the
//! closest fits and what they would take when none fits the budget, where
//! the measured figures came from, then every suitable filter's sizing.
//! Requirements no filterlab filter meets are said so, with what the
//! measured peers did.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use filterlab_core::sizing::human_bytes;
use filterlab_core::theory::hash_bits_needed;
use filterlab_peers::Mode;
use serde::de::DeserializeOwned;

use crate::commands::report::{DEFAULT_OUT, FALLBACK_OUT};
use crate::config::check_workload;
use crate::error::Error;
use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::capacity::CapacityRow;
use crate::experiments::speed::{Operation, SpeedRow};
use crate::registry::{self, Capability, Entry, GROWTH_SPAN, Sizing};

/// A grown filter's FPP up to this factor over the target still meets it.
const GROWN_TOLERANCE: f64 = 1.001;
use crate::experiments::churn::ChurnRow;
use crate::experiments::growth::GrowthRow;
use crate::output::RunRecord;
use crate::render::evidence::{Evidence, NOT_MEASURED};
use crate::render::pick::{Contender, Interval, pick};
use crate::text::{format_count, plural};

/// A `recommend` request.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each is a flag of the command line"
)]
pub struct Request {
    /// Distinct items to hold.
    pub items: u64,
    /// Target FPP.
    pub fpp: f64,
    /// Items must be deletable.
    pub deletes: bool,
    /// The final number of items is not known: the filter must grow.
    pub unknown_size: bool,
    /// Several threads insert at once.
    pub concurrent: bool,
    /// A set built once: no inserts after the build, so the filters built
    /// from a key set compete (and only they).
    pub static_set: bool,
    /// A memory budget in bytes.
    pub memory: Option<u64>,
    /// A report directory to quote measurements from; `None` looks in
    /// `reports` and then where the default run writes when it cannot.
    pub report: Option<PathBuf>,
}

/// How many filters the ranking shows before the details.
const TOP: usize = 3;

/// Rows of one CSV file of a report, or none when it is absent or unreadable.
fn load<T: DeserializeOwned>(dir: &Path, file: &str) -> Vec<T> {
    let Ok(mut reader) = csv::Reader::from_path(dir.join(file)) else {
        return Vec::new();
    };
    reader.deserialize().filter_map(Result::ok).collect()
}

/// The recommendation for `request`, as text: the workload, the ranking
/// (the top three, each with its reason), where the measured figures came
/// from, then every suitable filter's sizing.
///
/// # Errors
///
/// A usage error for an FPP outside (0, 1) or zero items.
pub fn recommend(request: &Request) -> Result<String, Error> {
    check_workload(request.items, request.fpp)?;
    let requirements: Vec<Capability> = [
        (request.deletes, Capability::Deletes),
        (request.unknown_size, Capability::Growth),
        (request.concurrent, Capability::ConcurrentInserts),
        (request.static_set, Capability::StaticSet),
    ]
    .into_iter()
    .filter_map(|(wanted, capability)| wanted.then_some(capability))
    .collect();
    let measured = Measured::find(request.report.as_deref());
    let mut out = String::new();
    let hash_bits = hash_bits_needed(request.items, request.fpp);
    let asked: Vec<&str> = requirements.iter().map(|c| c.noun()).collect();
    let _ = writeln!(
        out,
        "Workload: {} distinct items at a target FPP of {:e} (needs log2(n/p) = {hash_bits:.1} \
         bits of key hash){}{}\n",
        format_count(request.items),
        request.fpp,
        if asked.is_empty() {
            String::new()
        } else {
            format!("; with {}", asked.join(", "))
        },
        request
            .memory
            .map_or_else(String::new, |m| format!("; within {}", human_bytes(m)))
    );
    let mut suitable: Vec<Candidate> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    let mut hash_limited = false;
    for entry in registry::filterlab_entries() {
        let Some(sizer) = entry.sizer else { continue };
        // A filter built from its keys takes no inserts: only a set
        // built once (--static) may have one.
        if !requirements.iter().all(|&wanted| entry.has(wanted))
            || (!request.static_set && !entry.takes_inserts())
        {
            continue;
        }
        match (sizer.for_target)(request.items, request.fpp) {
            Ok(sizing) => {
                hash_limited |= sizing.hash_limited;
                suitable.push((entry, sizing));
            }
            Err(err) => refused.push(format!(
                "{}: cannot be sized for this workload: {err}",
                entry.name
            )),
        }
    }
    let _ = writeln!(out, "Recommendation");
    if suitable.is_empty() {
        out.push_str(&nothing_suitable(request, &requirements, &measured));
    } else {
        out.push_str(&ranking(request, &suitable, &measured));
    }
    if requirements.is_empty() {
        let _ = writeln!(
            out,
            "  A set built once, never changed? --static chooses among the filters built from \
             the whole key set."
        );
    }
    let _ = writeln!(out, "\n{}", measured.describe());
    if !suitable.is_empty() || !refused.is_empty() {
        let _ = writeln!(
            out,
            "\nDetails: the sizing of every suitable filterlab filter\n"
        );
    }
    for (entry, sizing) in &suitable {
        // The crate's report, headed by the registry name and what it is.
        let body = sizing
            .report
            .split_once('\n')
            .map_or(sizing.report.as_str(), |(_, rest)| rest);
        let _ = writeln!(out, "{} ({})\n{body}\n", entry.name, entry.description);
    }
    for line in refused {
        let _ = writeln!(out, "{line}\n");
    }
    Ok(finish(out, hash_limited, request))
}

/// A filterlab filter and its sizing for the request.
type Candidate = (Entry, Sizing);

/// The ranked recommendation among `suitable` filters: the top three
/// within budget with their reasons; when none fits the budget, the
/// closest fits and what each would take.
fn ranking(request: &Request, suitable: &[Candidate], measured: &Measured) -> String {
    let mut out = String::new();
    let (ranked, too_big): (Vec<&Candidate>, Vec<&Candidate>) =
        suitable.iter().partition(|(_, sizing)| {
            request
                .memory
                .is_none_or(|budget| sizing.memory_bytes <= budget)
        });
    // A concurrent filter pays for atomic inserts; rank it after the others
    // unless concurrent inserts were asked for. A filter that must grow
    // ranks by whether its FPP still meets the target after growing; one
    // the report measured failing in the need's state ranks after those.
    // Then, as the guide ranks: the need's measure in its state (measured
    // when the report has every candidate there, else the sizing's bits
    // per item), no pick beaten on both that and the lookup (`pick`).
    let needless_atomics =
        |entry: &Entry| entry.has(Capability::ConcurrentInserts) && !request.concurrent;
    let misses_when_grown = |sizing: &Sizing| {
        request.unknown_size
            && sizing
                .fpp_after_growth
                .is_none_or(|fpp| fpp > request.fpp * GROWN_TOLERANCE)
    };
    let state = need_state(request);
    let evidence = measured.evidence();
    let in_state: Vec<Result<Contender<String>, String>> = ranked
        .iter()
        .map(|(entry, _)| evidence.contender(entry.name, state, request.fpp))
        .collect();
    let all_measured = in_state
        .iter()
        .all(|c| c.as_ref().err().is_none_or(|why| why != NOT_MEASURED));
    let failed_there = |index: usize| {
        in_state[index]
            .as_ref()
            .err()
            .filter(|why| *why != NOT_MEASURED)
    };
    let contenders = need_contenders(request, &ranked, &in_state, all_measured, measured);
    let key = |index: usize| {
        let (entry, sizing) = ranked[index];
        (
            needless_atomics(entry),
            misses_when_grown(sizing),
            failed_there(index).is_some(),
        )
    };
    let order = rank(&contenders, key);
    let ranked: Vec<(&Candidate, usize)> = order.iter().map(|&i| (ranked[i], i)).collect();
    for (rank, ((entry, sizing), index)) in ranked.iter().take(TOP).enumerate() {
        let why = if needless_atomics(entry) {
            "atomic inserts from several threads, not asked for (--concurrent)".to_owned()
        } else if misses_when_grown(sizing) {
            format!(
                "its FPP after growing {GROWTH_SPAN}× is {:.3e}, above the target",
                sizing.fpp_after_growth.unwrap_or(f64::NAN)
            )
        } else if let Some(failed) = failed_there(*index) {
            format!("in the report, {}: {failed}", state_words(state))
        } else if rank == 0 && all_measured && in_state[*index].is_ok() {
            format!(
                "fewest {} in the report, nothing beats it on both that and the lookup",
                measure_words(state)
            )
        } else if rank == 0 && request.unknown_size {
            format!("fewest bytes whose FPP still meets the target after growing {GROWTH_SPAN}×")
        } else {
            against_first(sizing, (rank > 0).then(|| &ranked[0].0.1))
        };
        let grown = match sizing.fpp_after_growth {
            Some(fpp) if request.unknown_size => {
                format!("; {fpp:.3e} after growing {GROWTH_SPAN}×")
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {}. {}: {} ({:.2} bits/item), {} {:.3e}{grown} — {why}",
            rank + 1,
            entry.name,
            human_bytes(sizing.memory_bytes),
            sizing.bits_per_item,
            sizing.fpp_words(),
            sizing.fpp_at_capacity,
        );
        let _ = writeln!(
            out,
            "     lookup: {}{}",
            sizing.lookup,
            measured.speed_of(entry.name, request.items)
        );
        if let (Ok(there), Some(_)) = (&in_state[*index], state) {
            out.push_str(&state_line(state, there));
        }
    }
    let ranked: Vec<&Candidate> = ranked.iter().map(|(c, _)| *c).collect();
    if ranked.len() > TOP {
        let rest: Vec<&str> = ranked[TOP..].iter().map(|(e, _)| e.name).collect();
        let _ = writeln!(out, "  Also suitable (details below): {}.", rest.join(", "));
    }
    out.push_str(&over_budget(request, ranked.is_empty(), &too_big));
    out
}

/// What the ranking adds for the filters over the budget: the closest
/// fits (all there is when `none_fit`).
fn over_budget(request: &Request, none_fit: bool, too_big: &[&Candidate]) -> String {
    let mut out = String::new();
    let Some(budget) = request.memory else {
        return out;
    };
    if too_big.is_empty() {
        return out;
    }
    if none_fit {
        let _ = writeln!(
            out,
            "  No suitable filterlab filter meets FPP {:e} at {} items within {}. Closest fits, \
             and what each would take:",
            request.fpp,
            format_count(request.items),
            human_bytes(budget)
        );
    } else {
        let _ = writeln!(out, "  Over the budget of {}:", human_bytes(budget));
    }
    out.push_str(&closest(request, budget, too_big));
    out
}

/// The contenders of `ranked` (by index): the need's measure in its state
/// when the report measured every one there (`all_measured`), else the
/// sizing's bits per item; the lookup there, or the report's nearest one.
fn need_contenders(
    request: &Request,
    ranked: &[&Candidate],
    in_state: &[Result<Contender<String>, String>],
    all_measured: bool,
    measured: &Measured,
) -> Vec<Contender<usize>> {
    ranked
        .iter()
        .enumerate()
        .map(|(index, (entry, sizing))| {
            let there = in_state[index].as_ref().ok();
            Contender {
                item: index,
                measure: there
                    .filter(|_| all_measured)
                    .map_or_else(|| Interval::exact(sizing.bits_per_item), |c| c.measure),
                lookup: there
                    .and_then(|c| c.lookup)
                    .or_else(|| measured.lookup_near(entry.name, request.items)),
            }
        })
        .collect()
}

/// "     measured at the end of growth: 16.58 bits/item, 164 ns per
/// negative lookup".
fn state_line(state: Option<Capability>, there: &Contender<String>) -> String {
    let lookup = there.lookup.map_or_else(String::new, |l| {
        format!(", {:.0} ns per negative lookup", l.value)
    });
    format!(
        "     {}: {:.2} {}{lookup}\n",
        state_words(state),
        there.measure.value,
        measure_words(state)
    )
}

/// The state a filter for `request` lives in, as the guide judges it:
/// growing, under churn, or inserted into from every core.
fn need_state(request: &Request) -> Option<Capability> {
    if request.unknown_size {
        Some(Capability::Growth)
    } else if request.deletes {
        Some(Capability::Deletes)
    } else if request.concurrent {
        Some(Capability::ConcurrentInserts)
    } else {
        None
    }
}

/// Where the measure of `state` was taken, in words.
fn state_words(state: Option<Capability>) -> &'static str {
    match state {
        Some(Capability::Growth) => "measured at the end of growth",
        Some(Capability::Deletes) => "measured after churn",
        Some(Capability::ConcurrentInserts) => "measured inserting from every core",
        Some(Capability::StaticSet) | None => "measured",
    }
}

/// What the measure of `state` counts.
fn measure_words(state: Option<Capability>) -> &'static str {
    match state {
        Some(Capability::Deletes) => "bits per live key",
        Some(Capability::ConcurrentInserts) => "ns per key inserted",
        _ => "bits/item",
    }
}

/// `contenders` in ranking order: by `key` first (what disqualifies goes
/// last), then within each key the pick of those left, again and again,
/// so that none is ranked above one that beats it on both its measure and
/// its lookup.
fn rank<K: Ord>(contenders: &[Contender<usize>], key: impl Fn(usize) -> K) -> Vec<usize> {
    let mut left: Vec<Contender<usize>> = contenders.to_vec();
    left.sort_by_key(|c| key(c.item));
    let mut order = Vec::with_capacity(left.len());
    while let Some(first) = left.first().map(|c| key(c.item)) {
        let same: Vec<Contender<usize>> = left
            .iter()
            .filter(|c| key(c.item) == first)
            .cloned()
            .collect();
        let Some(chosen) = pick(&same) else { break };
        order.push(chosen.best.item);
        left.retain(|c| c.item != chosen.best.item);
    }
    order
}

/// The filters over `budget`, closest first: the FPP each reaches within
/// it and the memory it needs for the target.
fn closest(request: &Request, budget: u64, too_big: &[&Candidate]) -> String {
    let mut fits: Vec<(&Candidate, Option<Sizing>)> = too_big
        .iter()
        .map(|candidate| {
            let within = candidate
                .0
                .sizer
                .and_then(|sizer| (sizer.within_memory)(request.items, budget).ok());
            (*candidate, within)
        })
        .collect();
    fits.sort_by(|a, b| {
        let fpp = |fit: &(&Candidate, Option<Sizing>)| {
            fit.1.as_ref().map_or(f64::INFINITY, |s| s.fpp_at_capacity)
        };
        fpp(a)
            .total_cmp(&fpp(b))
            .then(a.0.1.memory_bytes.cmp(&b.0.1.memory_bytes))
    });
    // The filter needing the least memory for the target is a closest fit
    // too (CuckooFilter a few percent over, where every Bloom filter in the
    // budget misses p by half): listed when the best FPPs leave it out.
    let least_memory = fits
        .iter()
        .enumerate()
        .min_by_key(|(_, fit)| fit.0.1.memory_bytes)
        .map(|(index, _)| index);
    let shown = fits
        .into_iter()
        .enumerate()
        .filter(|&(index, _)| index < TOP || Some(index) == least_memory);
    let mut out = String::new();
    for (_, ((entry, sizing), within)) in shown {
        let extra = (sizing.memory_bytes as f64 / budget as f64 - 1.0) * 100.0;
        let within = within.map_or_else(
            || "it cannot be sized within the budget".to_owned(),
            |best| {
                format!(
                    "within {} its {} is {:.3e} ({:.2}× the target)",
                    human_bytes(budget),
                    best.fpp_words(),
                    best.fpp_at_capacity,
                    best.fpp_at_capacity / request.fpp
                )
            },
        );
        let _ = writeln!(
            out,
            "  - {}: {within}; meeting {:e} takes {} ({extra:+.1}%)",
            entry.name,
            request.fpp,
            human_bytes(sizing.memory_bytes)
        );
    }
    out
}

/// Why a filter ranks where it does against the first one (`None` when it
/// is the first).
fn against_first(sizing: &Sizing, first: Option<&Sizing>) -> String {
    let Some(first) = first else {
        return "fewest bytes meeting the target".to_owned();
    };
    let extra = (sizing.memory_bytes as f64 / first.memory_bytes as f64 - 1.0) * 100.0;
    let (accesses, first_accesses) = (
        sizing.lookup.memory_accesses(),
        first.lookup.memory_accesses(),
    );
    if accesses < first_accesses {
        format!(
            "{extra:+.1}% memory for {} per lookup instead of {first_accesses}",
            plural(u64::from(accesses), "memory access", "memory accesses")
        )
    } else {
        format!("{extra:+.1}% memory")
    }
}

/// What to say when no filterlab filter has every capability asked for:
/// per capability, whether one has it alone, and what the measured peers
/// with all of them did.
fn nothing_suitable(request: &Request, requirements: &[Capability], measured: &Measured) -> String {
    let mut out = String::new();
    let ours = registry::filterlab_entries();
    let wanted: Vec<&str> = requirements.iter().map(|c| c.noun()).collect();
    let _ = writeln!(
        out,
        "  No filterlab filter offers {}{}.",
        if requirements.len() > 1 {
            "all of: "
        } else {
            ""
        },
        wanted.join(", ")
    );
    for &requirement in requirements {
        let with: Vec<&str> = ours
            .iter()
            .filter(|e| e.has(requirement))
            .map(|e| e.name)
            .collect();
        if with.is_empty() {
            let _ = writeln!(out, "  None offers {} yet.", requirement.noun());
        } else {
            let _ = writeln!(
                out,
                "  {} alone: {} (`filterlab recommend` with only that flag sizes them).",
                requirement.noun(),
                with.join(", ")
            );
        }
    }
    let peers: Vec<Entry> = registry::peer_entries()
        .into_iter()
        .filter(|e| requirements.iter().all(|&wanted| e.has(wanted)))
        .collect();
    if peers.is_empty() {
        let _ = writeln!(
            out,
            "  None of the peer crates measured by filterlab offers it either."
        );
    }
    for peer in peers {
        let summary = measured.summary(peer.name, request.fpp);
        if summary.is_empty() {
            let _ = writeln!(
                out,
                "  Peer with it: {} ({}); not measured in the report found.",
                peer.display_name(),
                peer.description
            );
        } else {
            let _ = writeln!(
                out,
                "  Peer with it: {} ({}). Measured:{summary}.",
                peer.display_name(),
                peer.description
            );
        }
    }
    out
}

fn finish(mut out: String, hash_limited: bool, request: &Request) -> String {
    if hash_limited {
        let _ = writeln!(
            out,
            "WARNING: a 64-bit key hash cannot deliver FPP {:e} at {} items: a never-inserted key \
             shares its 64-bit hash with one of the n inserted keys with probability about \
             n/2^64 = {:.1e}, whatever the array size. The target needs {:.1} bits of key hash; \
             filterlab filters take 64-bit hashes, so expect an FPP of at least {:.1e}.",
            request.fpp,
            request.items,
            request.items as f64 / 2f64.powi(64),
            hash_bits_needed(request.items, request.fpp),
            request.items as f64 / 2f64.powi(64)
        );
    }
    out
}

/// The measured figures of a report, and where they were looked for.
struct Measured {
    /// The directories looked in, in order.
    looked: Vec<PathBuf>,
    /// The one the figures came from, and what made it.
    found: Option<(PathBuf, Option<RunRecord>)>,
    accuracy: Vec<AccuracyRow>,
    speed: Vec<SpeedRow>,
    capacity: Vec<CapacityRow>,
    churn: Vec<ChurnRow>,
    growth: Vec<GrowthRow>,
}

impl Measured {
    /// The figures of `dir`, or without one of the first of [`DEFAULT_OUT`]
    /// and [`FALLBACK_OUT`] that holds a report.
    fn find(dir: Option<&Path>) -> Self {
        let looked: Vec<PathBuf> = match dir {
            Some(dir) => vec![dir.to_owned()],
            None => vec![PathBuf::from(DEFAULT_OUT), PathBuf::from(FALLBACK_OUT)],
        };
        let found = looked
            .iter()
            .find(|dir| {
                ["speed.csv", "accuracy.csv", "growth.csv", "churn.csv"]
                    .iter()
                    .any(|file| dir.join(file).is_file())
            })
            .cloned();
        let rows = |file| {
            found
                .as_deref()
                .map(|dir| load(dir, file))
                .unwrap_or_default()
        };
        Self {
            accuracy: rows("accuracy.csv"),
            speed: found
                .as_deref()
                .map(|d| load(d, "speed.csv"))
                .unwrap_or_default(),
            capacity: found
                .as_deref()
                .map(|d| load(d, "capacity.csv"))
                .unwrap_or_default(),
            churn: found
                .as_deref()
                .map(|d| ChurnRow::read_csv(&d.join("churn.csv")))
                .unwrap_or_default(),
            growth: found
                .as_deref()
                .map(|d| GrowthRow::read_csv(&d.join("growth.csv")))
                .unwrap_or_default(),
            found: found.map(|dir| {
                let record = RunRecord::read(&dir);
                (dir, record)
            }),
            looked,
        }
    }

    /// Where the figures came from, or where they were looked for.
    fn describe(&self) -> String {
        if let Some((dir, record)) = &self.found {
            return format!(
                "Measured figures: from the report in {} ({}; {} accuracy and {} speed rows).",
                dir.display(),
                record
                    .as_ref()
                    .map_or_else(|| "how it was made unknown".to_owned(), RunRecord::describe),
                self.accuracy.len(),
                self.speed.len()
            );
        }
        let looked: Vec<String> = self
            .looked
            .iter()
            .map(|d| {
                let absolute = std::path::absolute(d).unwrap_or_else(|_| d.clone());
                absolute.display().to_string()
            })
            .collect();
        format!(
            "Measured figures: none; looked for a report in {} and found none. Run \
             `filterlab` (about 5 minutes) to measure every filter, or pass --report DIR.",
            looked.join(" and ")
        )
    }

    /// The report's rows, as the guide reads them.
    fn evidence(&self) -> Evidence<'_> {
        Evidence {
            accuracy: &self.accuracy,
            speed: &self.speed,
            capacity: &self.capacity,
            churn: &self.churn,
            bogus: &[],
            growth: &self.growth,
        }
    }

    /// What a filter did in the report, in words.
    fn summary(&self, filter: &str, fpp: f64) -> String {
        self.evidence().summary(filter, fpp)
    }

    /// The one-key negative lookup of `filter` at the size nearest
    /// `items`, with the fastest and slowest of its rounds.
    fn lookup_near(&self, filter: &str, items: u64) -> Option<Interval> {
        let distance = |r: &SpeedRow| ((r.n as f64).ln() - (items as f64).ln()).abs();
        self.speed
            .iter()
            .filter(|r| {
                r.filter == filter
                    && r.op == Operation::LookupNegative
                    && r.mode == Mode::OneKey
                    && r.ns_per_op > 0.0
            })
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .map(|r| Interval::spread(r.ns_per_op, r.min_ns_per_op, r.max_ns_per_op))
    }

    /// "; measured: 45 ns per negative lookup one key at a time (20 ns
    /// batched) at n = 10^7" for the size nearest `items`, or nothing.
    fn speed_of(&self, filter: &str, items: u64) -> String {
        let lookups = |mode| {
            self.speed.iter().filter(move |r| {
                r.filter == filter && r.op == Operation::LookupNegative && r.mode == mode
            })
        };
        let distance = |r: &SpeedRow| ((r.n as f64).ln() - (items as f64).ln()).abs();
        let Some(one_key) =
            lookups(Mode::OneKey).min_by(|a, b| distance(a).total_cmp(&distance(b)))
        else {
            return String::new();
        };
        let batched = lookups(Mode::Batched)
            .find(|r| r.n == one_key.n)
            .map_or_else(String::new, |r| format!(", {:.0} ns batched", r.ns_per_op));
        format!(
            "; measured: {:.0} ns per negative lookup one key at a time{batched}, at n = {}",
            one_key.ns_per_op,
            format_count(one_key.n)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(items: u64, fpp: f64) -> Request {
        Request {
            items,
            fpp,
            deletes: false,
            unknown_size: false,
            concurrent: false,
            static_set: false,
            memory: None,
            report: Some(PathBuf::from("/nonexistent-report-dir")),
        }
    }

    #[test]
    fn ibm_streams_example() {
        let text = recommend(&request(1_000_000_000, 1e-14)).unwrap();
        // Power-of-two rounding gives 2^36 bits = 8 GiB, as in IBM Streams' example.
        assert!(text.contains("68719476736"), "{text}");
        assert!(text.contains("8.00 GiB"), "{text}");
        assert!(
            text.contains("WARNING: a 64-bit key hash cannot deliver"),
            "{text}"
        );
        assert!(text.contains("1. BloomFilter:"), "{text}");
    }

    #[test]
    fn unmet_requirements_are_said_not_crashed() {
        let mut wanted = request(1_000_000, 0.01);
        wanted.deletes = true;
        wanted.unknown_size = true;
        wanted.concurrent = true;
        let text = recommend(&wanted).unwrap();
        assert!(
            text.contains(
                "No filterlab filter offers all of: deletes, growth past the expected size, \
                 concurrent inserts"
            ),
            "{text}"
        );
        assert!(
            text.contains("concurrent inserts alone: AtomicBloomFilter"),
            "{text}"
        );
        assert!(!text.contains("WARNING"));
    }

    /// The line of rank `rank`, and everything before the details.
    fn ranking_part(text: &str) -> &str {
        text.split("Details:").next().unwrap_or_default()
    }

    #[test]
    fn the_ranking_comes_first_and_holds_only_filters_that_can() {
        let mut wanted = request(1_000_000, 0.001);
        wanted.deletes = true;
        let text = recommend(&wanted).unwrap();
        let ranking = ranking_part(&text);
        assert!(ranking.contains("1. CuckooFilter:"), "{text}");
        assert!(ranking.contains("a-priori FPP (a bound)"), "{text}");
        assert!(
            ranking.contains("3. CountingBloomFilter:") || ranking.contains("Also suitable"),
            "{text}"
        );
        // Only filters that delete, in the ranking and in the details.
        for cannot in [
            "BloomFilter",
            "BlockedBloomFilter",
            "SplitBlockBloomFilter",
            "ScalableBloomFilter",
        ] {
            let named = |line: &str| {
                let line = line
                    .trim_start()
                    .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                line.trim_start().starts_with(&format!("{cannot} ("))
                    || line.trim_start().starts_with(&format!("{cannot}:"))
            };
            assert!(!text.lines().any(named), "{cannot} cannot delete:\n{text}");
        }
        // The top three, then the rest named.
        assert!(!ranking.contains("4. "), "{text}");
        let recommendation = text.find("Recommendation").unwrap();
        let details = text.find("Details:").unwrap();
        assert!(recommendation < details);
        let mut wanted = request(1_000_000, 0.01);
        wanted.unknown_size = true;
        let text = recommend(&wanted).unwrap();
        // A growing cuckoo filter keeps its target, with fewer bytes.
        assert!(text.contains("1. CuckooFilter-grow:"), "{text}");
        assert!(text.contains("2. ScalableBloomFilter:"), "{text}");
        assert!(
            text.contains("fewest bytes whose FPP still meets the target after growing 1000×"),
            "{text}"
        );
    }

    #[test]
    fn a_budget_nothing_fits_names_the_closest_fit_and_what_it_takes() {
        let mut wanted = request(10_000_000, 0.001);
        wanted.memory = Some(16 << 20);
        let text = recommend(&wanted).unwrap();
        let ranking = ranking_part(&text);
        assert!(
            ranking.contains("No suitable filterlab filter meets FPP 1e-3"),
            "{text}"
        );
        // BloomFilter: 1.586e-3 within 16 MiB; 17.14 MiB for the target.
        assert!(
            ranking.contains(
                "- BloomFilter: within 16.00 MiB its exact FPP is 1.586e-3 (1.59× the target); \
                 meeting 1e-3 takes 17.14 MiB (+7.1%)"
            ),
            "{text}"
        );
        // And the filter that needs the least extra memory, though its FPP
        // within the budget is not among the best three.
        assert!(
            ranking.contains("- CuckooFilter: within 16.00 MiB")
                && ranking.contains("meeting 1e-3 takes 16.31 MiB (+2.0%)"),
            "{text}"
        );
        let mut wanted = request(1_000_000, 0.01);
        wanted.memory = Some(2_000_000);
        let text = recommend(&wanted).unwrap();
        assert!(text.contains("1. BloomFilter:"), "{text}");
        assert!(text.contains("Over the budget of"), "{text}");
    }

    #[test]
    fn it_says_where_it_looked_for_measurements() {
        let text = recommend(&request(1_000_000, 0.01)).unwrap();
        assert!(
            text.contains(
                "Measured figures: none; looked for a report in /nonexistent-report-dir and found none"
            ),
            "{text}"
        );
    }

    #[test]
    fn counts_take_their_plural_only_when_more_than_one() {
        // A blocked filter's one access against the standard filter's k.
        let text = recommend(&request(1_000_000, 0.01)).unwrap();
        assert!(
            text.contains("for 1 memory access per lookup instead of 7"),
            "{text}"
        );
        assert!(!text.contains("1 memory accesses"), "{text}");
        // The scalable filter's sizing at its capacity: one layer.
        let mut wanted = request(1_000_000, 0.01);
        wanted.unknown_size = true;
        let text = recommend(&wanted).unwrap();
        assert!(text.contains("over 1 layer\n"), "{text}");
        assert!(!text.contains("over 1 layers"), "{text}");
    }

    /// A report directory holding only `rows` as its growth.csv.
    fn growth_report(name: &str, rows: &[GrowthRow]) -> PathBuf {
        made_up_report(name, "growth.csv", rows)
    }

    /// A report directory holding only `rows` as its `file`.
    fn made_up_report<R: serde::Serialize>(name: &str, file: &str, rows: &[R]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("filterlab-recommend-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut writer = csv::Writer::from_path(dir.join(file)).unwrap();
        for row in rows {
            writer.serialize(row).unwrap();
        }
        writer.flush().unwrap();
        dir
    }

    /// `recommend --unknown-size` ranks as the guide does: at the end of
    /// growth. The sizing alone puts CuckooFilter-grow first (fewer bytes at
    /// the expected size); made-up measurements where the grown
    /// ScalableBloomFilter has fewer bits and a faster lookup put it first,
    /// and one whose FPP left P on the way ranks after those that held it.
    #[test]
    fn growth_is_ranked_at_the_end_of_growth() {
        use crate::experiments::growth::made_up;
        let mut wanted = request(1_000_000, 0.01);
        wanted.unknown_size = true;
        let text = recommend(&wanted).unwrap();
        assert!(text.contains("1. CuckooFilter-grow:"), "{text}");

        let rows = [
            made_up("CuckooFilter-grow", 2000, 20.0, 60.0, 0.005),
            made_up("CuckooFilter-grow", 1_000_000, 17.0, 70.0, 0.005),
            made_up("ScalableBloomFilter", 2000, 14.0, 40.0, 0.005),
            made_up("ScalableBloomFilter", 1_000_000, 15.0, 50.0, 0.005),
        ];
        wanted.report = Some(growth_report("end", &rows));
        let text = recommend(&wanted).unwrap();
        let ranking = ranking_part(&text);
        assert!(ranking.contains("1. ScalableBloomFilter:"), "{text}");
        assert!(
            ranking.contains("fewest bits/item in the report, nothing beats it on both"),
            "{text}"
        );
        assert!(
            ranking.contains("measured at the end of growth: 15.00 bits/item, 50 ns"),
            "{text}"
        );
        assert!(ranking.contains("2. CuckooFilter-grow:"), "{text}");

        // ScalableBloomFilter above P at one doubling: it no longer qualifies.
        let mut above = rows.clone();
        above[2].sample.ci_low = 0.0101;
        wanted.report = Some(growth_report("above", &above));
        let text = recommend(&wanted).unwrap();
        let ranking = ranking_part(&text);
        assert!(ranking.contains("1. CuckooFilter-grow:"), "{text}");
        assert!(
            ranking.contains("2. ScalableBloomFilter:")
                && ranking.contains(
                    "in the report, measured at the end of growth: above P at 1 of 2 points"
                ),
            "{text}"
        );
    }

    /// `recommend --static` chooses among the filters built from a key set
    /// only, as the guide's static row does: by the bits measured at the
    /// target (the sizing without a report), a fixed-FPP filter above the
    /// target refused; without --static none of them is offered.
    #[test]
    fn a_set_built_once_is_chosen_among_the_static_filters() {
        use crate::experiments::accuracy::made_up;
        let plain = recommend(&request(1_000_000, 0.01)).unwrap();
        assert!(
            !plain.contains("RibbonFilter") && !plain.contains("BinaryFuse"),
            "{plain}"
        );

        let mut wanted = request(1_000_000, 0.01);
        wanted.static_set = true;
        let text = recommend(&wanted).unwrap();
        let ranking = ranking_part(&text);
        assert!(ranking.contains("1. RibbonFilter:"), "{text}");
        assert!(!ranking.contains("BloomFilter"), "{text}");

        // Made-up measurements where the 4-wise binary fuse filter has the
        // fewest bits: it is first, as in the guide.
        let (n, fuse) = (1_000_000, 2f64.powi(-8));
        let rows = [
            made_up("RibbonFilter", n, 0.01, 6.90, 0.0099),
            made_up("BinaryFuseFilter", n, 0.01, 9.04, fuse),
            made_up("BinaryFuseFilter-4wise", n, 0.01, 6.50, fuse),
            made_up("BinaryFuseFilter-u16", n, 0.01, 18.08, 2f64.powi(-16)),
        ];
        wanted.report = Some(made_up_report("static", "accuracy.csv", &rows));
        let text = recommend(&wanted).unwrap();
        let ranking = ranking_part(&text);
        assert!(ranking.contains("1. BinaryFuseFilter-4wise:"), "{text}");
        assert!(
            ranking.contains("fewest bits/item in the report, nothing beats it on both"),
            "{text}"
        );
        assert!(ranking.contains("2. RibbonFilter:"), "{text}");

        // Below 2^-8 the 8-bit binary fuse filters cannot be sized.
        wanted.fpp = 1e-3;
        wanted.report = Some(PathBuf::from("/nonexistent-report-dir"));
        let text = recommend(&wanted).unwrap();
        assert!(ranking_part(&text).contains("1. RibbonFilter:"), "{text}");
        assert!(
            text.contains("BinaryFuseFilter: cannot be sized for this workload"),
            "{text}"
        );
    }

    /// The rank order never puts a filter above one that beats it on both
    /// its measure and its lookup.
    #[test]
    fn no_rank_is_beaten_on_both_by_one_below_it() {
        let contender = |item: usize, bits: f64, ns: f64| Contender {
            item,
            measure: Interval::exact(bits),
            lookup: Some(Interval::spread(ns, ns * 0.98, ns * 1.02)),
        };
        // Sorted by bits alone: 0, 2, 1, 3. Item 3 has the same bits as 2
        // within noise and a faster lookup: named first of the two.
        let set = [
            contender(0, 10.0, 100.0),
            contender(1, 12.0, 20.0),
            contender(2, 11.0, 50.0),
            contender(3, 11.01, 30.0),
        ];
        let order = rank(&set, |_| ());
        assert_eq!(order, [0, 3, 2, 1]);
        for (position, &item) in order.iter().enumerate() {
            for &below in &order[position + 1..] {
                assert!(
                    !set[item].beaten_by(&set[below]),
                    "{item} beaten by {below}"
                );
            }
        }
        // A disqualifying key sends a filter last whatever its figures.
        assert_eq!(rank(&set, |item| item == 0), [3, 2, 1, 0]);
    }

    #[test]
    fn bad_requests_are_usage_errors() {
        assert_eq!(
            recommend(&request(0, 0.01)).unwrap_err().kind(),
            crate::error::ErrorKind::Usage
        );
        assert_eq!(
            recommend(&request(10, 1.0)).unwrap_err().kind(),
            crate::error::ErrorKind::Usage
        );
    }
}
