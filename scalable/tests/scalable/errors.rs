//! Bad parameters, refusals at the caps, crafted files, the golden file,
//! and the reports.

use filterlab_core::Membership;
use filterlab_core::format::{FrameReader, FrameWriter};
use filterlab_scalable::{
    BloomFilter, ErrorKind, FilterKind, MAX_GROWTH, MAX_LAYERS, ScalableBloomFilter,
};

use filterlab_core::testing::{check_config_drift, check_invalid_fpps, expect_error};

use crate::{GOLDEN_KEYS, check_golden, grown, insert_range};

#[test]
fn bad_parameters_are_typed_errors() {
    let (invalid, too_large) = (ErrorKind::InvalidParameter, ErrorKind::TooLarge);
    let builder = |fpp| ScalableBloomFilter::with_fpp(fpp).initial_capacity(1000);
    check_invalid_fpps(|fpp| builder(fpp).build());
    check_invalid_fpps(|fpp| ScalableBloomFilter::params(1000, fpp));
    for r in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
        expect_error(builder(0.01).tightening(r).build(), invalid, ("r", r));
    }
    for f in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
        let case = builder(0.01).first_layer_share(f);
        expect_error(case.build(), invalid, ("f", f));
    }
    // A non-scaling filter's one layer takes P: a share is not recorded.
    let non_scaling = builder(0.01).first_layer_share(0.5).non_scaling(true);
    assert_eq!(non_scaling.config().unwrap().first_share, None);
    assert_eq!(
        non_scaling.build().unwrap().to_bytes(),
        builder(0.01).non_scaling(true).build().unwrap().to_bytes()
    );
    for s in [0, MAX_GROWTH + 1] {
        expect_error(builder(0.01).growth(s).build(), invalid, ("s", s));
    }
    for layers in [0, MAX_LAYERS + 1] {
        expect_error(builder(0.01).max_layers(layers).build(), invalid, layers);
    }
    // Growth 1 (RedisBloom's EXPANSION 1): layers of the first one's size.
    assert!(builder(0.01).growth(1).non_scaling(true).build().is_ok());
    let mut equal = builder(0.01)
        .initial_capacity(10)
        .growth(1)
        .build()
        .unwrap();
    equal.insert_many(0..95u64).unwrap();
    assert!(
        equal
            .layers()
            .iter()
            .all(|layer| layer.capacity() == Some(10))
    );
    assert!(equal.layers().len() >= 10 && equal.fpp_bound() < 0.01);
    for (case, kind, what) in [
        (builder(0.01).growth(0).non_scaling(true), invalid, "s = 0"),
        (
            ScalableBloomFilter::with_fpp(0.01),
            invalid,
            "no initial capacity",
        ),
        (
            builder(0.01).initial_capacity(0),
            invalid,
            "zero initial capacity",
        ),
        (builder(0.01).max_memory(0), invalid, "no memory"),
        // A first layer over the memory cap, or beyond any memory.
        (
            builder(0.01)
                .max_memory(1 << 20)
                .initial_capacity(1_000_000),
            too_large,
            "over the cap",
        ),
        (
            builder(1e-290).initial_capacity(u64::MAX),
            too_large,
            "beyond any memory",
        ),
        // Layer targets P·(1 − r)·r^i below the smallest FPP the exact
        // formulas size for (1e-300) are refused as parameters, not sizes.
        (builder(1e-300), invalid, "layer targets below 1e-300"),
    ] {
        expect_error(case.build(), kind, what);
    }
}

/// A refused insert leaves the filter exactly as it was, one by one and in
/// batches (where the keys before the refused one stay inserted).
fn check_refusal(filter: &ScalableBloomFilter, next_key: u64) {
    let before = filter.clone();
    let mut refused = filter.clone();
    let err = refused.insert(&next_key).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Full, "{err}");
    assert_eq!(refused, before, "a refused insert changed the filter");
    // Keys it already holds are still answered, and not refused.
    assert!(!refused.insert(&0u64).unwrap());
    let err = refused
        .insert_many([0u64, next_key, next_key + 1])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Full);
    assert_eq!(refused, before);
}

