//! `filterlab list`: the registered filters, one line each.

use std::fmt::Write as _;

use crate::registry::{Entry, Origin};

/// One line per filter of `entries`.
pub fn list(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let kind = match entry.origin {
            Origin::Filterlab => "filterlab".to_owned(),
            Origin::Peer => format!("peer: {}", entry.package),
        };
        let _ = writeln!(out, "{:<24} {kind}; {}", entry.name, entry.description);
    }
    out
}
