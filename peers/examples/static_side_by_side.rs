//! filterlab-static's filters beside xorf's (BinaryFuse8, BinaryFuse16,
//! BinaryFuse32, Xor8) on the same `u64` keys, in one process: bits per
//! key, FPP with its 95% Wilson interval and its exact theory, build ns
//! per key and peak build memory, one-key and batched lookup ns.
//!
//! ```text
//! cargo run --release -p filterlab-peers --example static_side_by_side -- N [ROUNDS]
//! cargo run --release -p filterlab-peers --example static_side_by_side -- count NAME N PHASE
//! ```
//!
//! Bits per key count the fingerprint arrays (the payload) only, for
//! filterlab and xorf alike, not the structs around them (a few dozen
//! bytes). Times are CPU time per operation (the process's user and system time,
//! so a machine shared with other work slows them less than a wall clock
//! would), the minimum over ROUNDS rounds in which the filters alternate:
//! indicative, to be compared within a run. Peak build memory is the
//! highest heap use during the build beyond what was allocated before it
//! (the caller's keys are not counted), read from a counting allocator.
//!
//! `FILTERLAB_ONLY=a,b` measures only the filters whose names contain `a` or `b`.
//!
//! `count` builds one filter (NAME as the table prints it) and runs only
//! PHASE (`lookup`: one key at a time, `batched`: `contains_many`, over
//! 10^6 never-inserted keys; `view-lookup` and `view-batched` the same
//! through a view of the filter's bytes, for filterlab's filters) inside
//! `callgrind_measured*`, for
//! `valgrind --tool=callgrind --toggle-collect='*callgrind_measured*'`:
//! instructions per lookup are its Ir / 10^6. With `FILTERLAB_TIME=1` it
//! also prints the CPU time of those lookups.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::theory::wilson_interval;
use filterlab_static::{
    BinaryFuseFilter, Checksum, Fingerprint, Membership, RibbonFilter, Viewable,
};
use xorf::Filter as _;

/// The heap in use, and its highest point since the last reset.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting the bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let grown = new_size - layout.size();
            let now = IN_USE.fetch_add(grown, Ordering::Relaxed) + grown;
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// CPU seconds of this process so far (10 ms ticks).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU ns per operation of `work` (which does `ops` operations), repeated
/// until at least half a second has passed.
fn per_op(ops: usize, mut work: impl FnMut() -> usize) -> f64 {
    let start = cpu_seconds();
    let mut rounds = 0;
    while rounds == 0 || cpu_seconds() - start < 0.5 {
        black_box(work());
        rounds += 1;
    }
    (cpu_seconds() - start) * 1e9 / (ops * rounds) as f64
}

/// A filter built from a key set, as this program measures it.
trait Subject: Sized {
    fn build(keys: &[u64], fpp: f64) -> Self;
    fn contains(&self, key: u64) -> bool;
    fn contains_many(&self, keys: &[u64]) -> Vec<bool>;
    fn bytes(&self) -> usize;
    fn theory(&self) -> f64;
}

macro_rules! xorf_subject {
    ($type:ty, $bits:expr) => {
        impl Subject for $type {
            fn build(keys: &[u64], _fpp: f64) -> Self {
                <$type>::try_from(keys).expect("xorf builds")
            }
            fn contains(&self, key: u64) -> bool {
                xorf::Filter::contains(self, &key)
            }
            fn contains_many(&self, keys: &[u64]) -> Vec<bool> {
                keys.iter()
                    .map(|key| xorf::Filter::contains(self, key))
                    .collect()
            }
            fn bytes(&self) -> usize {
                self.len() * $bits / 8
            }
            fn theory(&self) -> f64 {
                (-f64::from($bits)).exp2()
            }
        }
    };
}
xorf_subject!(xorf::BinaryFuse8, 8);
xorf_subject!(xorf::BinaryFuse16, 16);
xorf_subject!(xorf::BinaryFuse32, 32);
xorf_subject!(xorf::Xor8, 8);

