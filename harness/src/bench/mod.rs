//! `filterlab bench`: every filter's operations counted under Valgrind
//! (instructions, simulated L1 and last-level misses, estimated cycles),
//! identical from run to run, compared with a committed baseline; and
//! wall-clock ratios to each filter's peer, measured in alternating rounds.
//!
//! [`case`] runs inside the process Valgrind watches; [`counts`] runs the
//! cases under [`callgrind`]; [`compare`] and [`wall`] judge a run against
//! the [`baseline`] files; [`table`], [`plot`] and [`sanity`] present it.

pub mod baseline;
pub mod callgrind;
pub mod case;
pub mod compare;
pub mod counts;
pub mod plot;
pub mod sanity;
pub mod table;
pub mod wall;

pub use case::Size;
pub use counts::CountRow;
pub use wall::WallRow;
