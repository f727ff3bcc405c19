//! The registry: every filter the harness measures, one [`Entry`] each.
//!
//! Adding a filterlab filter is one entry in [`filterlab_entries`]: its name,
//! what it can do, how to build it for a [`Workload`] (wrapping it in
//! [`FilterlabSubject`] with its exact-FPP function), its space formula and its
//! sizing for `recommend`. Every experiment, plot, table and the decision
//! guide pick it up from there; nothing else changes.

use std::f64::consts::LN_2;
use std::fmt::{self, Write as _};

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, BloomSizing, HashChoice};

use crate::Error;
use crate::peers::{
    BinaryFuse8, BloomFilterCrate, Cuckoo, FastBloom, Growable, SplitBlock, sbbf_bits_per_key,
};
use crate::subject::{FilterlabSubject, PeerSubject, Subject, Workload};

/// Where a filter comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A filterlab filter: held to its theory by the accuracy gate.
    Filterlab,
    /// A peer crate, measured for comparison.
    Peer {
        /// The crate and version, e.g. "fastbloom 0.17".
        package: &'static str,
    },
}

impl Origin {
    /// "filterlab" or "peer", as written in the CSV files.
    pub fn label(self) -> &'static str {
        match self {
            Self::Filterlab => "filterlab",
            Self::Peer { .. } => "peer",
        }
    }
}

/// What a filter can do, for `recommend` and the decision guide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // independent capabilities, not a state machine
pub struct Capabilities {
    /// Deletes items.
    pub removable: bool,
    /// Grows past its initial capacity while keeping a bounded FPP.
    pub grows: bool,
    /// Takes inserts from several threads at once.
    pub concurrent: bool,
    /// Built once from the whole key set; no inserts afterwards.
    pub static_set: bool,
    /// The same seed gives the same accuracy figures in every run.
    pub reproducible: bool,
}

impl Capabilities {
    /// A filter that takes inserts up to a fixed capacity, single-threaded.
    pub const DYNAMIC: Self = Self {
        removable: false,
        grows: false,
        concurrent: false,
        static_set: false,
        reproducible: true,
    };
}

/// Builds an empty filter for a workload.
pub type BuildEmpty = fn(&Workload) -> Result<Box<dyn Subject>, Error>;

/// Builds a static filter from the whole key set.
pub type BuildFromKeys = fn(&Workload, &[u64]) -> Result<Box<dyn Subject>, Error>;

/// How a filter is built for a workload.
#[derive(Clone, Copy)]
pub enum Build {
    /// Built empty, then keys are inserted.
    Empty(BuildEmpty),
    /// Built once from the whole key set.
    FromKeys(BuildFromKeys),
}

/// A closed-form bits-per-item formula for a target FPP.
#[derive(Clone, Copy)]
pub struct SpaceFormula {
    /// The formula, for the report.
    pub label: &'static str,
    /// Bits per item at (items, target FPP).
    pub bits_per_item: fn(u64, f64) -> f64,
}

/// A filter's size for a workload, computed without allocating.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizing {
    /// The filter crate's own sizing report.
    pub report: String,
    /// Bytes of storage.
    pub memory_bytes: u64,
    /// Bits per expected item.
    pub bits_per_item: f64,
    /// The exact FPP at the expected number of items.
    pub fpp_at_capacity: f64,
    /// What a lookup costs, e.g. "k = 7 probes over the whole array".
    pub lookup_cost: String,
    /// Random memory accesses (cache lines) a lookup of a present key makes.
    pub memory_accesses: u32,
    /// Whether a 64-bit key hash is too short for the target.
    pub hash_limited: bool,
}

impl From<BloomSizing> for Sizing {
    fn from(sizing: BloomSizing) -> Self {
        let why = match sizing.hash_choice {
            HashChoice::SmallestMeetingTarget { .. } => " (fewest meeting the target)",
            _ => "",
        };
        Self {
            memory_bytes: sizing.bytes(),
            bits_per_item: sizing.bits_per_item(),
            fpp_at_capacity: sizing.fpp_at_capacity,
            lookup_cost: format!(
                "k = {} probes{why}, each a random cache line",
                sizing.num_hashes
            ),
            hash_limited: sizing.hash_limited(),
            memory_accesses: sizing.num_hashes,
            report: sizing.to_string(),
        }
    }
}

/// How `recommend` sizes a filterlab filter.
#[derive(Clone, Copy)]
pub struct Sizer {
    /// The sizing that meets a target FPP at a number of items.
    pub for_target: fn(u64, f64) -> Result<Sizing, Error>,
    /// The best sizing for a number of items within a memory budget in bytes.
    pub within_memory: fn(u64, u64) -> Result<Sizing, Error>,
}

