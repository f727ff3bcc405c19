//! The targets of the filters built from a key set (filterlab-static):
//! their decoders (`decode_ribbon`, `decode_binary_fuse`), read every way a
//! caller can (whole, streamed in chunks, with a payload limit, and as a
//! view with its checksum verified or deferred), and their builders
//! (`build_ribbon`, `build_binary_fuse`), given arbitrary settings and key
//! sets with duplicates.
//!
//! Whatever decodes or builds must hold its keys, answer the same one key
//! at a time, batched and through a view of its own bytes, and write the
//! bytes it was read from.

use std::collections::HashSet;
use std::fmt::Debug;

use filterlab_core::view::{Checksum, Viewable};
use filterlab_core::{BuildFromKeys, ErrorKind, Membership, Persist, mix64};
use filterlab_static::{BinaryFuseBuilder, BinaryFuseFilter, Fingerprint, RibbonFilter};
use xxhash_rust::xxh3::xxh3_64;

use crate::build::{FuzzBytes, from_fuzz_bytes, fuzz_choice, fuzz_input};
use crate::decode::{as_read_and_resealed, at_most_one};
use crate::exercise::timed;
use crate::frame::{ChunkedReader, Control};

/// What both targets need of a static filter type.
pub trait StaticFilter: Membership + Viewable + Persist + PartialEq + Debug {}

impl<T: Membership + Viewable + Persist + PartialEq + Debug> StaticFilter for T {}

/// Keys probed beside a filter's own: never inserted, most of them.
const PROBES: u64 = 64;

/// The decoder target for `F`: `input` is a control byte and a file; the
/// file and the file resealed are each read every way. Returns whether
/// each decoded.
pub fn decode<F: StaticFilter>(input: &[u8]) -> [bool; 2] {
    as_read_and_resealed(input, read_every_way::<F>)
}

/// The `decode_ribbon` target: format kind 8.
pub fn ribbon_target(input: &[u8]) {
    decode::<RibbonFilter>(input);
}

/// The `decode_binary_fuse` target: format kind 9 as every fingerprint
/// width and arity; the header says which, and exactly that type may
/// accept the file.
pub fn binary_fuse_target(input: &[u8]) {
    at_most_one(&[
        decode::<BinaryFuseFilter<u8, 3>>(input),
        decode::<BinaryFuseFilter<u8, 4>>(input),
        decode::<BinaryFuseFilter<u16, 3>>(input),
        decode::<BinaryFuseFilter<u16, 4>>(input),
        decode::<BinaryFuseFilter<u32, 3>>(input),
        decode::<BinaryFuseFilter<u32, 4>>(input),
    ]);
}

/// Reads `bytes` whole, streamed in chunks, with a small payload limit and
/// as views; checks that they agree; exercises what decoded.
fn read_every_way<F: StaticFilter>(control: Control, bytes: &[u8]) -> bool {
    let whole = F::from_bytes(bytes);
    let mut reader = ChunkedReader::new(bytes, control);
    let streamed = F::read_from(&mut reader);
    match (&whole, &streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "whole and streamed reads differ"),
        (Ok(_), Err(err)) => panic!("from_bytes accepted what read_from refuses: {err}"),
        (Err(err), Ok(_)) => assert_eq!(err.kind(), ErrorKind::LengthMismatch, "{err}"),
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{a} / {b}"),
    }
    let limited = F::read_from_with_limit(bytes, control.limit);
    if let (Ok(a), Ok(b)) = (&limited, &streamed) {
        assert_eq!(a, b);
    }
    // A verified view accepts exactly what the reader accepts; a deferred
    // one at least that, and every lookup it answers returns.
    let verified = F::view(bytes, Checksum::Verify);
    assert_eq!(
        verified.is_ok(),
        whole.is_ok(),
        "{:?} / {:?}",
        verified.as_ref().err(),
        whole.as_ref().err()
    );
    let probes: Vec<u64> = (0..PROBES).map(|i| mix64(xxh3_64(bytes) ^ i)).collect();
    match F::view(bytes, Checksum::Defer) {
        Ok(view) => {
            let mut found = vec![false; probes.len()];
            view.contains_hashes(&probes, &mut found);
            let verified = F::verify_checksum(&view);
            assert_eq!(verified.is_ok(), whole.is_ok(), "{verified:?}");
        }
        Err(err) => assert!(
            whole.is_err(),
            "a deferred view refuses a valid file: {err}"
        ),
    }
    let Ok(filter) = whole else {
        return false;
    };
    assert_eq!(filter.to_bytes(), bytes, "re-encoding changed the bytes");
    let expecting = F::read_from_expecting(bytes, &filter.config()).expect("its own configuration");
    assert!(expecting == filter);
    check_answers(&filter, bytes, &probes);
    true
}

