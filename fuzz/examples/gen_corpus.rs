//! Writes the committed seed corpus: `fuzz/corpus/<target>/seed-*`.
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus
//! ```
//!
//! Deterministic: running it again rewrites the same files (it first removes
//! the `seed-*` files it owns, so a renamed seed does not linger). Decoder
//! seeds are a control byte (chunk sizes, interruptions, a small payload
//! limit: see `frame::Control`) followed by a valid file: the golden files of
//! `bloom/tests/golden` and filters of each kind built here with different
//! sizes, k, seeds and counters. Builder seeds are typical settings encoded
//! as the `arbitrary` bytes the builder targets decode.

use std::fs;
use std::path::{Path, PathBuf};

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, Filter, KeyHasher, Merge, Persist};
use filterlab_core::FilterKind;
use filterlab_core::format::{FrameWriter, Header};
use filterlab_fuzz::build::{BuildInput, KernelChoice, Size};

fn main() {
    let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden = fuzz_dir.join("../bloom/tests/golden");
    let corpus = fuzz_dir.join("corpus");

    let bloom = bloom_files(&golden);
    let blocked = blocked_files(&golden);
    let mut frames: Vec<(String, Vec<u8>)> = bloom.iter().chain(&blocked).cloned().collect();
    frames.extend(other_frames());
    write_seeds(&corpus.join("decode_bloom"), &bloom);
    write_seeds(&corpus.join("decode_blocked"), &blocked);
    write_seeds(&corpus.join("decode_frame"), &frames);
    let builders: Vec<(String, Vec<u8>)> = builder_inputs()
        .into_iter()
        .map(|(name, input)| (name.to_owned(), input.to_fuzz_bytes()))
        .collect();
    write_seeds(&corpus.join("build_bloom"), &builders);
    write_seeds(&corpus.join("build_blocked"), &builders);
    write_regressions(&fuzz_dir.join("regressions"), &golden);
}

/// Minimal inputs for the defects the targets found (see
/// `fuzz/regressions/README.md`); CI replays them on every run. Written
/// by name, so inputs saved there by hand are kept.
fn write_regressions(dir: &Path, golden: &Path) {
    let with_counter = |file: &str, items: u64| {
        let mut bytes = fs::read(golden.join(file)).unwrap();
        bytes[24..32].copy_from_slice(&items.to_le_bytes());
        filterlab_fuzz::frame::reseal(&mut bytes);
        seed(0x07, &bytes)
    };
    let builder =
        |size: Size, items: Option<u64>, hashes: Option<u32>, cap: Option<u64>, pow2: bool| {
            BuildInput {
                size,
                expected_items: items,
                hashes,
                max_memory: cap,
                power_of_two: pow2,
                seed: 0,
                kernel: KernelChoice::Detect,
            }
            .to_fuzz_bytes()
        };
    let files: Vec<(&str, &str, Vec<u8>)> = vec![
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
            builder(Size::Bits(1 << 20), Some(u64::MAX), None, None, false),
        ),
        (
            "build_blocked",
            "bits-20578-items-5e10-never-returns",
            builder(Size::Bits(20_578), Some(51_570_084_159), None, None, false),
        ),
        (
            "build_blocked",
            "bits-91-items-56125-cap-7485-over-1s",
            builder(Size::Bits(91), Some(56_125), None, Some(7_485), false),
        ),
        (
            "build_blocked",
            "bits-u64max-164-not-whole-blocks",
            builder(
                Size::Bits(u64::MAX - 164),
                None,
                Some(3),
                Some(u64::MAX),
                false,
            ),
        ),
        (
            "build_bloom",
            "fpp-1e-100-items-1e6-below-classic",
            builder(Size::Fpp(1e-100), Some(1_000_000), None, None, false),
        ),
        (
            "build_bloom",
            "bits-2e20-items-1000-below-classic",
            builder(Size::Bits(1 << 20), Some(1_000), None, None, false),
        ),
        (
            "build_bloom",
            "bits-34603008-items-7-claims-zero",
            builder(Size::Bits(34_603_008), Some(7), None, None, false),
        ),
        (
            "build_bloom",
            "bits-34603008-items-5-subnormal-classic",
            builder(Size::Bits(34_603_008), Some(5), None, None, false),
        ),
        (
            "build_bloom",
            "pow2-fpp-3e-312-items-2359296-below-classic",
            builder(
                Size::Fpp(3.259_385_534_925e-312),
                Some(2_359_296),
                None,
                None,
                true,
            ),
        ),
    ];
    for (target, name, bytes) in files {
        let target_dir = dir.join(target);
        fs::create_dir_all(&target_dir).unwrap();
        fs::write(target_dir.join(name), bytes).unwrap();
    }
}

