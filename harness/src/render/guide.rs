//! The decision guide: for each scenario, the filter to use and the measured
//! reason, derived from the entries' capabilities and this run's rows. It
//! names no filter: whatever the registry holds and the run measured is
//! what it recommends. Speed claims compare one-key figures with one-key
//! figures; batched figures are quoted beside them, labelled.

use std::fmt::Write as _;

use filterlab_peers::Mode;

use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::capacity::CapacityRow;
use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{Operation, SpeedRow};
use crate::registry::{Capability, Entry};
use crate::render::table::{header, table};
use crate::text::{format_count, sci};

/// The FPP of an 8-bit fingerprint, the limit of the guide's "p below 0.4%"
/// question: filters with 8-bit fingerprints cannot go below it.
const FINGERPRINT8_FPP: f64 = 1.0 / 256.0;

/// Capabilities with a row of their own in the guide (static sets have
/// theirs among the space rows).
const CAPABILITY_ROWS: [Capability; 3] = [
    Capability::Deletes,
    Capability::Growth,
    Capability::ConcurrentInserts,
];

/// Bits per item within this factor of the fewest count as a tie.
const TIE: f64 = 1.005;

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
    /// The rows of a run.
    pub fn of(measured: &'a Measurements) -> Self {
        Self {
            accuracy: &measured.accuracy,
            speed: measured.speed.as_ref().map_or(&[][..], |s| &s.rows[..]),
            capacity: measured.capacity.as_ref().map_or(&[][..], |c| &c.rows[..]),
        }
    }

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

    /// The (n, ns/op) of `op` in `mode` for `filter` at the largest n it
    /// was measured at.
    pub fn speed(&self, filter: &str, op: Operation, mode: Mode) -> Option<(u64, f64)> {
        self.speed
            .iter()
            .filter(|r| r.filter == filter && r.op == op && r.mode == mode)
            .max_by_key(|r| r.n)
            .map(|r| (r.n, r.ns_per_op))
    }

    /// "{what} 12 ns at n = 10^8", from [`speed`](Self::speed).
    fn speed_text(&self, filter: &str, op: Operation, mode: Mode, what: &str) -> Option<String> {
        self.speed(filter, op, mode)
            .map(|(n, ns)| format!("{what} {ns:.0} ns at n = {}", format_count(n)))
    }

    fn capacity_at(&self, filter: &str, load: f64) -> Option<&'a CapacityRow> {
        self.capacity
            .iter()
            .filter(|r| r.filter == filter)
            .min_by(|a, b| (a.load - load).abs().total_cmp(&(b.load - load).abs()))
    }

    /// Concurrent against single-thread inserts, mode by mode.
    fn concurrent_text(&self, filter: &str) -> Option<String> {
        let parts: Vec<String> = Mode::ALL
            .into_iter()
            .filter_map(|mode| {
                let (n, all) = self.speed(filter, Operation::InsertConcurrent, mode)?;
                let (_, one) = self.speed(filter, Operation::Insert, mode)?;
                Some(format!(
                    "{}: all cores {all:.0} ns per key, one thread {one:.0} ns, at n = {}",
                    mode_label(mode),
                    format_count(n)
                ))
            })
            .collect();
        (!parts.is_empty())
            .then(|| format!(" inserts into one shared filter, {}", parts.join("; ")))
    }

    /// What a filter did, in words: its row nearest `fpp` at the largest n,
    /// keys it lost, its remove and concurrent-insert speed (one key at a
    /// time), and its behaviour at 300% of capacity; whatever was measured.
    pub fn summary(&self, filter: &str, fpp: f64) -> String {
        let mut parts = Vec::new();
        let Some(largest) = self.largest() else {
            return String::new();
        };
        if let Some(row) =
            nearest(&self.fpps(), fpp).and_then(|p| self.accuracy_at(filter, largest, p))
        {
            let mut part = format!(
                " at p = {:e}, n = {}: {}",
                row.target_fpp,
                format_count(row.n),
                describe_row(row)
            );
            if !row.meets_target() {
                part.push_str(" (misses the target)");
            }
            parts.push(part);
        }
        let lost: u64 = self
            .accuracy
            .iter()
            .filter(|r| r.filter == filter)
            .map(|r| r.false_negatives)
            .sum();
        if lost > 0 {
            parts.push(format!(
                " it lost {lost} inserted keys (false negatives) across the accuracy rows"
            ));
        }
        parts.extend(self.speed_text(filter, Operation::Remove, Mode::OneKey, " remove"));
        parts.extend(self.concurrent_text(filter));
        if let Some(row) = self.capacity_at(filter, 3.0) {
            let mut part = format!(" at 300% of its capacity: FPP {}", sci(row.empirical_fpp));
            if let Some(full) = self.capacity_at(filter, 1.0) {
                let _ = write!(
                    part,
                    ", memory {:.2}× that at 100%",
                    row.memory_bytes as f64 / full.memory_bytes.max(1) as f64
                );
            }
            if row.false_negatives > 0 {
                let _ = write!(part, ", {} false negatives", row.false_negatives);
            }
            parts.push(part);
        }
        parts.join(";")
    }
}

