//! Writes the committed seed corpus: `fuzz/corpus/<target>/seed-*`, and the
//! regression inputs of `fuzz/regressions/`.
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus
//! ```
//!
//! Deterministic: running it again rewrites the same files (it first removes
//! the `seed-*` files it owns, so a renamed seed does not linger). Decoder
//! seeds are a control byte (chunk sizes, interruptions, a small payload
//! limit: see `frame::Control`) followed by a valid file: the crates' golden
//! files and filters of each kind built here with different sizes, k,
//! fingerprint widths, layouts, counter widths, seeds, fills, growth and
//! counters. `decode_module_value` seeds are the redis module's values as
//! its RDB save writes them (see `module_value`). `restore_chunks` seeds are an edit byte (see `chunks::Edit`)
//! followed by the chunks of a scalable filter's dump. Builder seeds are
//! typical settings encoded as the `arbitrary` bytes the builder targets
//! decode.

use std::fs;
use std::ops::Range;
use std::path::Path;

use filterlab_bloom::{BlockedBloomBuilder, BlockedBloomFilter, BloomBuilder, BloomFilter};
use filterlab_core::format::{FrameWriter, Header};
use filterlab_core::{Filter, FilterKind, KeyHasher, Merge, Persist};
use filterlab_counting_bloom::{
    Blocked, CountingBloom, CountingBloomBuilder, CountingBloomFilter, Layout, Standard,
};
use filterlab_cuckoo::{CuckooBuilder, CuckooFilter};
use filterlab_fuzz::build::{Common, FuzzBytes, Size};
use filterlab_fuzz::build_bloom::BuildInput;
use filterlab_fuzz::chunks::Edit;
use filterlab_fuzz::frame::reseal;
use filterlab_fuzz::{build_bloom, build_counting, build_cuckoo, build_scalable, static_sets};
use filterlab_scalable::{Layer, ScalableBloomBuilder, ScalableBloomFilter};
use filterlab_static::{BinaryFuseFilter, Fingerprint, RibbonFilter};

/// A seed's name and bytes.
type Seed = (String, Vec<u8>);

fn main() {
    let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = fuzz_dir.join("..");
    let corpus = fuzz_dir.join("corpus");
    let golden = |krate: &str, file: &str| {
        fs::read(root.join(krate).join("tests/golden").join(file)).unwrap()
    };

    let decoders: [(&str, Vec<Seed>); 7] = [
        ("decode_bloom", bloom_files(&golden)),
        ("decode_blocked", blocked_files(&golden)),
        ("decode_counting", counting_files(&golden)),
        ("decode_cuckoo", cuckoo_files(&golden)),
        ("decode_scalable", scalable_files(&golden)),
        ("decode_ribbon", ribbon_files(&golden)),
        ("decode_binary_fuse", binary_fuse_files(&golden)),
    ];
    let mut frames: Vec<Seed> = decoders
        .iter()
        .flat_map(|(_, seeds)| seeds.clone())
        .collect();
    frames.extend(other_frames());
    for (target, seeds) in &decoders {
        write_seeds(&corpus.join(target), seeds);
    }
    write_seeds(&corpus.join("decode_frame"), &frames);
    write_seeds(&corpus.join("restore_chunks"), &chunk_dumps(&golden));
    write_seeds(&corpus.join("decode_module_value"), &module_values());
    let builders = encoded(build_bloom::seeds());
    write_seeds(&corpus.join("build_bloom"), &builders);
    write_seeds(&corpus.join("build_blocked"), &builders);
    write_seeds(
        &corpus.join("build_counting"),
        &encoded(build_counting::seeds()),
    );
    write_seeds(
        &corpus.join("build_cuckoo"),
        &encoded(build_cuckoo::seeds()),
    );
    write_seeds(
        &corpus.join("build_scalable"),
        &encoded(build_scalable::seeds()),
    );
    let static_builds = static_sets::seed_bytes();
    write_seeds(&corpus.join("build_ribbon"), &static_builds);
    write_seeds(&corpus.join("build_binary_fuse"), &static_builds);
    write_regressions(&fuzz_dir.join("regressions"), &golden);
}

/// A decoder seed: the control byte, then the file.
fn seed(control: u8, file: &[u8]) -> Vec<u8> {
    let mut bytes = vec![control];
    bytes.extend_from_slice(file);
    bytes
}