impl<F: Fingerprint, const ARITY: usize> Subject for BinaryFuseFilter<F, ARITY> {
    fn build(keys: &[u64], _fpp: f64) -> Self {
        Self::builder().build(keys).expect("builds")
    }
    fn contains(&self, key: u64) -> bool {
        Membership::contains(self, &key)
    }
    fn contains_many(&self, keys: &[u64]) -> Vec<bool> {
        Membership::contains_many(self, keys)
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
    fn theory(&self) -> f64 {
        self.expected_fpp()
    }
}

impl Subject for RibbonFilter {
    fn build(keys: &[u64], fpp: f64) -> Self {
        Self::with_fpp(fpp).build(keys).expect("builds")
    }
    fn contains(&self, key: u64) -> bool {
        Membership::contains(self, &key)
    }
    fn contains_many(&self, keys: &[u64]) -> Vec<bool> {
        Membership::contains_many(self, keys)
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
    fn theory(&self) -> f64 {
        self.expected_fpp()
    }
}

/// One row of the table.
struct Row {
    name: String,
    bits: f64,
    fpp: (f64, f64, f64),
    theory: f64,
    build: f64,
    peak: f64,
    lookup: f64,
    batched: f64,
}

/// Measures `S` at `fpp` (for the Ribbon filter) on `keys` and `queries`.
fn measure<S: Subject>(name: &str, fpp: f64, keys: &[u64], queries: &[u64], row: &mut Option<Row>) {
    let baseline = IN_USE.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let start = cpu_seconds();
    let filter = S::build(keys, fpp);
    let build_once = (cpu_seconds() - start) * 1e9 / keys.len() as f64;
    let peak = (PEAK.load(Ordering::Relaxed) - baseline) as f64;
    let build = if keys.len() <= 10_000_000 {
        per_op(keys.len(), || S::build(keys, fpp).bytes())
    } else {
        build_once
    };
    assert!(
        keys.iter().all(|key| filter.contains(*key)),
        "{name}: a false negative"
    );
    let lookup = per_op(queries.len(), || {
        queries.iter().filter(|&&key| filter.contains(key)).count()
    });
    let batched = per_op(queries.len(), || {
        filter
            .contains_many(queries)
            .iter()
            .filter(|&&hit| hit)
            .count()
    });
    let positives = queries.iter().filter(|&&key| filter.contains(key)).count() as u64;
    let (low, high) = wilson_interval(positives, queries.len() as u64, 0.95);
    let candidate = Row {
        name: name.to_string(),
        bits: 8.0 * filter.bytes() as f64 / keys.len() as f64,
        fpp: (positives as f64 / queries.len() as f64, low, high),
        theory: filter.theory(),
        build,
        peak,
        lookup,
        batched,
    };
    // Across rounds: the fastest of each time.
    match row {
        Some(best) => {
            best.build = best.build.min(candidate.build);
            best.lookup = best.lookup.min(candidate.lookup);
            best.batched = best.batched.min(candidate.batched);
        }
        None => *row = Some(candidate),
    }
}

/// The filters measured: (name, FPP for a Ribbon filter, measuring function).
type Measure = fn(&str, f64, &[u64], &[u64], &mut Option<Row>);

fn subjects() -> Vec<(String, f64, Measure)> {
    let mut list: Vec<(String, f64, Measure)> = vec![
        ("xorf BinaryFuse8".into(), 0.0, measure::<xorf::BinaryFuse8>),
        (
            "BinaryFuseFilter<u8>".into(),
            0.0,
            measure::<BinaryFuseFilter<u8>>,
        ),
        (
            "BinaryFuseFilter<u8, 4>".into(),
            0.0,
            measure::<BinaryFuseFilter<u8, 4>>,
        ),
        (
            "xorf BinaryFuse16".into(),
            0.0,
            measure::<xorf::BinaryFuse16>,
        ),
        (
            "BinaryFuseFilter<u16>".into(),
            0.0,
            measure::<BinaryFuseFilter<u16>>,
        ),
        (
            "xorf BinaryFuse32".into(),
            0.0,
            measure::<xorf::BinaryFuse32>,
        ),
        (
            "BinaryFuseFilter<u32>".into(),
            0.0,
            measure::<BinaryFuseFilter<u32>>,
        ),
        ("xorf Xor8".into(), 0.0, measure::<xorf::Xor8>),
    ];
    for fpp in [0.1, 0.01, 1.0 / 256.0, 0.001, 1e-5] {
        list.push((
            format!("RibbonFilter p={fpp:.3e}"),
            fpp,
            measure::<RibbonFilter>,
        ));
    }
    list
}

#[inline(never)]
fn callgrind_measured<S: Subject>(filter: &S, queries: &[u64], batched: bool) -> usize {
    if batched {
        filter
            .contains_many(queries)
            .iter()
            .filter(|&&hit| hit)
            .count()
    } else {
        queries.iter().filter(|&&key| filter.contains(key)).count()
    }
}

fn count<S: Subject>(keys: &[u64], queries: &[u64], fpp: f64, batched: bool) -> usize {
    let filter = S::build(keys, fpp);
    if std::env::var_os("FILTERLAB_TIME").is_some() {
        let ns = per_op(queries.len(), || {
            callgrind_measured(&filter, black_box(queries), batched)
        });
        println!("{ns:.1} ns a lookup (CPU time)");
    }
    callgrind_measured(&filter, black_box(queries), batched)
}

/// The lookups of `count`, through a view of the filter's bytes.
#[inline(never)]
fn callgrind_measured_view<V: Membership>(view: &V, queries: &[u64], batched: bool) -> usize {
    if batched {
        view.contains_many(queries)
            .iter()
            .filter(|&&hit| hit)
            .count()
    } else {
        queries.iter().filter(|&key| view.contains(key)).count()
    }
}

fn count_view<S: Subject + Viewable>(
    keys: &[u64],
    queries: &[u64],
    fpp: f64,
    batched: bool,
) -> usize {
    let bytes = S::build(keys, fpp).to_bytes();
    let view = S::view(&bytes, Checksum::Verify).expect("its own bytes");
    callgrind_measured_view(&view, black_box(queries), batched)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |text: &str| text.parse::<f64>().expect("a number") as u64;
    if args.first().map(String::as_str) == Some("count") {
        let (name, items, phase) = (&args[1], number(&args[2]), &args[3]);
        let keys: Vec<u64> = (0..items).map(|i| insert_key(1, i)).collect();
        let queries: Vec<u64> = (0..1_000_000).map(|i| query_key(1, i)).collect();
        let batched = phase.ends_with("batched");
        let through_view = phase.starts_with("view");
        let found = match subjects().iter().find(|(n, ..)| n == name) {
            Some((n, fpp, _)) if through_view => match n.as_str() {
                "BinaryFuseFilter<u8>" => {
                    count_view::<BinaryFuseFilter<u8>>(&keys, &queries, 0.0, batched)
                }
                "BinaryFuseFilter<u16>" => {
                    count_view::<BinaryFuseFilter<u16>>(&keys, &queries, 0.0, batched)
                }
                _ => count_view::<RibbonFilter>(&keys, &queries, *fpp, batched),
            },
            Some((n, fpp, _)) => match n.as_str() {
                "xorf BinaryFuse8" => count::<xorf::BinaryFuse8>(&keys, &queries, 0.0, batched),
                "BinaryFuseFilter<u8>" => {
                    count::<BinaryFuseFilter<u8>>(&keys, &queries, 0.0, batched)
                }
                "BinaryFuseFilter<u8, 4>" => {
                    count::<BinaryFuseFilter<u8, 4>>(&keys, &queries, 0.0, batched)
                }
                "xorf BinaryFuse16" => count::<xorf::BinaryFuse16>(&keys, &queries, 0.0, batched),
                "BinaryFuseFilter<u16>" => {
                    count::<BinaryFuseFilter<u16>>(&keys, &queries, 0.0, batched)
                }
                "xorf BinaryFuse32" => count::<xorf::BinaryFuse32>(&keys, &queries, 0.0, batched),
                "BinaryFuseFilter<u32>" => {
                    count::<BinaryFuseFilter<u32>>(&keys, &queries, 0.0, batched)
                }
                "xorf Xor8" => count::<xorf::Xor8>(&keys, &queries, 0.0, batched),
                _ => count::<RibbonFilter>(&keys, &queries, *fpp, batched),
            },
            None => panic!("no filter named {name}"),
        };
        println!("{name} {phase}: {found} positives");
        return;
    }
    let items = args.first().map_or(1_000_000, |a| number(a));
    let rounds = args.get(1).map_or(3, |a| number(a));
    let keys: Vec<u64> = (0..items).map(|i| insert_key(1, i)).collect();
    let queries: Vec<u64> = (0..1_000_000).map(|i| query_key(1, i)).collect();
    // FILTERLAB_ONLY=text measures only the filters whose names contain it.
    let only = std::env::var("FILTERLAB_ONLY").unwrap_or_default();
    let subjects: Vec<_> = subjects()
        .into_iter()
        .filter(|(name, ..)| only.split(',').any(|part| name.contains(part)))
        .collect();
    let mut rows: Vec<Option<Row>> = subjects.iter().map(|_| None).collect();
    for _ in 0..rounds {
        for ((name, fpp, measure), row) in subjects.iter().zip(&mut rows) {
            measure(name, *fpp, &keys, &queries, row);
        }
    }
    println!(
        "n = {items}, {} never-inserted queries, {rounds} rounds (CPU time, indicative)",
        queries.len()
    );
    println!(
        "| filter | bits/key | FPP [95% interval] | theory | build ns/key | peak build MiB | lookup ns | batched ns |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for row in rows.into_iter().flatten() {
        let (fpp, low, high) = row.fpp;
        println!(
            "| {} | {:.3} | {:.3e} [{:.3e}, {:.3e}] | {:.3e} | {:.1} | {:.1} | {:.1} | {:.1} |",
            row.name,
            row.bits,
            fpp,
            low,
            high,
            row.theory,
            row.build,
            row.peak / f64::from(1 << 20),
            row.lookup,
            row.batched,
        );
    }
}
