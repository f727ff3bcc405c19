//! One case, run inside the process Valgrind watches: a filter built for a
//! size, and each of its operations passed once through
//! [`callgrind_measured`], the only function whose cost callgrind collects
//! (it dumps its counters after each call). Building the filter and making
//! the keys happen outside it, so they are not counted.

use std::fmt::Write as _;
use std::hint::black_box;

use clap::ValueEnum;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::mix64;
use filterlab_peers::{Mode, Subject, Workload};
use serde::{Deserialize, Serialize};

use crate::config::DEFAULT_SEED;
use crate::error::Error;
use crate::experiments::accuracy::derive_seed;
use crate::experiments::speed::Operation;
use crate::registry::{self, Build, Entry};

/// The target FPP every filter is sized for (the speed experiment's).
pub const BENCH_FPP: f64 = 0.01;

/// Most lookups (and removals) measured per operation.
const MAX_LOOKUPS: u64 = 16_384;

/// A size the operations are measured at.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Size {
    /// 10^5 items: every filter's array fits in the simulated last level
    /// (the largest, a 4-bit counting filter's, is 480 KB of its 1 MiB).
    InCache,
    /// 2·10^6 items: every filter's array exceeds the simulated last level
    /// twice over (the smallest, xorf's, is 2.25 MB; a Bloom filter's 2.4 MB).
    ExceedsLlc,
    /// 2000 items, for tests.
    #[value(hide = true)]
    Tiny,
}

impl Size {
    /// The sizes of a full run.
    pub const MEASURED: [Self; 2] = [Self::InCache, Self::ExceedsLlc];

    /// Items inserted.
    pub fn items(self) -> u64 {
        match self {
            Self::InCache => 100_000,
            Self::ExceedsLlc => 2_000_000,
            Self::Tiny => 2_000,
        }
    }

    /// Lookups of each kind, and removals, measured.
    pub fn lookups(self) -> u64 {
        self.items().min(MAX_LOOKUPS)
    }

    /// The name in tables and on the command line.
    pub fn label(self) -> &'static str {
        match self {
            Self::InCache => "in-cache",
            Self::ExceedsLlc => "exceeds-llc",
            Self::Tiny => "tiny",
        }
    }
}

/// The operation's name in tables and files (speed.csv's `op` values).
pub fn op_label(op: Operation) -> &'static str {
    match op {
        Operation::Insert => "insert",
        Operation::InsertConcurrent => "insert_concurrent",
        Operation::Build => "build",
        Operation::LookupPositive => "lookup_positive",
        Operation::LookupNegative => "lookup_negative",
        Operation::Remove => "remove",
    }
}

/// The mode's name in tables and files.
pub fn mode_label(mode: Mode) -> &'static str {
    match mode {
        Mode::OneKey => "one_key",
        Mode::Batched => "batched",
    }
}

/// The keys of one size, as the speed experiment makes them: every key
/// inserted, inserted keys drawn pseudo-randomly to look up, distinct
/// never-inserted keys, and the first inserted keys to remove.
pub struct CaseKeys {
    /// What every filter is built for.
    pub workload: Workload,
    /// Every key inserted.
    pub inserted: Vec<u64>,
    /// Inserted keys to look up.
    pub positives: Vec<u64>,
    /// Never-inserted keys to look up.
    pub negatives: Vec<u64>,
}

impl CaseKeys {
    /// The keys of `size`.
    pub fn new(size: Size) -> Self {
        let items = size.items();
        let seed = derive_seed(DEFAULT_SEED, &[items, 0x5bee_d000]);
        let inserted: Vec<u64> = (0..items).map(|i| insert_key(seed, i)).collect();
        let positives = (0..size.lookups())
            .map(|i| inserted[(mix64(seed ^ i) % items) as usize])
            .collect();
        let negatives = (0..size.lookups()).map(|i| query_key(seed, i)).collect();
        Self {
            workload: Workload {
                items,
                fpp: BENCH_FPP,
                seed,
            },
            inserted,
            positives,
            negatives,
        }
    }