/// The filter's answers one at a time, batched, and through a view of its
/// bytes, agree.
fn check_answers<F: StaticFilter>(filter: &F, bytes: &[u8], probes: &[u64]) {
    let singles: Vec<bool> = probes
        .iter()
        .map(|&hash| filter.contains_hash(hash))
        .collect();
    let mut batched = vec![false; probes.len()];
    filter.contains_hashes(probes, &mut batched);
    assert_eq!(batched, singles, "batched lookups differ");
    let view = F::view(bytes, Checksum::Verify).expect("its own bytes open as a view");
    let viewed: Vec<bool> = probes
        .iter()
        .map(|&hash| view.contains_hash(hash))
        .collect();
    assert_eq!(viewed, singles, "the view answers otherwise");
    let fpp = filter.expected_fpp();
    assert!(fpp > 0.0 && fpp < 1.0 && filter.theoretical_fpp(0) == Some(fpp));
    assert_eq!(filter.capacity(), Some(filter.len()));
}

fuzz_choice! {
    /// A binary fuse filter's fingerprint width and arity.
    pub enum FuseType {
        /// `BinaryFuseFilter<u8, 3>`.
        U8x3,
        /// `BinaryFuseFilter<u8, 4>`.
        U8x4,
        /// `BinaryFuseFilter<u16, 3>`.
        U16x3,
        /// `BinaryFuseFilter<u16, 4>`.
        U16x4,
        /// `BinaryFuseFilter<u32, 3>`.
        U32x3,
        /// `BinaryFuseFilter<u32, 4>`.
        U32x4,
    }
}

fuzz_input! {
    /// A static build: the builder's settings and a key set.
    pub struct StaticInput {
        /// The Ribbon filter's FPP (any bits: NaN, infinities, zero).
        pub fpp: f64,
        /// The binary fuse filter's width and arity.
        pub fuse: FuseType,
        /// The hasher's seed.
        pub seed: u64,
        /// `max_retries(r)`, if called.
        pub max_retries: Option<u32>,
        /// `max_memory(bytes)`, if called.
        pub max_memory: Option<u64>,
        /// Keys in the set, duplicates included (at most 2^16).
        pub keys: u16,
        /// Distinct keys are `keys / (1 + repeats)`: each comes that many
        /// times more.
        pub repeats: u16,
        /// Which keys.
        pub key_seed: u64,
    }
}

impl StaticInput {
    /// The key set: `keys` keys drawn from `keys / (1 + repeats)` distinct
    /// ones (at least one), in an order that mixes the repeats.
    fn key_set(&self) -> Vec<u64> {
        let distinct = (u64::from(self.keys) / (1 + u64::from(self.repeats))).max(1);
        (0..u64::from(self.keys))
            .map(|i| mix64(self.key_seed ^ (mix64(i) % distinct)))
            .collect()
    }
}

