//! The registry: every filter the harness measures, one [`Entry`] each,
//! carrying everything the report, the decision guide, `recommend` and the
//! accuracy gate say about it.
//!
//! Adding a filter is one entry in [`filterlab_entries`] (or, for a peer
//! crate, one adapter in `filterlab-peers` and one entry in
//! [`peer_entries`]): its name, origin, description, theory note,
//! capabilities, how to build it for a [`Workload`], its space formula and
//! its sizing. Every experiment, table, plot and the guide pick it up from
//! there; nothing else changes (the `extra_filter` integration test proves it).

use std::f64::consts::LN_2;
use std::fmt;

use filterlab_bloom::{
    AtomicBloomFilter, BlockedBloomFilter, BloomFilter, BloomSizing, HashChoice,
};
use filterlab_peers::{
    BinaryFuse8, BloomFilterCrate, Cuckoo, FastBloom, FilterlabSubject, Growable, Mode,
    PeerSubject, SplitBlock, Subject, Workload, sbbf_bits_per_key,
};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Where a filter comes from (the `origin` column of the CSV files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A filterlab filter: held to its theory by the accuracy gate.
    Filterlab,
    /// A peer crate, measured for comparison.
    Peer,
}

/// Something a filter can do beyond inserts and lookups up to a capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Deletes items.
    Deletes,
    /// Grows past its initial capacity while keeping a bounded FPP.
    Growth,
    /// Takes inserts from several threads at once.
    ConcurrentInserts,
    /// Built once from the whole key set; no inserts afterwards.
    StaticSet,
}

impl Capability {
    /// What a user needs it for, as the decision guide words it.
    pub fn need(self) -> &'static str {
        match self {
            Self::Deletes => "Deletes",
            Self::Growth => "Unknown final size (must grow)",
            Self::ConcurrentInserts => "Inserts from several threads",
            Self::StaticSet => "A set built once that never changes",
        }
    }

    /// The capability as a noun phrase ("no filterlab filter supports ... yet").
    pub fn noun(self) -> &'static str {
        match self {
            Self::Deletes => "deletes",
            Self::Growth => "growth past the expected size",
            Self::ConcurrentInserts => "concurrent inserts",
            Self::StaticSet => "construction from a fixed key set",
        }
    }
}

/// Builds an empty filter for a workload.
pub type BuildEmpty = fn(&Workload) -> Result<Box<dyn Subject>, Error>;

/// Builds a static filter from the whole key set.
pub type BuildFromKeys = fn(&Workload, &[u64]) -> Result<Box<dyn Subject>, Error>;

/// How a filter is built for a workload.
#[derive(Clone, Copy, Debug)]
pub enum Build {
    /// Built empty, then keys are inserted.
    Empty(BuildEmpty),
    /// Built once from the whole key set.
    FromKeys(BuildFromKeys),
}

/// A closed-form bits-per-item formula for a target FPP.
#[derive(Clone, Copy, Debug)]
pub struct SpaceFormula {
    /// The formula, for the report.
    pub label: &'static str,
    /// Bits per item at (items, target FPP).
    pub bits_per_item: fn(u64, f64) -> f64,
}

/// Where a lookup's probes fall in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locality {
    /// Each probe anywhere in the array: a random cache line each.
    RandomLines,
    /// Every probe inside one block of this many bytes.
    OneBlock {
        /// The block size.
        bytes: u32,
    },
}

/// What one lookup costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LookupCost {
    /// Probes per key (k).
    pub probes: u32,
    /// Whether k is the fewest meeting the target rather than the optimum.
    pub fewest_meeting_target: bool,
    /// Where the probes fall.
    pub locality: Locality,
}

impl LookupCost {
    /// Random memory accesses (cache lines) a lookup of a present key makes.
    pub fn memory_accesses(&self) -> u32 {
        match self.locality {
            Locality::RandomLines => self.probes,
            Locality::OneBlock { .. } => 1,
        }
    }
}

impl fmt::Display for LookupCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "k = {} probes", self.probes)?;
        if self.fewest_meeting_target {
            f.write_str(" (fewest meeting the target)")?;
        }
        match self.locality {
            Locality::RandomLines => f.write_str(", each a random cache line"),
            Locality::OneBlock { bytes } => write!(f, " inside one {bytes}-byte block"),
        }
    }
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
    /// What a lookup costs.
    pub lookup: LookupCost,
    /// Whether a 64-bit key hash is too short for the target.
    pub hash_limited: bool,
}

