//! The decision guide: for each scenario, the filter to use and the measured
//! reason, computed from this run's rows (so it follows the registry and the
//! measurements, never hard-coded figures).

use std::fmt::Write as _;

use crate::accuracy::AccuracyRow;
use crate::capacity::CapacityRow;
use crate::config::format_count;
use crate::registry::{Capabilities, Entry};
use crate::report::{Measurements, sci};
use crate::speed::SpeedRow;

/// The FPP of an 8-bit fingerprint: BinaryFuse8's fixed FPP, and the limit
/// the guide's "p below 0.4%" question refers to.
const FINGERPRINT8_FPP: f64 = 1.0 / 256.0;

/// Measured rows the guide and `recommend` quote from.
#[derive(Clone, Copy)]
pub struct Evidence<'a> {
    /// Accuracy rows.
    pub accuracy: &'a [AccuracyRow],
    /// Speed rows.
    pub speed: &'a [SpeedRow],
    /// Over-capacity rows.
    pub capacity: &'a [CapacityRow],
}

impl<'a> Evidence<'a> {
    /// The largest n in the accuracy rows.
    pub fn largest(&self) -> Option<u64> {
        self.accuracy.iter().map(|r| r.n).max()
    }

    /// The target FPPs measured, in order of first appearance.
    fn fpps(&self) -> Vec<f64> {
        let mut fpps: Vec<f64> = Vec::new();
        for row in self.accuracy {
            if !fpps.contains(&row.target_fpp) {
                fpps.push(row.target_fpp);
            }
        }
        fpps
    }

    fn accuracy_at(&self, filter: &str, n: u64, fpp: f64) -> Option<&'a AccuracyRow> {
        self.accuracy
            .iter()
            .find(|r| r.filter == filter && r.n == n && r.target_fpp == fpp)
    }

    /// The (n, ns/op) of `op` for `filter` at the largest n measured.
    fn speed(&self, filter: &str, op: &str) -> Option<(u64, f64)> {
        self.speed
            .iter()
            .filter(|r| r.filter == filter && r.op == op)
            .max_by_key(|r| r.n)
            .map(|r| (r.n, r.ns_per_op))
    }

    fn speed_text(&self, filter: &str, op: &str, what: &str) -> Option<String> {
        self.speed(filter, op)
            .map(|(n, ns)| format!("{what} {ns:.0} ns at n = {}", format_count(n)))
    }

    fn capacity_at(&self, filter: &str, load: f64) -> Option<&'a CapacityRow> {
        self.capacity
            .iter()
            .filter(|r| r.filter == filter)
            .min_by(|a, b| (a.load - load).abs().total_cmp(&(b.load - load).abs()))
    }

    /// What a peer did, in words: its row nearest `fpp` at the largest n,
    /// keys it lost, remove speed, and its behaviour at 300% of capacity.
    pub fn peer_summary(&self, peer: &str, fpp: f64) -> String {
        let mut why = String::new();
        let Some(largest) = self.largest() else {
            return why;
        };
        if let Some(row) =
            nearest(&self.fpps(), fpp).and_then(|p| self.accuracy_at(peer, largest, p))
        {
            let _ = write!(
                why,
                " at p = {:e}, n = {}: {}",
                row.target_fpp,
                format_count(row.n),
                describe_row(row)
            );
            if !row.meets_target() {
                why.push_str(" (misses the target)");
            }
            why.push(';');
        }
        let lost: u64 = self
            .accuracy
            .iter()
            .filter(|r| r.filter == peer)
            .map(|r| r.false_negatives)
            .sum();
        if lost > 0 {
            let _ = write!(
                why,
                " it lost {lost} inserted keys (false negatives) across the accuracy rows, by \
                 dropping items when full;"
            );
        }
        if let Some(remove) = self.speed_text(peer, "remove", " remove") {
            let _ = write!(why, "{remove};");
        }
        if let Some(row) = self.capacity_at(peer, 3.0) {
            let _ = write!(
                why,
                " at 300% of its capacity: FPP {}",
                sci(row.empirical_fpp)
            );
            if let Some(full) = self.capacity_at(peer, 1.0) {
                let _ = write!(
                    why,
                    ", memory {:.2}× that at 100%",
                    row.memory_bytes as f64 / full.memory_bytes.max(1) as f64
                );
            }
            if row.false_negatives > 0 {
                let _ = write!(why, ", {} false negatives", row.false_negatives);
            }
            why.push(';');
        }
        if why.ends_with(';') {
            why.pop();
        }
        why
    }
}

struct Facts<'a> {
    measured: &'a Measurements,
    evidence: Evidence<'a>,
    largest: u64,
}