/// Named seeds from (name, control byte, file), each name after `prefix`.
fn seeds(prefix: &str, files: Vec<(&str, u8, Vec<u8>)>) -> Vec<Seed> {
    files
        .into_iter()
        .map(|(name, control, file)| (format!("{prefix}{name}"), seed(control, &file)))
        .collect()
}

/// `filter` after inserting `keys` (each insert must be accepted).
fn filled<F: Filter>(mut filter: F, keys: Range<u64>) -> F {
    let hasher = *filter.hasher();
    for key in keys {
        filter.insert_hash(hasher.hash(&key)).unwrap();
    }
    filter
}

/// The regression inputs the targets found (see
/// `fuzz/regressions/README.md`); CI replays them on every run. Written
/// by name, so inputs saved there by hand are kept.
fn write_regressions(dir: &Path, golden: Golden<'_>) {
    let with_counter = |file: &str, items: u64| {
        let mut bytes = golden("bloom", file);
        bytes[24..32].copy_from_slice(&items.to_le_bytes());
        reseal(&mut bytes);
        seed(0x07, &bytes)
    };
    let bits = |m: u64, n: Option<u64>, set: fn(&mut BuildInput)| {
        let mut input = BuildInput::fpp(0.0, 0);
        input.size = Size::Explicit(m);
        input.common.expected_items = n;
        set(&mut input);
        input.to_fuzz_bytes()
    };
    let fpp = |p: f64, n: u64, pow2: bool| {
        let mut input = BuildInput::fpp(p, n);
        input.family.power_of_two = pow2;
        input.to_fuzz_bytes()
    };
    let u64max = |input: &mut BuildInput| {
        input.family.hashes = Some(3);
        input.common.max_memory = Some(u64::MAX);
    };
    let mut files: Vec<(&str, &str, Vec<u8>)> = vec![
        (
            "decode_bloom",
            "counter-u64max-then-insert-overflows",
            with_counter("bloom-v1.bin", u64::MAX),
        ),
        (
            "decode_blocked",
            "counter-u64max-then-insert-overflows",
            with_counter("blocked-bloom-v1.bin", u64::MAX),
        ),
        (
            "decode_blocked",
            "counter-2e11-classic-fpp-never-returns",
            with_counter("blocked-bloom-v1.bin", 244_813_135_875),
        ),
        (
            "build_blocked",
            "bits-2e20-items-u64max-never-returns",
            bits(1 << 20, Some(u64::MAX), |_| {}),
        ),
        (
            "build_blocked",
            "bits-20578-items-5e10-never-returns",
            bits(20_578, Some(51_570_084_159), |_| {}),
        ),
        (
            "build_blocked",
            "bits-91-items-56125-cap-7485-over-1s",
            bits(91, Some(56_125), |input| {
                input.common.max_memory = Some(7_485)
            }),
        ),
        (
            "build_blocked",
            "bits-u64max-164-not-whole-blocks",
            bits(u64::MAX - 164, None, u64max),
        ),
        (
            "build_bloom",
            "fpp-1e-100-items-1e6-below-classic",
            fpp(1e-100, 1_000_000, false),
        ),
        (
            "build_bloom",
            "bits-2e20-items-1000-below-classic",
            bits(1 << 20, Some(1_000), |_| {}),
        ),
        (
            "build_bloom",
            "bits-34603008-items-7-claims-zero",
            bits(34_603_008, Some(7), |_| {}),
        ),
        (
            "build_bloom",
            "bits-34603008-items-5-subnormal-classic",
            bits(34_603_008, Some(5), |_| {}),
        ),
        (
            "build_bloom",
            "pow2-fpp-3e-312-items-2359296-below-classic",
            fpp(3.259_385_534_925e-312, 2_359_296, true),
        ),
    ];
    files.extend(new_filter_regressions());
    for (target, name, bytes) in files {
        let target_dir = dir.join(target);
        fs::create_dir_all(&target_dir).unwrap();
        fs::write(target_dir.join(name), bytes).unwrap();
    }
}

/// Reads a crate's golden file: `golden(crate, file)`.
type Golden<'a> = &'a dyn Fn(&str, &str) -> Vec<u8>;