/// Inserts 0, 1, 2, ... until the filter refuses; returns the refused key.
fn fill_until_full(filter: &mut ScalableBloomFilter) -> u64 {
    let mut key = 0u64;
    loop {
        let mut probe = filter.clone();
        match probe.insert(&key) {
            Ok(_) => *filter = probe,
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::Full);
                return key;
            }
        }
        key += 1;
    }
}

#[test]
fn non_scaling_filter_refuses_at_capacity_unchanged() {
    let mut filter = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(500)
        .non_scaling(true)
        .build()
        .unwrap();
    assert_eq!(filter.capacity(), Some(500));
    // The one layer is sized for P itself.
    assert_eq!(filter.layers()[0].target_fpp(), Some(0.01));
    let refused = fill_until_full(&mut filter);
    assert_eq!(filter.len(), 500);
    assert!(refused >= 500);
    assert!((0..refused).all(|key| filter.contains(&key)));
    check_refusal(&filter, refused);
    assert_eq!(filter.layers().len(), 1);
}

#[test]
fn layer_and_memory_caps_refuse_unchanged() {
    let mut capped = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(100)
        .max_layers(3)
        .build()
        .unwrap();
    fill_until_full(&mut capped);
    assert_eq!((capped.len(), capped.layers().len()), (700, 3));
    check_refusal(&capped, 1_000_000);

    let mut capped = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(1000)
        .max_memory(8 << 10)
        .build()
        .unwrap();
    fill_until_full(&mut capped);
    assert!(capped.memory_usage() <= 8 << 10);
    assert!(capped.len() >= 3000, "{}", capped.info());
    check_refusal(&capped, 1_000_000);
    // Its theory past the caps is the FPP at the caps.
    let at_caps = capped.theoretical_fpp(capped.len() as u64).unwrap();
    assert_eq!(capped.theoretical_fpp(u64::MAX), Some(at_caps));
}

/// Rewrites the file's header with `edit` applied and valid checksums, so
/// that the edit reaches the checks behind them (a longer payload is
/// padded with zeros).
fn craft(bytes: &[u8], edit: impl Fn(&mut filterlab_core::format::Header)) -> Vec<u8> {
    let frame = FrameReader::open_any(bytes, u64::MAX).unwrap();
    let mut header = frame.header().clone();
    let header_len = 48 + 8 * header.params.len();
    let payload = &bytes[header_len..bytes.len() - 8];
    edit(&mut header);
    let mut payload = payload.to_vec();
    payload.resize(header.payload_len as usize, 0);
    let mut writer = FrameWriter::new(Vec::new(), &header).unwrap();
    writer.write_bytes(&payload).unwrap();
    writer.finish().unwrap()
}

fn read_err(bytes: &[u8]) -> ErrorKind {
    match <ScalableBloomFilter>::from_bytes(bytes) {
        Ok(filter) => panic!("crafted bytes read as {filter:?}"),
        Err(err) => err.kind(),
    }
}

