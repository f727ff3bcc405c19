//! The README's measurement sections, one file each.

pub mod accuracy;
pub mod capacity;
pub mod churn;
pub mod counts;
pub mod growth;
pub mod redis;
pub mod speed;
