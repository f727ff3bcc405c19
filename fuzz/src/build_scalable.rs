//! The `build_scalable` target: `ScalableBloomFilter::with_fpp`,
//! `ScalableBloomBuilder::<L>::new`, `.layers::<L>()` and `params`, with
//! arbitrary settings (target, initial capacity, growth, tightening,
//! non-scaling, caps), through `config()`, `sizing()`, `sizing_for(items)`
//! and, for a small first layer, `build()`, through [`drive`].

use std::fmt::Debug;

use filterlab_scalable::{
    BlockedBloomFilter, BloomFilter, Layer, MAX_MEMORY_CAP, ScalableBloomBuilder,
    ScalableBloomFilter, ScalableConfig, ScalableSizing,
};

use crate::build::{
    Claims, Settings, Size, builder, check_claims, common_builder, drive, from_fuzz_bytes,
    fuzz_choice, fuzz_input, maybe, seed, with_common,
};
use crate::exercise::timed;

fuzz_choice! {
    /// The layer type, and the entry point that chooses it.
    pub enum LayerChoice {
        /// `ScalableBloomFilter::with_fpp` (the default layer, `BlockedBloomFilter`).
        Default,
        /// `ScalableBloomBuilder::<BlockedBloomFilter>::new`.
        Blocked,
        /// `ScalableBloomFilter::with_fpp(..).layers::<BloomFilter>()`.
        Standard,
    }
}

fuzz_input! {
    /// A scalable builder's own settings (its target is the settings'
    /// size; an explicit size is a fraction of 2^64).
    pub struct ScalableSettings {
        /// `growth(s)` and `tightening(r)`, if called.
        pub growth: (Option<u64>, Option<Size>),
        /// `non_scaling(..)` and `max_layers(k)`, if called.
        pub caps: (bool, Option<u32>),
        /// The layer type and entry point.
        pub layers: LayerChoice,
        /// `sizing_for(items)`, if called.
        pub plan_items: Option<u64>,
    }
}

/// One scalable builder's settings.
pub type ScalableInput = Settings<ScalableSettings>;

common_builder!([L: Layer] ScalableBloomBuilder<L>, initial_capacity);
builder!([L: Layer] ScalableBloomBuilder<L> => ScalableBloomFilter<L>, ScalableSizing);

/// A scalable sizing (the layers for some number of items).
#[derive(Debug)]
struct ScalableClaims(ScalableSizing);

impl Claims for ScalableClaims {
    fn bytes(&self) -> u64 {
        self.0.bytes
    }

    /// The compound FPP at the planned items meets the target at every size.
    fn fpp(&self) -> (f64, Option<f64>) {
        (self.0.fpp_at_items, Some(self.0.config.target_fpp))
    }

    /// Layer i is sized for n0·s^i items at the configuration's target for
    /// it, and meets it; the loads and bytes add up; the bound of the
    /// layers is at most the target and the FPP at most the bound.
    fn check(&self, input: &dyn Debug) {
        let sizing = &self.0;
        let config = &sizing.config;
        assert!(!sizing.layers.is_empty(), "{sizing:?}");
        assert!(
            sizing.layers.len() <= config.max_layers as usize,
            "{input:?}"
        );
        let (mut items, mut bytes) = (0u64, 0u64);
        for (index, layer) in (0u32..).zip(&sizing.layers) {
            assert_eq!(
                Some(layer.capacity),
                config.layer_capacity(index),
                "{input:?}"
            );
            assert_eq!(
                layer.target_fpp.to_bits(),
                config.layer_fpp(index).to_bits()
            );
            assert!(layer.load <= layer.capacity, "{input:?}");
            let k = layer.sizing.num_hashes;
            assert!((1..=64).contains(&k), "layer {index}: k = {k}: {input:?}");
            let (at_capacity, at_load) = (layer.sizing.fpp_at_capacity, layer.fpp_at_load);
            let target = layer.target_fpp;
            assert!(
                at_capacity <= target && at_load <= target * (1.0 + 1e-9),
                "layer {index}: {at_capacity:e} at capacity, {at_load:e} at load, target {target:e}: {input:?}"
            );
            items = items.saturating_add(layer.load);
            bytes = bytes.saturating_add(layer.sizing.bytes());
        }
        assert_eq!(items, sizing.items, "the loads do not add up: {input:?}");
        assert_eq!(bytes, sizing.bytes, "the bytes do not add up: {input:?}");
        let (fpp, bound) = (sizing.fpp_at_items, sizing.fpp_bound);
        assert!(
            bound <= config.target_fpp && fpp <= bound * (1.0 + 1e-9),
            "FPP {fpp:e}, bound {bound:e}, target {:e}: {input:?}",
            config.target_fpp
        );
        let _ = (sizing.to_string(), sizing.bits_per_item());
    }
}

/// The builder the settings describe, with layers `L` (made by `make`, the
/// entry point the settings choose).
fn builder<L: Layer>(
    input: &ScalableInput,
    make: fn(f64) -> ScalableBloomBuilder<L>,
) -> ScalableBloomBuilder<L> {
    let asked = &input.family;
    let builder = make(input.size.ratio());
    let builder = maybe(builder, asked.growth.0, ScalableBloomBuilder::growth);
    let builder = maybe(
        builder,
        asked.growth.1.map(Size::ratio),
        ScalableBloomBuilder::tightening,
    );
    let builder = maybe(builder, asked.caps.1, ScalableBloomBuilder::max_layers);
    with_common(builder, &input.common).non_scaling(asked.caps.0)
}