impl Sizing {
    /// A Bloom filter's sizing record, with where its probes fall.
    pub fn bloom(sizing: &BloomSizing, locality: Locality) -> Self {
        Self {
            memory_bytes: sizing.bytes(),
            bits_per_item: sizing.bits_per_item(),
            fpp_at_capacity: sizing.fpp_at_capacity,
            lookup: LookupCost {
                probes: sizing.num_hashes,
                fewest_meeting_target: matches!(
                    sizing.hash_choice,
                    HashChoice::SmallestMeetingTarget { .. }
                ),
                locality,
            },
            hash_limited: sizing.hash_limited(),
            report: sizing.to_string(),
        }
    }
}

/// How `recommend` sizes a filterlab filter.
#[derive(Clone, Copy, Debug)]
pub struct Sizer {
    /// The sizing that meets a target FPP at a number of items.
    pub for_target: fn(u64, f64) -> Result<Sizing, Error>,
    /// The best sizing for a number of items within a memory budget in bytes.
    pub within_memory: fn(u64, u64) -> Result<Sizing, Error>,
}

/// One measured filter, with all the report says about it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The name used in `--filters`, the CSV files and the report.
    pub name: &'static str,
    /// filterlab or a peer crate.
    pub origin: Origin,
    /// The crate (and version, for peers) it comes from.
    pub package: &'static str,
    /// One line on what it is and how it is configured here.
    pub description: &'static str,
    /// Its FPP formula and how far it holds, for the report.
    pub theory_note: &'static str,
    /// What it can do beyond inserts and lookups up to a capacity.
    pub capabilities: &'static [Capability],
    /// Whether the same seed gives the same accuracy figures in every run.
    pub reproducible: bool,
    /// How to build it.
    pub build: Build,
    /// Its bits-per-item formula, where one is known.
    pub space: Option<SpaceFormula>,
    /// Its sizing for `recommend` (filterlab filters).
    pub sizer: Option<Sizer>,
}

impl Entry {
    /// An entry that can do nothing beyond inserts and lookups, repeats run
    /// to run, and has no space formula and no sizer; the methods below add
    /// those.
    pub fn new(
        name: &'static str,
        origin: Origin,
        package: &'static str,
        description: &'static str,
        theory_note: &'static str,
        build: Build,
    ) -> Self {
        Self {
            name,
            origin,
            package,
            description,
            theory_note,
            capabilities: &[],
            reproducible: true,
            build,
            space: None,
            sizer: None,
        }
    }

    /// With these capabilities.
    #[must_use]
    pub fn can(mut self, capabilities: &'static [Capability]) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Its measurements differ run to run for the same seed.
    #[must_use]
    pub fn unreproducible(mut self) -> Self {
        self.reproducible = false;
        self
    }

    /// With a bits-per-item formula.
    #[must_use]
    pub fn space(mut self, formula: SpaceFormula) -> Self {
        self.space = Some(formula);
        self
    }

    /// With a sizing for `recommend`.
    #[must_use]
    pub fn sizer(mut self, sizer: Sizer) -> Self {
        self.sizer = Some(sizer);
        self
    }

    /// Whether this is a filterlab filter.
    pub fn is_filterlab(&self) -> bool {
        self.origin == Origin::Filterlab
    }

    /// Whether it can do `capability`.
    pub fn has(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    /// Builds the filter for `workload` holding `keys`: built empty and
    /// filled (through its batch API where it has one: the answers are the
    /// same either way), or built from the keys when it is static. Returns
    /// the filter and the positions of keys it refused as full.
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
                subject.insert_keys(keys, Mode::Batched, &mut refused);
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
            Origin::Peer if self.package.starts_with(self.name) => self.package.to_owned(),
            Origin::Peer => format!("{} ({})", self.name, self.package),
        }
    }
}

/// The standard Bloom filter's sizing (plain and atomic alike).
const BLOOM_SIZER: Sizer = Sizer {
    for_target: |n, p| {
        Ok(Sizing::bloom(
            &BloomFilter::params(n, p)?,
            Locality::RandomLines,
        ))
    },
    within_memory: |n, bytes| {
        let sizing = BloomFilter::with_bits(bytes.saturating_mul(8))
            .expected_items(n)
            .sizing()?;
        Ok(Sizing::bloom(&sizing, Locality::RandomLines))
    },
};

/// A blocked filter's block: one 64-byte cache line.
const BLOCK: Locality = Locality::OneBlock { bytes: 64 };

