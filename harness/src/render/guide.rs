//! The decision guide: for each scenario, the filter to use and the measured
//! reason, derived from the entries' capabilities and this run's rows. It
//! names no filter: whatever the registry holds and the run measured is
//! what it recommends. Speed claims compare one-key figures with one-key
//! figures; batched figures are quoted beside them, labelled.

use std::fmt::Write as _;

use filterlab_peers::Mode;

use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::measurements::Measurements;
use crate::experiments::speed::Operation;
use crate::registry::{Capability, Entry};
use crate::render::evidence::{Evidence, describe_row, nearest};
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
            .filter(|e| e.takes_inserts() && (!filterlab_only || e.is_filterlab()))
            .collect()
    }

    /// The filters that take inserts and met the target `fpp` at the
    /// largest n measured.
    fn dynamic_meeting(&self, fpp: f64) -> Vec<&'a Entry> {
        self.dynamic(false)
            .into_iter()
            .filter(|e| {
                self.accuracy(e.name, fpp)
                    .is_some_and(AccuracyRow::meets_target)
            })
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
    if let Some(ours) = facts.fewest_bits(&facts.dynamic(true), reference).first()
        && !group.iter().any(|r| r.filter == ours.filter)
    {
        let _ = write!(
            why,
            " Best filterlab filter: {} ({}).",
            ours.filter,
            describe_row(ours)
        );
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
    let meeting = facts.dynamic_meeting(reference);
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
    let mut why = format!(
        "Fewest bits meeting p = {low:e} at n = {}: {}.",
        format_count(facts.largest),
        group_text(&group)
    );
    let ours = facts.fewest_bits(&facts.dynamic(true), low);
    match ours.first() {
        Some(best) if !group.iter().any(|r| r.filter == best.filter) => {
            let _ = write!(
                why,
                " Best filterlab filter: {} ({}).",
                best.filter,
                describe_row(best)
            );
        }
        _ => {}
    }
    if let Some((fastest, n, ns)) = facts.fastest(
        &facts.dynamic_meeting(low),
        Operation::LookupNegative,
        Mode::OneKey,
    ) {
        let _ = write!(
            why,
            " Fastest negative lookup one key at a time among those meeting it: {} ({ns:.0} ns at n = {}).",
            fastest.name,
            format_count(n)
        );
    }
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

/// The row for a capability: the filterlab filters that have it, chosen
/// from the measurements, or an honest "not yet" and what the measured
/// peers with it did.
fn capability_row(facts: &Facts<'_>, capability: Capability, reference: f64) -> GuideRow {
    let need = capability.need().to_owned();
    let (ours, peers): (Vec<&Entry>, Vec<&Entry>) =
        facts.with(capability).partition(|e| e.is_filterlab());
    let summary = |entry: &Entry| facts.evidence.summary(entry.name, reference);
    if !ours.is_empty() {
        let (chosen, why) = choose(facts, capability, &ours, reference);
        let mut why = why;
        if !peers.is_empty() {
            let _ = write!(why, " Peers with it:");
            for peer in &peers {
                let _ = write!(why, " **{}**:{}.", peer.name, summary(peer));
            }
        }
        return [need, chosen, why];
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

/// Why a filterlab filter with `capability` does not qualify for its row,
/// from the measurements: it misses the reference target, lost keys under
/// churn (deletes), or measured above the target while growing (growth).
fn disqualified(
    facts: &Facts<'_>,
    capability: Capability,
    entry: &Entry,
    reference: f64,
) -> Option<String> {
    match facts.accuracy(entry.name, reference) {
        Some(row) if !row.meets_target() => return Some(shortfall(row)),
        None => return Some(format!("not measured at p = {reference:e}")),
        Some(_) => {}
    }
    let evidence = &facts.evidence;
    match capability {
        Capability::Deletes => match evidence.churn_losses(entry.name) {
            Some((0, 0)) | None => None,
            Some((lost, failed)) => Some(format!(
                "{lost} false negatives and {failed} failed removals under churn"
            )),
        },
        Capability::Growth => {
            let above = evidence
                .growth_at(entry.name, reference)
                .into_iter()
                .filter(|r| r.above_target())
                .count();
            (above > 0).then(|| format!("measured above P at {above} growth points"))
        }
        Capability::ConcurrentInserts | Capability::StaticSet => None,
    }
}

/// The filterlab filters to use for `capability`: among those qualifying,
/// the one with the fewest bits at the reference p and the one with the
/// fastest one-key negative lookup (one name when they agree); the
/// measured reason, with every candidate's figures.
fn choose(
    facts: &Facts<'_>,
    capability: Capability,
    ours: &[&Entry],
    reference: f64,
) -> (String, String) {
    let (qualified, out): (Vec<&Entry>, Vec<&Entry>) = ours
        .iter()
        .partition(|e| disqualified(facts, capability, e, reference).is_none());
    let criteria = match capability {
        Capability::Deletes => {
            "meeting the target with 0 false negatives and 0 failed removals over the churn"
        }
        Capability::Growth => "meeting the target, and never measured above P while growing",
        Capability::ConcurrentInserts | Capability::StaticSet => "meeting the target",
    };
    let summary = |entry: &Entry| facts.evidence.summary(entry.name, reference);
    let fewest = facts.fewest_bits(&qualified, reference).first().copied();
    let fastest = facts.fastest(&qualified, Operation::LookupNegative, Mode::OneKey);
    let mut picks: Vec<(&str, &str)> = Vec::new();
    if let Some(row) = fewest {
        picks.push((row.filter.as_str(), "fewest bits"));
    }
    if let Some((entry, _, _)) = fastest {
        match picks.first_mut() {
            Some(first) if first.0 == entry.name => first.1 = "fewest bits, fastest lookups",
            _ => picks.push((entry.name, "fastest one-key lookups")),
        }
    }
    let mut why = String::new();
    if picks.is_empty() {
        let _ = write!(
            why,
            "No filterlab filter with {} was measured {criteria} at p = {reference:e}.",
            capability.noun()
        );
    } else {
        let _ = write!(
            why,
            "Among the filterlab filters with {} {criteria} at p = {reference:e}: {}.",
            capability.noun(),
            picks
                .iter()
                .map(|(name, what)| format!("{what}: **{name}**"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    for entry in &qualified {
        let _ = write!(why, " **{}**:{}.", entry.name, summary(entry));
    }
    for entry in &out {
        let reason = disqualified(facts, capability, entry, reference).unwrap_or_default();
        let _ = write!(why, " Not chosen: {} ({reason}).", entry.name);
    }
    let chosen = if picks.is_empty() {
        "no filterlab filter qualifies".to_owned()
    } else {
        picks
            .iter()
            .map(|(name, what)| format!("**{name}** ({what})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    (chosen, why)
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
