//! The subcommands of `filterlab`, one file each.

pub mod bench;
pub mod compare;
pub mod list;
pub mod recommend;
pub mod report;