/// The standard Bloom filter's optimum: −ln p / ln²2 bits per item.
const BLOOM_SPACE: SpaceFormula = SpaceFormula {
    label: "−ln p / ln²2 = 1.44·log2(1/p)",
    bits_per_item: |_, fpp| -fpp.ln() / (LN_2 * LN_2),
};

/// The exact standard-Bloom theory, as every standard Bloom filter here states it.
const BLOOM_THEORY: &str = "exact: Σ_i P(X = i)·(i/m)^k over the X bits set by kn throws (Bose et al. 2008), with its own m and k";

fn bloom(workload: &Workload, power_of_two: bool) -> filterlab_bloom::BloomBuilder {
    BloomFilter::with_fpp(workload.fpp)
        .expected_items(workload.items)
        .seed(workload.seed)
        .power_of_two(power_of_two)
}

/// AtomicBloomFilter's inserts through `&self`: key by key, or batched.
fn atomic_insert(filter: &AtomicBloomFilter, keys: &[u64], mode: Mode) -> usize {
    match mode {
        Mode::OneKey => keys.iter().filter(|key| filter.insert(*key)).count(),
        Mode::Batched => filter.insert_many(keys),
    }
}

/// The largest power of two not above `bits` (at least 64).
fn power_of_two_at_most(bits: u64) -> u64 {
    if bits < 64 { 64 } else { 1 << bits.ilog2() }
}

/// The filterlab filters, one entry each.
pub fn filterlab_entries() -> Vec<Entry> {
    let bloom_filter = |name, description, build| {
        Entry::new(
            name,
            Origin::Filterlab,
            "filterlab-bloom",
            description,
            BLOOM_THEORY,
            build,
        )
        .space(BLOOM_SPACE)
        .sizer(BLOOM_SIZER)
    };
    vec![
        bloom_filter(
            "BloomFilter",
            "standard Bloom filter sized by its exact FPP to the smallest whole-word array",
            Build::Empty(|w| Ok(FilterlabSubject::new(bloom(w, false).build()?).boxed())),
        ),
        bloom_filter(
            "BloomFilter-pow2",
            "BloomFilter with the array rounded up to a power of two and the fewest probes meeting the target",
            Build::Empty(|w| Ok(FilterlabSubject::new(bloom(w, true).build()?).boxed())),
        )
        .space(SpaceFormula {
            label: "−n ln p / ln²2 rounded up to a power of two, per item",
            bits_per_item: |n, p| {
                let bits = (BLOOM_SPACE.bits_per_item)(n, p) * n as f64;
                (bits.ceil() as u64).next_power_of_two() as f64 / n as f64
            },
        })
        .sizer(Sizer {
            for_target: |n, p| {
                let builder = BloomFilter::with_fpp(p).expected_items(n);
                Ok(Sizing::bloom(&builder.power_of_two(true).sizing()?, Locality::RandomLines))
            },
            within_memory: |n, bytes| {
                let bits = power_of_two_at_most(bytes.saturating_mul(8));
                let sizing = BloomFilter::with_bits(bits).expected_items(n).sizing()?;
                Ok(Sizing::bloom(&sizing, Locality::RandomLines))
            },
        }),
        Entry::new(
            "BlockedBloomFilter",
            Origin::Filterlab,
            "filterlab-bloom",
            "blocked Bloom filter: k probes inside one 512-bit block per key, sized by the blocked FPP formula",
            "exact: Σ_i Pois(i; n/blocks) × the exact FPP of one 512-bit block holding i keys (Putze, Sanders, Singler 2007)",
            Build::Empty(|w| {
                let builder = BlockedBloomFilter::with_fpp(w.fpp).expected_items(w.items);
                Ok(FilterlabSubject::new(builder.seed(w.seed).build()?).boxed())
            }),
        )
        .space(SpaceFormula {
            label: "smallest whole-block array whose blocked FPP (Putze et al.) meets p",
            bits_per_item: |n, p| {
                BlockedBloomFilter::params(n, p).map_or(f64::NAN, |s| s.bits_per_item())
            },
        })
        .sizer(Sizer {
            for_target: |n, p| Ok(Sizing::bloom(&BlockedBloomFilter::params(n, p)?, BLOCK)),
            within_memory: |n, bytes| {
                let builder = BlockedBloomFilter::with_bits(bytes.saturating_mul(8));
                Ok(Sizing::bloom(&builder.expected_items(n).sizing()?, BLOCK))
            },
        }),
        bloom_filter(
            "AtomicBloomFilter",
            "BloomFilter whose inserts take &self (atomic fetch_or), for several threads",
            Build::Empty(|w| {
                let filter = bloom(w, false).build_atomic()?;
                Ok(FilterlabSubject::new(filter).concurrent(atomic_insert).boxed())
            }),
        )
        .can(&[Capability::ConcurrentInserts]),
    ]
}

