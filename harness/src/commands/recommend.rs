//! `filterlab recommend`: every suitable filterlab filter's sizing for a
//! workload, and a ranked recommendation with the reason. Requirements no
//! filterlab filter meets yet are said so, with what the measured peers did
//! (from the report's CSV files when present).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use filterlab_core::sizing::human_bytes;
use filterlab_core::theory::hash_bits_needed;
use filterlab_peers::Mode;
use serde::de::DeserializeOwned;

use crate::config::check_workload;
use crate::error::Error;
use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::capacity::CapacityRow;
use crate::experiments::speed::{Operation, SpeedRow};
use crate::registry::{self, Capability, Entry, GROWTH_SPAN, Sizing};

/// A grown filter's FPP up to this factor over the target still meets it.
const GROWN_TOLERANCE: f64 = 1.001;
use crate::render::evidence::Evidence;
use crate::text::format_count;

/// A `recommend` request.
#[derive(Clone, Debug, PartialEq)]
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
    /// A memory budget in bytes.
    pub memory: Option<u64>,
    /// A report directory to quote measurements from.
    pub report: PathBuf,
}

/// Rows of one CSV file of a report, or none when it is absent or unreadable.
fn load<T: DeserializeOwned>(dir: &Path, file: &str) -> Vec<T> {
    let Ok(mut reader) = csv::Reader::from_path(dir.join(file)) else {
        return Vec::new();
    };
    reader.deserialize().filter_map(Result::ok).collect()
}

/// The recommendation for `request`, as text.
///
/// # Errors
///
/// A usage error for an FPP outside (0, 1) or zero items.
pub fn recommend(request: &Request) -> Result<String, Error> {
    check_workload(request.items, request.fpp)?;
    let mut out = String::new();
    let hash_bits = hash_bits_needed(request.items, request.fpp);
    let _ = writeln!(
        out,
        "Workload: {} distinct items at a target FPP of {:e} (needs log2(n/p) = {hash_bits:.1} bits of key hash)\n",
        request.items, request.fpp
    );
    let requirements: Vec<Capability> = [
        (request.deletes, Capability::Deletes),
        (request.unknown_size, Capability::Growth),
        (request.concurrent, Capability::ConcurrentInserts),
    ]
    .into_iter()
    .filter_map(|(wanted, capability)| wanted.then_some(capability))
    .collect();

    let mut candidates: Vec<Candidate> = Vec::new();
    let mut hash_limited = false;
    for entry in registry::filterlab_entries() {
        let Some(sizer) = entry.sizer else { continue };
        match (sizer.for_target)(request.items, request.fpp) {
            Ok(sizing) => {
                // The crate's report, headed by the registry name and what it is.
                let body = sizing
                    .report
                    .split_once('\n')
                    .map_or(sizing.report.as_str(), |(_, rest)| rest);
                let _ = writeln!(
                    out,
                    "{} sizing ({})\n{body}\n",
                    entry.name, entry.description
                );
                hash_limited |= sizing.hash_limited;
                candidates.push((entry, sizing));
            }
            Err(err) => {
                let _ = writeln!(
                    out,
                    "{}: cannot be sized for this workload: {err}\n",
                    entry.name
                );
            }
        }
    }

    let _ = writeln!(out, "Recommendation");
    let unmet: Vec<Capability> = requirements
        .iter()
        .copied()
        .filter(|&wanted| !candidates.iter().any(|(e, _)| e.has(wanted)))
        .collect();
    if !unmet.is_empty() {
        out.push_str(&unmet_requirements(request, &unmet));
        return Ok(finish(out, hash_limited, request));
    }
    let suitable: Vec<&Candidate> = candidates
        .iter()
        .filter(|(entry, _)| requirements.iter().all(|&wanted| entry.has(wanted)))
        .collect();
    if suitable.is_empty() {
        let wanted: Vec<&str> = requirements.iter().map(|c| c.noun()).collect();
        let _ = writeln!(
            out,
            "  No single filterlab filter offers all of: {}; each alone is above.",
            wanted.join(", ")
        );
    }
    out.push_str(&ranking(request, &suitable));
    Ok(finish(out, hash_limited, request))
}

