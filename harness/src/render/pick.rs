//! How the report and `recommend` choose a filter, one rule for every
//! need, whatever kind of filter the registry adds: among the filters that
//! qualify for a need (measured in the state the need describes), none
//! beaten on both the need's measure and its lookup time by another; of
//! those, the lowest measure; and beside it every filter it does not beat
//! beyond noise, named as tied ([`pick`]).
//!
//! Figures carry their intervals ([`Interval`]): a timing the fastest and
//! slowest of its rounds, a deterministic figure (bits per item) a
//! relative tolerance. One figure beats another only when their intervals
//! do not overlap.

/// Bits per item (and other figures a run reproduces exactly) within this
/// factor of each other tie.
pub const EXACT_TIE: f64 = 1.005;

/// The least a timing's interval reaches on each side of its median: the
/// spread of a cell's rounds misses what changes between runs (where the
/// filter's memory landed, what else ran). Two runs of the quick sweep on
/// the shared 2-core machine (210 cells, one round each, CPU time) put
/// half the cells within 0.7% of each other and 90% within 7%: timings
/// within about 10% of each other tie.
pub const TIMING_FLOOR: f64 = 1.05;

/// A measured figure, lower is better, with the interval it may be
/// anywhere in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The figure quoted (a median for a timing).
    pub value: f64,
    /// The low end of its interval.
    pub low: f64,
    /// The high end.
    pub high: f64,
}

impl Interval {
    /// A figure a run reproduces exactly (bits per item): an interval of
    /// [`EXACT_TIE`] around it.
    pub fn exact(value: f64) -> Self {
        Self {
            value,
            low: value / EXACT_TIE.sqrt(),
            high: value * EXACT_TIE.sqrt(),
        }
    }

    /// A timing: its median and the fastest and slowest round, widened
    /// to [`TIMING_FLOOR`] on each side at least.
    pub fn spread(value: f64, min: f64, max: f64) -> Self {
        Self {
            value,
            low: min.min(value / TIMING_FLOOR),
            high: max.max(value * TIMING_FLOOR),
        }
    }

    /// Whether `self` is lower than `other` beyond both intervals.
    pub fn beats(&self, other: &Self) -> bool {
        self.high < other.low
    }

    /// Whether neither beats the other.
    pub fn ties(&self, other: &Self) -> bool {
        !self.beats(other) && !other.beats(self)
    }
}

/// Whether `a` beats `b` where both were measured (a figure missing on
/// either side beats nothing).
fn beats(a: Option<&Interval>, b: Option<&Interval>) -> bool {
    a.zip(b).is_some_and(|(a, b)| a.beats(b))
}

/// A filter that qualifies for a need, with the need's measure and its
/// lookup time in that state (both lower is better).
#[derive(Clone, Debug, PartialEq)]
pub struct Contender<T> {
    /// What it is (a registry name, or the row it came from).
    pub item: T,
    /// The need's measure (bits per item at the end of growth, after
    /// churn...; for the fastest lookup, the lookup time).
    pub measure: Interval,
    /// The other axis: the lookup time in that state (for the fastest
    /// lookup, bits per item); `None` when not measured.
    pub lookup: Option<Interval>,
}

impl<T> Contender<T> {
    /// Whether `other` beats `self` on both axes.
    pub fn beaten_by(&self, other: &Self) -> bool {
        other.measure.beats(&self.measure) && beats(other.lookup.as_ref(), self.lookup.as_ref())
    }
}

/// What [`pick`] chose: the pick and the filters tied with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick<T> {
    /// The pick.
    pub best: Contender<T>,
    /// Filters within noise of it on the measure.
    pub tied: Vec<Contender<T>>,
}

impl<T> Pick<T> {
    /// The pick, then the tied ones.
    pub fn all(&self) -> impl Iterator<Item = &Contender<T>> {
        std::iter::once(&self.best).chain(&self.tied)
    }

    /// Whether the pick is a tie.
    pub fn is_tie(&self) -> bool {
        !self.tied.is_empty()
    }
}

/// The pick among `contenders` (every one qualifies for the need):
///
/// 1. those no other contender beats on both the measure and the lookup;
/// 2. of them, the lowest measure and every one tied with it (intervals
///    overlapping);
/// 3. of those, the fastest lookup is named first; the others are tied.
///
/// `None` when there is no contender.
pub fn pick<T: Clone>(contenders: &[Contender<T>]) -> Option<Pick<T>> {
    let unbeaten = frontier(contenders);
    let lowest = unbeaten.first()?.measure;
    let lookup = |c: &Contender<T>| c.lookup.map_or(f64::INFINITY, |l| l.value);
    let mut group: Vec<Contender<T>> = unbeaten
        .into_iter()
        .filter(|c| c.measure.ties(&lowest))
        .collect();
    group.sort_by(|a, b| {
        lookup(a)
            .total_cmp(&lookup(b))
            .then(a.measure.value.total_cmp(&b.measure.value))
    });
    let mut group = group.into_iter();
    let best = group.next()?;
    Some(Pick {
        best,
        tied: group.collect(),
    })
}

/// The contenders on the frontier: none beaten by another on both axes
/// (the Pareto charts' frontier), lowest measure first.
pub fn frontier<T: Clone>(contenders: &[Contender<T>]) -> Vec<Contender<T>> {
    let mut front: Vec<Contender<T>> = contenders
        .iter()
        .filter(|c| !contenders.iter().any(|other| c.beaten_by(other)))
        .cloned()
        .collect();
    front.sort_by(|a, b| a.measure.value.total_cmp(&b.measure.value));
    front
}

