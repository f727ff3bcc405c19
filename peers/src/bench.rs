//! What the filter crates' criterion benches share (feature `bench`): the
//! settings, the keys, and one generic benchmark per operation over the
//! [`Subject`] trait, so a filterlab filter and its peers land in the same
//! groups, measured the same way, one key at a time or batched.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::{mix64, reduce};

use crate::subject::{Mode, Subject};

/// The seed of the keys every bench inserts and queries.
pub const KEY_SEED: u64 = 7;

/// The positional command-line arguments of the examples that measure,
/// each optional: `ExampleArgs::from_env().next_or(10_000_000, "ITEMS")`.
pub struct ExampleArgs(std::iter::Skip<std::env::Args>);

impl ExampleArgs {
    /// The arguments after the program's name.
    pub fn from_env() -> Self {
        Self(std::env::args().skip(1))
    }

    /// The next argument as given, if any.
    pub fn next_raw(&mut self) -> Option<String> {
        self.0.next()
    }

    /// The next argument parsed, or `default` when there are no more.
    ///
    /// # Panics
    ///
    /// When the argument does not parse (the message names it by `what`).
    pub fn next_or<T>(&mut self, default: T, what: &str) -> T
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Debug,
    {
        self.next_raw()
            .map_or(default, |arg| arg.parse().expect(what))
    }
}

/// Runs `bench` with the settings every filter bench uses (short: the
/// machine is shared and the groups are many), honouring criterion's
/// command line (`cargo bench ... -- FILTER`): what `criterion_group!` and
/// `criterion_main!` expand to.
pub fn run(bench: impl FnOnce(&mut Criterion)) {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}

/// The keys of one size: every key inserted, and the keys looked up.
pub struct Keys {
    /// The n keys inserted, in order.
    pub inserted: Vec<u64>,
    /// Inserted keys to look up: a spread of at most `lookups` of them.
    pub present: Vec<u64>,
    /// As many never-inserted keys.
    pub absent: Vec<u64>,
}

impl Keys {
    /// `items` keys to insert, and `lookups` (at most `items`) of them and
    /// of never-inserted keys to look up.
    pub fn new(items: u64, lookups: u64) -> Self {
        let inserted: Vec<u64> = (0..items).map(|i| insert_key(KEY_SEED, i)).collect();
        let lookups = lookups.min(items).max(1);
        let present = (0..lookups)
            .map(|i| inserted[(mix64(KEY_SEED ^ i) % items.max(1)) as usize])
            .collect();
        let absent = (0..lookups).map(|i| query_key(KEY_SEED, i)).collect();
        Self {
            inserted,
            present,
            absent,
        }
    }
}

impl Keys {
    /// Distinct inserted keys to remove: the first `present.len()` inserted.
    pub fn present_distinct(&self) -> Vec<u64> {
        self.inserted[..self.present.len()].to_vec()
    }
}

/// A subject timed over rounds, for the examples that measure without
/// criterion: each cell (a kind of timed pass) keeps the minimum ns per key
/// over the rounds, so a noisy machine slows every subject alike rather
/// than whichever ran during a burst. Let subjects [`take_turns`].
pub struct BestOfRounds {
    /// The subject's name in the printed tables.
    pub name: String,
    /// The filter under test.
    pub subject: Box<dyn Subject>,
    best: Vec<f64>,
    /// Every round's ns per key, per cell, in round order.
    rounds: Vec<Vec<f64>>,
}

impl BestOfRounds {
    /// `subject`, named, with `cells` kinds of timed pass, none timed yet.
    pub fn new(name: impl Into<String>, subject: Box<dyn Subject>, cells: usize) -> Self {
        Self {
            name: name.into(),
            subject,
            best: vec![f64::INFINITY; cells],
            rounds: vec![Vec::new(); cells],
        }
    }

    /// Times `work` (a pass over `keys` keys) as cell `cell`, keeping the
    /// minimum ns per key; returns what `work` returned.
    pub fn time(
        &mut self,
        cell: usize,
        keys: usize,
        work: impl FnOnce(&mut dyn Subject) -> u64,
    ) -> u64 {
        let start = Instant::now();
        let answer = black_box(work(self.subject.as_mut()));
        let per_key = start.elapsed().as_nanos() as f64 / keys.max(1) as f64;
        self.best[cell] = self.best[cell].min(per_key);
        self.rounds[cell].push(per_key);
        answer
    }

