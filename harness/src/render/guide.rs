//! The decision guide: one row per need, each cell short (the pick, one or
//! two measured numbers with their n and p, a link), and for each need a
//! section whose tables hold the evidence (filters in rows, measures in
//! columns, peers included). It names no filter itself: whatever the
//! registry holds and the run measured is what it picks. Speed compares
//! one-key figures with one-key figures. [`check_guide`] holds a written
//! README to the guide's rules.

use std::fmt::Write as _;

use filterlab_core::sizing::human_bytes;
use filterlab_peers::Mode;

use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::growth::GrowthRow;
use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{BuildRow, Operation};
use crate::registry::{Capability, Entry};
use crate::render::evidence::{Evidence, label, nearest};
use crate::render::pick::{Contender, Interval, Pick, names, pick};
use crate::render::section::Section;
use crate::render::sections::counts::COUNTS_HEADING;
use crate::render::table::{header, table};
use crate::text::{format_count, sci};

/// Longest a guide cell may be, in characters of Markdown.
pub const MAX_CELL: usize = 300;

/// The heading the guide table sits under.
pub const GUIDE_HEADING: &str = "## Which filter should I use?";

/// The FPP of an 8-bit fingerprint: below it, filters with 8-bit
/// fingerprints cannot go.
const FINGERPRINT8_FPP: f64 = 1.0 / 256.0;

/// What a user may need: one guide row and one section each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The fewest bits for a set of known size.
    FewestBits,
    /// The fastest lookups.
    FastestLookups,
    /// A target below an 8-bit fingerprint's 2^-8.
    LowFpp,
    /// A set built once.
    StaticSet,
    /// Deletes.
    Deletes,
    /// An unknown final size.
    UnknownSize,
    /// Inserts from many threads.
    ManyThreads,
    /// The user's own keys.
    OwnKeys,
}

impl Need {
    /// Every need, in guide order.
    pub const ALL: [Self; 8] = [
        Self::FewestBits,
        Self::FastestLookups,
        Self::LowFpp,
        Self::StaticSet,
        Self::Deletes,
        Self::UnknownSize,
        Self::ManyThreads,
        Self::OwnKeys,
    ];

    /// The guide row's first cell.
    pub fn question(self) -> &'static str {
        match self {
            Self::FewestBits => "Fewest bits, size known",
            Self::FastestLookups => "Fastest lookups",
            Self::LowFpp => "A low p (below 0.4%)",
            Self::StaticSet => "A set built once, never changed",
            Self::Deletes => "Deletes",
            Self::UnknownSize => "Unknown final size (must grow)",
            Self::ManyThreads => "Inserts from many threads",
            Self::OwnKeys => "Your own keys",
        }
    }

    /// Its section's heading (without the `## `).
    pub fn heading(self) -> &'static str {
        match self {
            Self::FewestBits => "Fewest bits at a known size",
            Self::FastestLookups => "Fastest lookups",
            Self::LowFpp => "Low p",
            Self::StaticSet => "A static set",
            Self::Deletes => "Deletes",
            Self::UnknownSize => "Unknown size",
            Self::ManyThreads => "Many threads",
            Self::OwnKeys => "Your own keys",
        }
    }
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped,
/// spaces as hyphens.
pub fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A link to the section of `need`.
fn evidence_link(need: Need) -> String {
    format!("[evidence](#{})", anchor(need.heading()))
}

/// The run and what the guide keeps asking of it.
struct Facts<'a> {
    measured: &'a Measurements,
    evidence: Evidence<'a>,
    /// The largest n of the accuracy rows.
    largest: u64,
    /// The target the guide quotes (the one nearest 1e-2).
    reference: f64,
}

impl<'a> Facts<'a> {
    fn of(measured: &'a Measurements) -> Option<Self> {
        let evidence = Evidence::of(measured);
        let largest = evidence.largest()?;
        let reference = nearest(&measured.config.accuracy_fpps, 1e-2).unwrap_or(1e-2);
        Some(Self {
            measured,
            evidence,
            largest,
            reference,
        })
    }

    fn label(&self, filter: &str) -> String {
        label(&self.measured.entries, filter)
    }

    fn bold(&self, filter: &str) -> String {
        format!("**{}**", self.label(filter))
    }