/// "A", or "A = B (within noise)" when tied, each name from `name`.
pub fn names<T>(pick: &Pick<T>, name: impl Fn(&T) -> String) -> String {
    let all: Vec<String> = pick.all().map(|c| name(&c.item)).collect();
    if all.len() == 1 {
        all.into_iter().next().unwrap_or_default()
    } else {
        format!("{} (within noise)", all.join(" = "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(ns: f64) -> Interval {
        Interval::spread(ns, ns * 0.97, ns * 1.03)
    }

    fn contender(name: &'static str, bits: f64, ns: f64) -> Contender<&'static str> {
        Contender {
            item: name,
            measure: Interval::exact(bits),
            lookup: Some(timed(ns)),
        }
    }

    /// The growth row, at the end of growth at P = 1e-2: the filter
    /// with the fewest bits before growing (scalable_cuckoo_filter, 11.53)
    /// is beaten on both bits and lookup there; what nothing beats is picked.
    #[test]
    fn growth_is_judged_at_the_end_of_growth() {
        let grown = [
            contender("scalable_cuckoo_filter", 19.92, 1104.0),
            contender("CuckooFilter-grow", 16.58, 164.0),
            contender("ScalableBloomFilter", 18.38, 95.0),
            contender("qfilter-resizeable", 19.14, 58.0),
        ];
        let chosen = pick(&grown).unwrap();
        assert_eq!(chosen.best.item, "CuckooFilter-grow");
        assert!(!chosen.is_tie());
        for other in &grown {
            assert!(
                !chosen.best.beaten_by(other),
                "{:?} beats the pick",
                other.item
            );
        }
        // scalable_cuckoo_filter is off the frontier; the other three are on it.
        let front: Vec<&str> = frontier(&grown).iter().map(|c| c.item).collect();
        assert_eq!(
            front,
            [
                "CuckooFilter-grow",
                "ScalableBloomFilter",
                "qfilter-resizeable"
            ]
        );
    }

    /// No pick is beaten on both axes, whichever order the contenders come in.
    #[test]
    fn the_pick_is_never_beaten_on_both() {
        // A has the fewest bits but B beats it beyond noise on both? No: B
        // has more bits. C has fewer bits than B and is faster than A.
        let set = [
            contender("A", 10.0, 100.0),
            contender("B", 12.0, 20.0),
            contender("C", 10.02, 30.0),
        ];
        for rotation in 0..set.len() {
            let mut rotated = set.to_vec();
            rotated.rotate_left(rotation);
            let chosen = pick(&rotated).unwrap();
            // A and C tie on bits (0.2% apart): C, the faster, named first.
            assert_eq!(chosen.best.item, "C");
            assert_eq!(chosen.tied.len(), 1);
            assert_eq!(chosen.tied[0].item, "A");
            assert!(rotated.iter().all(|o| !chosen.best.beaten_by(o)));
        }
    }

    /// Deletes judged after churn: the filter that held the fewest bits at
    /// its fill but needs more after the churn (or lost its target there)
    /// is not the pick.
    #[test]
    fn deletes_are_judged_after_churn() {
        // After churn (a made-up filter whose memory grew as it churned).
        let after_churn = [
            contender("grows-under-churn", 15.0, 40.0),
            contender("fixed-size", 13.4, 35.0),
        ];
        assert_eq!(pick(&after_churn).unwrap().best.item, "fixed-size");
    }

    /// Many threads judged at the thread count measured: the measure is
    /// the wall-clock ns per key with every thread inserting.
    #[test]
    fn many_threads_are_judged_at_the_thread_count_measured() {
        let on_all_threads = [
            Contender {
                item: "fast-alone-slow-shared",
                measure: timed(120.0),
                lookup: Some(timed(10.0)),
            },
            Contender {
                item: "scales",
                measure: timed(60.0),
                lookup: Some(timed(11.0)),
            },
        ];
        let chosen = pick(&on_all_threads).unwrap();
        assert_eq!(chosen.best.item, "scales");
        // Twice as slow on every core: not tied, whatever its lookup.
        assert!(chosen.tied.is_empty());
    }

    /// Overlapping intervals are a tie, and a tie names both.
    #[test]
    fn a_tie_names_both() {
        let fastest = [
            Contender {
                item: "SplitBlockBloomFilter",
                measure: Interval::spread(3.4, 3.3, 5.6),
                lookup: Some(Interval::exact(10.53)),
            },
            Contender {
                item: "sbbf-rs-safe",
                measure: Interval::spread(3.2, 3.1, 3.5),
                lookup: Some(Interval::exact(11.0)),
            },
            Contender {
                item: "BlockedBloomFilter",
                measure: Interval::spread(4.5, 4.4, 4.6),
                lookup: Some(Interval::exact(9.92)),
            },
        ];
        let chosen = pick(&fastest).unwrap();
        assert!(chosen.is_tie());
        let named = names(&chosen, |item| (*item).to_owned());
        assert_eq!(
            named, "SplitBlockBloomFilter = sbbf-rs-safe (within noise)",
            "a tied cell names every filter in the tie"
        );
        // Apart beyond noise, one winner.
        let apart = [fastest[1].clone(), fastest[2].clone()];
        let chosen = pick(&apart).unwrap();
        assert_eq!(names(&chosen, |item| (*item).to_owned()), "sbbf-rs-safe");
        assert!(pick::<&str>(&[]).is_none());
    }
}
