//! The `build_cuckoo` target: `CuckooFilter::with_fpp`/`with_buckets`/
//! `params` with arbitrary settings (fingerprint width, kicks, growth,
//! memory cap), through [`drive`].

use std::fmt::Debug;

use filterlab_cuckoo::{
    CuckooBuilder, CuckooFilter, CuckooSizing, DEFAULT_MAX_TABLES, DEFAULT_TIGHTENING,
    FingerprintChoice, Growth, LOAD_TARGET,
};

use crate::build::{
    Claims, Settings, Size, builder, common_builder, drive, from_fuzz_bytes, fuzz_input, maybe,
    seed, with_common,
};
use crate::exercise::timed;

fuzz_input! {
    /// A cuckoo builder's own settings.
    pub struct CuckooSettings {
        /// `fingerprint_bits(f)`, if called.
        pub fingerprint_bits: Option<u32>,
        /// `max_kicks(k)`, if called.
        pub max_kicks: Option<u32>,
        /// `expansion(e)` (the filter grows) and `max_tables(t)`, if called.
        pub growth: (Option<u32>, Option<u32>),
        /// `tightening(r)`, if called (an explicit size is a fraction of 2^64).
        pub tightening: Option<Size>,
    }
}

/// One cuckoo builder's settings.
pub type CuckooInput = Settings<CuckooSettings>;

common_builder!([] CuckooBuilder, expected_items);
builder!([] CuckooBuilder => CuckooFilter, CuckooSizing);

/// A cuckoo sizing and the settings it answers.
#[derive(Debug)]
struct CuckooClaims<'a> {
    sizing: CuckooSizing,
    input: &'a CuckooInput,
}

impl Claims for CuckooClaims<'_> {
    fn bytes(&self) -> u64 {
        self.sizing.bytes
    }

    fn fpp(&self) -> (f64, Option<f64>) {
        (self.sizing.fpp_at_capacity, self.sizing.target_fpp)
    }

    /// The width and size asked for; a load in (0, 1], at most 95% when
    /// sized for an FPP; never more items than slots; the FPP at capacity
    /// at most that of a full table; the growth policy asked for.
    fn check(&self, input: &dyn Debug) {
        let sizing = &self.sizing;
        let asked = &self.input.family;
        let f = sizing.fingerprint_bits;
        assert!((4..=32).contains(&f), "f = {f}: {sizing:?}");
        if let Some(bits) = asked.fingerprint_bits {
            assert_eq!(f, bits, "{input:?}");
            assert_eq!(sizing.fingerprint_choice, FingerprintChoice::Explicit);
        }
        assert_eq!(sizing.slots_per_bucket, 4);
        if let Size::Explicit(buckets) = self.input.size {
            assert_eq!(sizing.buckets, buckets, "{input:?}");
        }
        if let Some(n) = self.input.common.expected_items {
            assert_eq!(sizing.expected_items, n, "{input:?}");
        }
        let slots = sizing.buckets.saturating_mul(4);
        let items = sizing.expected_items;
        assert!(
            (1..=slots).contains(&items),
            "{items} items in {slots} slots: {input:?}"
        );
        let load = sizing.load;
        let most = if sizing.target_fpp.is_some() {
            LOAD_TARGET
        } else {
            1.0
        };
        assert!(
            load > 0.0 && load <= most * (1.0 + 1e-12),
            "load {load}: {input:?}"
        );
        assert!(
            sizing.fpp_at_capacity <= sizing.fpp_full && sizing.fpp_full <= 1.0,
            "FPP {} at capacity, {} full: {input:?}",
            sizing.fpp_at_capacity,
            sizing.fpp_full
        );
        let (expansion, max_tables) = asked.growth;
        let growth = expansion.map(|expansion| Growth {
            expansion,
            max_tables: max_tables.unwrap_or(DEFAULT_MAX_TABLES),
            tightening: asked.tightening.map_or(DEFAULT_TIGHTENING, Size::ratio),
        });
        assert_eq!(sizing.growth, growth, "{input:?}");
        // The planned FPP: the first table's at its capacity, growing
        // with the items, within [0, 1]; a growing filter's first table
        // takes P·(1 − r) of a target P.
        let at = |items: u64| sizing.fpp_after(items);
        let n = sizing.expected_items;
        // Equal up to rounding: compounding one FPP goes through ln and exp.
        let first = sizing.fpp_at_capacity;
        assert!(
            (at(n) - first).abs() <= 1e-12 * first,
            "{} vs {first}: {input:?}",
            at(n)
        );
        let planned = [
            at(0),
            at(n),
            at(n.saturating_mul(2)),
            at(n.saturating_mul(1000)),
        ];
        assert!(
            planned.windows(2).all(|w| w[0] <= w[1]) && planned[3] <= 1.0,
            "planned FPPs {planned:?}: {input:?}"
        );
        if let (Some(growth), Some(target), None) =
            (sizing.growth, sizing.target_fpp, asked.fingerprint_bits)
        {
            let share = target * (1.0 - growth.tightening);
            assert!(
                sizing.fpp_at_capacity <= share * (1.0 + 1e-12),
                "first table {} above its share {share}: {input:?}",
                sizing.fpp_at_capacity
            );
        }
        let _ = sizing.to_string();
    }
}