impl<'a> Facts<'a> {
    fn accuracy(&self, filter: &str, fpp: f64) -> Option<&'a AccuracyRow> {
        self.evidence.accuracy_at(filter, self.largest, fpp)
    }

    fn speed(&self, filter: &str, op: &str) -> Option<(u64, f64)> {
        self.evidence.speed(filter, op)
    }

    fn speed_text(&self, filter: &str, op: &str, what: &str) -> Option<String> {
        self.evidence.speed_text(filter, op, what)
    }

    fn entries(&self, wanted: impl Fn(&Capabilities) -> bool) -> Vec<&'a Entry> {
        self.measured
            .entries
            .iter()
            .filter(|e| wanted(&e.capabilities))
            .collect()
    }

    /// Filters that take inserts (not static), only filterlab's when asked.
    fn dynamic(&self, filterlab_only: bool) -> Vec<&'a Entry> {
        self.entries(|c| !c.static_set)
            .into_iter()
            .filter(|e| !filterlab_only || e.is_filterlab())
            .collect()
    }

    /// Among `candidates`, those meeting `fpp` with the fewest bits per item:
    /// the smallest, and any within 0.5% of it (a tie), fewest first.
    fn fewest_bits(&self, candidates: &[&'a Entry], fpp: f64) -> Vec<&'a AccuracyRow> {
        let mut meeting: Vec<&AccuracyRow> = candidates
            .iter()
            .filter_map(|e| self.accuracy(e.name, fpp))
            .filter(|r| r.meets_target())
            .collect();
        meeting.sort_by(|a, b| a.bits_per_item.total_cmp(&b.bits_per_item));
        let Some(least) = meeting.first().map(|r| r.bits_per_item) else {
            return meeting;
        };
        meeting.retain(|r| r.bits_per_item <= least * TIE);
        meeting
    }
}

/// Bits per item within this factor of the fewest count as a tie.
const TIE: f64 = 1.005;

/// "9.59 bits/item: BloomFilter (measured FPP 9.70e-3), fastbloom (…)".
fn group_text(group: &[&AccuracyRow]) -> String {
    let Some(first) = group.first() else {
        return "none meets it".to_owned();
    };
    let members: Vec<String> = group
        .iter()
        .map(|r| format!("{} (measured FPP {})", r.filter, sci(r.empirical_fpp)))
        .collect();
    let tie = if group.len() > 1 {
        ", tied within 0.5%"
    } else {
        ""
    };
    format!(
        "{:.2} bits/item{tie}: {}",
        first.bits_per_item,
        members.join(", ")
    )
}

/// Why a row does not meet its target, in a few words.
fn shortfall(row: &AccuracyRow) -> String {
    if row.false_negatives > 0 {
        format!("{} false negatives", row.false_negatives)
    } else if let Some(excess) = row.design_excess() {
        format!("its own exact FPP is {excess:.4}× p")
    } else {
        format!("measured {:.2}× p", row.empirical_fpp / row.target_fpp)
    }
}

fn describe_row(row: &AccuracyRow) -> String {
    format!(
        "{:.2} bits/item, measured FPP {}",
        row.bits_per_item,
        sci(row.empirical_fpp)
    )
}

/// A row of the guide: the need, the filter to use, the measured reason.
type GuideRow = [String; 3];

/// The guide as Markdown: a table of scenarios, then the fewest-bits table.
pub fn decision_guide(measured: &Measurements) -> String {
    let Some(largest) = measured.accuracy.iter().map(|r| r.n).max() else {
        return "The decision guide needs the accuracy experiment; run the full report.\n"
            .to_owned();
    };
    let evidence = Evidence {
        accuracy: &measured.accuracy,
        speed: measured.speed.as_ref().map_or(&[][..], |s| &s.rows[..]),
        capacity: measured.capacity.as_ref().map_or(&[][..], |c| &c.rows[..]),
    };
    let facts = Facts {
        measured,
        evidence,
        largest,
    };
    let reference = nearest(&measured.config.accuracy_fpps, 1e-2);
    let mut rows: Vec<GuideRow> = Vec::new();
    if let Some(reference) = reference {
        rows.extend(fewest_bits_row(&facts, reference));
        rows.extend(fastest_row(&facts, reference));
        rows.extend(low_fpp_row(&facts));
        rows.extend(static_rows(&facts, reference));
    }
    rows.push(capability_row(
        &facts,
        "Deletes",
        |c| c.removable,
        "No filterlab filter deletes yet (CountingBloomFilter and CuckooFilter are planned).",
    ));
    rows.push(capability_row(
        &facts,
        "Unknown final size (must grow)",
        |c| c.grows,
        "No filterlab filter grows yet (ScalableBloomFilter is planned).",
    ));
    rows.push(capability_row(
        &facts,
        "Inserts from several threads",
        |c| c.concurrent,
        "No filterlab filter takes concurrent inserts.",
    ));
    rows.push([
        "Billions of items or a tiny p".to_owned(),
        "`filterlab recommend`".to_owned(),
        "It prints the exact sizing of every filterlab filter and warns when a 64-bit key hash \
         cannot deliver p at n (distinct keys sharing a hash alone give about n/2^64)."
            .to_owned(),
    ]);

    let mut out = String::new();
    let _ = writeln!(out, "| If you need | Use | Measured reason |");
    let _ = writeln!(out, "|---|---|---|");
    for [need, use_, why] in rows {
        let _ = writeln!(out, "| {need} | {use_} | {why} |");
    }
    out.push('\n');
    out.push_str(&fewest_bits_table(&facts));
    out
}

/// Fewest bits for a changing set of known size, at the reference p.
fn fewest_bits_row(facts: &Facts<'_>, reference: f64) -> Option<GuideRow> {
    let dynamic = facts.dynamic(false);
    let group = facts.fewest_bits(&dynamic, reference);
    let least = group.first()?.bits_per_item;
    let mut why = format!(
        "Fewest bits meeting p = {reference:e} at n = {}: {}.",
        format_count(facts.largest),
        group_text(&group)
    );
    let cheaper_but_over: Vec<String> = dynamic
        .iter()
        .filter_map(|e| facts.accuracy(e.name, reference))
        .filter(|r| r.bits_per_item < least && !r.meets_target())
        .map(|r| {
            format!(
                "{} ({:.2} bits/item; {})",
                r.filter,
                r.bits_per_item,
                shortfall(r)
            )
        })
        .collect();
    if !cheaper_but_over.is_empty() {
        let _ = write!(
            why,
            " Fewer bits but not meeting the target: {}.",
            cheaper_but_over.join(", ")
        );
    }
    if let Some(ours) = facts.fewest_bits(&facts.dynamic(true), reference).first() {
        if !group.iter().any(|r| r.filter == ours.filter) {
            let _ = write!(
                why,
                " Best filterlab filter: {} ({}).",
                ours.filter,
                describe_row(ours)
            );
        }
    }
    why.push_str(" Other targets: the table below.");
    let names: Vec<String> = group.iter().map(|r| format!("**{}**", r.filter)).collect();
    Some([
        "A set that changes, size known, fewest bits".to_owned(),
        names.join(", "),
        why,
    ])
}

/// The fastest negative lookup among the filters meeting the reference p.
fn fastest_row(facts: &Facts<'_>, reference: f64) -> Option<GuideRow> {
    let (fastest, ns) = facts
        .dynamic(false)
        .into_iter()
        .filter(|e| {
            facts
                .accuracy(e.name, reference)
                .is_some_and(AccuracyRow::meets_target)
        })
        .filter_map(|e| {
            facts
                .speed(e.name, "lookup_negative")
                .map(|(_, ns)| (e, ns))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let mut why =
        format!("Fastest negative lookup among the filters meeting p = {reference:e}: {ns:.0} ns");
    if let Some(positive) = facts.speed_text(fastest.name, "lookup_positive", ", positive") {
        why.push_str(&positive);
    }
    if fastest.is_filterlab() {
        why.push_str(" through its batch API (`contains_many`)");
    }
    if let Some(row) = facts.accuracy(fastest.name, reference) {
        let _ = write!(why, "; {}", describe_row(row));
    }
    why.push('.');
    Some([
        "Lookups as fast as possible".to_owned(),
        format!("**{}**", fastest.name),
        why,
    ])
}

/// Targets below an 8-bit fingerprint's FPP: who meets them, who cannot.
fn low_fpp_row(facts: &Facts<'_>) -> Option<GuideRow> {
    let low = facts
        .measured
        .config
        .accuracy_fpps
        .iter()
        .copied()
        .find(|&p| p < FINGERPRINT8_FPP)?;
    let group = facts.fewest_bits(&facts.dynamic(false), low);
    if group.is_empty() {
        return None;
    }
    let cannot: Vec<String> = facts
        .measured
        .entries
        .iter()
        .filter_map(|e| {
            let row = facts.accuracy(e.name, low)?;
            (row.ci_low > row.target_fpp).then(|| {
                format!(
                    "{} (measured {} at p = {low:e})",
                    e.name,
                    sci(row.empirical_fpp)
                )
            })
        })
        .collect();
    let mut why = format!("Fewest bits at p = {low:e}: {}.", group_text(&group));
    if !cannot.is_empty() {
        let _ = write!(why, " Cannot go that low: {}.", cannot.join(", "));
    }
    let names: Vec<String> = group.iter().map(|r| format!("**{}**", r.filter)).collect();
    Some([
        "p below 0.4% (under an 8-bit fingerprint's 2^−8)".to_owned(),
        names.join(", "),
        why,
    ])
}

/// Static filters: space and speed against a Bloom filter at the same FPP.
fn static_rows(facts: &Facts<'_>, reference: f64) -> Vec<GuideRow> {
    let mut rows = Vec::new();
    for entry in facts.entries(|c| c.static_set) {
        let Some(row) = facts.accuracy(entry.name, reference) else {
            continue;
        };
        let bloom_bits = -row.empirical_fpp.ln() / std::f64::consts::LN_2.powi(2);
        let mut why = format!(
            "{}, whatever the target; a standard Bloom filter needs {bloom_bits:.2} bits/item \
             for that FPP.",
            describe_row(row)
        );
        if let Some(build) = facts.speed_text(entry.name, "build", " Build") {
            let _ = write!(why, "{build} per key");
        }
        if let Some(lookup) = facts.speed_text(entry.name, "lookup_negative", ", negative lookup") {
            why.push_str(&lookup);
        }
        why.push_str(". Below 0.4% use a Bloom filter (rows above).");
        rows.push([
            "A set built once that never changes, p ≥ 0.4%".to_owned(),
            format!("**{}**", entry.name),
            why,
        ]);
    }
    rows
}

/// The scenario row for a capability: the filterlab filter that has it, or
/// an honest "not yet" and what the measured peers with it did.
fn capability_row(
    facts: &Facts<'_>,
    need: &str,
    wanted: impl Fn(&Capabilities) -> bool + Copy,
    none_yet: &str,
) -> [String; 3] {
    let candidates = facts.entries(wanted);
    let reference = nearest(&facts.measured.config.accuracy_fpps, 1e-2);
    if let Some(ours) = candidates.iter().find(|e| e.is_filterlab()) {
        let mut why = reference
            .and_then(|p| facts.accuracy(ours.name, p))
            .map_or_else(|| ours.about.to_owned(), describe_row);
        if let Some(shared) =
            facts.speed_text(ours.name, "insert_concurrent", "; inserts from all cores")
        {
            why.push_str(&shared);
            if let Some(single) = facts.speed_text(ours.name, "insert", ", from one thread") {
                why.push_str(&single);
            }
        }
        return [
            need.to_owned(),
            format!("**{}**", ours.name),
            format!("{why}."),
        ];
    }
    let mut why = none_yet.to_owned();
    let peers: Vec<&&Entry> = candidates.iter().filter(|e| !e.is_filterlab()).collect();
    if peers.is_empty() {
        why.push_str(" No peer measured here offers it either.");
        return [need.to_owned(), "nothing measured yet".to_owned(), why];
    }
    for peer in &peers {
        let _ = write!(
            why,
            " Measured peer **{}**:{}.",
            peer.name,
            facts
                .evidence
                .peer_summary(peer.name, reference.unwrap_or(1e-2))
        );
    }
    let names: Vec<String> = peers.iter().map(|p| format!("{} (peer)", p.name)).collect();
    [need.to_owned(), names.join(", "), why]
}

/// For each target p: the filter meeting it with the fewest bits, and the
/// best filterlab filter.
fn fewest_bits_table(facts: &Facts<'_>) -> String {
    let (dynamic, filterlab) = (facts.dynamic(false), facts.dynamic(true));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Fewest bits per item meeting each target, n = {} (sets that change; static filters \
         excluded; filters within 0.5% of the fewest are listed together):\n",
        format_count(facts.largest)
    );
    let _ = writeln!(
        out,
        "| target p | fewest bits meeting it | best filterlab filter | fewer bits but not meeting it |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for &p in &facts.measured.config.accuracy_fpps {
        let group = facts.fewest_bits(&dynamic, p);
        let least = group.first().map_or(f64::INFINITY, |r| r.bits_per_item);
        let ours = facts.fewest_bits(&filterlab, p);
        let under: Vec<String> = dynamic
            .iter()
            .filter_map(|e| facts.accuracy(e.name, p))
            .filter(|r| r.bits_per_item < least && !r.meets_target())
            .map(|r| format!("{} ({:.2}; {})", r.filter, r.bits_per_item, shortfall(r)))
            .collect();
        let _ = writeln!(
            out,
            "| {p:e} | {} | {} | {} |",
            group_text(&group),
            group_text(&ours[..ours.len().min(1)]),
            under.join(", ")
        );
    }
    out.push('\n');
    out
}

/// The value in `values` nearest to `target` on a log scale.
fn nearest(values: &[f64], target: f64) -> Option<f64> {
    values.iter().copied().min_by(|a, b| {
        (a.ln() - target.ln())
            .abs()
            .total_cmp(&(b.ln() - target.ln()).abs())
    })
}
