//! The words of the accuracy rows: what a theory is worth ([`TheoryKind`]),
//! how a row stands against its target ([`TargetStatus`]: ✓ ≈ ✗), and its
//! [`Verdict`], written in the CSV files exactly as the report has always
//! written them (serde renames, `Display`) and read back from them
//! (`FromStr`).

use std::fmt;
use std::str::FromStr;

use filterlab_peers::Theory;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a row's FPP formula is worth (the `theory` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TheoryKind {
    /// Exact for the design under ideal hashing.
    #[serde(rename = "exact")]
    Exact,
    /// An approximation.
    #[serde(rename = "approximate")]
    Approximate,
    /// No formula applies.
    #[serde(rename = "n/a")]
    None,
}

impl TheoryKind {
    /// The kind of a subject's theory.
    pub fn of(theory: Option<Theory>) -> Self {
        match theory {
            Some(Theory::Exact(_)) => Self::Exact,
            Some(Theory::Approximate(_)) => Self::Approximate,
            None => Self::None,
        }
    }

    /// Each kind and its words in accuracy.csv and the report.
    const LABELS: [(Self, &'static str); 3] = [
        (Self::Exact, "exact"),
        (Self::Approximate, "approximate"),
        (Self::None, "n/a"),
    ];

    /// As written in accuracy.csv and the report.
    pub fn label(self) -> &'static str {
        Self::LABELS
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or("n/a", |(_, label)| label)
    }
}

impl fmt::Display for TheoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl FromStr for TheoryKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::LABELS
            .iter()
            .find(|(_, label)| *label == text)
            .map(|(kind, _)| *kind)
            .ok_or_else(|| format!("unknown theory kind `{text}`"))
    }
}

/// How a row stands against its target: the report's ✓, ≈ and ✗ (the
/// `target` column of space.csv).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TargetStatus {
    /// ✓ nothing lost or refused, the measured FPP not significantly above
    /// the target, and the exact theory (where known) not above it either.
    #[serde(rename = "meets")]
    Meets,
    /// ≈ measured within the target, but the filter's own exact FPP is
    /// above it (typically sized with the optimistic classic formula).
    #[serde(rename = "theory over target")]
    TheoryOverTarget,
    /// ✗ measured over the target, or keys lost or refused.
    #[serde(rename = "misses")]
    Misses,
}

impl TargetStatus {
    /// ✓, ≈ or ✗.
    pub fn mark(self) -> &'static str {
        match self {
            Self::Meets => "✓",
            Self::TheoryOverTarget => "≈",
            Self::Misses => "✗",
        }
    }
}

/// Where a row's theory lies against its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TheoryCheck {
    /// Inside the interval.
    Inside(TheoryKind),
    /// Outside it; the measured FPP is this many times the theory.
    Outside(TheoryKind, f64),
    /// The filter has no theory.
    Missing,
}

/// Where a row's measured FPP lies against its target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetCheck {
    /// The interval reaches the target, and the exact theory is within it.
    Meets,
    /// Measured within the target, but the exact theory is this many times p.
    TheoryOver(f64),
    /// The whole interval is above the target; measured this many times p.
    Misses(f64),
}

/// A row's verdict: what was lost or refused, and where its theory and
/// its measured FPP lie (the `verdict` column of accuracy.csv, in words).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// Inserted keys answered absent.
    pub false_negatives: u64,
    /// Inserts refused as full.
    pub refused: u64,
    /// The theory against the interval.
    pub theory: TheoryCheck,
    /// The measured FPP against the target.
    pub target: TargetCheck,
}