fn builder(input: &CuckooInput) -> CuckooBuilder {
    let builder = match input.size {
        Size::Explicit(buckets) => CuckooFilter::with_buckets(buckets),
        size => CuckooFilter::with_fpp(size.fpp().unwrap_or(f64::NAN)),
    };
    let asked = &input.family;
    let builder = maybe(
        builder,
        asked.fingerprint_bits,
        CuckooBuilder::fingerprint_bits,
    );
    let builder = maybe(builder, asked.max_kicks, CuckooBuilder::max_kicks);
    let builder = maybe(builder, asked.growth.0, CuckooBuilder::expansion);
    let builder = maybe(builder, asked.growth.1, CuckooBuilder::max_tables);
    let builder = maybe(
        builder,
        asked.tightening.map(Size::ratio),
        CuckooBuilder::tightening,
    );
    with_common(builder, &input.common)
}

/// The `build_cuckoo` target.
pub fn cuckoo_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<CuckooInput>(data) else {
        return;
    };
    if let (Some(p), Some(n)) = (input.size.fpp(), input.common.expected_items) {
        let params = timed("CuckooFilter::params", &input, || {
            CuckooFilter::params(n, p)
        });
        if let Ok(sizing) = params {
            assert!(
                sizing.fpp_at_capacity <= p,
                "params claims above its target: {sizing:?}"
            );
            assert!(sizing.load <= LOAD_TARGET * (1.0 + 1e-12), "{sizing:?}");
        }
    }
    let builder = builder(&input);
    let claims = |sizing| CuckooClaims {
        sizing,
        input: &input,
    };
    let named = ("CuckooBuilder", &input as &dyn Debug, input.max_memory());
    let Some((claims, Some(filter))) = drive(named, &builder, claims, |_| false) else {
        return;
    };
    let sizing = &claims.sizing;
    assert_eq!(
        (filter.buckets(), filter.fingerprint_bits(), filter.tables()),
        (sizing.buckets, sizing.fingerprint_bits, 1)
    );
    let memory = filter.memory_usage() as u64;
    assert_eq!(
        memory, sizing.bytes,
        "the filter takes other bytes than its sizing said"
    );
    assert_eq!(filter.initial_capacity(), sizing.expected_items);
}

/// Typical settings, named: the seeds of the corpus generator (encoded
/// with [`FuzzBytes`](crate::build::FuzzBytes)) and of the unit tests.
pub fn seeds() -> Vec<(String, CuckooInput)> {
    fn buckets(input: &mut CuckooInput, b: u64, f: u32) {
        input.size = Size::Explicit(b);
        input.common.expected_items = None;
        input.family.fingerprint_bits = Some(f);
    }
    let seed = seed::<CuckooSettings>;
    vec![
        seed("fpp1e-3-n1e6", 0.001, 1_000_000, |_| {}),
        seed("fpp1e-2-n100", 0.01, 100, |_| {}),
        seed("fpp1e-4-n1e4-f20-seed", 1e-4, 10_000, |input| {
            input.family.fingerprint_bits = Some(20);
            input.common.seed = 5;
        }),
        seed("exp640-n1e6", 0.0, 1_000_000, |input| {
            input.size = Size::FppExponent(640)
        }),
        seed("buckets1000-f12", 0.0, 0, |input| buckets(input, 1000, 12)),
        seed("buckets7-f4-n20", 0.0, 0, |input| {
            buckets(input, 7, 4);
            input.common.expected_items = Some(20);
        }),
        seed("buckets64-f16-grow2-4tables", 0.0, 0, |input| {
            buckets(input, 64, 16);
            input.family.growth = (Some(2), Some(4));
        }),
        seed("fpp1e-2-n50-grow1-kicks3", 0.01, 50, |input| {
            input.family.growth = (Some(1), None);
            input.family.max_kicks = Some(3);
        }),
        seed("fpp1e-3-n1e6-capped", 0.001, 1_000_000, |input| {
            input.common.max_memory = Some(1 << 20)
        }),
        seed("buckets1-f32-grow32768", 0.0, 0, |input| {
            buckets(input, 1, 32);
            input.family.growth = (Some(32_768), Some(256));
            input.common.max_memory = Some(1 << 48);
        }),
        seed("buckets33-f7-kicks3-grow2-4tables", 0.0, 0, |input| {
            buckets(input, 33, 7);
            input.family.max_kicks = Some(3);
            input.family.growth = (Some(2), Some(4));
        }),
        seed("fpp-negative", -1.0, 1_000, |_| {}),
        seed("fpp1e-3-n1000-grow2-tighten0.5", 0.001, 1_000, |input| {
            input.family.growth = (Some(2), None);
            input.family.tightening = Some(Size::Fpp(0.5));
        }),
        seed("fpp1e-2-n1e4-grow2-tighten-nan", 0.01, 10_000, |input| {
            input.family.growth = (Some(2), None);
            input.family.tightening = Some(Size::Fpp(f64::NAN));
        }),
        seed("buckets8-f4-grow2-tighten-tiny", 0.0, 0, |input| {
            buckets(input, 8, 4);
            input.family.growth = (Some(2), Some(256));
            input.family.tightening = Some(Size::Explicit(1));
        }),
    ]
}