/// How a mode reads in the guide.
fn mode_label(mode: Mode) -> &'static str {
    match mode {
        Mode::OneKey => "one key at a time",
        Mode::Batched => "batched",
    }
}

/// The run and what the guide keeps asking of it.
struct Facts<'a> {
    measured: &'a Measurements,
    evidence: Evidence<'a>,
    largest: u64,
}

impl<'a> Facts<'a> {
    fn accuracy(&self, filter: &str, fpp: f64) -> Option<&'a AccuracyRow> {
        self.evidence.accuracy_at(filter, self.largest, fpp)
    }

    /// The entries that can do `capability`.
    fn with(&self, capability: Capability) -> impl Iterator<Item = &'a Entry> {
        self.measured
            .entries
            .iter()
            .filter(move |e| e.has(capability))
    }

    /// Filters that take inserts (not static), only filterlab's when asked.
    fn dynamic(&self, filterlab_only: bool) -> Vec<&'a Entry> {
        self.measured
            .entries
            .iter()
            .filter(|e| !e.has(Capability::StaticSet) && (!filterlab_only || e.is_filterlab()))
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

    /// Among `candidates`, the fastest at `op` in `mode`, compared at the
    /// largest n measured for that operation and mode: (entry, n, ns).
    fn fastest(
        &self,
        candidates: &[&'a Entry],
        op: Operation,
        mode: Mode,
    ) -> Option<(&'a Entry, u64, f64)> {
        let rows = || {
            self.evidence
                .speed
                .iter()
                .filter(move |r| r.op == op && r.mode == mode)
        };
        let n = rows().map(|r| r.n).max()?;
        candidates
            .iter()
            .filter_map(|e| {
                rows()
                    .find(|r| r.filter == e.name && r.n == n)
                    .map(|r| (*e, n, r.ns_per_op))
            })
            .min_by(|a, b| a.2.total_cmp(&b.2))
    }
}

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

