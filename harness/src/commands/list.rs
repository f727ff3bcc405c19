//! `filterlab list`: the registered filters, one line each, in columns.

use crate::registry::{Entry, Origin};
use crate::text::columns;

/// One line per filter of `entries`: its id (for `--filters`), how the
/// report names it, where it comes from and what it is.
pub fn list(entries: &[Entry]) -> String {
    let mut rows = vec![vec![
        "id (--filters)".to_owned(),
        "in the report".to_owned(),
        "from".to_owned(),
        "what it is".to_owned(),
    ]];
    for entry in entries {
        let origin = match entry.origin {
            Origin::Filterlab => entry.package.to_owned(),
            Origin::Peer => "peer crate".to_owned(),
        };
        rows.push(vec![
            entry.name.to_owned(),
            entry.display_name(),
            origin,
            entry.description.to_owned(),
        ]);
    }
    columns(&rows, &[])
}