/// One measured filter.
#[derive(Clone)]
pub struct Entry {
    /// The name used in `--filters`, the CSV files and the report.
    pub name: &'static str,
    /// filterlab or a peer crate.
    pub origin: Origin,
    /// One line on what it is and how it is configured here.
    pub about: &'static str,
    /// What it can do.
    pub capabilities: Capabilities,
    /// How to build it.
    pub build: Build,
    /// Its bits-per-item formula, where one is known.
    pub space: Option<SpaceFormula>,
    /// Its sizing for `recommend` (filterlab filters).
    pub sizer: Option<Sizer>,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl Entry {
    /// Whether this is a filterlab filter.
    pub fn is_filterlab(&self) -> bool {
        self.origin == Origin::Filterlab
    }

    /// Builds the filter for `workload` holding `keys`: built empty and
    /// filled, or built from the keys when it is static. Returns the filter
    /// and the positions of keys it refused as full.
    ///
    /// # Errors
    ///
    /// When the filter refuses the workload.
    pub fn build_with(
        &self,
        workload: &Workload,
        keys: &[u64],
    ) -> Result<(Box<dyn Subject>, Vec<usize>), Error> {
        let mut refused = Vec::new();
        let subject = match self.build {
            Build::Empty(build) => {
                let mut subject = build(workload)?;
                subject.insert_keys(keys, &mut refused);
                subject
            }
            Build::FromKeys(build) => build(workload, keys)?,
        };
        Ok((subject, refused))
    }

    /// The name with the crate version for peers, e.g. "fastbloom 0.17".
    pub fn display_name(&self) -> String {
        match self.origin {
            Origin::Filterlab => self.name.to_owned(),
            Origin::Peer { package } if package.starts_with(self.name) => package.to_owned(),
            Origin::Peer { package } => format!("{} ({package})", self.name),
        }
    }
}

/// The standard Bloom filter's sizing (plain and atomic alike).
const BLOOM_SIZER: Sizer = Sizer {
    for_target: |n, p| Ok(BloomFilter::params(n, p)?.into()),
    within_memory: |n, bytes| {
        Ok(BloomFilter::with_bits(bytes.saturating_mul(8))
            .expected_items(n)
            .sizing()?
            .into())
    },
};

/// A blocked filter's lookup touches one cache line, whatever k.
fn one_block(mut sizing: Sizing) -> Sizing {
    sizing.memory_accesses = 1;
    sizing.lookup_cost = sizing
        .lookup_cost
        .replace("probes", "probes inside one 64-byte block")
        .replace(", each a random cache line", "");
    sizing
}

/// The standard Bloom filter's optimum: −ln p / ln²2 bits per item.
const BLOOM_SPACE: SpaceFormula = SpaceFormula {
    label: "−ln p / ln²2 = 1.44·log2(1/p)",
    bits_per_item: |_, fpp| -fpp.ln() / (LN_2 * LN_2),
};

fn bloom(workload: &Workload, power_of_two: bool) -> filterlab_bloom::BloomBuilder {
    BloomFilter::with_fpp(workload.fpp)
        .expected_items(workload.items)
        .seed(workload.seed)
        .power_of_two(power_of_two)
}

/// The largest power of two not above `bits` (at least 64).
fn power_of_two_at_most(bits: u64) -> u64 {
    if bits < 64 { 64 } else { 1 << bits.ilog2() }
}

/// The filterlab filters, one entry each.
pub fn filterlab_entries() -> Vec<Entry> {
    vec![
        Entry {
            name: "BloomFilter",
            origin: Origin::Filterlab,
            about: "standard Bloom filter sized by its exact FPP to the smallest whole-word array",
            capabilities: Capabilities::DYNAMIC,
            build: Build::Empty(|w| Ok(FilterlabSubject::new(bloom(w, false).build()?).boxed())),
            space: Some(BLOOM_SPACE),
            sizer: Some(BLOOM_SIZER),
        },
        Entry {
            name: "BloomFilter-pow2",
            origin: Origin::Filterlab,
            about: "BloomFilter with the array rounded up to a power of two and the fewest probes meeting the target",
            capabilities: Capabilities::DYNAMIC,
            build: Build::Empty(|w| Ok(FilterlabSubject::new(bloom(w, true).build()?).boxed())),
            space: Some(SpaceFormula {
                label: "−n ln p / ln²2 rounded up to a power of two, per item",
                bits_per_item: |n, p| {
                    let bits = (BLOOM_SPACE.bits_per_item)(n, p) * n as f64;
                    (bits.ceil() as u64).next_power_of_two() as f64 / n as f64
                },
            }),
            sizer: Some(Sizer {
                for_target: |n, p| {
                    Ok(BloomFilter::with_fpp(p)
                        .expected_items(n)
                        .power_of_two(true)
                        .sizing()?
                        .into())
                },
                within_memory: |n, bytes| {
                    let bits = power_of_two_at_most(bytes.saturating_mul(8));
                    Ok(BloomFilter::with_bits(bits)
                        .expected_items(n)
                        .sizing()?
                        .into())
                },
            }),
        },
        Entry {
            name: "BlockedBloomFilter",
            origin: Origin::Filterlab,
            about: "blocked Bloom filter: k probes inside one 512-bit block per key, sized by the blocked FPP formula",
            capabilities: Capabilities::DYNAMIC,
            build: Build::Empty(|w| {
                let filter = BlockedBloomFilter::with_fpp(w.fpp)
                    .expected_items(w.items)
                    .seed(w.seed)
                    .build()?;
                Ok(FilterlabSubject::new(filter).boxed())
            }),
            space: Some(SpaceFormula {
                label: "smallest whole-block array whose blocked FPP (Putze et al.) meets p",
                bits_per_item: |n, p| {
                    BlockedBloomFilter::params(n, p).map_or(f64::NAN, |s| s.bits_per_item())
                },
            }),
            sizer: Some(Sizer {
                for_target: |n, p| Ok(one_block(BlockedBloomFilter::params(n, p)?.into())),
                within_memory: |n, bytes| {
                    let sizing = BlockedBloomFilter::with_bits(bytes.saturating_mul(8))
                        .expected_items(n)
                        .sizing()?;
                    Ok(one_block(sizing.into()))
                },
            }),
        },
        Entry {
            name: "AtomicBloomFilter",
            origin: Origin::Filterlab,
            about: "BloomFilter whose inserts take &self (atomic fetch_or), for several threads",
            capabilities: Capabilities {
                concurrent: true,
                ..Capabilities::DYNAMIC
            },
            build: Build::Empty(|w| {
                Ok(FilterlabSubject::new(bloom(w, false).build_atomic()?)
                    .concurrent()
                    .boxed())
            }),
            space: Some(BLOOM_SPACE),
            sizer: Some(BLOOM_SIZER),
        },
        // CountingBloomFilter, CuckooFilter and ScalableBloomFilter join the
        // same way, with `.removable()` on the subject and `removable: true`
        // or `grows: true` in the capabilities.
    ]
}

/// The peer crates, one entry each.
#[allow(clippy::too_many_lines)] // a table: one entry per peer
pub fn peer_entries() -> Vec<Entry> {
    vec![
        Entry {
            name: "fastbloom",
            origin: Origin::Peer {
                package: "fastbloom 0.17",
            },
            about: "standard Bloom filter with foldhash, its fastest hasher (its default is SipHash-1-3)",
            capabilities: Capabilities::DYNAMIC,
            build: Build::Empty(|w| Ok(PeerSubject::boxed(FastBloom::new(w)))),
            space: Some(BLOOM_SPACE),
            sizer: None,
        },
        Entry {
            name: "bloomfilter",
            origin: Origin::Peer {
                package: "bloomfilter 3",
            },
            about: "standard Bloom filter with two seeded SipHash-1-3 hashes",
            capabilities: Capabilities::DYNAMIC,
            build: Build::Empty(|w| {
                Ok(PeerSubject::boxed(
                    BloomFilterCrate::new(w).map_err(Error::failed)?,
                ))
            }),
            space: Some(BLOOM_SPACE),
            sizer: None,
        },
        Entry {
            name: "sbbf-rs-safe",
            origin: Origin::Peer {
                package: "sbbf-rs-safe 0.3",
            },
            about: "split-block Bloom filter (Parquet's; SIMD), sized here by the split-block formula",
            capabilities: Capabilities::DYNAMIC,
            build: Build::Empty(|w| {
                Ok(PeerSubject::boxed(
                    SplitBlock::new(w).map_err(Error::failed)?,
                ))
            }),
            space: Some(SpaceFormula {
                label: "split-block formula (8 probes in one 256-bit block), whole bits per key",
                bits_per_item: |n, p| sbbf_bits_per_key(n, p).map_or(f64::NAN, |b| b as f64),
            }),
            sizer: None,
        },
        Entry {
            name: "cuckoofilter",
            origin: Origin::Peer {
                package: "cuckoofilter 0.5",
            },
            about: "cuckoo filter, 8-bit fingerprints, 4-slot buckets; drops a random item when full",
            capabilities: Capabilities {
                removable: true,
                reproducible: false,
                ..Capabilities::DYNAMIC
            },
            build: Build::Empty(|w| Ok(PeerSubject::boxed(Cuckoo::new(w)))),
            space: Some(SpaceFormula {
                label: "8 bits × slots / n, slots = n rounded up to a power of two (p not configurable)",
                bits_per_item: |n, _| 8.0 * n.next_power_of_two() as f64 / n as f64,
            }),
            sizer: None,
        },
        Entry {
            name: "growable-bloom-filter",
            origin: Origin::Peer {
                package: "growable-bloom-filter 2.1",
            },
            about: "scalable Bloom filter (growth 2, tightening 0.85) of partitioned Bloom layers",
            capabilities: Capabilities {
                grows: true,
                ..Capabilities::DYNAMIC
            },
            build: Build::Empty(|w| Ok(PeerSubject::boxed(Growable::new(w)))),
            space: Some(SpaceFormula {
                label: "⌈log2(1/p)⌉ / ln 2 (first partitioned layer)",
                bits_per_item: |_, p| (1.0 / p).log2().ceil() / LN_2,
            }),
            sizer: None,
        },
        Entry {
            name: "xorf-BinaryFuse8",
            origin: Origin::Peer {
                package: "xorf 0.13 BinaryFuse8",
            },
            about: "binary fuse filter with 8-bit fingerprints, built once from the whole key set (static)",
            capabilities: Capabilities {
                static_set: true,
                ..Capabilities::DYNAMIC
            },
            build: Build::FromKeys(|_, keys| {
                Ok(PeerSubject::boxed(
                    BinaryFuse8::build(keys).map_err(Error::failed)?,
                ))
            }),
            space: Some(SpaceFormula {
                label: "8 bits × 1.125 (p fixed at 2^−8)",
                bits_per_item: |_, _| 9.0,
            }),
            sizer: None,
        },
    ]
}

/// Every registered filter: filterlab's first, then the peers.
pub fn registry() -> Vec<Entry> {
    let mut entries = filterlab_entries();
    entries.extend(peer_entries());
    entries
}

/// The entries named in `names`, in registry order; all of them when
/// `names` is empty. A name matches exactly, or else case-insensitively when
/// that is unambiguous (`BloomFilter` and the peer `bloomfilter` differ only
/// in case).
///
/// # Errors
///
/// A usage error naming the unknown or ambiguous filter and listing the known ones.
pub fn select(names: &[String]) -> Result<Vec<Entry>, Error> {
    let all = registry();
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

/// One line per registered filter, for `filterlab list`.
pub fn describe() -> String {
    let mut out = String::new();
    for entry in registry() {
        let kind = match entry.origin {
            Origin::Filterlab => "filterlab".to_owned(),
            Origin::Peer { package } => format!("peer: {package}"),
        };
        let _ = writeln!(out, "{:<24} {kind}; {}", entry.name, entry.about);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_selectable() {
        let all = registry();
        let mut names: Vec<&str> = all.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        let picked = select(&["bloomfilter".into(), "BLOOMFILTER-POW2".into()]).unwrap();
        let picked: Vec<&str> = picked.iter().map(|e| e.name).collect();
        assert_eq!(picked, ["BloomFilter-pow2", "bloomfilter"]);
        let picked = select(&["BloomFilter".into(), "FastBloom".into()]).unwrap();
        let picked: Vec<&str> = picked.iter().map(|e| e.name).collect();
        assert_eq!(picked, ["BloomFilter", "fastbloom"]);
        let err = select(&["BLOOMFILTER".into()]).unwrap_err();
        assert!(err.to_string().contains("ambiguous"), "{err}");
        let err = select(&["nope".into()]).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Usage);
        assert!(err.to_string().contains("known filters: BloomFilter"));
    }

    #[test]
    fn every_filterlab_filter_can_be_sized() {
        for entry in filterlab_entries() {
            let sizer = entry.sizer.expect("filterlab filters size themselves");
            let sizing = (sizer.for_target)(1_000_000, 0.01).unwrap();
            assert!(sizing.fpp_at_capacity <= 0.01);
            let budget = (sizer.within_memory)(1_000_000, sizing.memory_bytes).unwrap();
            assert!(budget.memory_bytes <= sizing.memory_bytes);
        }
        assert_eq!(power_of_two_at_most(1000), 512);
        assert_eq!(power_of_two_at_most(1024), 1024);
    }
}