/// A decoder seed: the control byte, then the file.
fn seed(control: u8, file: &[u8]) -> Vec<u8> {
    let mut bytes = vec![control];
    bytes.extend_from_slice(file);
    bytes
}

fn filled<F: Filter>(mut filter: F, keys: std::ops::Range<u64>) -> F {
    let hasher = *filter.hasher();
    for key in keys {
        filter.insert_hash(hasher.hash(&key)).unwrap();
    }
    filter
}

fn bloom_files(golden: &Path) -> Vec<(String, Vec<u8>)> {
    let build = |builder: filterlab_bloom::BloomBuilder| builder.build().unwrap();
    let mut merged = filled(build(BloomFilter::with_bits(4096).hashes(5).seed(9)), 0..60);
    merged
        .union(&filled(
            build(BloomFilter::with_bits(4096).hashes(5).seed(9)),
            40..120,
        ))
        .unwrap();
    let atomic = BloomFilter::with_bits(777)
        .hashes(4)
        .seed(3)
        .build_atomic()
        .unwrap();
    for key in 0..30u64 {
        atomic.insert(&key);
    }
    let files = [
        (
            "golden-v1",
            0x07,
            fs::read(golden.join("bloom-v1.bin")).unwrap(),
        ),
        (
            "empty-1bit-k1",
            0x00,
            build(BloomFilter::with_bits(1).hashes(1)).to_bytes(),
        ),
        (
            "64bits-k3-5keys",
            0x47,
            filled(build(BloomFilter::with_bits(64).hashes(3).seed(42)), 0..5).to_bytes(),
        ),
        (
            "1000bits-k7-50keys",
            0x3f,
            filled(
                build(BloomFilter::with_bits(1000).hashes(7).seed(u64::MAX)),
                0..50,
            )
            .to_bytes(),
        ),
        (
            "fpp1e-2-n100-full",
            0x10,
            filled(
                build(BloomFilter::with_fpp(0.01).expected_items(100).seed(7)),
                0..100,
            )
            .to_bytes(),
        ),
        (
            "fpp1e-1-n20-pow2",
            0x83,
            filled(
                build(
                    BloomFilter::with_fpp(0.1)
                        .expected_items(20)
                        .power_of_two(true),
                ),
                0..20,
            )
            .to_bytes(),
        ),
        (
            "130bits-k64-saturated",
            0x21,
            filled(build(BloomFilter::with_bits(130).hashes(64)), 0..40).to_bytes(),
        ),
        ("4096bits-k5-union-estimate", 0x05, merged.to_bytes()),
        ("777bits-k4-atomic", 0x0c, atomic.to_bytes()),
    ];
    files
        .into_iter()
        .map(|(name, control, file)| (format!("bloom-{name}"), seed(control, &file)))
        .collect()
}

fn blocked_files(golden: &Path) -> Vec<(String, Vec<u8>)> {
    let build = |builder: filterlab_bloom::BlockedBloomBuilder| builder.build().unwrap();
    let mut merged = filled(build(BlockedBloomFilter::with_bits(4096).hashes(6)), 0..50);
    merged
        .union(&filled(
            build(BlockedBloomFilter::with_bits(4096).hashes(6)),
            25..90,
        ))
        .unwrap();
    let files = [
        (
            "golden-v1",
            0x07,
            fs::read(golden.join("blocked-bloom-v1.bin")).unwrap(),
        ),
        (
            "empty-1block-k1",
            0x00,
            build(BlockedBloomFilter::with_bits(512).hashes(1)).to_bytes(),
        ),
        (
            "4blocks-k8-30keys",
            0x47,
            filled(
                build(BlockedBloomFilter::with_bits(2048).hashes(8).seed(42)),
                0..30,
            )
            .to_bytes(),
        ),
        (
            "fpp1e-2-n100-full",
            0x3f,
            filled(
                build(BlockedBloomFilter::with_fpp(0.01).expected_items(100)),
                0..100,
            )
            .to_bytes(),
        ),
        (
            "fpp1e-3-n40",
            0x10,
            filled(
                build(
                    BlockedBloomFilter::with_fpp(0.001)
                        .expected_items(40)
                        .seed(u64::MAX),
                ),
                0..25,
            )
            .to_bytes(),
        ),
        (
            "2blocks-k64-60keys",
            0x21,
            filled(build(BlockedBloomFilter::with_bits(1024).hashes(64)), 0..60).to_bytes(),
        ),
        ("8blocks-k6-union-estimate", 0x05, merged.to_bytes()),
    ];
    files
        .into_iter()
        .map(|(name, control, file)| (format!("blocked-{name}"), seed(control, &file)))
        .collect()
}