/// The peer crates, one entry each.
pub fn peer_entries() -> Vec<Entry> {
    let peer = |name, package, description, theory_note, build| {
        Entry::new(name, Origin::Peer, package, description, theory_note, build)
    };
    vec![
        peer(
            "fastbloom",
            "fastbloom 0.17",
            "standard Bloom filter with foldhash, its fastest hasher (its default is SipHash-1-3)",
            BLOOM_THEORY,
            Build::Empty(|w| Ok(PeerSubject::boxed(FastBloom::new(w)))),
        )
        .space(BLOOM_SPACE),
        peer(
            "bloomfilter",
            "bloomfilter 3",
            "standard Bloom filter with two seeded SipHash-1-3 hashes",
            BLOOM_THEORY,
            Build::Empty(|w| Ok(PeerSubject::boxed(BloomFilterCrate::new(w)?))),
        )
        .space(BLOOM_SPACE),
        peer(
            "sbbf-rs-safe",
            "sbbf-rs-safe 0.3",
            "split-block Bloom filter (Parquet's; SIMD), sized here by the split-block formula",
            "exact: Σ_i Pois(i; n/blocks)·(1 − (31/32)^i)^8 (one bit in each of the eight 32-bit words of a 256-bit block)",
            Build::Empty(|w| Ok(PeerSubject::boxed(SplitBlock::new(w)?))),
        )
        .space(SpaceFormula {
            label: "split-block formula (8 probes in one 256-bit block), whole bits per key",
            bits_per_item: |n, p| sbbf_bits_per_key(n, p).map_or(f64::NAN, |b| b as f64),
        }),
        peer(
            "cuckoofilter",
            "cuckoofilter 0.5",
            "cuckoo filter, 8-bit fingerprints, 4-slot buckets; drops a random item when full",
            "approximate: 1 − (1 − 1/255)^(8·load), a query comparing its fingerprint with two 4-slot buckets (Fan et al. 2014)",
            Build::Empty(|w| Ok(PeerSubject::boxed(Cuckoo::new(w)))),
        )
        .can(&[Capability::Deletes])
        .unreproducible()
        .space(SpaceFormula {
            label: "8 bits × slots / n, slots = n rounded up to a power of two (p not configurable)",
            bits_per_item: |n, _| 8.0 * n.next_power_of_two() as f64 / n as f64,
        }),
        peer(
            "growable-bloom-filter",
            "growable-bloom-filter 2.1",
            "scalable Bloom filter (growth 2, tightening 0.85) of partitioned Bloom layers",
            "none: its FPP depends on its growth history",
            Build::Empty(|w| Ok(PeerSubject::boxed(Growable::new(w)))),
        )
        .can(&[Capability::Growth])
        .space(SpaceFormula {
            label: "⌈log2(1/p)⌉ / ln 2 (first partitioned layer)",
            bits_per_item: |_, p| (1.0 / p).log2().ceil() / LN_2,
        }),
        peer(
            "xorf-BinaryFuse8",
            "xorf 0.13 BinaryFuse8",
            "binary fuse filter with 8-bit fingerprints, built once from the whole key set (static)",
            "exact: 2^−8, the chance that a query's 8-bit fingerprint matches",
            Build::FromKeys(|_, keys| Ok(PeerSubject::boxed(BinaryFuse8::build(keys)?))),
        )
        .can(&[Capability::StaticSet])
        .space(SpaceFormula {
            label: "8 bits × 1.125 (p fixed at 2^−8)",
            bits_per_item: |_, _| 9.0,
        }),
    ]
}

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
    fn static_filters_and_only_they_are_built_from_keys() {
        for entry in registry() {
            let from_keys = matches!(entry.build, Build::FromKeys(_));
            assert_eq!(
                entry.has(Capability::StaticSet),
                from_keys,
                "{}",
                entry.name
            );
        }
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

    #[test]
    fn lookup_costs_read_as_data() {
        let sizer = |name: &str| {
            filterlab_entries()
                .into_iter()
                .find(|e| e.name == name)
                .and_then(|e| e.sizer)
                .unwrap()
        };
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