    fn accuracy(&self, filter: &str, fpp: f64) -> Option<&'a AccuracyRow> {
        self.evidence.accuracy_at(filter, self.largest, fpp)
    }

    fn entries(&self) -> &'a [Entry] {
        &self.measured.entries
    }

    /// Filters that take inserts (not static), only filterlab's when asked.
    fn dynamic(&self, filterlab_only: bool) -> Vec<&'a Entry> {
        self.entries()
            .iter()
            .filter(|e| e.takes_inserts() && (!filterlab_only || e.is_filterlab()))
            .collect()
    }

    /// The filters built once from their keys.
    fn statics(&self) -> Vec<&'a Entry> {
        self.entries()
            .iter()
            .filter(|e| e.has(Capability::StaticSet))
            .collect()
    }

    /// Among `candidates`, those meeting `fpp` at the largest n: the pick
    /// by bits per item (none beaten on both bits and one-key lookup) and
    /// the filters tied with it, the pick first.
    fn fewest_bits(&self, candidates: &[&'a Entry], fpp: f64) -> Vec<&'a AccuracyRow> {
        let contenders: Vec<Contender<String>> = candidates
            .iter()
            .filter_map(|e| self.evidence.contender(e.name, None, fpp).ok())
            .collect();
        pick(&contenders).map_or_else(Vec::new, |chosen| {
            chosen
                .all()
                .filter_map(|c| self.accuracy(&c.item, fpp))
                .collect()
        })
    }

    /// Among `candidates` meeting the reference p, the fastest one-key
    /// negative lookup at the largest n timed (none beaten on both lookup
    /// and bits, ties within noise named): the pick and that n.
    fn fastest(&self, candidates: &[&'a Entry]) -> Option<(Pick<String>, u64)> {
        let (op, mode) = (Operation::LookupNegative, Mode::OneKey);
        let n = self
            .evidence
            .speed
            .iter()
            .filter(|r| r.op == op && r.mode == mode)
            .map(|r| r.n)
            .max()?;
        let contenders: Vec<Contender<String>> = candidates
            .iter()
            .filter_map(|e| {
                let bits = self.evidence.contender(e.name, None, self.reference).ok()?;
                let row = self.evidence.speed_row(e.name, op, mode, Some(n))?;
                Some(Contender {
                    item: e.name.to_owned(),
                    measure: Interval::spread(row.ns_per_op, row.min_ns_per_op, row.max_ns_per_op),
                    lookup: Some(bits.measure),
                })
            })
            .collect();
        Some((pick(&contenders)?, n))
    }

    /// "at p = 1e-2, n = 10^6".
    fn at(&self, p: f64) -> String {
        format!("p = {p:e}, n = {}", format_count(self.largest))
    }
}

/// A guide row: the need, the pick, why.
type GuideRow = [String; 3];

/// The guide table for `measured`.
pub fn decision_guide(measured: &Measurements) -> String {
    let Some(facts) = Facts::of(measured) else {
        return "The guide needs the accuracy experiment; run the default report.\n".to_owned();
    };
    let rows: Vec<Vec<String>> = Need::ALL
        .iter()
        .map(|&need| {
            let [question, pick, why] = guide_row(&facts, need);
            vec![question, pick, format!("{why} {}", evidence_link(need))]
        })
        .collect();
    table(&header(&["If you need", "Use", "Measured"]), &rows)
}

fn guide_row(facts: &Facts<'_>, need: Need) -> GuideRow {
    let question = need.question().to_owned();
    let (pick, why) = match need {
        Need::FewestBits => fewest_bits_cell(facts),
        Need::FastestLookups => fastest_cell(facts),
        Need::LowFpp => low_fpp_cell(facts),
        Need::StaticSet => static_cell(facts),
        Need::Deletes => capability_cell(facts, Capability::Deletes),
        Need::UnknownSize => capability_cell(facts, Capability::Growth),
        Need::ManyThreads => capability_cell(facts, Capability::ConcurrentInserts),
        Need::OwnKeys => own_keys_cell(facts),
    };
    [question, pick, why]
}

/// "nothing measured": what a cell says when the run has no answer.
fn nothing(what: &str) -> (String, String) {
    (
        "—".to_owned(),
        format!("Not measured in this run ({what})."),
    )
}

/// A cell naming the dynamic filter with the fewest bits that meets `p`:
/// its bits and FPP (the FPP called `fpp`), then what `more` says of it and
/// the filters tied with it, if anything.
fn fewest_bits_pick(
    facts: &Facts<'_>,
    p: f64,
    fpp: &str,
    more: impl FnOnce(&[&AccuracyRow]) -> Option<String>,
) -> (String, String) {
    let group = facts.fewest_bits(&facts.dynamic(false), p);
    let Some(first) = group.first() else {
        return nothing("no filter met p");
    };
    let mut why = format!(
        "{:.2} bits/item at {} ({fpp} {})",
        first.bits_per_item,
        facts.at(p),
        sci(first.empirical_fpp)
    );
    if let Some(more) = more(&group) {
        let _ = write!(why, "; {more}");
    }
    if group.len() > 1 {
        why.push_str("; tied within noise");
    }
    why.push('.');
    let named: Vec<String> = group.iter().map(|r| facts.bold(&r.filter)).collect();
    let name = if named.len() > 1 {
        format!("{} (within noise)", named.join(" = "))
    } else {
        named.join("")
    };
    (name, why)
}

fn fewest_bits_cell(facts: &Facts<'_>) -> (String, String) {
    fewest_bits_pick(facts, facts.reference, "measured FPP", |_| None)
}

fn fastest_cell(facts: &Facts<'_>) -> (String, String) {
    let Some((chosen, n)) = facts.fastest(&facts.dynamic(false)) else {
        return nothing("speed");
    };
    let best = &chosen.best;
    let bits = best
        .lookup
        .map_or_else(String::new, |b| format!("; {:.2} bits/item", b.value));
    let tie = if chosen.is_tie() {
        let ns: Vec<String> = chosen
            .all()
            .map(|c| format!("{:.1}", c.measure.value))
            .collect();
        format!(" (tied within noise: {} ns)", ns.join(" and "))
    } else {
        String::new()
    };
    (
        bold_names(facts, &chosen),
        format!(
            "{:.0} ns per negative lookup{tie}, one key at a time, at n = {}, p = {:e}{bits}.",
            best.measure.value,
            format_count(n),
            facts.reference
        ),
    )
}

/// The first target below an 8-bit fingerprint's FPP.
fn low_target(facts: &Facts<'_>) -> Option<f64> {
    facts
        .measured
        .config
        .accuracy_fpps
        .iter()
        .copied()
        .find(|&p| p < FINGERPRINT8_FPP)
}

fn low_fpp_cell(facts: &Facts<'_>) -> (String, String) {
    let Some(p) = low_target(facts) else {
        return nothing("no target below 2^-8");
    };
    fewest_bits_pick(facts, p, "FPP", |_| {
        let (named, ns, n) = sweep_fastest(facts, p)?;
        Some(format!(
            "fastest meeting it: {named} at {ns:.0} ns (n = {})",
            format_count(n)
        ))
    })
}

/// The fastest one-key negative lookup meeting `p` in the sweep, at the
/// Pareto n: (its name, with the filters tied with it, ns, n).
fn sweep_fastest(facts: &Facts<'_>, p: f64) -> Option<(String, f64, u64)> {
    let sweep = facts.measured.sweep.as_ref()?;
    let n = crate::render::charts::pareto_items(facts.measured, sweep)?;
    let (_, fastest) = crate::render::charts::skyline_cell(&facts.measured.entries, sweep, n, p);
    let fastest = fastest?;
    let named = names(&fastest, |r| facts.label(&r.filter));
    Some((named, fastest.best.item.negative_ns, n))
}

/// The static set's row: at each p the guide covers, the static filter
/// with the fewest bits meeting p at the largest n (none beaten on both
/// bits and lookup, ties named: [`Facts::fewest_bits`], the rule of every
/// row), the p sharing a pick named together.
fn static_cell(facts: &Facts<'_>) -> (String, String) {
    let statics = facts.statics();
    if statics.is_empty() {
        return nothing("no static filter");
    }
    // (the pick's names, the p it wins at), in order of first win.
    let mut picks: Vec<(String, Vec<f64>)> = Vec::new();
    let mut figures: Vec<String> = Vec::new();
    for &p in &facts.measured.config.accuracy_fpps {
        let group = facts.fewest_bits(&statics, p);
        let Some(first) = group.first() else {
            figures.push(format!("{p:e} none meets it"));
            continue;
        };
        figures.push(format!(
            "{p:e} {:.2} ({})",
            first.bits_per_item,
            sci(first.empirical_fpp)
        ));
        let named: Vec<String> = group.iter().map(|r| facts.bold(&r.filter)).collect();
        let name = if named.len() > 1 {
            format!("{} (within noise)", named.join(" = "))
        } else {
            named.join("")
        };
        match picks.iter_mut().find(|(n, _)| *n == name) {
            Some((_, at)) => at.push(p),
            None => picks.push((name, vec![p])),
        }
    }
    if picks.is_empty() {
        return nothing("no static filter met p");
    }
    let every = picks.len() == 1 && figures.len() == picks[0].1.len();
    let pick = picks
        .iter()
        .map(|(name, at)| {
            let at: Vec<String> = at.iter().map(|p| format!("{p:e}")).collect();
            if every {
                format!("{name} at every p ({})", at.join(", "))
            } else {
                format!("{name} at p = {}", at.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut why = format!(
        "Fewest bits/item (measured FPP) at n = {}, by p: {}",
        format_count(facts.largest),
        figures.join(", ")
    );
    let p = facts.reference;
    if let Some(dynamic) = facts.fewest_bits(&facts.dynamic(false), p).first() {
        let _ = write!(
            why,
            "; a filter taking inserts needs {:.2} at p = {p:e}",
            dynamic.bits_per_item
        );
    }
    why.push('.');
    (pick, why)
}

/// Every filter with `capability` that takes inserts, in the state the
/// need describes ([`Evidence::contender`]), that qualifies there: it also
/// meets the reference p at the largest n.
fn contenders(facts: &Facts<'_>, capability: Capability) -> Vec<Contender<String>> {
    facts
        .entries()
        .iter()
        .filter(|e| e.has(capability) && e.takes_inserts())
        .filter(|e| {
            facts
                .accuracy(e.name, facts.reference)
                .is_some_and(AccuracyRow::meets_target)
        })
        .filter_map(|e| {
            facts
                .evidence
                .contender(e.name, Some(capability), facts.reference)
                .ok()
        })
        .collect()
}

/// "A" or "A = B (within noise)", in bold.
fn bold_names(facts: &Facts<'_>, chosen: &Pick<String>) -> String {
    names(chosen, |filter| facts.bold(filter))
}

/// " and 40 ns per negative lookup", from a contender's lookup.
fn lookup_words(contender: &Contender<String>) -> String {
    contender.lookup.map_or_else(String::new, |l| {
        format!(" and {:.0} ns per negative lookup", l.value)
    })
}

/// The pick for a capability, judged where the need lives: at the end of
/// growth, after the churn, with every core inserting.
fn capability_cell(facts: &Facts<'_>, capability: Capability) -> (String, String) {
    let Some(chosen) = pick(&contenders(facts, capability)) else {
        let with = facts.entries().iter().filter(|e| e.has(capability)).count();
        return (
            "—".to_owned(),
            format!(
                "No filter measured here with {} met the target and kept its keys ({with} tried).",
                capability.noun()
            ),
        );
    };
    let best = &chosen.best;
    let p = facts.reference;
    let config = &facts.measured.config;
    let mut why = match capability {
        Capability::Growth => {
            let rows = facts.evidence.growth_at(&best.item, p);
            let last = rows.last().map(|r| &r.at);
            format!(
                "at the end of growth ({:.0}× to n = {}, P = {:e}): {:.2} bits/item{}, FPP {} there, \
                 none of {} doublings above P",
                last.map_or(0.0, |l| l.growth),
                format_count(last.map_or(0, |l| l.items)),
                last.map_or(p, |l| l.target_fpp),
                best.measure.value,
                lookup_words(best),
                rows.last()
                    .map_or_else(String::new, |r| sci(r.sample.empirical_fpp)),
                rows.len()
            )
        }
        Capability::Deletes => format!(
            "after {}× capacity of churn (n = {}, p = {:e}): {:.2} bits per live key{}; 0 keys \
             lost, 0 failed removals",
            config.churn_span,
            format_count(config.churn_items),
            config.churn_fpp,
            best.measure.value,
            lookup_words(best)
        ),
        Capability::ConcurrentInserts => {
            let cores = crate::experiments::speed::insert_threads();
            let one = facts
                .evidence
                .speed(&best.item, Operation::Insert, Mode::OneKey)
                .map_or_else(String::new, |(_, ns)| format!(", {ns:.0} on one"));
            let n = facts
                .evidence
                .speed(&best.item, Operation::InsertConcurrent, Mode::OneKey)
                .map_or(0, |(n, _)| n);
            format!(
                "inserts {:.0} ns/key on {cores} threads{one}, one key at a time (n = {}){}; {}",
                best.measure.value,
                format_count(n),
                lookup_words(best),
                bits_text(facts, &best.item)
            )
        }
        Capability::StaticSet => String::new(),
    };
    if chosen.is_tie() {
        why.push_str("; tied within noise");
    }
    why.push('.');
    (bold_names(facts, &chosen), why)
}

/// "9.59 bits/item at p = 1e-2, n = 10^6", or "" without a row.
fn bits_text(facts: &Facts<'_>, filter: &str) -> String {
    facts
        .accuracy(filter, facts.reference)
        .map_or_else(String::new, |r| {
            format!(
                "{:.2} bits/item at {}",
                r.bits_per_item,
                facts.at(facts.reference)
            )
        })
}

fn own_keys_cell(facts: &Facts<'_>) -> (String, String) {
    let command = "`filterlab compare --keys FILE --fpp P`".to_owned();
    match &facts.measured.config.keys {
        Some(keys) => {
            let group = facts.fewest_bits(&facts.dynamic(false), facts.reference);
            let why = group.first().map_or_else(
                || "No filter met p on these keys.".to_owned(),
                |r| {
                    format!(
                        "On your {} keys: {} meets p = {:e} with {:.2} bits/item (FPP {} on {} held-out keys).",
                        format_count(keys.inserted().len() as u64),
                        facts.label(&r.filter),
                        r.target_fpp,
                        r.bits_per_item,
                        sci(r.empirical_fpp),
                        format_count(keys.held_out().len() as u64)
                    )
                },
            );
            (command, why)
        }
        None => (
            command,
            "Measures every filter on your keys (one a line), the FPP on keys held out of the \
             file; `report --keys FILE` writes this report for them. This one: generated u64 keys."
                .to_owned(),
        ),
    }
}

/// The sections of every need, in guide order.
pub fn need_sections(measured: &Measurements) -> String {
    let Some(facts) = Facts::of(measured) else {
        return String::new();
    };
    let mut out = String::new();
    for need in Need::ALL {
        out.push_str(&match need {
            Need::FewestBits => fewest_bits_section(&facts),
            Need::FastestLookups => fastest_section(&facts),
            Need::LowFpp => low_fpp_section(&facts),
            Need::StaticSet => static_section(&facts),
            Need::Deletes => deletes_section(&facts),
            Need::UnknownSize => growth_section(&facts),
            Need::ManyThreads => threads_section(&facts),
            Need::OwnKeys => own_keys_section(&facts),
        });
    }
    out
}

/// "9.59 ✓" for a row, "" without one.
fn bits_cell(row: Option<&AccuracyRow>) -> String {
    row.map_or_else(String::new, |r| {
        format!("{:.2} {}", r.bits_per_item, r.status().mark())
    })
}

fn fewest_bits_section(facts: &Facts<'_>) -> String {
    let fpps = &facts.measured.config.accuracy_fpps;
    let mut section = Section::new(Need::FewestBits.heading());
    section.paragraph(format_args!(
        "Bits per item at n = {} for each target p (✓ meets p: nothing lost or refused, the \
         interval reaches p and the exact theory is within 0.1% of it; ≈ measured within p but its \
         own exact FPP is above it; ✗ misses it). Static filters are in [{}](#{}). The plots: \
         [space.svg](space.svg), and with lookup times the [Pareto charts](#summary-charts).",
        format_count(facts.largest),
        Need::StaticSet.heading(),
        anchor(Need::StaticSet.heading())
    ));
    let mut head = vec!["filter".to_owned()];
    head.extend(fpps.iter().map(|p| format!("p = {p:e}")));
    let mut body = vec![{
        let mut cells = vec!["*lower bound log2(1/p)*".to_owned()];
        cells.extend(fpps.iter().map(|p| format!("{:.2}", -p.log2())));
        cells
    }];
    let mut fewest = vec!["*fewest meeting p*".to_owned()];
    for &p in fpps {
        let group = facts.fewest_bits(&facts.dynamic(false), p);
        fewest.push(
            group
                .first()
                .map_or_else(|| "none".to_owned(), |r| facts.label(&r.filter)),
        );
    }
    body.push(fewest);
    for entry in facts.dynamic(false) {
        let mut cells = vec![facts.label(entry.name)];
        cells.extend(
            fpps.iter()
                .map(|&p| bits_cell(facts.accuracy(entry.name, p))),
        );
        body.push(cells);
    }
    section.table(&head, &body);
    section.finish(&[])
}

fn fastest_section(facts: &Facts<'_>) -> String {
    let speed = facts.evidence.speed;
    let mut sizes: Vec<u64> = speed
        .iter()
        .filter(|r| r.op == Operation::LookupNegative)
        .map(|r| r.n)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let p = facts.reference;
    let mut section = Section::new(Need::FastestLookups.heading());
    section.paragraph(format_args!(
        "Median ns per negative lookup (the lookup a filter exists to make cheap), one key at a \
         time, each filter sized for n at p = {}; then the batched figure (filterlab's batch \
         API, a different way of calling) and the positive lookup at the largest n, and bits per \
         item and whether it met p = {p:e} at n = {}. Each figure is the timing thread's CPU \
         time (what other processes take from it on a shared machine is left out); figures \
         whose intervals overlap (the range of their rounds, at least ±5% around the median) are \
         ties. Every size, operation and target: [Speed](#speed), the \
         [skyline map](#summary-charts); free of that noise, in instructions and simulated \
         cache misses: [{COUNTS_HEADING}](#{}).",
        facts.measured.config.speed_fpp,
        format_count(facts.largest),
        anchor(COUNTS_HEADING)
    ));
    let largest = sizes.last().copied().unwrap_or(0);
    let mut head = vec!["filter".to_owned()];
    head.extend(sizes.iter().map(|&n| format!("n = {}", format_count(n))));
    head.extend([
        format!("batched, n = {}", format_count(largest)),
        format!("positive, n = {}", format_count(largest)),
        format!("bits/item, p = {p:e}"),
    ]);
    let ns = |filter: &str, op: Operation, mode: Mode, n: u64| {
        speed
            .iter()
            .find(|r| r.filter == filter && r.op == op && r.mode == mode && r.n == n)
            .map_or_else(String::new, |r| format!("{:.1}", r.ns_per_op))
    };
    let mut rows: Vec<(f64, Vec<String>)> = Vec::new();
    for entry in facts.entries() {
        let order = speed
            .iter()
            .find(|r| {
                r.filter == entry.name
                    && r.op == Operation::LookupNegative
                    && r.mode == Mode::OneKey
                    && r.n == largest
            })
            .map_or(f64::INFINITY, |r| r.ns_per_op);
        let mut cells = vec![facts.label(entry.name)];
        cells.extend(
            sizes
                .iter()
                .map(|&n| ns(entry.name, Operation::LookupNegative, Mode::OneKey, n)),
        );
        cells.push(ns(
            entry.name,
            Operation::LookupNegative,
            Mode::Batched,
            largest,
        ));
        cells.push(ns(
            entry.name,
            Operation::LookupPositive,
            Mode::OneKey,
            largest,
        ));
        cells.push(bits_cell(facts.accuracy(entry.name, p)));
        rows.push((order, cells));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    section.paragraph("Fastest first at the largest n:");
    section.table(&head, &rows.into_iter().map(|(_, c)| c).collect::<Vec<_>>());
    section.finish(&[])
}

fn low_fpp_section(facts: &Facts<'_>) -> String {
    let fpps: Vec<f64> = facts
        .measured
        .config
        .accuracy_fpps
        .iter()
        .copied()
        .filter(|&p| p < FINGERPRINT8_FPP)
        .collect();
    let mut section = Section::new(Need::LowFpp.heading());
    section.paragraph(format_args!(
        "Targets below 2^−8 ≈ 0.39%, the floor of an 8-bit fingerprint. Per target: bits per item \
         and measured FPP at n = {} (✓ meets p), and the one-key negative lookup from the \
         [sweep](#summary-charts){}.",
        format_count(facts.largest),
        facts
            .measured
            .sweep
            .as_ref()
            .and_then(|s| crate::render::charts::pareto_items(facts.measured, s))
            .map_or_else(String::new, |n| format!(" at n = {}", format_count(n)))
    ));
    if fpps.is_empty() {
        return section.finish(&["this run has no target below 2^−8".to_owned()]);
    }
    let mut head = vec!["filter".to_owned()];
    for p in &fpps {
        head.push(format!("p = {p:e}: bits/item"));
        head.push("FPP".to_owned());
        head.push("ns".to_owned());
    }
    let pareto = facts
        .measured
        .sweep
        .as_ref()
        .and_then(|s| crate::render::charts::pareto_items(facts.measured, s).map(|n| (s, n)));
    let mut body = Vec::new();
    for entry in facts.entries() {
        let mut cells = vec![facts.label(entry.name)];
        for &p in &fpps {
            let row = facts.accuracy(entry.name, p);
            cells.push(bits_cell(row));
            cells.push(row.map_or_else(String::new, |r| sci(r.empirical_fpp)));
            cells.push(
                pareto
                    .and_then(|(s, n)| {
                        s.rows
                            .iter()
                            .find(|r| r.filter == entry.name && r.n == n && r.target_fpp == p)
                    })
                    .map_or_else(String::new, |r| format!("{:.0}", r.negative_ns)),
            );
        }
        body.push(cells);
    }
    section.table(&head, &body);
    section.finish(&[])
}

fn static_section(facts: &Facts<'_>) -> String {
    let p = facts.reference;
    let mut section = Section::new(Need::StaticSet.heading());
    section.paragraph(format_args!(
        "Filters built once from the whole key set, beside the dynamic filter with the fewest bits \
         and the one with the fastest lookup at p = {p:e}; n = {} for bits and FPP; build (or \
         insert) and negative lookup per key, one key at a time, at the largest n timed. `Bloom \
         bits for that FPP` is what a standard Bloom filter needs for the FPP measured.",
        format_count(facts.largest)
    ));
    let mut chosen = facts.statics();
    let dynamic = facts.dynamic(false);
    if let Some(row) = facts.fewest_bits(&dynamic, p).first() {
        chosen.extend(facts.entries().iter().find(|e| e.name == row.filter));
    }
    if let Some((fastest, _)) = facts.fastest(&dynamic)
        && let Some(entry) = facts.entries().iter().find(|e| e.name == fastest.best.item)
        && !chosen.iter().any(|e| e.name == entry.name)
    {
        chosen.push(entry);
    }
    let accuracy = |entry: &Entry| facts.accuracy(entry.name, p);
    let timed = |entry: &Entry, op| facts.evidence.speed(entry.name, op, Mode::OneKey);
    section.columns(
        &chosen,
        &[
            ("filter", &|e| facts.label(e.name)),
            ("kind", &|e| {
                if e.has(Capability::StaticSet) {
                    "static"
                } else {
                    "takes inserts"
                }
                .to_owned()
            }),
            ("bits/item", &|e| bits_cell(accuracy(e))),
            ("measured FPP", &|e| fpp_cell(accuracy(e))),
            ("Bloom bits for that FPP", &|e| {
                accuracy(e).map_or_else(String::new, |r| {
                    format!(
                        "{:.2}",
                        -r.empirical_fpp.ln() / std::f64::consts::LN_2.powi(2)
                    )
                })
            }),
            ("build or insert ns/key", &|e| {
                let build = timed(e, Operation::Build).or_else(|| timed(e, Operation::Insert));
                ns_at_n_cell(build)
            }),
            ("negative lookup ns", &|e| {
                ns_at_n_cell(timed(e, Operation::LookupNegative))
            }),
        ],
    );
    build_table(facts, &mut section);
    section.finish(&[])
}

/// The static filters' builds (build.csv beside speed.csv's `build`
/// rows): time per key, and the most heap a build held at once against
/// the filter and against the filter plus the keys' 64-bit hashes, what a
/// build cannot do with less.
fn build_table(facts: &Facts<'_>, section: &mut Section) {
    let Some(speed) = &facts.measured.speed else {
        return;
    };
    if speed.builds.is_empty() {
        return;
    }
    let mut builds: Vec<&BuildRow> = speed.builds.iter().collect();
    let order = |filter: &str| facts.entries().iter().position(|e| e.name == filter);
    builds.sort_by_key(|b| (order(&b.filter), b.n));
    section.paragraph(
        "Building: ns per key (one build from the whole key set), and the peak heap a build \
         held (counted by the harness's allocator, the filter it returns included, the keys \
         handed to it not), against the filter and against the filter plus 8 bytes a key (the \
         keys' 64-bit hashes).",
    );
    section.columns(
        &builds,
        &[
            ("filter", &|b| facts.label(&b.filter)),
            ("n", &|b| format_count(b.n)),
            ("build ns/key", &|b| {
                facts
                    .evidence
                    .speed_row(&b.filter, Operation::Build, Mode::OneKey, Some(b.n))
                    .map_or_else(String::new, |r| format!("{:.1}", r.ns_per_op))
            }),
            ("peak build memory", &|b| human_bytes(b.peak_bytes)),
            ("peak bytes/key", &|b| {
                format!("{:.2}", b.peak_bytes_per_key())
            }),
            ("peak / filter", &|b| {
                format!("{:.2}", b.peak_bytes as f64 / b.filter_bytes.max(1) as f64)
            }),
            ("peak / (filter + keys)", &|b| {
                format!("{:.2}", b.peak_over_filter_and_hashes())
            }),
            ("retries", &|b| {
                b.retries.map_or_else(String::new, |r| r.to_string())
            }),
        ],
    );
}

/// "12 (n = 10^7)" for a timing at its n, "" without one.
fn ns_at_n_cell(timing: Option<(u64, f64)>) -> String {
    timing.map_or_else(String::new, |(n, ns)| {
        format!("{ns:.0} (n = {})", format_count(n))
    })
}

/// "9.9e-3" for a row's measured FPP, "" without one.
fn fpp_cell(row: Option<&AccuracyRow>) -> String {
    row.map_or_else(String::new, |r| sci(r.empirical_fpp))
}

fn deletes_section(facts: &Facts<'_>) -> String {
    let p = facts.reference;
    let config = &facts.measured.config;
    let mut section = Section::new(Need::Deletes.heading());
    section.paragraph(format_args!(
        "Every filter that deletes: bits per item and measured FPP at {} (✓ meets p); under \
         churn (capacity {}, {}× that many remove-oldest/insert-new steps) the most live keys \
         reported absent at any point and the removals that found nothing; what removing a \
         never-inserted key that tests positive costs (inserted keys lost per removal); one-key \
         negative lookup and remove at the largest n. Details: [Churn](#churn-filters-that-delete).",
        facts.at(p),
        format_count(config.churn_items),
        config.churn_span
    ));
    let deleting: Vec<&Entry> = facts
        .entries()
        .iter()
        .filter(|e| e.has(Capability::Deletes))
        .collect();
    let accuracy = |entry: &Entry| facts.accuracy(entry.name, p);
    let churn = |entry: &Entry| facts.evidence.churn_losses(entry.name);
    let timed = |entry: &Entry, op| {
        facts
            .evidence
            .speed(entry.name, op, Mode::OneKey)
            .map_or_else(String::new, |(_, ns)| format!("{ns:.0}"))
    };
    section.columns(
        &deleting,
        &[
            ("filter", &|e| facts.label(e.name)),
            ("bits/item", &|e| bits_cell(accuracy(e))),
            ("measured FPP", &|e| fpp_cell(accuracy(e))),
            ("live keys lost (churn)", &|e| {
                churn(e).map_or_else(String::new, |(lost, _)| lost.to_string())
            }),
            ("failed removals", &|e| {
                churn(e).map_or_else(String::new, |(_, failed)| failed.to_string())
            }),
            ("lost per bogus removal", &|e| {
                let bogus = facts.evidence.bogus.iter().find(|r| r.filter == e.name);
                bogus.map_or_else(String::new, |b| {
                    format!("{:.2}", b.false_negatives_per_removal)
                })
            }),
            ("negative lookup ns", &|e| {
                timed(e, Operation::LookupNegative)
            }),
            ("remove ns", &|e| timed(e, Operation::Remove)),
        ],
    );
    section.finish(&[])
}

/// One growing filter at one target P: its measured points and the last
/// of them, the end.
struct Grown<'a> {
    filter: &'a str,
    p: f64,
    points: Vec<&'a GrowthRow>,
    last: &'a GrowthRow,
}

fn growth_section(facts: &Facts<'_>) -> String {
    let config = &facts.measured.config;
    let mut section = Section::new(Need::UnknownSize.heading());
    section.paragraph(format_args!(
        "Every filter that grows, built for {} items and fed {}: per target P, the FPP at the end \
         and the worst at any doubling (and at how many points the interval lay above P), bits per \
         item at the end beside a `BloomFilter` sized for those items, and the one-key negative \
         lookup at the end. Details: [Growth](#growth-filters-that-grow).",
        format_count(config.growth_initial),
        format_count(config.growth_final)
    ));
    let growing: Vec<&Entry> = facts
        .entries()
        .iter()
        .filter(|e| e.has(Capability::Growth))
        .collect();
    let mut grown = Vec::new();
    for &p in &config.growth_fpps {
        for entry in &growing {
            let points = facts.evidence.growth_at(entry.name, p);
            if let Some(&last) = points.last()
                && last.at.target_fpp == p
            {
                grown.push(Grown {
                    filter: entry.name,
                    p,
                    points,
                    last,
                });
            }
        }
    }
    if grown.is_empty() {
        return section.finish(&["the growth experiment did not run".to_owned()]);
    }
    section.columns(
        &grown,
        &[
            ("filter", &|g| facts.label(g.filter)),
            ("P", &|g| format!("{:e}", g.p)),
            ("FPP at the end", &|g| sci(g.last.sample.empirical_fpp)),
            ("worst FPP", &|g| {
                let worst = g
                    .points
                    .iter()
                    .map(|r| r.sample.empirical_fpp)
                    .fold(0.0, f64::max);
                let above = g.points.iter().filter(|r| r.above_target()).count();
                format!("{} ({above} of {} above P)", sci(worst), g.points.len())
            }),
            ("bits/item at the end", &|g| {
                format!("{:.2}", g.last.at.bits_per_item)
            }),
            ("BloomFilter bits/item", &|g| {
                format!("{:.2}", g.last.at.bloom_bits_per_item)
            }),
            ("negative lookup ns", &|g| {
                format!("{:.0}", g.last.at.negative_ns)
            }),
            ("false negatives", &|g| {
                g.last.at.false_negatives.to_string()
            }),
        ],
    );
    section.finish(&[])
}

fn threads_section(facts: &Facts<'_>) -> String {
    let cores = crate::experiments::speed::insert_threads();
    let mut section = Section::new(Need::ManyThreads.heading());
    section.paragraph(format_args!(
        "Wall-clock ns per key filling one filter, one thread against all {cores} cores into one \
         shared filter (only filters whose inserts take `&self` can), one key at a time and \
         batched, at the largest n timed; bits per item at {}. The fastest single-thread \
         inserters are listed too: several threads need one of the shared filters.",
        facts.at(facts.reference)
    ));
    if facts.evidence.speed.is_empty() {
        return section.finish(&["the speed experiment did not run".to_owned()]);
    }
    let figure = |entry: &Entry, op, mode| facts.evidence.speed(entry.name, op, mode);
    let shared = |entry: &Entry| entry.has(Capability::ConcurrentInserts);
    // Each inserting filter with its one-thread, one-key timing (n, ns/key).
    let mut timed: Vec<(&Entry, (u64, f64))> = facts
        .entries()
        .iter()
        .filter(|e| e.takes_inserts())
        .filter_map(|e| Some((e, figure(e, Operation::Insert, Mode::OneKey)?)))
        .collect();
    // The shared filters first, then the fastest one-thread inserters.
    timed.sort_by(|a, b| {
        let key = |&(entry, (_, one)): &(&Entry, (u64, f64))| if shared(entry) { 0.0 } else { one };
        key(a).total_cmp(&key(b))
    });
    timed.truncate(8);
    let cell = |value: Option<(u64, f64)>| {
        value.map_or_else(|| "—".to_owned(), |(_, ns)| format!("{ns:.0}"))
    };
    section.columns(
        &timed,
        &[
            ("filter", &|&(e, _)| facts.label(e.name)),
            ("shared inserts", &|&(e, _)| {
                if shared(e) { "yes" } else { "no" }.to_owned()
            }),
            ("one thread ns/key", &|&(_, (_, one))| format!("{one:.0}")),
            ("all cores ns/key", &|&(e, _)| {
                cell(figure(e, Operation::InsertConcurrent, Mode::OneKey))
            }),
            ("one thread, batched", &|&(e, _)| {
                cell(figure(e, Operation::Insert, Mode::Batched))
            }),
            ("all cores, batched", &|&(e, _)| {
                cell(figure(e, Operation::InsertConcurrent, Mode::Batched))
            }),
            ("n", &|&(_, (n, _))| format_count(n)),
            ("bits/item", &|&(e, _)| {
                bits_cell(facts.accuracy(e.name, facts.reference))
            }),
        ],
    );
    section.finish(&[])
}

fn own_keys_section(facts: &Facts<'_>) -> String {
    let mut section = Section::new(Need::OwnKeys.heading());
    let Some(keys) = &facts.measured.config.keys else {
        section.paragraph(
            "This report was measured on generated keys (seeded u64 streams; every filter hashes \
             them with its own hasher). To measure on yours: `filterlab compare --keys FILE --fpp P` \
             prints every filter's bits, measured FPP and speed at that p; `filterlab report --keys \
             FILE --out DIR` writes this report for them. A file holds one key a line: u64s when \
             every line is one, else strings (mapped to u64 keys by XXH3). Half the distinct keys \
             (`--holdout`) are held out and never inserted: the FPP is measured on those, keys of \
             the same kind as the ones inserted.",
        );
        return section.finish(&[]);
    };
    section.paragraph(format_args!(
        "Keys: {}. Every row of this report was measured on them; the table: each filter at every \
         target p (✓ meets p), FPP on the held-out keys.",
        keys.describe()
    ));
    let fpps = &facts.measured.config.accuracy_fpps;
    let mut head = vec!["filter".to_owned()];
    for p in fpps {
        head.push(format!("p = {p:e}: bits/item"));
        head.push("FPP".to_owned());
    }
    let body: Vec<Vec<String>> = facts
        .entries()
        .iter()
        .map(|entry| {
            let mut cells = vec![facts.label(entry.name)];
            for &p in fpps {
                let row = facts.accuracy(entry.name, p);
                cells.push(bits_cell(row));
                cells.push(row.map_or_else(String::new, |r| {
                    format!(
                        "{} [{}, {}]",
                        sci(r.empirical_fpp),
                        sci(r.ci_low),
                        sci(r.ci_high)
                    )
                }));
            }
            cells
        })
        .collect();
    section.table(&head, &body);
    section.finish(&[])
}

/// The cells of the first Markdown table after `heading` in `markdown`.
fn table_after<'a>(markdown: &'a str, heading: &str) -> Vec<Vec<&'a str>> {
    markdown
        .lines()
        .skip_while(|line| line.trim() != heading)
        .skip(1)
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .filter(|line| !line.starts_with("|---"))
        .skip(1)
        .map(|line| {
            line.trim()
                .trim_start_matches('|')
                .trim_end_matches('|')
                .split(" | ")
                .map(str::trim)
                .collect()
        })
        .collect()
}

/// Why `readme` breaks the guide's rules: a need without its row, a cell
/// over [`MAX_CELL`] characters, a row without a link to its section or a
/// link to a section that is not there. Empty when it keeps them.
pub fn check_guide(readme: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let rows = table_after(readme, GUIDE_HEADING);
    if rows.is_empty() {
        failures.push(format!("no guide table under `{GUIDE_HEADING}`"));
    }
    let anchors: Vec<String> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(anchor)
        .collect();
    for need in Need::ALL {
        let Some(row) = rows
            .iter()
            .find(|row| row.first() == Some(&need.question()))
        else {
            failures.push(format!("guide: no row for `{}`", need.question()));
            continue;
        };
        for cell in row {
            let length = cell.chars().count();
            if length > MAX_CELL {
                failures.push(format!(
                    "guide: a cell of `{}` has {length} characters (at most {MAX_CELL}): {cell}",
                    need.question()
                ));
            }
        }
        let link = format!("(#{})", anchor(need.heading()));
        if !row.iter().any(|cell| cell.contains(&link)) {
            failures.push(format!("guide: `{}` does not link {link}", need.question()));
        }
        if !anchors.contains(&anchor(need.heading())) {
            failures.push(format!("guide: no section `## {}`", need.heading()));
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_github() {
        assert_eq!(
            anchor("Fewest bits at a known size"),
            "fewest-bits-at-a-known-size"
        );
        assert_eq!(
            anchor("Churn (filters that delete)"),
            "churn-filters-that-delete"
        );
        assert_eq!(anchor(" Low p "), "low-p");
    }

    fn readme(cell: &str, drop_section: Option<Need>) -> String {
        let mut text =
            format!("# r\n\n{GUIDE_HEADING}\n\n| If you need | Use | Measured |\n|---|---|---|\n");
        for need in Need::ALL {
            let _ = writeln!(
                text,
                "| {} | **X** | {cell} {} |",
                need.question(),
                evidence_link(need)
            );
        }
        for need in Need::ALL.into_iter().filter(|n| Some(*n) != drop_section) {
            let _ = writeln!(
                text,
                "\n## {}\n\n| filter | a |\n|---|---|\n| X | 1 |",
                need.heading()
            );
        }
        text
    }

    #[test]
    fn the_check_passes_a_good_guide_and_names_what_breaks() {
        assert_eq!(
            check_guide(&readme("9.59 bits/item at p = 1e-2.", None)),
            Vec::<String>::new()
        );
        let long = "x".repeat(MAX_CELL);
        let failures = check_guide(&readme(&long, None));
        assert_eq!(failures.len(), Need::ALL.len(), "{failures:?}");
        assert!(failures[0].contains("characters (at most 300)"));
        let failures = check_guide(&readme("ok", Some(Need::Deletes)));
        assert_eq!(failures, ["guide: no section `## Deletes`"]);
        let failures = check_guide("# r\n\nno guide\n");
        assert_eq!(failures.len(), 1 + Need::ALL.len(), "{failures:?}");
    }

    /// The guide's "set built once" row of a run of the registry's filters
    /// at three targets, from `rows` (made-up accuracy rows, no timings).
    fn static_row(rows: Vec<AccuracyRow>) -> String {
        use crate::config::{Preset, RunConfig};
        let mut config = RunConfig::preset(Preset::Tiny, 1, 1);
        config.accuracy_fpps = vec![1e-1, 1e-2, 1e-3];
        let measured = Measurements {
            entries: crate::registry::registry(),
            config,
            accuracy: rows,
            space: Vec::new(),
            speed: None,
            capacity: None,
            churn: None,
            growth: None,
            sweep: None,
            redis: None,
            seconds: Vec::new(),
            agreement: None,
        };
        let guide = decision_guide(&measured);
        guide
            .lines()
            .find(|line| line.contains(Need::StaticSet.question()))
            .unwrap_or_default()
            .to_owned()
    }

    /// The static row names, at each p, the static filter with the fewest
    /// bits meeting p, by the rules of every row: a fixed-FPP filter above
    /// p does not qualify there however few its bits, filters within noise
    /// of each other are named together, the largest n decides.
    #[test]
    fn the_static_row_names_the_fewest_bits_at_each_p() {
        use crate::experiments::accuracy::made_up;
        let n = 1_000_000;
        let fuse = 2f64.powi(-8);
        let rows = vec![
            // p = 1e-1: Ribbon and xorf's filter tie within 0.5%.
            made_up("RibbonFilter", n, 0.1, 3.40, 0.099),
            made_up("xorf-BinaryFuse8", n, 0.1, 3.41, 0.099),
            made_up("BinaryFuseFilter", n, 0.1, 9.04, fuse),
            // p = 1e-2: a made-up BinaryFuseFilter with the fewest bits.
            made_up("RibbonFilter", n, 0.01, 6.90, 0.0099),
            made_up("BinaryFuseFilter", n, 0.01, 6.50, fuse),
            // At a smaller n it had more: the largest n decides.
            made_up("BinaryFuseFilter", 1000, 0.01, 12.0, fuse),
            // p = 1e-3: the 8-bit fingerprints are above p.
            made_up("RibbonFilter", n, 0.001, 10.40, 0.00099),
            made_up("BinaryFuseFilter", n, 0.001, 9.04, fuse),
            made_up("BinaryFuseFilter-u16", n, 0.001, 18.08, 2f64.powi(-16)),
            // A filter taking inserts, quoted beside.
            made_up("BloomFilter", n, 0.01, 9.59, 0.01),
        ];
        let row = static_row(rows);
        let ribbon = label(&crate::registry::registry(), "RibbonFilter");
        let peer = label(&crate::registry::registry(), "xorf-BinaryFuse8");
        assert!(
            row.contains(&format!(
                "**{ribbon}** = **{peer}** (within noise) at p = 1e-1; **BinaryFuseFilter** at \
                 p = 1e-2; **{ribbon}** at p = 1e-3"
            )),
            "{row}"
        );
        assert!(
            row.contains("1e-1 3.40 (9.90e-2), 1e-2 6.50 (3.91e-3), 1e-3 10.40 (9.90e-4)"),
            "{row}"
        );
        assert!(
            row.contains("a filter taking inserts needs 9.59 at p = 1e-2"),
            "{row}"
        );

        // Ribbon alone at every p: named once.
        let rows = vec![
            made_up("RibbonFilter", n, 0.1, 3.40, 0.099),
            made_up("RibbonFilter", n, 0.01, 6.90, 0.0099),
            made_up("BinaryFuseFilter", n, 0.01, 9.04, fuse),
            made_up("RibbonFilter", n, 0.001, 10.40, 0.00099),
        ];
        let row = static_row(rows);
        assert!(
            row.contains(&format!("**{ribbon}** at every p (1e-1, 1e-2, 1e-3)")),
            "{row}"
        );
        // No static filter meets p: the row says so.
        let row = static_row(vec![
            made_up("BloomFilter", n, 0.001, 14.38, 0.001),
            made_up("BinaryFuseFilter", n, 0.001, 9.04, fuse),
        ]);
        assert!(
            row.contains("| — |") && row.contains("no static filter met p"),
            "{row}"
        );
    }
}