#[test]
fn crafted_counters_and_parameters_are_refused() {
    let filter = grown(100, 5, 350);
    assert_eq!(filter.layers().len(), 3);
    let len = filter.len() as u64;
    let bytes = filter.to_bytes();
    assert_eq!(
        <ScalableBloomFilter>::from_bytes(&craft(&bytes, |_| {})).unwrap(),
        filter
    );
    let invalid = ErrorKind::InvalidHeader;
    // Counters: one more or less than the layers hold; one that needs
    // another layer; the maximum.
    for items in [len - 1, len + 1, 700, 701, u64::MAX] {
        assert_eq!(
            read_err(&craft(&bytes, |h| h.items = items)),
            invalid,
            "items {items}"
        );
    }
    // The layer count must be what the counter fills.
    for layers in [2, 4] {
        assert_eq!(read_err(&craft(&bytes, |h| h.params[8] = layers)), invalid);
    }
    // Parameters that contradict the layers: the initial capacity, growth,
    // targets, non-scaling flag, hasher seed, and a memory cap below use.
    let edits: [(usize, u64); 7] = [
        (0, 99),
        (0, 200),
        (2, 3),
        (1, 0.02f64.to_bits()),
        (3, 0.5f64.to_bits()),
        (4, 1),
        (7, 100),
    ];
    for (index, value) in edits {
        let kind = read_err(&craft(&bytes, |h| h.params[index] = value));
        assert_eq!(kind, invalid, "param {index} = {value}");
    }
    assert_eq!(
        read_err(&craft(&bytes, |h| h.hasher = filterlab_scalable::KeyHasher::new(6))),
        invalid
    );
    // Layers of the other type.
    let kind = read_err(&craft(&bytes, |h| {
        h.params[5] = u64::from(FilterKind::Bloom.id());
    }));
    assert_eq!(kind, ErrorKind::WrongKind);
    // Payload lengths that do not match the layers.
    assert_eq!(
        read_err(&craft(&bytes, |h| h.payload_len += 8)),
        ErrorKind::LengthMismatch
    );
}

/// A filter with a first-layer share is written in layout 2 (eleven
/// parameters); a layout it does not know, a share that contradicts the
/// layers or is out of range, or a share in a non-scaling filter are
/// refused.
#[test]
fn crafted_first_share_files_are_refused() {
    let mut filter = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(100)
        .first_layer_share(0.65)
        .seed(5)
        .build()
        .unwrap();
    insert_range(&mut filter, 5, 0, 350);
    assert_eq!(filter.layers().len(), 3);
    let bytes = filter.to_bytes();
    let read = <ScalableBloomFilter>::from_bytes(&craft(&bytes, |_| {})).unwrap();
    assert_eq!(read, filter);
    assert_eq!(read.config().first_share, Some(0.65));
    let invalid = ErrorKind::InvalidHeader;
    assert_eq!(
        read_err(&craft(&bytes, |h| h.params[9] = 3)),
        ErrorKind::UnsupportedVersion
    );
    for share in [0.5, 0.0, 1.0, f64::NAN, 0.35] {
        let crafted = craft(&bytes, |h| h.params[10] = share.to_bits());
        assert_eq!(read_err(&crafted), invalid, "share {share}");
    }
    // Without the share, the layers contradict the geometric schedule.
    assert_eq!(read_err(&craft(&bytes, |h| h.params.truncate(9))), invalid);
    assert_eq!(read_err(&craft(&bytes, |h| h.params.truncate(10))), invalid);
    assert_eq!(read_err(&craft(&bytes, |h| h.params[4] = 1)), invalid);
}

/// A count far past the caps is refused after at most `max_layers` steps,
/// not one step per layer it would fill: with growth 1 (non-scaling) a
/// count of 2^64 − 1 over a capacity of 1 used to never return, when
/// planned (found by CI's fuzz run, `fuzz/regressions/build_scalable/`)
/// and when read from a file.
#[test]
fn counts_past_the_caps_are_refused_at_once() {
    let one = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(1)
        .growth(1)
        .non_scaling(true);
    for items in [2, 1 << 40, u64::MAX] {
        expect_error(one.sizing_for(items), ErrorKind::TooLarge, items);
    }
    let two_layers = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(1)
        .max_layers(2);
    assert_eq!(two_layers.sizing_for(3).unwrap().layers.len(), 2);
    expect_error(two_layers.sizing_for(4), ErrorKind::TooLarge, 4);
    let bytes = one.build().unwrap().to_bytes();
    for items in [2, 1 << 40, u64::MAX] {
        let crafted = craft(&bytes, |h| h.items = items);
        assert_eq!(read_err(&crafted), ErrorKind::InvalidHeader, "{items}");
    }
}