impl Verdict {
    /// A placeholder until the row it belongs to is complete.
    pub(crate) const UNJUDGED: Self = Self {
        false_negatives: 0,
        refused: 0,
        theory: TheoryCheck::Missing,
        target: TargetCheck::Meets,
    };
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.false_negatives > 0 {
            write!(f, "{} FALSE NEGATIVES; ", self.false_negatives)?;
        }
        if self.refused > 0 {
            write!(f, "{} inserts refused (full); ", self.refused)?;
        }
        match self.theory {
            TheoryCheck::Inside(kind) => write!(f, "{kind} theory inside interval")?,
            TheoryCheck::Outside(kind, ratio) => write!(
                f,
                "{kind} theory OUTSIDE interval (measured {ratio:.3}× theory)"
            )?,
            TheoryCheck::Missing => f.write_str("no theory")?,
        }
        match self.target {
            TargetCheck::Misses(ratio) => write!(f, "; FPP misses target ({ratio:.2}× p)"),
            TargetCheck::TheoryOver(excess) => write!(
                f,
                "; measured FPP within target, but its exact theory is {excess:.4}× p"
            ),
            TargetCheck::Meets => f.write_str("; FPP meets target"),
        }
    }
}

impl FromStr for Verdict {
    type Err = String;

    /// Reads the words [`Display`](fmt::Display) writes (ratios to the
    /// precision written).
    fn from_str(text: &str) -> Result<Self, String> {
        let number = |value: &str| value.parse::<f64>().map_err(|e| format!("{value}: {e}"));
        let count = |value: &str| value.parse::<u64>().map_err(|e| format!("{value}: {e}"));
        let mut parts: Vec<&str> = text.split("; ").collect();
        let target = match parts.pop().unwrap_or_default() {
            "FPP meets target" => TargetCheck::Meets,
            part => {
                if let Some(ratio) = between(part, "FPP misses target (", "× p)") {
                    TargetCheck::Misses(number(ratio)?)
                } else if let Some(excess) = between(
                    part,
                    "measured FPP within target, but its exact theory is ",
                    "× p",
                ) {
                    TargetCheck::TheoryOver(number(excess)?)
                } else {
                    return Err(format!("unknown target verdict `{part}`"));
                }
            }
        };
        let theory = match parts.pop().unwrap_or_default() {
            "no theory" => TheoryCheck::Missing,
            part => {
                if let Some(kind) = part.strip_suffix(" theory inside interval") {
                    TheoryCheck::Inside(kind.parse()?)
                } else if let Some((kind, rest)) = part.split_once(" theory OUTSIDE interval") {
                    let ratio = between(rest, " (measured ", "× theory)").unwrap_or(rest);
                    TheoryCheck::Outside(kind.parse()?, number(ratio)?)
                } else {
                    return Err(format!("unknown theory verdict `{part}`"));
                }
            }
        };
        let mut verdict = Self {
            false_negatives: 0,
            refused: 0,
            theory,
            target,
        };
        for part in parts {
            if let Some(lost) = part.strip_suffix(" FALSE NEGATIVES") {
                verdict.false_negatives = count(lost)?;
            } else if let Some(refused) = part.strip_suffix(" inserts refused (full)") {
                verdict.refused = count(refused)?;
            } else {
                return Err(format!("unknown verdict `{part}`"));
            }
        }
        Ok(verdict)
    }
}

/// The text of `part` between `prefix` and `suffix`.
fn between<'a>(part: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    part.strip_prefix(prefix)?.strip_suffix(suffix)
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_back() {
        for kind in [TheoryKind::Exact, TheoryKind::Approximate, TheoryKind::None] {
            assert_eq!(kind.label().parse::<TheoryKind>(), Ok(kind));
        }
        let verdict = Verdict {
            false_negatives: 2,
            refused: 3,
            theory: TheoryCheck::Outside(TheoryKind::Approximate, 1.5),
            target: TargetCheck::Misses(2.0),
        };
        let text = verdict.to_string();
        assert_eq!(
            text,
            "2 FALSE NEGATIVES; 3 inserts refused (full); approximate theory OUTSIDE interval \
             (measured 1.500× theory); FPP misses target (2.00× p)"
        );
        assert_eq!(text.parse::<Verdict>(), Ok(verdict));
        assert_eq!(TargetStatus::TheoryOverTarget.mark(), "≈");
    }
}
