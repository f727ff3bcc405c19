//! The experiments, each over a list of registry entries, and the run that
//! gathers their measurements.

pub mod accuracy;
pub mod capacity;
pub mod churn;
pub mod growth;
pub mod keys;
pub mod measurements;
pub mod redis;
pub mod sample;
pub mod space;
pub mod speed;
pub mod sweep;
pub mod timing;
pub mod verdict;