/// Names in bold, comma-separated.
fn bold_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|name| format!("**{name}**"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A row of the guide: the need, the filter to use, the measured reason.
type GuideRow = [String; 3];

/// The guide as Markdown: a table of scenarios, then the fewest-bits table.
pub fn decision_guide(measured: &Measurements) -> String {
    let evidence = Evidence::of(measured);
    let Some(largest) = evidence.largest() else {
        return "The decision guide needs the accuracy experiment; run the full report.\n"
            .to_owned();
    };
    let facts = Facts {
        measured,
        evidence,
        largest,
    };
    let reference = nearest(&measured.config.accuracy_fpps, 1e-2).unwrap_or(1e-2);
    let mut rows: Vec<GuideRow> = Vec::new();
    rows.extend(fewest_bits_row(&facts, reference));
    rows.extend(fastest_row(&facts, reference));
    rows.extend(low_fpp_row(&facts));
    rows.extend(static_rows(&facts, reference));
    for capability in CAPABILITY_ROWS {
        rows.push(capability_row(&facts, capability, reference));
    }
    rows.push([
        "Billions of items or a tiny p".to_owned(),
        "`filterlab recommend`".to_owned(),
        "It prints the exact sizing of every filterlab filter and warns when a 64-bit key hash \
         cannot deliver p at n (distinct keys sharing a hash alone give about n/2^64)."
            .to_owned(),
    ]);
    let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    let mut out = table(&header(&["If you need", "Use", "Measured reason"]), &rows);
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
    Some([
        "A set that changes, size known, fewest bits".to_owned(),
        bold_names(group.iter().map(|r| r.filter.as_str())),
        why,
    ])
}

/// The fastest negative lookup one key at a time among the filters meeting
/// the reference p; the fastest batched lookup beside it, labelled.
fn fastest_row(facts: &Facts<'_>, reference: f64) -> Option<GuideRow> {
    let meeting: Vec<&Entry> = facts
        .dynamic(false)
        .into_iter()
        .filter(|e| {
            facts
                .accuracy(e.name, reference)
                .is_some_and(AccuracyRow::meets_target)
        })
        .collect();
    let (fastest, n, ns) = facts.fastest(&meeting, Operation::LookupNegative, Mode::OneKey)?;
    let mut why = format!(
        "Fastest negative lookup one key at a time among the filters meeting p = {reference:e}: \
         {ns:.0} ns at n = {}",
        format_count(n)
    );
    if let Some((_, positive)) =
        facts
            .evidence
            .speed(fastest.name, Operation::LookupPositive, Mode::OneKey)
    {
        let _ = write!(why, ", positive {positive:.0} ns");
    }
    if let Some(row) = facts.accuracy(fastest.name, reference) {
        let _ = write!(why, "; {}", describe_row(row));
    }
    why.push('.');
    if let Some((batched, n, ns)) =
        facts.fastest(&meeting, Operation::LookupNegative, Mode::Batched)
    {
        let _ = write!(
            why,
            " Batched, through a batch API (`contains_many`, which only filterlab's filters \
             offer), **{}** does a negative lookup in {ns:.0} ns at n = {}: a different way of \
             calling, not comparable with the one-key figures.",
            batched.name,
            format_count(n)
        );
    }
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
    Some([
        "p below 0.4% (under an 8-bit fingerprint's 2^−8)".to_owned(),
        bold_names(group.iter().map(|r| r.filter.as_str())),
        why,
    ])
}

/// Static filters: space and speed against a Bloom filter at the same FPP.
fn static_rows(facts: &Facts<'_>, reference: f64) -> Vec<GuideRow> {
    let mut rows = Vec::new();
    for entry in facts.with(Capability::StaticSet) {
        let Some(row) = facts.accuracy(entry.name, reference) else {
            continue;
        };
        let bloom_bits = -row.empirical_fpp.ln() / std::f64::consts::LN_2.powi(2);
        let mut why = format!(
            "{}, whatever the target; a standard Bloom filter needs {bloom_bits:.2} bits/item \
             for that FPP.",
            describe_row(row)
        );
        let speeds: Vec<String> = [
            (Operation::Build, "Build (per key)"),
            (Operation::LookupNegative, "negative lookup"),
        ]
        .into_iter()
        .filter_map(|(op, what)| {
            facts
                .evidence
                .speed_text(entry.name, op, Mode::OneKey, what)
        })
        .collect();
        if !speeds.is_empty() {
            let _ = write!(why, " {}.", speeds.join(", "));
        }
        let _ = write!(
            why,
            " Below {} use a filter from the rows above.",
            sci(row.empirical_fpp)
        );
        rows.push([
            format!(
                "{}, p ≥ {}",
                Capability::StaticSet.need(),
                sci(row.empirical_fpp)
            ),
            format!("**{}**", entry.name),
            why,
        ]);
    }
    rows
}

/// The row for a capability: the filterlab filters that have it, or an
/// honest "not yet" and what the measured peers with it did.
fn capability_row(facts: &Facts<'_>, capability: Capability, reference: f64) -> GuideRow {
    let need = capability.need().to_owned();
    let (ours, peers): (Vec<&Entry>, Vec<&Entry>) =
        facts.with(capability).partition(|e| e.is_filterlab());
    let summary = |entry: &Entry| facts.evidence.summary(entry.name, reference);
    if !ours.is_empty() {
        let why: Vec<String> = ours
            .iter()
            .map(|e| format!("{}:{}.", e.name, summary(e)))
            .collect();
        return [need, bold_names(ours.iter().map(|e| e.name)), why.join(" ")];
    }
    let mut why = format!(
        "No filterlab filter measured here offers {} yet.",
        capability.noun()
    );
    if peers.is_empty() {
        why.push_str(" No peer measured here offers it either.");
        return [need, "nothing measured yet".to_owned(), why];
    }
    for peer in &peers {
        let _ = write!(why, " Measured peer **{}**:{}.", peer.name, summary(peer));
    }
    let names: Vec<String> = peers.iter().map(|p| format!("{} (peer)", p.name)).collect();
    [need, names.join(", "), why]
}

/// For each target p: the filter meeting it with the fewest bits, and the
/// best filterlab filter.
fn fewest_bits_table(facts: &Facts<'_>) -> String {
    let (dynamic, filterlab) = (facts.dynamic(false), facts.dynamic(true));
    let rows: Vec<Vec<String>> = facts
        .measured
        .config
        .accuracy_fpps
        .iter()
        .map(|&p| {
            let group = facts.fewest_bits(&dynamic, p);
            let least = group.first().map_or(f64::INFINITY, |r| r.bits_per_item);
            let ours = facts.fewest_bits(&filterlab, p);
            let under: Vec<String> = dynamic
                .iter()
                .filter_map(|e| facts.accuracy(e.name, p))
                .filter(|r| r.bits_per_item < least && !r.meets_target())
                .map(|r| format!("{} ({:.2}; {})", r.filter, r.bits_per_item, shortfall(r)))
                .collect();
            vec![
                format!("{p:e}"),
                group_text(&group),
                group_text(&ours[..ours.len().min(1)]),
                under.join(", "),
            ]
        })
        .collect();
    format!(
        "Fewest bits per item meeting each target, n = {} (sets that change; static filters \
         excluded; filters within 0.5% of the fewest are listed together):\n\n{}\n",
        format_count(facts.largest),
        table(
            &header(&[
                "target p",
                "fewest bits meeting it",
                "best filterlab filter",
                "fewer bits but not meeting it",
            ]),
            &rows
        )
    )
}

/// The value in `values` nearest to `target` on a log scale.
pub fn nearest(values: &[f64], target: f64) -> Option<f64> {
    values.iter().copied().min_by(|a, b| {
        (a.ln() - target.ln())
            .abs()
            .total_cmp(&(b.ln() - target.ln()).abs())
    })
}
