//! Every target has a `[[bin]]` and seeds; every committed seed passes its
//! target; the builder seeds are encoded as `arbitrary` decodes them.

use std::fmt::Debug;
use std::fs;
use std::panic;
use std::path::Path;

use arbitrary::Arbitrary;
use filterlab_fuzz::build::{FuzzBytes, from_fuzz_bytes};
use filterlab_fuzz::{
    TARGETS, build_bloom, build_counting, build_cuckoo, build_scalable, seed_paths, static_sets,
};

#[test]
fn every_target_has_a_bin_and_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    for &(name, _) in TARGETS {
        let bin = format!("name = \"{name}\"\npath = \"fuzz_targets/{name}.rs\"");
        assert!(manifest.contains(&bin), "{name} has no [[bin]]");
        let seeds = seed_paths(&dir.join("corpus").join(name));
        assert!(!seeds.is_empty(), "{name} has no seeds");
    }
}

/// Every committed seed through its target, on the stable toolchain: what
/// a fuzz run replays first. It fails while a library defect that a seed
/// reaches is open (see `regressions/README.md`); `scripts/fuzz-ci.sh`
/// skips it, as its fuzz runs replay the seeds and report each finding
/// with its input.
#[test]
fn committed_seeds_pass() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    for &(name, target) in TARGETS {
        // Every seed runs, so that one report names them all.
        for seed in seed_paths(&dir.join("corpus").join(name)) {
            let input = fs::read(&seed).unwrap();
            if panic::catch_unwind(|| target(&input)).is_err() {
                failures.push(seed.display().to_string());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "seeds that fail their target: {failures:#?}"
    );
}

/// Each seed encodes to bytes that `arbitrary` decodes back into it.
fn encodes<T>(seeds: Vec<(String, T)>)
where
    T: FuzzBytes + for<'a> Arbitrary<'a> + Debug,
{
    for (name, input) in seeds {
        let bytes = input.to_fuzz_bytes();
        let decoded: T = from_fuzz_bytes(&bytes).expect("decodes");
        assert_eq!(format!("{decoded:?}"), format!("{input:?}"), "{name}");
        assert_eq!(decoded.to_fuzz_bytes(), bytes, "{name}");
    }
}

#[test]
fn builder_seeds_encode_as_arbitrary_decodes() {
    encodes(build_bloom::seeds());
    encodes(build_counting::seeds());
    encodes(build_cuckoo::seeds());
    encodes(build_scalable::seeds());
    encodes(static_sets::seeds());
}