    /// The keys removed: the first `lookups` inserted.
    pub fn removals(&self) -> &[u64] {
        &self.inserted[..self.positives.len()]
    }
}

/// The only function callgrind counts: everything `work` does, once.
/// Never inlined, so that it exists under its name in the binary.
#[inline(never)]
pub fn callgrind_measured(work: &mut dyn FnMut() -> u64) -> u64 {
    black_box(work())
}

/// One measured call, as the case reports it to the parent process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    /// The operation.
    pub op: Operation,
    /// One key at a time or batched.
    pub mode: Mode,
    /// Operations in the call.
    pub ops: u64,
    /// What the call answered: keys new, found or removed.
    pub answer: u64,
}

/// The manifest a case prints: the CPU features the filters' runtime
/// detection saw, then one line per measured call, in call order.
pub fn manifest(features: &str, measured: &[Measured]) -> String {
    let mut out = format!("features\t{features}\n");
    for call in measured {
        let _ = writeln!(
            out,
            "measured\t{}\t{}\t{}\t{}",
            op_label(call.op),
            mode_label(call.mode),
            call.ops,
            call.answer
        );
    }
    out
}

/// Reads a [`manifest`] back.
///
/// # Errors
///
/// When a line is not one `manifest` writes.
pub fn parse_manifest(text: &str) -> Result<(String, Vec<Measured>), Error> {
    let bad = |line: &str| Error::failed(format!("unexpected line from a bench case: `{line}`"));
    let mut features = None;
    let mut measured = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["features", list] => features = Some((*list).to_owned()),
            ["measured", op, mode, ops, answer] => {
                let op = Operation::ALL
                    .into_iter()
                    .find(|o| op_label(*o) == *op)
                    .ok_or_else(|| bad(line))?;
                let mode = Mode::ALL
                    .into_iter()
                    .find(|m| mode_label(*m) == *mode)
                    .ok_or_else(|| bad(line))?;
                measured.push(Measured {
                    op,
                    mode,
                    ops: ops.parse().map_err(|_| bad(line))?,
                    answer: answer.parse().map_err(|_| bad(line))?,
                });
            }
            _ => return Err(bad(line)),
        }
    }
    let features = features.ok_or_else(|| Error::failed("a bench case printed no features"))?;
    Ok((features, measured))
}

/// The x86 features the filters' runtime kernel choice depends on, as this
/// process sees them (under Valgrind: no AVX-512, whatever the host has).
pub fn kernel_features() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let mut found = Vec::new();
        if std::arch::is_x86_feature_detected!("avx2") {
            found.push("avx2");
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            found.push("avx512f");
        }
        if std::arch::is_x86_feature_detected!("avx512bw") {
            found.push("avx512bw");
        }
        if found.is_empty() {
            "none (scalar kernels)".to_owned()
        } else {
            found.join(",")
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        format!("{} (scalar kernels)", std::env::consts::ARCH)
    }
}