/// The regressions of the counting, cuckoo and scalable targets.
fn new_filter_regressions() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    // A standard counting filter fuller than its count of distinct keys can
    // show: 64 counters, k = 1, 63 keys.
    let mut full = CountingBloomFilter::with_counters(64)
        .hashes(1)
        .build()
        .unwrap();
    full.extend(0..63u64);
    let mut huge = build_counting::CountingInput::fpp(0.0, 0);
    huge.size = Size::Explicit(1 << 62);
    huge.common = Common {
        expected_items: None,
        max_memory: Some(u64::MAX),
        seed: 0,
    };
    huge.family.hashes = Some(1);
    // A non-scaling target whose compound bound 1 - (1 - P) rounds above P.
    let mut nonscaling = build_scalable::ScalableInput::fpp(0.0, 100);
    nonscaling.size = Size::Explicit(144_115_188_062_027_775);
    nonscaling.family.caps.0 = true;
    vec![
        (
            "build_scalable",
            "nonscaling-p7.8e-3-fpp-bound-1ulp-above-target",
            nonscaling.to_fuzz_bytes(),
        ),
        (
            "decode_counting",
            "to-bloom-64counters-k1-63keys-invalid-header",
            seed(0x07, &full.to_bytes()),
        ),
        (
            "build_counting",
            "counters-2e62-cap-u64max-bits-per-item-overflows",
            huge.to_fuzz_bytes(),
        ),
    ]
}

fn bloom_files(golden: Golden<'_>) -> Vec<Seed> {
    let build = |builder: BloomBuilder| builder.build().unwrap();
    let bits = |m: u64, k: u32, seed: u64, keys: Range<u64>| {
        filled(build(BloomFilter::with_bits(m).hashes(k).seed(seed)), keys).to_bytes()
    };
    let fpp = |p: f64, n: u64, set: fn(BloomBuilder) -> BloomBuilder| {
        filled(build(set(BloomFilter::with_fpp(p).expected_items(n))), 0..n).to_bytes()
    };
    let mut merged = filled(build(BloomFilter::with_bits(4096).hashes(5).seed(9)), 0..60);
    let other = filled(
        build(BloomFilter::with_bits(4096).hashes(5).seed(9)),
        40..120,
    );
    merged.union(&other).unwrap();
    let atomic = BloomFilter::with_bits(777)
        .hashes(4)
        .seed(3)
        .build_atomic()
        .unwrap();
    (0..30u64).for_each(|key| {
        atomic.insert(&key);
    });
    let files = vec![
        ("golden-v1", 0x07, golden("bloom", "bloom-v1.bin")),
        ("empty-1bit-k1", 0x00, bits(1, 1, 0, 0..0)),
        ("64bits-k3-5keys", 0x47, bits(64, 3, 42, 0..5)),
        ("1000bits-k7-50keys", 0x3f, bits(1000, 7, u64::MAX, 0..50)),
        ("fpp1e-2-n100-full", 0x10, fpp(0.01, 100, |b| b.seed(7))),
        (
            "fpp1e-1-n20-pow2",
            0x83,
            fpp(0.1, 20, |b| b.power_of_two(true)),
        ),
        ("130bits-k64-saturated", 0x21, bits(130, 64, 0, 0..40)),
        ("4096bits-k5-union-estimate", 0x05, merged.to_bytes()),
        ("777bits-k4-atomic", 0x0c, atomic.to_bytes()),
    ];
    seeds("bloom-", files)
}

fn blocked_files(golden: Golden<'_>) -> Vec<Seed> {
    let build = |builder: BlockedBloomBuilder| builder.build().unwrap();
    let bits = |m: u64, k: u32, seed: u64, keys: Range<u64>| {
        filled(
            build(BlockedBloomFilter::with_bits(m).hashes(k).seed(seed)),
            keys,
        )
        .to_bytes()
    };
    let fpp = |p: f64, n: u64, seed: u64, keys: Range<u64>| {
        let builder = BlockedBloomFilter::with_fpp(p).expected_items(n).seed(seed);
        filled(build(builder), keys).to_bytes()
    };
    let mut merged = filled(build(BlockedBloomFilter::with_bits(4096).hashes(6)), 0..50);
    let other = filled(build(BlockedBloomFilter::with_bits(4096).hashes(6)), 25..90);
    merged.union(&other).unwrap();
    let files = vec![
        ("golden-v1", 0x07, golden("bloom", "blocked-bloom-v1.bin")),
        ("empty-1block-k1", 0x00, bits(512, 1, 0, 0..0)),
        ("4blocks-k8-30keys", 0x47, bits(2048, 8, 42, 0..30)),
        ("fpp1e-2-n100-full", 0x3f, fpp(0.01, 100, 0, 0..100)),
        ("fpp1e-3-n40", 0x10, fpp(0.001, 40, u64::MAX, 0..25)),
        ("2blocks-k64-60keys", 0x21, bits(1024, 64, 0, 0..60)),
        ("8blocks-k6-union-estimate", 0x05, merged.to_bytes()),
    ];
    seeds("blocked-", files)
}