#[test]
fn config_drift_is_rejected() {
    let builder = |seed| {
        ScalableBloomFilter::with_fpp(0.01)
            .initial_capacity(100)
            .seed(seed)
    };
    let filter = builder(1).build().unwrap();
    let others = [
        builder(2).config().unwrap(),
        builder(1).growth(4).config().unwrap(),
        builder(1).tightening(0.5).config().unwrap(),
        builder(1).first_layer_share(0.15).config().unwrap(),
    ];
    // The header alone (9 parameters) is enough to refuse.
    check_config_drift(
        &filter,
        &builder(1).config().unwrap(),
        &others,
        48 + 9 * 8 + 8,
    );
    // Reading standard layers as blocked ones (or back) is a wrong kind.
    let standard = ScalableBloomFilter::with_fpp(0.01)
        .layers::<BloomFilter>()
        .initial_capacity(100)
        .build()
        .unwrap();
    assert_eq!(read_err(&standard.to_bytes()), ErrorKind::WrongKind);
}

/// The format must not change by accident. Regenerate with
/// `FILTERLAB_BLESS=1 cargo test -p filterlab-scalable golden` only for a
/// deliberate, versioned format change.
#[test]
fn golden_file() {
    // Two keys per first layer: the five golden keys fill two layers. Every
    // parameter is explicit, so that changing a default changes no file.
    let build = |hasher| {
        let builder = ScalableBloomFilter::with_fpp(0.01)
            .initial_capacity(2)
            .growth(2);
        builder.tightening(0.85).hasher(hasher).build().unwrap()
    };
    let golden = check_golden(build, "scalable");
    let read = ScalableBloomFilter::from_bytes(&golden).unwrap();
    assert!(GOLDEN_KEYS.iter().all(|k| read.contains(*k)));
    assert_eq!((read.len(), read.layers().len()), (5, 2));
    assert_eq!(read.config().first_share, None);
    // Layout 2: the same filter with its first layer at 0.65·P.
    let build = |hasher| {
        let builder = ScalableBloomFilter::with_fpp(0.01)
            .initial_capacity(2)
            .growth(2)
            .first_layer_share(0.65);
        builder.tightening(0.85).hasher(hasher).build().unwrap()
    };
    let golden = check_golden(build, "scalable-share");
    let read = ScalableBloomFilter::from_bytes(&golden).unwrap();
    assert!(GOLDEN_KEYS.iter().all(|k| read.contains(*k)));
    assert_eq!(read.config().first_share, Some(0.65));
    assert_eq!(read.layers()[0].target_fpp(), Some(0.01 * 0.65));
}

#[test]
fn reports() {
    let sizing = ScalableBloomFilter::params(1000, 0.01).unwrap();
    assert_eq!(sizing.layers.len(), 1);
    let plan = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(1000)
        .sizing_for(1_000_000)
        .unwrap();
    assert_eq!(plan.layers.len(), 10);
    assert!(plan.fpp_at_items < plan.fpp_bound && plan.fpp_bound < 0.01);
    println!("{plan}");

    let mut filter = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(1000)
        .build()
        .unwrap();
    insert_range(&mut filter, 9, 0, 5000);
    let info = filter.info();
    assert_eq!((info.filters, info.capacity, info.expansion), (3, 7000, 2));
    assert_eq!(info.items, filter.len() as u64);
    assert_eq!(info.size, filter.memory_usage());
    assert_eq!(info.layers.iter().map(|l| l.items).sum::<u64>(), info.items);
    assert!(info.fpp_now <= info.fpp_bound);
    let report = info.to_string();
    for needle in [
        "Capacity",
        "Size",
        "Number of filters",
        "Number of items inserted",
        "Expansion rate",
        "FPP bound",
    ] {
        assert!(report.contains(needle), "missing {needle:?} in\n{report}");
    }
    println!("{report}");
    // The theory matches the plan of the same filter.
    let planned = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(1000)
        .sizing_for(info.items)
        .unwrap();
    let theory = filter.theoretical_fpp(info.items).unwrap();
    assert!((theory / planned.fpp_at_items - 1.0).abs() < 1e-12);
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_validates() {
    filterlab_core::testing::check_serde_round_trip(&grown(100, 8, 500));
}