/// Runs every operation of `filter` at `size` once each, through
/// [`callgrind_measured`]; returns the manifest to print. With `inject`
/// (debug builds only), the filter is `BlockedBloomFilter` with extra
/// mixing rounds on every key hash: the regression the tests inject.
///
/// # Errors
///
/// An unknown filter, or one that cannot be built.
pub fn run_case(filter: &str, size: Size, inject: bool) -> Result<String, Error> {
    let entry = registry::select(registry::registry(), &[filter.to_owned()])?
        .pop()
        .ok_or_else(|| Error::usage(format!("unknown filter `{filter}`")))?;
    let keys = CaseKeys::new(size);
    let build = if inject {
        injected_build(&entry)?
    } else {
        entry.build
    };
    let features = kernel_features();
    let measured = match build {
        Build::Empty(build) => {
            let mut subject = build(&keys.workload)?;
            let mut measured = vec![fill(subject.as_mut(), &keys, Mode::OneKey)];
            let modes: &[Mode] = if subject.has_batch_api() {
                &Mode::ALL
            } else {
                &[Mode::OneKey]
            };
            for &mode in modes {
                measured.extend(lookups(subject.as_ref(), &keys, mode));
            }
            let removals = keys.removals();
            if subject.remove_keys(&[]).is_some() {
                let answer = callgrind_measured(&mut || {
                    subject.remove_keys(black_box(removals)).unwrap_or(0)
                });
                measured.push(Measured {
                    op: Operation::Remove,
                    mode: Mode::OneKey,
                    ops: removals.len() as u64,
                    answer,
                });
            }
            if subject.has_batch_api() {
                drop(subject);
                let mut fresh = build(&keys.workload)?;
                measured.push(fill(fresh.as_mut(), &keys, Mode::Batched));
            }
            measured
        }
        Build::FromKeys(build) => {
            let mut built: Option<Result<Box<dyn Subject>, Error>> = None;
            callgrind_measured(&mut || {
                built = Some(build(&keys.workload, black_box(&keys.inserted)));
                0
            });
            let subject = built.ok_or_else(|| Error::failed("the build did not run"))??;
            let mut measured = vec![Measured {
                op: Operation::Build,
                mode: Mode::OneKey,
                ops: keys.inserted.len() as u64,
                answer: 0,
            }];
            measured.extend(lookups(subject.as_ref(), &keys, Mode::OneKey));
            measured
        }
    };
    Ok(manifest(&features, &measured))
}

/// Fills the empty `subject` with every key in `mode`, measured.
fn fill(subject: &mut dyn Subject, keys: &CaseKeys, mode: Mode) -> Measured {
    let mut refused = Vec::new();
    let answer = callgrind_measured(&mut || {
        subject.insert_keys(black_box(&keys.inserted), mode, &mut refused)
    });
    Measured {
        op: Operation::Insert,
        mode,
        ops: keys.inserted.len() as u64,
        answer,
    }
}

/// Positive, then negative lookups in `mode`, each measured.
fn lookups(subject: &dyn Subject, keys: &CaseKeys, mode: Mode) -> [Measured; 2] {
    [
        (Operation::LookupPositive, &keys.positives),
        (Operation::LookupNegative, &keys.negatives),
    ]
    .map(|(op, looked_up)| Measured {
        op,
        mode,
        ops: looked_up.len() as u64,
        answer: callgrind_measured(&mut || subject.count_contained(black_box(looked_up), mode)),
    })
}

/// The build of the injected regression (see [`run_case`]).
#[cfg(debug_assertions)]
fn injected_build(entry: &Entry) -> Result<Build, Error> {
    if entry.name != inject::FILTER {
        return Err(Error::usage(format!(
            "--inject-regression applies to {} only",
            inject::FILTER
        )));
    }
    Ok(Build::Empty(inject::build))
}

/// Release builds carry no injected regression.
#[cfg(not(debug_assertions))]
fn injected_build(_: &Entry) -> Result<Build, Error> {
    Err(Error::usage(
        "--inject-regression exists in debug builds only (the tests' binary)",
    ))
}

/// The regression the tests inject: extra mixing rounds on every key hash
/// of a `BlockedBloomFilter`, compiled into debug builds only, so the
/// release binary that CI gates never carries it. The tests' build is not
/// optimised: the harness's own dispatch costs thousands of instructions
/// per key there, so the injection must add well over the gate's 1%.
#[cfg(debug_assertions)]
mod inject {
    use filterlab_bloom::BlockedBloomFilter;
    use filterlab_core::{BATCH, Error, Filter, Membership, mix64};
    use filterlab_peers::{FilterlabSubject, Subject, Workload};

    /// The filter the regression is injected into.
    pub(super) const FILTER: &str = "BlockedBloomFilter";

    /// Mixing rounds added to every key hash.
    const ROUNDS: usize = 4;

    /// A filter whose every key hash goes through [`ROUNDS`] more [`mix64`].
    struct ExtraRound<F>(F);

    /// `hash` after the extra rounds.
    fn remix(mut hash: u64) -> u64 {
        for _ in 0..ROUNDS {
            hash = mix64(hash);
        }
        hash
    }