/// A counting filter of layout `L` and width `W` for FPP `p` at `n` items,
/// seed `seed`, holding `keys`.
fn counting<L: Layout, const W: u32>(
    p: f64,
    n: u64,
    seed: u64,
    keys: Range<u64>,
) -> CountingBloom<L, W> {
    let builder = CountingBloomBuilder::<L, W>::with_fpp(p)
        .expected_items(n)
        .seed(seed);
    filled(builder.build().unwrap(), keys)
}

/// The bytes of a counting filter of layout `L` and width `W` for FPP `p`
/// at `n` items, holding `keys` (and seeded with their count).
fn typed<L: Layout, const W: u32>(p: f64, n: u64, keys: Range<u64>) -> Vec<u8> {
    counting::<L, W>(p, n, keys.end, keys).to_bytes()
}

fn counting_files(golden: Golden<'_>) -> Vec<Seed> {
    let explicit = |m: u64, k: u32| {
        CountingBloomFilter::with_counters(m)
            .hashes(k)
            .build()
            .unwrap()
    };
    // A key inserted past 15: saturated counters, with which the reader
    // cannot check the count.
    let mut hot = filled(explicit(256, 3), 0..20);
    (0..40).for_each(|_| {
        hot.insert("hot");
    });
    let hot16 = CountingBloomBuilder::<Blocked, 16>::with_counters(32).hashes(2);
    let mut hot16 = filled(hot16.build().unwrap(), 0..3);
    (0..70_000).for_each(|_| {
        hot16.insert("hot");
    });
    let mut removed = counting::<Standard, 4>(0.01, 100, 1, 0..100);
    removed.remove_many(0..60u64);
    let mut union = counting::<Blocked, 4>(0.01, 100, 2, 0..50);
    union
        .union(&counting::<Blocked, 4>(0.01, 100, 2, 30..90))
        .unwrap();
    let mut intersection = counting::<Standard, 8>(0.01, 100, 3, 0..50);
    intersection
        .intersect(&counting::<Standard, 8>(0.01, 100, 3, 30..90))
        .unwrap();
    let golden = |file: &str| golden("counting-bloom", file);
    let files = vec![
        ("golden-v1", 0x07, golden("counting-bloom-v1.bin")),
        (
            "blocked-golden-v1",
            0x47,
            golden("blocked-counting-bloom-v1.bin"),
        ),
        ("std4-n50", 0x00, typed::<Standard, 4>(0.01, 50, 0..50)),
        ("std8-n40", 0x3f, typed::<Standard, 8>(0.001, 40, 0..30)),
        ("std16-n20", 0x10, typed::<Standard, 16>(0.1, 20, 0..20)),
        ("blocked4-n50", 0x83, typed::<Blocked, 4>(0.01, 50, 0..50)),
        ("blocked8-n30", 0x21, typed::<Blocked, 8>(0.01, 30, 0..0)),
        ("blocked16-n10", 0x05, typed::<Blocked, 16>(0.01, 10, 0..10)),
        ("1counter-k1-empty", 0x0c, explicit(1, 1).to_bytes()),
        (
            "130counters-k64-5keys",
            0x41,
            filled(explicit(130, 64), 0..5).to_bytes(),
        ),
        ("256counters-k3-saturated", 0x1f, hot.to_bytes()),
        ("blocked16-saturated", 0x02, hot16.to_bytes()),
        ("standard4-60-of-100-removed", 0x33, removed.to_bytes()),
        ("blocked4-union", 0x44, union.to_bytes()),
        ("standard8-intersection", 0x55, intersection.to_bytes()),
    ];
    seeds("counting-", files)
}

