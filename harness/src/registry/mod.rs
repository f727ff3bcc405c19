//! The registry: every filter the harness measures, one [`Entry`] each,
//! carrying everything the report, the decision guide, `recommend` and the
//! accuracy gate say about it.
//!
//! Adding a filter is one entry in [`filterlab_entries`] (in `registry/filterlab.rs`) (or, for a peer
//! crate, one adapter in `filterlab-peers` and one entry in
//! [`peer_entries`], in `registry/peers.rs`): its name, origin, description, theory note,
//! capabilities, how to build it for a [`Workload`](filterlab_peers::Workload), its space formula and
//! its sizing. Every experiment, table, plot and the guide pick it up from
//! there; nothing else changes (the `extra_filter` integration test proves it).

mod entry;
mod filterlab;
mod peers;
mod statics;

pub use entry::{
    Build, BuildEmpty, BuildFromKeys, Capability, Entry, GROWTH_SPAN, GateOn, Locality, LookupCost,
    Origin, Sizer, Sizing, SpaceFormula,
};
pub use filterlab::filterlab_entries;
pub use peers::peer_entries;

use crate::error::Error;

/// Every registered filter: filterlab's first, then the peers.
pub fn registry() -> Vec<Entry> {
    let mut entries = filterlab_entries();
    entries.extend(peer_entries());
    entries
}