    /// Times looking up `keys` in `mode` as cell `cell`; returns how many
    /// were found. An untimed pass runs first: subjects together exceed the
    /// caches, so the pass right after another subject ran would time
    /// refills of this one.
    pub fn time_lookups(&mut self, cell: usize, keys: &[u64], mode: Mode) -> u64 {
        black_box(self.subject.count_contained(keys, mode));
        self.time(cell, keys.len(), |subject| {
            subject.count_contained(black_box(keys), mode)
        })
    }

    /// The minimum ns per key of cell `cell` (infinite until timed).
    pub fn best(&self, cell: usize) -> f64 {
        self.best[cell]
    }

    /// The ns per key of cell `cell` in each round, in round order.
    pub fn rounds(&self, cell: usize) -> &[f64] {
        &self.rounds[cell]
    }
}

/// Runs `round` on every subject, `rounds` times, the order rotating by one
/// each round, so no subject always runs right after the same other one.
pub fn take_turns(
    subjects: &mut [BestOfRounds],
    rounds: usize,
    mut round: impl FnMut(&mut BestOfRounds),
) {
    let count = subjects.len();
    for r in 0..rounds {
        for turn in 0..count {
            round(&mut subjects[(r + turn) % count]);
        }
    }
}

/// A benchmarked filter: its name in the groups, how it runs, and its
/// size label (`n=1e7,p=1e-2`).
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The filter's name; batched runs are labelled `name (batched)`.
    pub name: &'a str,
    /// One key at a time, or through the filter's batch API.
    pub mode: Mode,
    /// The benchmark id's parameter.
    pub label: &'a str,
}

impl Target<'_> {
    fn id(&self) -> BenchmarkId {
        let name = match self.mode {
            Mode::OneKey => self.name.to_owned(),
            Mode::Batched => format!("{} (batched)", self.name),
        };
        BenchmarkId::new(name, self.label)
    }
}

/// Prints what `subject` holding `items` keys costs and delivers: bits per
/// item and the FPP measured on `absent`, and whether it holds `present`.
pub fn describe(target: &Target<'_>, subject: &dyn Subject, items: u64, keys: &Keys) {
    let false_positives = subject.count_contained(&keys.absent, Mode::OneKey);
    let found = subject.count_contained(&keys.present, Mode::OneKey);
    eprintln!(
        "{} {}: {:.2} bits/item, FPP {:.4}% on {} never-inserted keys{}",
        target.name,
        target.label,
        subject.memory_usage() as f64 * 8.0 / items as f64,
        100.0 * false_positives as f64 / keys.absent.len() as f64,
        keys.absent.len(),
        if found == keys.present.len() as u64 {
            String::new()
        } else {
            format!(
                "; {} of {} inserted keys MISSING",
                keys.present.len() as u64 - found,
                keys.present.len()
            )
        }
    );
}

/// Times filling an emptied `subject` with every key of `inserted` (group
/// `insert`, per key), then leaves it holding them; returns the positions
/// it refused.
pub fn insert(
    c: &mut Criterion,
    target: &Target<'_>,
    subject: &mut dyn Subject,
    inserted: &[u64],
) -> Vec<usize> {
    let mut refused = Vec::new();
    time_passes(c, "insert", target, inserted.len(), || {
        subject.clear();
        refused.clear();
        let start = Instant::now();
        // Every insert's answer is used: each filter does BF.ADD's work.
        let new = subject.insert_keys(black_box(inserted), target.mode, &mut refused);
        let elapsed = start.elapsed();
        black_box(new);
        elapsed
    });
    subject.clear();
    refused.clear();
    subject.insert_keys(inserted, target.mode, &mut refused);
    refused
}

/// Times lookups of `keys.present` (group `lookup_positive`) and
/// `keys.absent` (group `lookup_negative`) in `subject`.
pub fn lookups(c: &mut Criterion, target: &Target<'_>, subject: &dyn Subject, keys: &Keys) {
    for (group_name, looked_up) in [
        ("lookup_positive", &keys.present),
        ("lookup_negative", &keys.absent),
    ] {
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(looked_up.len() as u64));
        group.bench_function(target.id(), |b| {
            b.iter(|| subject.count_contained(black_box(looked_up), target.mode));
        });
        group.finish();
    }
}