/// A filterlab filter and its sizing for the request.
type Candidate = (Entry, Sizing);

/// The ranked recommendation among `suitable` filters, and those over budget.
fn ranking(request: &Request, suitable: &[&Candidate]) -> String {
    let mut out = String::new();
    let (mut ranked, too_big): (Vec<&Candidate>, Vec<&Candidate>) =
        suitable.iter().partition(|(_, sizing)| {
            request
                .memory
                .is_none_or(|budget| sizing.memory_bytes <= budget)
        });
    // A concurrent filter pays for atomic inserts; rank it after the others
    // unless concurrent inserts were asked for. A filter that must grow
    // ranks by whether its FPP still meets the target after growing.
    let needless_atomics =
        |entry: &Entry| entry.has(Capability::ConcurrentInserts) && !request.concurrent;
    let misses_when_grown = |sizing: &Sizing| {
        request.unknown_size
            && sizing
                .fpp_after_growth
                .is_none_or(|fpp| fpp > request.fpp * GROWN_TOLERANCE)
    };
    ranked.sort_by_key(|(entry, sizing)| {
        (
            needless_atomics(entry),
            misses_when_grown(sizing),
            sizing.memory_bytes,
        )
    });
    let measured = MeasuredSpeed::load(&request.report);
    for (rank, (entry, sizing)) in ranked.iter().enumerate() {
        let why = if needless_atomics(entry) {
            "atomic inserts from several threads, not asked for here (--concurrent)".to_owned()
        } else if misses_when_grown(sizing) {
            format!(
                "its FPP after growing {GROWTH_SPAN}× is {:.3e}, above the target",
                sizing.fpp_after_growth.unwrap_or(f64::NAN)
            )
        } else if rank == 0 && request.unknown_size {
            format!("fewest bytes whose FPP still meets the target after growing {GROWTH_SPAN}×")
        } else {
            against_first(sizing, (rank > 0).then(|| &ranked[0].1))
        };
        let grown = match sizing.fpp_after_growth {
            Some(fpp) if request.unknown_size => {
                format!("; FPP {fpp:.3e} after growing {GROWTH_SPAN}×")
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {}. {}: {} ({:.2} bits/item), {} {:.3e} at capacity{grown}; {}\n     why: {why}{}",
            rank + 1,
            entry.name,
            human_bytes(sizing.memory_bytes),
            sizing.bits_per_item,
            sizing.fpp_words(),
            sizing.fpp_at_capacity,
            sizing.lookup,
            measured.describe(entry.name, request.items)
        );
    }
    let Some(budget) = request.memory else {
        return out;
    };
    for (entry, sizing) in &too_big {
        let _ = write!(
            out,
            "  -  {} needs {} and does not fit in {}",
            entry.name,
            human_bytes(sizing.memory_bytes),
            human_bytes(budget)
        );
        match entry
            .sizer
            .map(|sizer| (sizer.within_memory)(request.items, budget))
        {
            Some(Ok(best)) => {
                let _ = writeln!(
                    out,
                    "; within it, its {} at {} items is {:.3e}",
                    best.fpp_words(),
                    request.items,
                    best.fpp_at_capacity
                );
            }
            _ => out.push('\n'),
        }
    }
    if ranked.is_empty() {
        let _ = writeln!(
            out,
            "  No filterlab filter meets FPP {:e} at {} items within {}.",
            request.fpp,
            request.items,
            human_bytes(budget)
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
            "{extra:+.1}% memory for {accesses} memory accesses per operation instead of {first_accesses}"
        )
    } else {
        format!("{extra:+.1}% memory")
    }
}

/// Text for requirements no filterlab filter meets, with measured peers.
fn unmet_requirements(request: &Request, unmet: &[Capability]) -> String {
    let mut out = String::new();
    let accuracy: Vec<AccuracyRow> = load(&request.report, "accuracy.csv");
    let speed: Vec<SpeedRow> = load(&request.report, "speed.csv");
    let capacity: Vec<CapacityRow> = load(&request.report, "capacity.csv");
    // Churn and growth rows are quoted by the report's guide; here, where
    // every filterlab filter lacks the capability, the peers' accuracy,
    // speed and capacity rows say what they do.
    let evidence = Evidence {
        accuracy: &accuracy,
        speed: &speed,
        capacity: &capacity,
        churn: &[],
        bogus: &[],
        growth: &[],
    };
    for &requirement in unmet {
        let _ = writeln!(
            out,
            "  No filterlab filter supports {} yet; the sizings above are for filters without it.",
            requirement.noun()
        );
        let peers: Vec<Entry> = registry::peer_entries()
            .into_iter()
            .filter(|e| e.has(requirement))
            .collect();
        if peers.is_empty() {
            let _ = writeln!(
                out,
                "  None of the peer crates measured by filterlab offers it either."
            );
        }
        for peer in peers {
            let summary = evidence.summary(peer.name, request.fpp);
            if summary.is_empty() {
                let _ = writeln!(
                    out,
                    "  Peer with it: {} ({}); no measurements in {} — run `filterlab report` to measure it.",
                    peer.display_name(),
                    peer.description,
                    request.report.display()
                );
            } else {
                let _ = writeln!(
                    out,
                    "  Peer with it: {} ({}). From the report in {}:{summary}.",
                    peer.display_name(),
                    peer.description,
                    request.report.display()
                );
            }
        }
    }
    out
}

fn finish(mut out: String, hash_limited: bool, request: &Request) -> String {
    if hash_limited {
        let _ = writeln!(
            out,
            "\nWARNING: a 64-bit key hash cannot deliver FPP {:e} at {} items: a never-inserted key \
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

/// Negative-lookup medians from a report's speed.csv, to quote beside sizings.
struct MeasuredSpeed {
    rows: Vec<SpeedRow>,
}

impl MeasuredSpeed {
    fn load(dir: &Path) -> Self {
        Self {
            rows: load(dir, "speed.csv"),
        }
    }

    /// " (measured in the report: ... ns per negative lookup one key at a
    /// time, ... batched, at n = ...)" for the size nearest `items`, or nothing.
    fn describe(&self, filter: &str, items: u64) -> String {
        let lookups = |mode| {
            self.rows.iter().filter(move |r| {
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
            " (measured in the report: {:.0} ns per negative lookup one key at a time{batched}, at n = {})",
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
            memory: None,
            report: PathBuf::from("/nonexistent-report-dir"),
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
                "No single filterlab filter offers all of: deletes, growth past the expected \
                 size, concurrent inserts"
            ),
            "{text}"
        );
        assert!(!text.contains("WARNING"));
    }

    #[test]
    fn deletes_and_growth_are_filterlab_filters() {
        let mut wanted = request(1_000_000, 0.001);
        wanted.deletes = true;
        let text = recommend(&wanted).unwrap();
        assert!(text.contains("1. CuckooFilter:"), "{text}");
        assert!(text.contains("CountingBloomFilter:"), "{text}");
        assert!(text.contains("a-priori FPP (a bound)"), "{text}");
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
    fn memory_budget_limits_the_ranking() {
        let mut wanted = request(1_000_000, 0.01);
        wanted.memory = Some(2_000_000);
        let text = recommend(&wanted).unwrap();
        assert!(text.contains("does not fit in"), "{text}");
        assert!(text.contains("1. BloomFilter:"), "{text}");
        wanted.memory = Some(100_000);
        let text = recommend(&wanted).unwrap();
        assert!(text.contains("No filterlab filter meets"), "{text}");
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