fn run<L: Layer>(input: &ScalableInput, make: fn(f64) -> ScalableBloomBuilder<L>) {
    let builder = builder(input, make);
    let cap = input.max_memory().min(MAX_MEMORY_CAP);
    let check = |config: &ScalableConfig| {
        assert_eq!(config.max_memory, cap, "{input:?}");
        assert_eq!(config.non_scaling, input.family.caps.0);
        assert_eq!(config.layer_kind, L::KIND);
    };
    if let Some(items) = input.family.plan_items {
        let plan = timed("ScalableBloomBuilder::sizing_for", input, || {
            builder.sizing_for(items)
        });
        if let Ok(sizing) = plan {
            assert_eq!(sizing.items, items);
            check(&sizing.config);
            check_claims(&ScalableClaims(sizing), cap, input);
        }
    }
    let named = ("ScalableBloomBuilder", input as &dyn Debug, cap);
    let Some((ScalableClaims(sizing), filter)) = drive(named, &builder, ScalableClaims, |_| false)
    else {
        return;
    };
    check(&sizing.config);
    assert_eq!(sizing.items, sizing.config.initial_capacity);
    assert_eq!(sizing.layers.len(), 1, "the first layer alone");
    if let Some(filter) = filter {
        assert_eq!(filter.layers().len(), 1);
        assert_eq!(filter.memory_usage() as u64, sizing.bytes);
        let (bound, planned) = (filter.fpp_bound(), sizing.fpp_bound);
        assert!(
            (bound - planned).abs() <= planned * 1e-12,
            "the filter's bound {bound:e}, its sizing's {planned:e}: {input:?}"
        );
    }
}

/// The `build_scalable` target.
pub fn scalable_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<ScalableInput>(data) else {
        return;
    };
    if let (Some(n), LayerChoice::Default) = (input.common.expected_items, input.family.layers) {
        let params = timed("ScalableBloomFilter::params", &input, || {
            ScalableBloomFilter::params(n, input.size.ratio())
        });
        if let Ok(sizing) = params {
            check_claims(&ScalableClaims(sizing), u64::MAX, &input);
        }
    }
    match input.family.layers {
        LayerChoice::Default => run(&input, ScalableBloomFilter::with_fpp),
        LayerChoice::Blocked => run(&input, ScalableBloomBuilder::<BlockedBloomFilter>::new),
        LayerChoice::Standard => run(&input, |p| {
            ScalableBloomFilter::with_fpp(p).layers::<BloomFilter>()
        }),
    }
}

/// Typical settings, named: the seeds of the corpus generator (encoded
/// with [`FuzzBytes`](crate::build::FuzzBytes)) and of the unit tests.
pub fn seeds() -> Vec<(String, ScalableInput)> {
    let seed = seed::<ScalableSettings>;
    vec![
        seed("fpp1e-2-n1000", 0.01, 1_000, |_| {}),
        seed("fpp1e-2-n1000-plan1e6", 0.01, 1_000, |input| {
            input.family.plan_items = Some(1_000_000)
        }),
        seed("fpp1e-4-n100-standard-plan1e5", 1e-4, 100, |input| {
            input.family.layers = LayerChoice::Standard;
            input.family.plan_items = Some(100_000);
        }),
        seed("exp256-n10-blocked-growth4", 0.0, 10, |input| {
            input.size = Size::FppExponent(256);
            input.family.growth.0 = Some(4);
            input.family.layers = LayerChoice::Blocked;
        }),
        seed("fpp1e-1-n50-r05-plan5000", 0.1, 50, |input| {
            input.family.growth.1 = Some(Size::Fpp(0.5));
            input.family.plan_items = Some(5_000);
        }),
        seed("fpp1e-2-n100-nonscaling", 0.01, 100, |input| {
            input.family.caps.0 = true;
            input.family.growth.0 = Some(1);
        }),
        seed("fpp1e-2-n10-3layers-plan1e3", 0.01, 10, |input| {
            input.family.caps.1 = Some(3);
            input.family.plan_items = Some(1_000);
        }),
        seed("fpp1e-3-n1e4-capped-plan1e5", 0.001, 10_000, |input| {
            input.common.max_memory = Some(1 << 16);
            input.family.plan_items = Some(100_000);
        }),
        seed(
            "fpp1e-2-n1e6-growth65536-plan-max",
            0.01,
            1_000_000,
            |input| {
                input.family.growth.0 = Some(65_536);
                input.family.plan_items = Some(u64::MAX);
            },
        ),
        seed("exp1280-n1-r-fraction", 0.0, 1, |input| {
            input.size = Size::FppExponent(1280);
            input.family.growth.1 = Some(Size::Explicit(3 << 62));
        }),
        seed("no-initial-capacity", 0.01, 0, |input| {
            input.common.expected_items = None
        }),
    ]
}