    impl<F: Filter> Membership for ExtraRound<F> {
        crate::forward_keyless_methods!(0);
        fn contains_hash(&self, hash: u64) -> bool {
            self.0.contains_hash(remix(hash))
        }
        fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
            let mut mixed = [0; BATCH];
            for (chunk, found) in hashes.chunks(BATCH).zip(found.chunks_mut(BATCH)) {
                let mixed = &mut mixed[..chunk.len()];
                for (out, &hash) in mixed.iter_mut().zip(chunk) {
                    *out = remix(hash);
                }
                self.0.contains_hashes(mixed, found);
            }
        }
    }

    impl<F: Filter> Filter for ExtraRound<F> {
        fn clear(&mut self) {
            self.0.clear();
        }
        fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
            self.0.insert_hash(remix(hash))
        }
        fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
            let mut mixed = [0; BATCH];
            let mut new = 0;
            for chunk in hashes.chunks(BATCH) {
                let mixed = &mut mixed[..chunk.len()];
                for (out, &hash) in mixed.iter_mut().zip(chunk) {
                    *out = remix(hash);
                }
                new += self.0.insert_hashes(mixed)?;
            }
            Ok(new)
        }
    }

    /// `BlockedBloomFilter` as the registry builds it, with the extra round.
    pub(super) fn build(workload: &Workload) -> Result<Box<dyn Subject>, crate::Error> {
        let filter = BlockedBloomFilter::with_fpp(workload.fpp)
            .expected_items(workload.items)
            .seed(workload.seed)
            .build()?;
        Ok(FilterlabSubject::new(ExtraRound(filter)).boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_read_back() {
        let calls = [
            Measured {
                op: Operation::Insert,
                mode: Mode::Batched,
                ops: 10,
                answer: 9,
            },
            Measured {
                op: Operation::LookupNegative,
                mode: Mode::OneKey,
                ops: 5,
                answer: 0,
            },
        ];
        let text = manifest("avx2", &calls);
        let (features, back) = parse_manifest(&text).unwrap();
        assert_eq!(features, "avx2");
        assert_eq!(back, calls);
        assert!(parse_manifest("measured\tfly\tone_key\t1\t1\nfeatures\tx\n").is_err());
        assert!(parse_manifest("").is_err());
    }

    #[test]
    fn cases_measure_every_operation_once() {
        let text = run_case("CountingBloomFilter", Size::Tiny, false).unwrap();
        let (_, calls) = parse_manifest(&text).unwrap();
        let ops: Vec<_> = calls
            .iter()
            .map(|c| (op_label(c.op), mode_label(c.mode)))
            .collect();
        assert_eq!(
            ops,
            [
                ("insert", "one_key"),
                ("lookup_positive", "one_key"),
                ("lookup_negative", "one_key"),
                ("lookup_positive", "batched"),
                ("lookup_negative", "batched"),
                ("remove", "one_key"),
                ("insert", "batched"),
            ]
        );
        // Keys new as far as the filter tells (a false positive is not),
        // no false negatives, every removal found.
        assert!((1950..=2000).contains(&calls[0].answer), "{calls:?}");
        assert_eq!(calls[1].answer, calls[1].ops);
        assert_eq!(calls[3].answer, calls[3].ops);
        assert_eq!(calls[5].answer, calls[5].ops);
        let text = run_case("xorf-BinaryFuse8", Size::Tiny, false).unwrap();
        let (_, calls) = parse_manifest(&text).unwrap();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].op, Operation::Build);
        assert!(run_case("nope", Size::Tiny, false).is_err());
        // The injected regression exists in debug builds only, for one
        // filter, and loses no key.
        assert!(run_case("BloomFilter", Size::Tiny, true).is_err());
        let injected = run_case("BlockedBloomFilter", Size::Tiny, true);
        assert_eq!(injected.is_ok(), cfg!(debug_assertions));
        if let Ok(text) = injected {
            let (_, calls) = parse_manifest(&text).unwrap();
            assert_eq!(calls[1].answer, calls[1].ops);
        }
    }
}
