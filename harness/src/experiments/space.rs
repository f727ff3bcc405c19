//! The space experiment: bits per item against the target FPP, beside the
//! information-theoretic lower bound log2(1/p) and each filter's own formula.
//! Read from the accuracy rows at the largest n, so each space figure comes
//! with the FPP the same filters actually delivered.

use filterlab_core::theory::lower_bound_bits_per_item;
use serde::{Deserialize, Serialize};

use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::verdict::TargetStatus;
use crate::registry::{Entry, Origin};

/// One row of `space.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpaceRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// Items the filter was sized for.
    pub n: u64,
    /// The target FPP.
    pub target_fpp: f64,
    /// Measured bits of storage per item.
    pub bits_per_item: f64,
    /// log2(1/p): no filter at FPP p can use fewer bits per item.
    pub lower_bound_bits: f64,
    /// The filter's own formula at (n, p), when it has one.
    pub formula_bits: Option<f64>,
    /// Which formula.
    pub formula: String,
    /// bits_per_item / lower_bound_bits.
    pub ratio_to_bound: f64,
    /// The FPP measured in the accuracy experiment.
    pub empirical_fpp: f64,
    /// log2(1/measured FPP) / bits per item: the fraction of the bound the
    /// filter achieves at the FPP it actually delivers (1 = optimal).
    pub efficiency: f64,
    /// How the accuracy row stands against its target.
    pub target: TargetStatus,
}

/// Space rows from the accuracy rows at the largest n measured.
pub fn from_accuracy(entries: &[Entry], accuracy: &[AccuracyRow]) -> Vec<SpaceRow> {
    let Some(largest) = accuracy.iter().map(|row| row.n).max() else {
        return Vec::new();
    };
    accuracy
        .iter()
        .filter(|row| row.n == largest)
        .map(|row| {
            let formula = entries
                .iter()
                .find(|e| e.name == row.filter)
                .and_then(|e| e.space);
            let lower_bound_bits = lower_bound_bits_per_item(row.target_fpp);
            let efficiency = if row.empirical_fpp > 0.0 {
                lower_bound_bits_per_item(row.empirical_fpp) / row.bits_per_item
            } else {
                f64::NAN
            };
            SpaceRow {
                filter: row.filter.clone(),
                origin: row.origin,
                n: row.n,
                target_fpp: row.target_fpp,
                bits_per_item: row.bits_per_item,
                lower_bound_bits,
                formula_bits: formula.map(|f| (f.bits_per_item)(row.n, row.target_fpp)),
                formula: formula.map_or_else(|| "n/a".to_owned(), |f| f.label.to_owned()),
                ratio_to_bound: row.bits_per_item / lower_bound_bits,
                empirical_fpp: row.empirical_fpp,
                efficiency,
                target: row.status(),
            }
        })
        .collect()
}