/// The bytes of a cuckoo filter from `builder` holding as many of `keys`
/// as it takes (inserts stop at the first refusal).
fn cuckoo(builder: CuckooBuilder, keys: Range<u64>) -> Vec<u8> {
    let mut filter = builder.build().unwrap();
    let _ = keys.map(|key| filter.insert(&key)).find(Result::is_err);
    filter.to_bytes()
}

fn cuckoo_files(golden: Golden<'_>) -> Vec<Seed> {
    let buckets = |b: u64, f: u32| CuckooFilter::with_buckets(b).fingerprint_bits(f);
    let fpp = |p: f64, n: u64| CuckooFilter::with_fpp(p).expected_items(n);
    let grown = |b: u64, f: u32, e: u32, t: u32| buckets(b, f).expansion(e).max_tables(t);
    let capped = grown(4, 10, 2, 32).max_memory(120);
    let mut copies = CuckooFilter::from_bytes(&cuckoo(buckets(16, 12), 0..10)).unwrap();
    while copies.insert("copy").is_ok() {}
    let mut overflow = CuckooFilter::from_bytes(&cuckoo(grown(16, 12, 2, 4), 0..10)).unwrap();
    for _ in 0..12 {
        overflow.insert("copy").unwrap();
    }
    let mut removed = CuckooFilter::from_bytes(&cuckoo(fpp(0.01, 60).seed(4), 0..60)).unwrap();
    (0..30u64).for_each(|key| assert!(removed.remove(&key).unwrap()));
    let files = vec![
        ("golden-v1", 0x07, golden("cuckoo", "cuckoo-v1.bin")),
        ("golden-v2", 0x17, golden("cuckoo", "cuckoo-v2.bin")),
        ("fpp1e-3-n50", 0x00, cuckoo(fpp(0.001, 50).seed(1), 0..50)),
        (
            "fpp1e-1-n20-f4",
            0x47,
            cuckoo(fpp(0.1, 20).fingerprint_bits(4), 0..20),
        ),
        ("1bucket-f5-empty", 0x3f, cuckoo(buckets(1, 5), 0..0)),
        (
            "3buckets-f7-full",
            0x10,
            cuckoo(buckets(3, 7).max_kicks(3), 0..100),
        ),
        ("33buckets-f8-full", 0x83, cuckoo(buckets(33, 8), 0..1000)),
        (
            "8buckets-f31-10keys",
            0x21,
            cuckoo(buckets(8, 31).seed(u64::MAX), 0..10),
        ),
        ("5buckets-f32-20keys", 0x05, cuckoo(buckets(5, 32), 0..20)),
        ("16buckets-f12-copies", 0x0c, copies.to_bytes()),
        ("fpp1e-2-n60-half-removed", 0x41, removed.to_bytes()),
        ("grow2-4tables", 0x1f, cuckoo(grown(4, 12, 2, 6), 0..200)),
        ("grow1-3tables", 0x02, cuckoo(grown(5, 9, 1, 3), 0..55)),
        ("grow3-at-cap", 0x33, cuckoo(grown(2, 16, 3, 2), 0..100)),
        ("grow2-memory-cap", 0x44, cuckoo(capped, 0..100)),
        ("grow2-first-full", 0x55, cuckoo(grown(4, 8, 2, 4), 0..16)),
        (
            "grow2-f4-tighten0.5-mixed-widths",
            0x29,
            cuckoo(grown(4, 4, 2, 8).tightening(0.5), 0..400),
        ),
        ("grow2-16buckets-f12-overflow", 0x3a, overflow.to_bytes()),
        (
            "fpp1e-2-n100-grow2-mixed-widths",
            0x4b,
            cuckoo(fpp(0.01, 100).expansion(2).seed(9), 0..3000),
        ),
    ];
    seeds("cuckoo-", files)
}

/// The bytes of the Ribbon filter at `fpp` of `keys` (repeated keys among
/// them).
fn ribbon(fpp: f64, seed: u64, keys: impl IntoIterator<Item = u64>) -> Vec<u8> {
    RibbonFilter::with_fpp(fpp)
        .seed(seed)
        .build(keys)
        .unwrap()
        .to_bytes()
}

