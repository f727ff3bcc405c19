#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod alarms;
mod atomic;
mod builder;
mod checkpoint;
mod dedup;
mod error;
mod hex;
mod metrics;
mod partition;
mod settings;

pub use alarms::AlarmEvent;
pub use atomic::AtomicFile;
pub use builder::DeduplicatorBuilder;
pub use checkpoint::CHECKPOINT_VERSION;
pub use dedup::{Deduplicator, Verdict};
pub use error::{Error, ErrorKind};
pub use metrics::{Metrics, PartitionStatus, Status};
pub use partition::PartitionKey;
pub use settings::{DedupSizing, HASH_BITS_USED, SizingMode};
