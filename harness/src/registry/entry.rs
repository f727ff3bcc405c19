//! What the registry holds for each filter: the [`Entry`] and the words,
//! formulas and sizings it carries.

use std::fmt;

use filterlab_bloom::{BloomSizing, HashChoice};
use filterlab_peers::{Mode, Subject, Workload};
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
    /// A cuckoo filter's two candidate buckets of four fingerprints, each a
    /// random cache line (per sub-table when it grows).
    TwoBuckets,
    /// A Ribbon filter's window: three adjacent 64-bit words of each of its
    /// `probes` fingerprint columns, stored side by side (one random place,
    /// one to three cache lines).
    Window {
        /// The window's bytes.
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
    /// k probes chosen as `choice` says, falling where `locality` says.
    pub fn of_probes(probes: u32, choice: HashChoice, locality: Locality) -> Self {
        Self {
            probes,
            fewest_meeting_target: matches!(choice, HashChoice::SmallestMeetingTarget { .. }),
            locality,
        }
    }

    /// Random memory accesses (cache lines) a lookup of a present key makes.
    pub fn memory_accesses(&self) -> u32 {
        match self.locality {
            Locality::RandomLines | Locality::TwoBuckets => self.probes,
            Locality::OneBlock { .. } | Locality::Window { .. } => 1,
        }
    }
}

impl fmt::Display for LookupCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.locality {
            Locality::TwoBuckets => {
                return write!(
                    f,
                    "{} buckets of 4 fingerprints, each a random cache line",
                    self.probes
                );
            }
            Locality::Window { bytes } => {
                return write!(
                    f,
                    "{} fingerprint columns of one window: {bytes} adjacent bytes",
                    self.probes
                );
            }
            _ => {}
        }
        write!(f, "k = {} probes", self.probes)?;
        if self.fewest_meeting_target {
            f.write_str(" (fewest meeting the target)")?;
        }
        match self.locality {
            Locality::RandomLines => f.write_str(", each a random cache line"),
            Locality::OneBlock { bytes } => write!(f, " inside one {bytes}-byte block"),
            Locality::TwoBuckets | Locality::Window { .. } => Ok(()),
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
    /// The FPP at the expected number of items: exact, or (see
    /// `fpp_exact`) an a-priori bound.
    pub fpp_at_capacity: f64,
    /// Whether `fpp_at_capacity` is exact.
    pub fpp_exact: bool,
    /// For a filter that grows: its FPP after growing to
    /// [`GROWTH_SPAN`] times the expected items.
    pub fpp_after_growth: Option<f64>,
    /// What a lookup costs.
    pub lookup: LookupCost,
    /// Whether a 64-bit key hash is too short for the target.
    pub hash_limited: bool,
}

/// How far `recommend` asks a growing filter to grow (the growth
/// experiment's span): 1000 times its expected items.
pub const GROWTH_SPAN: u64 = 1000;

impl Sizing {
    /// "exact FPP" or "a-priori FPP (a bound)", as `recommend` words it.
    pub fn fpp_words(&self) -> &'static str {
        if self.fpp_exact {
            "exact FPP"
        } else {
            "a-priori FPP (a bound)"
        }
    }

    /// A filter of `memory_bytes` that does not grow, with an exact FPP at
    /// capacity; bits per item and the hash limit follow from
    /// [`with_bits`](Self::with_bits).
    pub fn exact(report: String, memory_bytes: u64, fpp: f64, lookup: LookupCost) -> Self {
        Self {
            report,
            memory_bytes,
            bits_per_item: f64::NAN,
            fpp_at_capacity: fpp,
            fpp_exact: true,
            fpp_after_growth: None,
            lookup,
            hash_limited: false,
        }
    }

    /// With its bits per item and whether a 64-bit key hash limits it.
    #[must_use]
    pub fn with_bits(mut self, bits_per_item: f64, hash_limited: bool) -> Self {
        self.bits_per_item = bits_per_item;
        self.hash_limited = hash_limited;
        self
    }

    /// A Bloom filter's sizing record, with where its probes fall.
    pub fn bloom(sizing: &BloomSizing, locality: Locality) -> Self {
        let lookup = LookupCost::of_probes(sizing.num_hashes, sizing.hash_choice, locality);
        Self::exact(
            sizing.to_string(),
            sizing.bytes(),
            sizing.fpp_at_capacity,
            lookup,
        )
        .with_bits(sizing.bits_per_item(), sizing.hash_limited())
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

/// What the accuracy gate holds a filterlab filter's measured FPP to (the
/// `gated_on` column of accuracy.csv).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GateOn {
    /// Its exact theory at n (`theoretical_fpp`), averaged over all filters
    /// of the configuration.
    #[serde(rename = "exact theory")]
    Theory,
    /// Its FPP given each instance's actual state (`expected_fpp`), where
    /// the a-priori formula is a bound rather than exact (the cuckoo filter:
    /// where kicks leave fingerprints is not captured by the load alone).
    #[serde(rename = "state-conditional")]
    State,
    /// Its theory as an upper bound: the measured FPP must not lie above
    /// it beyond the interval (a grown cuckoo filter's compound bound).
    #[serde(rename = "bound")]
    Bound,
    /// Nothing: a peer, reported but not gated.
    #[serde(rename = "not gated")]
    Nothing,
}