fn ribbon_files(golden: Golden<'_>) -> Vec<Seed> {
    let files = vec![
        ("golden", 0x07, golden("static", "ribbon-v1.bin")),
        (
            "golden-partitions",
            0x17,
            golden("static", "ribbon-partitions-v1.bin"),
        ),
        ("empty-p0.5", 0x00, ribbon(0.5, 1, 0..0)),
        ("n3-p2^-32", 0x3f, ribbon(2f64.powi(-32), 2, 0..3)),
        (
            "n300-p0.1-repeats",
            0x10,
            ribbon(0.1, 3, (0..600).map(|i| i % 300)),
        ),
        ("n9000-p1e-3-8-partitions", 0x83, ribbon(0.001, 4, 0..9000)),
        ("n5000-p0.3", 0x21, ribbon(0.3, 5, 0..5000)),
    ];
    seeds("ribbon-", files)
}

/// The bytes of a binary fuse filter of `keys`.
fn fuse<F: Fingerprint, const ARITY: usize>(seed: u64, keys: std::ops::Range<u64>) -> Vec<u8> {
    BinaryFuseFilter::<F, ARITY>::builder()
        .seed(seed)
        .build(keys)
        .unwrap()
        .to_bytes()
}

fn binary_fuse_files(golden: Golden<'_>) -> Vec<Seed> {
    let files = vec![
        ("golden-8", 0x07, golden("static", "binary-fuse-8-v1.bin")),
        (
            "golden-16x4",
            0x17,
            golden("static", "binary-fuse-16x4-v1.bin"),
        ),
        ("golden-32", 0x27, golden("static", "binary-fuse-32-v1.bin")),
        ("8-empty", 0x00, fuse::<u8, 3>(1, 0..0)),
        ("8x4-n2", 0x3f, fuse::<u8, 4>(2, 0..2)),
        ("16-n1000", 0x10, fuse::<u16, 3>(3, 0..1000)),
        ("32x4-n200", 0x83, fuse::<u32, 4>(4, 0..200)),
        ("8-n20000", 0x21, fuse::<u8, 3>(5, 0..20_000)),
    ];
    seeds("binary-fuse-", files)
}

/// The bytes of a scalable filter with layers `L` from `builder`, holding
/// as many of `keys` as it takes.
fn scalable<L: Layer>(builder: ScalableBloomBuilder<L>, keys: Range<u64>) -> Vec<u8> {
    let mut filter = builder.build().unwrap();
    let _ = keys.map(|key| filter.insert(&key)).find(Result::is_err);
    filter.to_bytes()
}

/// Scalable filters of several layer counts and settings, with names.
fn scalable_filters() -> Vec<(&'static str, Vec<u8>)> {
    let blocked = |p: f64, n: u64| ScalableBloomFilter::with_fpp(p).initial_capacity(n);
    let standard = |p: f64, n: u64| blocked(p, n).layers::<BloomFilter>();
    vec![
        ("blocked-n10-empty", scalable(blocked(0.01, 10), 0..0)),
        (
            "blocked-n10-5keys",
            scalable(blocked(0.01, 10).seed(3), 0..5),
        ),
        (
            "blocked-n10-1layer-full",
            scalable(blocked(0.01, 10), 0..10),
        ),
        ("blocked-n10-3layers", scalable(blocked(0.01, 10), 0..36)),
        (
            "blocked-n10-4layers-full",
            scalable(blocked(0.01, 10), 0..150),
        ),
        ("standard-n8-3layers", scalable(standard(0.05, 8), 0..40)),
        ("standard-n5-5layers", scalable(standard(0.001, 5), 0..200)),
        (
            "standard-n4-growth3-r05",
            scalable(standard(0.1, 4).growth(3).tightening(0.5), 0..60),
        ),
        (
            "blocked-n20-nonscaling-full",
            scalable(blocked(0.01, 20).non_scaling(true), 0..40),
        ),
        (
            "blocked-n6-2layers-at-cap",
            scalable(blocked(0.02, 6).max_layers(2), 0..40),
        ),
        (
            "standard-n10-memory-cap",
            scalable(standard(0.01, 10).max_memory(100), 0..60),
        ),
        (
            "blocked-n10-share-3layers",
            scalable(blocked(0.01, 10).first_layer_share(0.65), 0..36),
        ),
    ]
}