/// The entries of `all` named in `names`, in `all`'s order; all of them
/// when `names` is empty. A name matches exactly, or else
/// case-insensitively when that is unambiguous (`BloomFilter` and the peer
/// `bloomfilter` differ only in case).
///
/// # Errors
///
/// A usage error naming the unknown or ambiguous filter and listing the known ones.
pub fn select(all: Vec<Entry>, names: &[String]) -> Result<Vec<Entry>, Error> {
    if names.is_empty() {
        return Ok(all);
    }
    let known = || all.iter().map(|e| e.name).collect::<Vec<_>>().join(", ");
    let mut chosen: Vec<&'static str> = Vec::new();
    for name in names {
        let exact = all.iter().find(|e| e.name == name);
        let folded: Vec<&Entry> = all
            .iter()
            .filter(|e| e.name.eq_ignore_ascii_case(name))
            .collect();
        let entry = match (exact, folded.as_slice()) {
            (Some(entry), _) | (None, &[entry]) => entry,
            (None, []) => {
                return Err(Error::usage(format!(
                    "unknown filter `{name}`; known filters: {}",
                    known()
                )));
            }
            (None, _) => {
                return Err(Error::usage(format!(
                    "ambiguous filter `{name}`; known filters (case matters): {}",
                    known()
                )));
            }
        };
        chosen.push(entry.name);
    }
    Ok(all
        .into_iter()
        .filter(|e| chosen.contains(&e.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(entries: &[Entry]) -> Vec<&'static str> {
        entries.iter().map(|e| e.name).collect()
    }

    /// The registry's entry of this exact name.
    fn entry(name: &str) -> Entry {
        registry().into_iter().find(|e| e.name == name).unwrap()
    }

    #[test]
    fn names_are_unique_and_selectable() {
        let all = registry();
        let mut unique = names(&all);
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), all.len());
        let picked = select(
            registry(),
            &["bloomfilter".into(), "BLOOMFILTER-POW2".into()],
        );
        assert_eq!(names(&picked.unwrap()), ["BloomFilter-pow2", "bloomfilter"]);
        let picked = select(registry(), &["BloomFilter".into(), "FastBloom".into()]);
        assert_eq!(names(&picked.unwrap()), ["BloomFilter", "fastbloom"]);
        let err = select(registry(), &["BLOOMFILTER".into()]).unwrap_err();
        assert!(err.to_string().contains("ambiguous"), "{err}");
        let err = select(registry(), &["nope".into()]).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        assert!(err.to_string().contains("known filters: BloomFilter"));
    }

    #[test]
    fn peers_read_as_crate_and_version_filterlab_filters_as_types() {
        let label = |name: &str| entry(name).display_name();
        assert_eq!(label("bloomfilter"), "bloomfilter 3.0");
        assert_eq!(label("BloomFilter"), "BloomFilter");
        assert_eq!(label("BloomFilter-pow2"), "BloomFilter (pow2)");
        assert_eq!(label("qfilter-resizeable"), "qfilter 0.3 resizeable");
        assert_eq!(label("xorf-BinaryFuse8"), "xorf 0.13 BinaryFuse8");
        assert_eq!(label("fastbloom-rs"), "fastbloom-rs 0.5");
        assert_eq!(label("RibbonFilter"), "RibbonFilter");
        assert_eq!(label("BinaryFuseFilter-4wise"), "BinaryFuseFilter (4wise)");
        assert_eq!(label("BinaryFuseFilter-u16"), "BinaryFuseFilter (u16)");
        assert_eq!(label("xorf-BinaryFuse16"), "xorf 0.13 BinaryFuse16");
        assert_eq!(label("xorf-Xor8"), "xorf 0.13 Xor8");
        let mut labels: Vec<String> = registry().iter().map(Entry::display_name).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), registry().len());
        for entry in peer_entries() {
            let label = entry.display_name();
            assert!(
                label.contains(|c: char| c.is_ascii_digit()),
                "{label}: no version"
            );
        }
    }

    #[test]
    fn static_filters_and_only_they_are_built_from_keys() {
        for entry in registry() {
            let from_keys = !entry.takes_inserts();
            assert_eq!(
                entry.has(Capability::StaticSet),
                from_keys,
                "{}",
                entry.name
            );
        }
    }

    /// Every static entry, filterlab's (one generic path through
    /// `BuildFromKeys`) and the peers', builds from the keys and holds
    /// each of them; the fixed-FPP ones are the same filter whatever the
    /// target, at the FPP they state.
    #[test]
    fn static_entries_hold_their_keys_at_their_stated_fpp() {
        let keys: Vec<u64> = (0..5000u64).map(|i| filterlab_core::mix64(i + 1)).collect();
        let statics: Vec<Entry> = registry()
            .into_iter()
            .filter(|e| e.has(Capability::StaticSet))
            .collect();
        assert_eq!(statics.len(), 7);
        for entry in &statics {
            for fpp in [0.1, 0.001] {
                let workload = filterlab_peers::Workload {
                    items: 5000,
                    fpp,
                    seed: 4,
                };
                let (subject, refused) = entry.build_with(&workload, &keys).unwrap();
                assert!(refused.is_empty(), "{}", entry.name);
                for mode in filterlab_peers::Mode::ALL {
                    assert_eq!(subject.count_contained(&keys, mode), 5000, "{}", entry.name);
                }
                let theory = subject.theory(5000).unwrap();
                assert!(theory.is_exact(), "{}", entry.name);
                match entry.fixed_fpp {
                    Some(fixed) => assert_eq!(theory.fpp(), fixed, "{}", entry.name),
                    None => assert!(theory.fpp() <= fpp, "{}", entry.name),
                }
            }
        }
        assert!(
            registry()
                .iter()
                .all(|e| e.fixed_fpp.is_none() || e.has(Capability::StaticSet))
        );
    }

    #[test]
    fn every_filterlab_filter_can_be_sized() {
        for entry in filterlab_entries() {
            let sizer = entry.sizer.expect("filterlab filters size themselves");
            let sizing = (sizer.for_target)(1_000_000, 0.01).unwrap();
            assert!(sizing.fpp_at_capacity <= 0.01, "{}", entry.name);
            match (sizer.within_memory)(1_000_000, sizing.memory_bytes) {
                Ok(budget) => assert!(budget.memory_bytes <= sizing.memory_bytes),
                // A scalable filter is sized by its target alone.
                Err(_) => assert!(entry.name.starts_with("ScalableBloomFilter")),
            }
        }
    }

    #[test]
    fn lookup_costs_read_as_data() {
        let sizer = |name: &str| entry(name).sizer.unwrap();
        let blocked = (sizer("BlockedBloomFilter").for_target)(1_000_000, 0.01).unwrap();
        assert_eq!(blocked.lookup.memory_accesses(), 1);
        assert!(
            blocked
                .lookup
                .to_string()
                .ends_with("probes inside one 64-byte block"),
            "{}",
            blocked.lookup
        );
        let standard = (sizer("BloomFilter").for_target)(1_000_000, 0.01).unwrap();
        assert_eq!(standard.lookup.memory_accesses(), 7);
        assert_eq!(
            standard.lookup.to_string(),
            "k = 7 probes, each a random cache line"
        );
    }
}
