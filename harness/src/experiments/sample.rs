//! What the single-instance experiments (churn, growth) share: the filters
//! they run on ([`dynamic_with`]), what they measure at each of their
//! points: the FPP over fresh never-inserted keys with its interval, the
//! filter's theory and state-conditional FPP, and what the gate holds it to
//! ([`FppSample`]); and how their rows, a point and its sample, are written
//! as one flat CSV record ([`SampledRow`]).

use filterlab_core::theory::wilson_interval;
use filterlab_peers::{Subject, Theory};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};

use crate::experiments::verdict::TheoryKind;
use crate::registry::{Capability, Entry, GateOn};

/// The entries with `capability` that take inserts, and a note for each
/// static one (built once from its keys, it has nothing to measure here).
pub fn dynamic_with(entries: &[Entry], capability: Capability) -> (Vec<&Entry>, Vec<String>) {
    let mut notes = Vec::new();
    let chosen = entries
        .iter()
        .filter(|e| e.has(capability))
        .filter(|e| {
            let dynamic = e.takes_inserts();
            if !dynamic {
                notes.push(format!(
                    "{}: static (built once from its keys), not measured here",
                    e.name
                ));
            }
            dynamic
        })
        .collect();
    (chosen, notes)
}

/// The FPP one filter delivered at one point, beside what predicts it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FppSample {
    /// Never-inserted keys queried at this point.
    pub queries: u64,
    /// Of them, answered present.
    pub false_positives: u64,
    /// false_positives / queries.
    pub empirical_fpp: f64,
    /// Wilson interval, lower end.
    pub ci_low: f64,
    /// Wilson interval, upper end.
    pub ci_high: f64,
    /// The interval's confidence (Bonferroni over every point of the experiment).
    pub confidence: f64,
    /// The filter's theory for the keys it holds (a bound when not exact).
    pub theoretical_fpp: Option<f64>,
    /// What that theory is worth.
    pub theory: TheoryKind,
    /// The FPP given the filter's state now, where it can tell.
    pub fill_fpp: Option<f64>,
    /// What the gate holds this point to (filterlab filters).
    pub gated_on: GateOn,
}

impl FppSample {
    /// `false_positives` of `queries` in `subject` holding `items` keys;
    /// `gate` says, from its theory, what the gate holds it to.
    pub fn new(
        subject: &dyn Subject,
        items: u64,
        (false_positives, queries): (u64, u64),
        confidence: f64,
        gate: impl FnOnce(Option<Theory>) -> GateOn,
    ) -> Self {
        let (ci_low, ci_high) = wilson_interval(false_positives, queries, confidence);
        let theory = subject.theory(items);
        Self {
            queries,
            false_positives,
            empirical_fpp: false_positives as f64 / queries.max(1) as f64,
            ci_low,
            ci_high,
            confidence,
            theoretical_fpp: theory.map(Theory::fpp),
            theory: TheoryKind::of(theory),
            fill_fpp: subject.fill_fpp(),
            gated_on: gate(theory),
        }
    }

    /// The value the gate compares with the interval, if any.
    pub fn reference(&self) -> Option<f64> {
        match self.gated_on {
            GateOn::Theory => self
                .theoretical_fpp
                .filter(|_| self.theory == TheoryKind::Exact),
            GateOn::State => self.fill_fpp,
            GateOn::Bound => self.theoretical_fpp,
            GateOn::Nothing => None,
        }
    }

    /// Whether the gated reference passes against the interval (`None`
    /// when nothing is gated).
    pub fn passes(&self) -> Option<bool> {
        self.gated_on
            .passes(self.reference(), self.ci_low, self.ci_high)
    }

    /// Whether the theory lies inside the interval (`None` without one).
    pub fn theory_inside(&self) -> Option<bool> {
        self.theoretical_fpp.map(|theory| self.inside(theory))
    }

    /// Whether the state-conditional FPP lies inside the interval (`None`
    /// when the filter does not report one).
    pub fn fill_inside(&self) -> Option<bool> {
        self.fill_fpp.map(|fill| self.inside(fill))
    }

    fn inside(&self, value: f64) -> bool {
        self.ci_low <= value && value <= self.ci_high
    }

    /// Why the gate fails this sample, when it does.
    pub fn failure(&self) -> Option<String> {
        (self.passes() == Some(false)).then(|| {
            format!(
                "{} {:.4e} against the {:.4}% interval [{:.4e}, {:.4e}] (measured {:.4e})",
                self.gated_on.label(),
                self.reference().unwrap_or(f64::NAN),
                self.confidence * 100.0,
                self.ci_low,
                self.ci_high,
                self.empirical_fpp
            )
        })
    }
}

/// A row of a single-instance experiment: where it was measured and the
/// FPP measured there. Written as one flat CSV record, the point's columns
/// then the sample's (the csv crate flattens a tuple of structs, not a
/// struct inside a struct).
#[derive(Clone, Debug, PartialEq)]
pub struct SampledRow<P> {
    /// Where it was measured.
    pub at: P,
    /// The FPP measured there, beside its theory (or bound).
    pub sample: FppSample,
}

impl<P: DeserializeOwned> SampledRow<P> {
    /// The rows of a CSV file written from them: each record read as the
    /// point and as the sample by their column names. A missing or
    /// unreadable file, or record, gives nothing.
    pub fn read_csv(path: &Path) -> Vec<Self> {
        let Ok(mut reader) = csv::Reader::from_path(path) else {
            return Vec::new();
        };
        let Ok(headers) = reader.headers().cloned() else {
            return Vec::new();
        };
        reader
            .records()
            .filter_map(Result::ok)
            .filter_map(|record| {
                Some(Self {
                    at: record.deserialize(Some(&headers)).ok()?,
                    sample: record.deserialize(Some(&headers)).ok()?,
                })
            })
            .collect()
    }
}

impl<P: Serialize> Serialize for SampledRow<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.at, &self.sample).serialize(serializer)
    }
}