fn scalable_files(golden: Golden<'_>) -> Vec<Seed> {
    let controls = [
        0x00, 0x47, 0x3f, 0x10, 0x83, 0x21, 0x05, 0x0c, 0x41, 0x1f, 0x02, 0x4b,
    ];
    let mut files = vec![("golden-v1", 0x07, golden("scalable", "scalable-v1.bin"))];
    let filters = scalable_filters().into_iter().zip(controls);
    files.extend(filters.map(|((name, file), control)| (name, control, file)));
    seeds("scalable-", files)
}

/// The chunks of `file`'s dump (a scalable filter's bytes) with data of
/// `data_bytes` a chunk, behind an edit byte.
fn chunk_seed(edit: Edit, file: &[u8], data_bytes: usize) -> Vec<u8> {
    let mut bytes = vec![edit.to_byte()];
    dump_any(
        file,
        data_bytes + filterlab_scalable::CHUNK_OVERHEAD,
        &mut bytes,
    );
    bytes
}

/// Appends the dump of the scalable filter `file` (either layer type) in
/// chunks of `chunk_bytes`.
fn dump_any(file: &[u8], chunk_bytes: usize, out: &mut Vec<u8>) {
    let store = |_: u64, chunk: &[u8]| {
        out.extend_from_slice(chunk);
        Ok(())
    };
    if let Ok(filter) = ScalableBloomFilter::<filterlab_bloom::BlockedBloomFilter>::from_bytes(file)
    {
        filter.dump_chunks(chunk_bytes, store).unwrap();
    } else {
        let filter = ScalableBloomFilter::<filterlab_bloom::BloomFilter>::from_bytes(file).unwrap();
        filter.dump_chunks(chunk_bytes, store).unwrap();
    }
}

fn chunk_dumps(golden: Golden<'_>) -> Vec<Seed> {
    let edit = |cursors: u8, op: u8, select: usize| Edit {
        cursors,
        op,
        select,
    };
    let whole = edit(0, 0, 0);
    let mut files = vec![(
        "golden-v1".to_owned(),
        golden("scalable", "scalable-v1.bin"),
    )];
    files.extend(
        scalable_filters()
            .into_iter()
            .map(|(name, file)| (name.to_owned(), file)),
    );
    // Every file in chunks of 8, 100 and 4096 data bytes; a few edits on one.
    let mut out = Vec::new();
    for (name, file) in &files {
        for data in [8, 100, 4096] {
            out.push((format!("{name}-data{data}"), chunk_seed(whole, file, data)));
        }
    }
    let edits = [
        ("positions", edit(1, 0, 0)),
        ("swapped", edit(0, 1, 1)),
        ("dropped", edit(0, 2, 2)),
        ("repeated", edit(3, 3, 0)),
        ("last-moved", edit(0, 4, 1)),
        ("source-fails", edit(0, 5, 3)),
        ("cut", edit(0, 6, 4)),
        ("cursor-off", edit(2, 7, 5)),
    ];
    let (name, file) = &files[4];
    for (what, edit) in edits {
        out.push((format!("{name}-data64-{what}"), chunk_seed(edit, file, 64)));
    }
    out
}