impl GateOn {
    /// As the report words it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Theory => "exact theory",
            Self::State => "state-conditional FPP",
            Self::Bound => "stated bound",
            Self::Nothing => "not gated",
        }
    }
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
    /// What the accuracy gate holds it to.
    pub gate: GateOn,
    /// How to build it.
    pub build: Build,
    /// Its bits-per-item formula, where one is known.
    pub space: Option<SpaceFormula>,
    /// Its sizing for `recommend` (filterlab filters).
    pub sizer: Option<Sizer>,
    /// The FPP it has whatever target it is built for (a static filter of
    /// one fingerprint width): the same filter for every p, so the
    /// experiments over several targets measure it once per n.
    pub fixed_fpp: Option<f64>,
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
            gate: match origin {
                Origin::Filterlab => GateOn::Theory,
                Origin::Peer => GateOn::Nothing,
            },
            build,
            space: None,
            sizer: None,
            fixed_fpp: None,
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

    /// Gated on its state-conditional FPP instead of its theory (see
    /// [`GateOn::State`]).
    #[must_use]
    pub fn gated_on_state(mut self) -> Self {
        self.gate = GateOn::State;
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

    /// Its FPP is `fpp` whatever the target (see [`Entry::fixed_fpp`]).
    #[must_use]
    pub fn fixed_fpp(mut self, fpp: f64) -> Self {
        self.fixed_fpp = Some(fpp);
        self
    }

    /// Whether this is a filterlab filter.
    pub fn is_filterlab(&self) -> bool {
        self.origin == Origin::Filterlab
    }

    /// Whether it is built empty and takes inserts (not built once from
    /// its keys; the registry's tests hold this equal to lacking
    /// [`Capability::StaticSet`]).
    pub fn takes_inserts(&self) -> bool {
        matches!(self.build, Build::Empty(_))
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

    /// How the report names it: a filterlab filter by its type (a variant
    /// in brackets: "BloomFilter (pow2)"), a peer by its crate and version
    /// and, when the name says so, its variant ("qfilter 0.3 resizeable").
    /// The registry name stays the id (`--filters`, the CSV files).
    pub fn display_name(&self) -> String {
        let (base, variant) = self.name.split_once('-').unwrap_or((self.name, ""));
        match self.origin {
            Origin::Filterlab if variant.is_empty() => self.name.to_owned(),
            Origin::Filterlab => format!("{base} ({variant})"),
            Origin::Peer => {
                let crate_name = self.package.split(' ').next().unwrap_or(self.package);
                if crate_name == base && !variant.is_empty() && !self.package.contains(variant) {
                    format!("{} {variant}", self.package)
                } else {
                    self.package.to_owned()
                }
            }
        }
    }
}

impl GateOn {
    /// What a single-instance experiment (churn, growth) holds a filter of
    /// `origin` with a theory of kind `exact` to. One instance's FPP varies
    /// around the a-priori theory by more than the query interval covers
    /// (a blocked filter of a few dozen blocks, say), so an exact theory is
    /// checked through the state-conditional FPP (that same formula at the
    /// instance's actual fill); a theory that is only a bound, as one.
    pub fn single_instance(origin: Origin, exact: bool) -> Self {
        match (origin, exact) {
            (Origin::Peer, _) => Self::Nothing,
            (Origin::Filterlab, true) => Self::State,
            (Origin::Filterlab, false) => Self::Bound,
        }
    }

    /// Whether `reference` passes against the interval [`low`, `high`].
    pub fn passes(self, reference: Option<f64>, low: f64, high: f64) -> Option<bool> {
        let value = reference?;
        match self {
            Self::Theory | Self::State => Some(low <= value && value <= high),
            Self::Bound => Some(low <= value),
            Self::Nothing => None,
        }
    }
}
