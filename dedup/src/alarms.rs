//! Fill-level alarms: thresholds in percent of the configured uniques, and
//! the events raised when the fill level crosses them.

use crate::error::{Error, invalid};

/// A fill-level threshold reached: raised when the fill level rises past a
/// threshold (one event for each threshold crossed, lowest first), and when
/// it falls back below one (after [`clear`](crate::Deduplicator::clear), or
/// when a new, emptier partition becomes the highest): then one event for
/// the highest threshold still reached, usually 0%.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AlarmEvent {
    /// The threshold reached, in percent.
    pub threshold: f64,
    /// The fill level when it was raised, in percent: uniques stored over
    /// uniques configured (of the highest partition when partitioned).
    pub fill_level: f64,
    /// Whether the fill level rose to the threshold (`false`: it fell back to it).
    pub rising: bool,
    /// Checks made (all verdicts) when it was raised.
    pub checks: u64,
}

/// The thresholds, sorted, 0 among them, with the highest reached.
#[derive(Clone, Debug)]
pub(crate) struct Alarms {
    thresholds: Vec<f64>,
    reached: usize,
    pending: Vec<AlarmEvent>,
}

impl Alarms {
    /// Alarms at `thresholds` percent, and at 0% always.
    pub(crate) fn new(thresholds: &[f64]) -> Result<Self, Error> {
        if let Some(bad) = thresholds.iter().find(|t| !t.is_finite() || **t < 0.0) {
            return Err(invalid(format!(
                "alarm thresholds are percentages of at least 0, got {bad}"
            )));
        }
        let mut sorted: Vec<f64> = thresholds.to_vec();
        sorted.push(0.0);
        sorted.sort_by(f64::total_cmp);
        sorted.dedup();
        Ok(Self {
            thresholds: sorted,
            reached: 0,
            pending: Vec::new(),
        })
    }

    /// The thresholds, ascending, 0 first.
    pub(crate) fn thresholds(&self) -> &[f64] {
        &self.thresholds
    }

    /// The highest threshold the fill level has reached.
    pub(crate) fn level(&self) -> f64 {
        self.thresholds[self.reached]
    }

    /// Moves to the highest threshold at most `fill_level`, queuing an
    /// event for each threshold crossed upwards, or one for the threshold
    /// fallen back to.
    pub(crate) fn update(&mut self, fill_level: f64, checks: u64) {
        let now = self
            .thresholds
            .iter()
            .rposition(|&threshold| threshold <= fill_level)
            .unwrap_or(0);
        let event = |threshold: f64, rising: bool| AlarmEvent {
            threshold,
            fill_level,
            rising,
            checks,
        };
        if now > self.reached {
            let crossed = &self.thresholds[self.reached + 1..=now];
            self.pending
                .extend(crossed.iter().map(|&threshold| event(threshold, true)));
        } else if now < self.reached {
            self.pending.push(event(self.thresholds[now], false));
        }
        self.reached = now;
    }

    /// The events queued since the last [`take`](Self::take).
    pub(crate) fn pending(&self) -> &[AlarmEvent] {
        &self.pending
    }

    /// Hands over the queued events.
    pub(crate) fn take(&mut self) -> Vec<AlarmEvent> {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rising_then_falling() {
        let mut alarms = Alarms::new(&[80.0, 50.0, 50.0]).unwrap();
        assert_eq!(alarms.thresholds(), [0.0, 50.0, 80.0]);
        alarms.update(49.9, 1);
        assert!(alarms.take().is_empty());
        alarms.update(85.0, 2);
        let events = alarms.take();
        let reached: Vec<f64> = events.iter().map(|e| e.threshold).collect();
        assert_eq!(reached, [50.0, 80.0]);
        assert!(events.iter().all(|e| e.rising && e.checks == 2));
        alarms.update(0.0, 3);
        let events = alarms.take();
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].threshold, events[0].rising), (0.0, false));
        assert_eq!(alarms.level(), 0.0);
    }

    #[test]
    fn bad_thresholds() {
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(Alarms::new(&[bad]).is_err());
        }
    }
}