/// Frames of kinds no decoder reads yet, written by core's `FrameWriter`.
fn other_frames() -> Vec<(String, Vec<u8>)> {
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
    vec![
        (
            "counting-3params".to_owned(),
            seed(
                0x09,
                &frame(FilterKind::CountingBloom, vec![64, 4, 100], &[0xab; 24]),
            ),
        ),
        (
            "cuckoo-no-params-empty".to_owned(),
            seed(0x01, &frame(FilterKind::Cuckoo, vec![], &[])),
        ),
        (
            "scalable-32params".to_owned(),
            seed(
                0x3f,
                &frame(FilterKind::ScalableBloom, (0..32).collect(), &[1; 17]),
            ),
        ),
    ]
}

fn builder_inputs() -> Vec<(&'static str, BuildInput)> {
    let base = BuildInput {
        size: Size::Fpp(0.01),
        expected_items: Some(1_000_000),
        hashes: None,
        max_memory: None,
        power_of_two: false,
        seed: 0,
        kernel: KernelChoice::Detect,
    };
    vec![
        ("fpp1e-2-n1e6", base.clone()),
        (
            "fpp1e-3-n1e4-seed",
            BuildInput {
                size: Size::Fpp(0.001),
                expected_items: Some(10_000),
                seed: 42,
                ..base.clone()
            },
        ),
        (
            "exp128-n1e5-pow2",
            BuildInput {
                size: Size::FppExponent(128),
                expected_items: Some(100_000),
                power_of_two: true,
                ..base.clone()
            },
        ),
        (
            "fpp1e-6-n1000-k20",
            BuildInput {
                size: Size::Fpp(1e-6),
                expected_items: Some(1_000),
                hashes: Some(20),
                ..base.clone()
            },
        ),
        (
            "bits2e20-n1000",
            BuildInput {
                size: Size::Bits(1 << 20),
                expected_items: Some(1_000),
                ..base.clone()
            },
        ),
        (
            "bits8192-k7",
            BuildInput {
                size: Size::Bits(8192),
                expected_items: None,
                hashes: Some(7),
                ..base.clone()
            },
        ),
        (
            "bits2e20-k3-capped",
            BuildInput {
                size: Size::Bits(1 << 20),
                expected_items: None,
                hashes: Some(3),
                max_memory: Some(1 << 16),
                ..base.clone()
            },
        ),
        (
            "fpp5e-2-n1-scalar",
            BuildInput {
                size: Size::Fpp(0.05),
                expected_items: Some(1),
                max_memory: Some(1 << 30),
                kernel: KernelChoice::Scalar,
                ..base.clone()
            },
        ),
        (
            "exp640-n1e9",
            BuildInput {
                size: Size::FppExponent(640),
                expected_items: Some(1_000_000_000),
                ..base.clone()
            },
        ),
        (
            "fpp5e-1-n10-avx2",
            BuildInput {
                size: Size::Fpp(0.5),
                expected_items: Some(10),
                kernel: KernelChoice::Avx2,
                seed: 7,
                ..base
            },
        ),
    ]
}

fn write_seeds(dir: &PathBuf, seeds: &[(String, Vec<u8>)]) {
    fs::create_dir_all(dir).unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("seed-")
        {
            fs::remove_file(path).unwrap();
        }
    }
    for (name, bytes) in seeds {
        fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
    }
    println!("{}: {} seeds", dir.display(), seeds.len());
}