/// Builds with `builder`: the call returns within a second, `Ok` or a
/// typed error of the kinds the builder names; what it builds holds every
/// key, counts the distinct ones and the repeats, and answers as its bytes
/// do. Returns what it built.
fn build_with<B>(builder: &B, input: &StaticInput) -> Option<B::Filter>
where
    B: BuildFromKeys,
    B::Filter: StaticFilter,
{
    let keys = input.key_set();
    let built = timed("build", input, || builder.build_from_keys(&keys));
    let built = match built {
        Ok(built) => built,
        Err(err) => {
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::InvalidParameter
                        | ErrorKind::TooLarge
                        | ErrorKind::ConstructionFailed
                ),
                "{err}: {input:?}"
            );
            return None;
        }
    };
    let filter = &built.filter;
    let hasher = builder.hasher();
    let distinct: HashSet<u64> = keys.iter().map(|key| hasher.hash(key)).collect();
    assert_eq!(filter.len(), distinct.len(), "{input:?}");
    assert_eq!(
        built.report.duplicates,
        (keys.len() - distinct.len()) as u64,
        "{input:?}"
    );
    assert!(
        keys.iter().all(|key| filter.contains(key)),
        "a false negative: {input:?}"
    );
    let bytes = filter.to_bytes();
    assert!(&B::Filter::from_bytes(&bytes).expect("reads its own bytes") == filter);
    let mut probes: Vec<u64> = distinct.iter().copied().take(256).collect();
    probes.extend((0..PROBES).map(|i| mix64(input.key_seed.wrapping_add(i))));
    check_answers(filter, &bytes, &probes);
    Some(built.filter)
}

/// The `build_ribbon` target.
pub fn build_ribbon_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<StaticInput>(data) else {
        return;
    };
    let mut builder = RibbonFilter::with_fpp(input.fpp).seed(input.seed);
    if let Some(retries) = input.max_retries {
        builder = builder.max_retries(retries);
    }
    if let Some(bytes) = input.max_memory {
        builder = builder.max_memory(bytes);
    }
    if let Some(filter) = build_with(&builder, &input) {
        assert!(filter.expected_fpp() <= input.fpp, "{input:?}");
    }
}

fn fuse_builder<F: Fingerprint, const ARITY: usize>(
    input: &StaticInput,
) -> BinaryFuseBuilder<F, ARITY> {
    let mut builder = BinaryFuseFilter::<F, ARITY>::builder().seed(input.seed);
    if let Some(retries) = input.max_retries {
        builder = builder.max_retries(retries);
    }
    if let Some(bytes) = input.max_memory {
        builder = builder.max_memory(bytes);
    }
    builder
}

/// The `build_binary_fuse` target.
pub fn build_binary_fuse_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<StaticInput>(data) else {
        return;
    };
    let built = match input.fuse {
        FuseType::U8x3 => build_with(&fuse_builder::<u8, 3>(&input), &input).is_some(),
        FuseType::U8x4 => build_with(&fuse_builder::<u8, 4>(&input), &input).is_some(),
        FuseType::U16x3 => build_with(&fuse_builder::<u16, 3>(&input), &input).is_some(),
        FuseType::U16x4 => build_with(&fuse_builder::<u16, 4>(&input), &input).is_some(),
        FuseType::U32x3 => build_with(&fuse_builder::<u32, 3>(&input), &input).is_some(),
        FuseType::U32x4 => build_with(&fuse_builder::<u32, 4>(&input), &input).is_some(),
    };
    let _ = built;
}

/// Typical builds: the seeds of both builder targets.
pub fn seeds() -> Vec<(String, StaticInput)> {
    let input = |fpp: f64, fuse: FuseType, keys: u16, repeats: u16| StaticInput {
        fpp,
        fuse,
        seed: 7,
        max_retries: None,
        max_memory: None,
        keys,
        repeats,
        key_seed: u64::from(keys) ^ u64::from(repeats),
    };
    vec![
        ("small".into(), input(0.01, FuseType::U8x3, 100, 0)),
        ("partitioned".into(), input(0.001, FuseType::U16x4, 9000, 0)),
        ("repeats".into(), input(0.1, FuseType::U32x3, 3000, 2)),
        ("empty".into(), input(0.5, FuseType::U8x4, 0, 0)),
        (
            "one key".into(),
            input(2f64.powi(-32), FuseType::U16x3, 5, 4),
        ),
        (
            "no retries".into(),
            StaticInput {
                max_retries: Some(0),
                ..input(0.01, FuseType::U32x4, 20_000, 1)
            },
        ),
        (
            "little memory".into(),
            StaticInput {
                max_memory: Some(4096),
                ..input(0.01, FuseType::U8x3, 5000, 0)
            },
        ),
    ]
}

/// The seeds as the targets' input bytes.
pub fn seed_bytes() -> Vec<(String, Vec<u8>)> {
    seeds()
        .into_iter()
        .map(|(name, input)| (name, input.to_fuzz_bytes()))
        .collect()
}