/// Times removing `removed` (inserted keys) from `subject`, one key at a
/// time (group `remove`); after each timed pass they are inserted again,
/// untimed, so every pass removes from a filter holding all its keys.
pub fn remove(c: &mut Criterion, target: &Target<'_>, subject: &mut dyn Subject, removed: &[u64]) {
    if subject.remove_keys(&[]).is_none() {
        return;
    }
    let mut refused = Vec::new();
    time_passes(c, "remove", target, removed.len(), || {
        let start = Instant::now();
        black_box(subject.remove_keys(black_box(removed)));
        let elapsed = start.elapsed();
        subject.insert_keys(removed, Mode::OneKey, &mut refused);
        elapsed
    });
}

/// Times whole passes over `keys` keys in group `group_name`, one pass per
/// iteration (flat sampling: a pass over 1e7 keys takes seconds). `pass`
/// runs one, with whatever untimed work resets the filter, and returns the
/// time of its timed part.
fn time_passes(
    c: &mut Criterion,
    group_name: &str,
    target: &Target<'_>,
    keys: usize,
    mut pass: impl FnMut() -> Duration,
) {
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Elements(keys as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function(target.id(), |b| {
        b.iter_custom(|iterations| (0..iterations).map(|_| pass()).sum::<Duration>());
    });
    group.finish();
}

/// Everything for one filter holding `keys.inserted`: for each way it can
/// be driven (one key at a time; batched when it has a batch API), insert,
/// its bits per item and FPP, positive and negative lookups, and (one key at
/// a time, when it deletes) remove. Returns the keys it refused.
pub fn all_operations(
    c: &mut Criterion,
    name: &str,
    label: &str,
    subject: &mut dyn Subject,
    keys: &Keys,
) -> usize {
    let items = keys.inserted.len() as u64;
    let mut refused = 0;
    for mode in Mode::ALL {
        if mode == Mode::Batched && !subject.has_batch_api() {
            continue;
        }
        let target = Target { name, mode, label };
        refused = insert(c, &target, subject, &keys.inserted).len();
        if refused > 0 {
            eprintln!("{name} {label}: {refused} keys refused");
        }
        describe(&target, subject, items, keys);
        lookups(c, &target, subject, keys);
        if mode == Mode::OneKey {
            remove(c, &target, subject, &keys.present_distinct());
        }
    }
    refused
}

/// [`all_operations`] for each named filter that could be built (a
/// `None` is reported and skipped), all holding `keys.inserted`; returns
/// the keys each refused.
pub fn each_subject<'a>(
    c: &mut Criterion,
    label: &str,
    keys: &Keys,
    subjects: impl IntoIterator<Item = (&'a str, Option<Box<dyn Subject>>)>,
) -> Vec<(&'a str, usize)> {
    let mut refused = Vec::new();
    for (name, subject) in subjects {
        let Some(mut subject) = subject else {
            eprintln!("{name} {label}: cannot be built");
            continue;
        };
        refused.push((name, all_operations(c, name, label, subject.as_mut(), keys)));
    }
    refused
}

/// The cost that bounds a lookup of `reads` random cache lines in a
/// structure of `bytes`: `lookups` × `reads` independent random reads of an
/// array of that size (group `random_read`, per lookup), as
/// `filterlab-bloom`'s `batched` bench measures for one line in 256 MiB.
pub fn random_reads(c: &mut Criterion, bytes: usize, reads: u64, lookups: u64) {
    // Every page written, so none is the shared zero page.
    let words = (bytes / 8).max(1);
    let array: Vec<u64> = (0..words as u64).map(mix64).collect();
    let indexes: Vec<usize> = (0..lookups * reads)
        .map(|i| reduce(mix64(i ^ 0x5eed), words as u64) as usize)
        .collect();
    let mut group = c.benchmark_group("random_read");
    group.throughput(Throughput::Elements(lookups));
    let id = format!("{reads}_lines_per_lookup/{}MiB", bytes >> 20);
    group.bench_function(id, |b| {
        b.iter(|| {
            indexes
                .iter()
                .map(|&i| array[black_box(i)])
                .fold(0u64, u64::wrapping_add)
        });
    });
    group.finish();
}