/// The redis module's values as their RDB save writes them: filters of
/// both families and layouts, grown and not, with deletions, and a restore
/// under way; each as it is and with its filter resealed.
fn module_values() -> Vec<Seed> {
    use filterlab_fuzz::module_value::bytes_of;
    use filterlab_redis_module::bloom::{Added, Bloom};
    use filterlab_redis_module::cuckoo::Cuckoo;
    use filterlab_redis_module::grammar::{BloomParams, CuckooParams};
    use filterlab_redis_module::options::{Layout, Options};
    use filterlab_redis_module::payload::Recorded;
    use filterlab_redis_module::stored::{Stored, dump_all};

    let options = Options::default();
    let encode = |control: u8, stored: &dyn Fn(&mut Recorded)| {
        let mut saved = Recorded::default();
        stored(&mut saved);
        let mut bytes = vec![control];
        bytes.extend(bytes_of(&saved.items));
        bytes
    };
    let mut seeds = Vec::new();
    for (name, layout, capacity, items, non_scaling) in [
        ("bf-blocked-grown", Layout::Blocked, 100, 700, false),
        ("bf-standard-grown", Layout::Standard, 50, 400, false),
        ("bf-nonscaling", Layout::Blocked, 300, 200, true),
    ] {
        let params = BloomParams {
            capacity,
            non_scaling,
            ..BloomParams::defaults(&options)
        };
        let mut bloom = Bloom::create(&params, layout).unwrap();
        let hashes: Vec<u64> = (0..items as u32)
            .map(|i| bloom.hash(&i.to_le_bytes()))
            .collect();
        let mut answers = [Added::Present; 256];
        for batch in hashes.chunks(256) {
            bloom.insert_batch(batch, &mut answers);
        }
        let stored = Stored::Ready(bloom.clone());
        for control in [0, 2] {
            seeds.push((
                format!("{name}-{control}"),
                encode(control, &|out| stored.save(out).unwrap()),
            ));
        }
        // A restore under way: the dump's first chunk.
        let mut first = None;
        dump_all(&bloom, |cursor, chunk| {
            if cursor == 1 {
                first = Some(chunk.to_vec());
            }
            Ok(())
        })
        .unwrap();
        let first = first.unwrap();
        seeds.push((
            format!("{name}-restoring"),
            encode(0, &|out| {
                use filterlab_redis_module::payload::Sink;
                out.unsigned(2);
                out.unsigned(1);
                out.buffer(&first);
            }),
        ));
    }
    for (name, capacity, expansion, items) in
        [("cf-grown", 100, 2, 600u32), ("cf-fixed", 500, 0, 300)]
    {
        let params = CuckooParams {
            expansion,
            ..CuckooParams::defaults(&options, capacity)
        };
        let mut cuckoo = Cuckoo::create(&params, &options).unwrap();
        for i in 0..items {
            let _ = cuckoo.insert_hash(cuckoo.hash(&i.to_le_bytes()));
        }
        for i in 0..items / 10 {
            cuckoo.remove_hash(cuckoo.hash(&i.to_le_bytes()));
        }
        let stored = Stored::Ready(cuckoo);
        for control in [1, 3] {
            seeds.push((
                format!("{name}-{control}"),
                encode(control, &|out| stored.save(out).unwrap()),
            ));
        }
    }
    seeds
}

/// Frames of kinds no decoder reads (and of the new kinds with parameters
/// no filter writes), written by core's `FrameWriter`.
fn other_frames() -> Vec<Seed> {
    let frame = |kind: FilterKind, params: Vec<u64>, payload: &[u8]| {
        let header = Header {
            kind,
            hasher: KeyHasher::new(5),
            items: 3,
            params,
            payload_len: payload.len() as u64,
        };
        let mut writer = FrameWriter::new(Vec::new(), &header).unwrap();
        writer.write_bytes(payload).unwrap();
        writer.finish().unwrap()
    };
    let files = vec![
        (
            "counting-3params",
            0x09,
            frame(FilterKind::CountingBloom, vec![64, 4, 100], &[0xab; 24]),
        ),
        (
            "cuckoo-no-params-empty",
            0x01,
            frame(FilterKind::Cuckoo, vec![], &[]),
        ),
        (
            "scalable-32params",
            0x3f,
            frame(FilterKind::ScalableBloom, (0..32).collect(), &[1; 17]),
        ),
        (
            "dedup-checkpoint-2params",
            0x12,
            frame(FilterKind::DedupCheckpoint, vec![1, 2], &[7; 40]),
        ),
    ];
    seeds("", files)
}

/// Builder seeds as the bytes `arbitrary` decodes into them.
fn encoded<T: FuzzBytes>(seeds: Vec<(String, T)>) -> Vec<Seed> {
    let encode = |(name, input): (String, T)| (name, input.to_fuzz_bytes());
    seeds.into_iter().map(encode).collect()
}

fn write_seeds(dir: &Path, seeds: &[Seed]) {
    fs::create_dir_all(dir).unwrap();
    for path in filterlab_fuzz::seed_paths(dir) {
        fs::remove_file(path).unwrap();
    }
    for (name, bytes) in seeds {
        fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
    }
    println!("{}: {} seeds", dir.display(), seeds.len());
}
