//! The `build_counting` target: the counting Bloom builders of both
//! layouts and every counter width, through each entry point
//! (`CountingBloomFilter::with_fpp`/`with_counters` and the blocked twins,
//! `counter_bits::<W>()`, the generic `CountingBloomBuilder::<L, W>`,
//! `params(n, p)`), with arbitrary settings, through [`drive`].

use std::fmt::Debug;

use filterlab_core::Error;
use filterlab_counting_bloom::{
    Blocked, BlockedCountingBloomFilter, CountingBloom, CountingBloomBuilder, CountingBloomFilter,
    CountingSizing, Standard,
};

use crate::build::{
    ArrayClaims, Settings, Size, array_record, builder, check_claims, common_builder, drive,
    from_fuzz_bytes, fuzz_choice, fuzz_input, maybe, seed, with_common,
};
use crate::exercise::timed;
use crate::filters::CountingLayout;

fuzz_choice! {
    /// Where a key's counters lie.
    pub enum LayoutChoice {
        /// `CountingBloomFilter` (`Standard`).
        Standard,
        /// `BlockedCountingBloomFilter` (`Blocked`).
        Blocked,
    }
}

fuzz_choice! {
    /// Bits per counter.
    pub enum WidthChoice {
        /// 4 (the named filters' width).
        Four,
        /// `counter_bits::<8>()`.
        Eight,
        /// `counter_bits::<16>()`.
        Sixteen,
    }
}

fuzz_input! {
    /// A counting Bloom builder's own settings.
    pub struct CountingSettings {
        /// `hashes(k)`, if called.
        pub hashes: Option<u32>,
        /// The layout and the counter width.
        pub layout: (LayoutChoice, WidthChoice),
        /// Whether the builder comes from the named filter's
        /// `with_fpp`/`with_counters` then `counter_bits::<W>()` (else from
        /// `CountingBloomBuilder::<L, W>` directly).
        pub named: bool,
    }
}

/// One counting Bloom builder's settings.
pub type CountingInput = Settings<CountingSettings>;

common_builder!([L: Named, const W: u32] CountingBloomBuilder<L, W>, expected_items);
builder!([L: Named, const W: u32] CountingBloomBuilder<L, W> => CountingBloom<L, W>, CountingSizing);
array_record!(CountingSizing, num_counters);

/// The named entry points of a layout (`CountingBloomFilter` or
/// `BlockedCountingBloomFilter`), 4-bit.
pub trait Named: CountingLayout {
    /// `with_fpp(p)`.
    fn with_fpp(fpp: f64) -> CountingBloomBuilder<Self, 4>;
    /// `with_counters(m)`.
    fn with_counters(counters: u64) -> CountingBloomBuilder<Self, 4>;
    /// `params(n, p)`.
    fn params(items: u64, fpp: f64) -> Result<CountingSizing, Error>;
}

/// Implements [`Named`] with the filter's own functions.
macro_rules! named {
    ($layout:ty, $filter:ty) => {
        impl Named for $layout {
            fn with_fpp(fpp: f64) -> CountingBloomBuilder<Self, 4> {
                <$filter>::with_fpp(fpp)
            }

            fn with_counters(counters: u64) -> CountingBloomBuilder<Self, 4> {
                <$filter>::with_counters(counters)
            }

            fn params(items: u64, fpp: f64) -> Result<CountingSizing, Error> {
                <$filter>::params(items, fpp)
            }
        }
    };
}

named!(Standard, CountingBloomFilter);
named!(Blocked, BlockedCountingBloomFilter);

/// The builder the settings describe, of layout `L` and width `W`.
fn builder<L: Named, const W: u32>(input: &CountingInput) -> CountingBloomBuilder<L, W> {
    let fpp = input.size.fpp().unwrap_or(f64::NAN);
    let builder = match (input.family.named, input.size) {
        (true, Size::Explicit(m)) => L::with_counters(m).counter_bits::<W>(),
        (true, _) => L::with_fpp(fpp).counter_bits::<W>(),
        (false, Size::Explicit(m)) => CountingBloomBuilder::with_counters(m),
        (false, _) => CountingBloomBuilder::with_fpp(fpp),
    };
    let builder = maybe(builder, input.family.hashes, CountingBloomBuilder::hashes);
    with_common(builder, &input.common)
}

/// The promises of a counting sizing of width `W` beyond an array's: the
/// width and layout asked for, an overflow probability, a report.
fn counting_claims<const W: u32>(
    input: &CountingInput,
) -> impl Fn(CountingSizing) -> ArrayClaims<CountingSizing> {
    let per_block = 512 / W;
    let blocked = matches!(input.family.layout.0, LayoutChoice::Blocked);
    let asked = match input.size {
        Size::Explicit(m) => Some(m),
        _ => None,
    };
    move |record: CountingSizing| {
        assert_eq!(record.counter_bits, W, "{input:?}");
        assert_eq!(
            record.block_counters,
            blocked.then_some(per_block),
            "{input:?}"
        );
        let overflow = record.overflow_probability;
        assert!(
            (0.0..=1.0).contains(&overflow),
            "overflow {overflow}: {input:?}"
        );
        let _ = record.to_string();
        ArrayClaims {
            record,
            block: blocked.then_some(u64::from(per_block)),
            asked: (input.common.expected_items, asked),
        }
    }
}

fn run<L: Named, const W: u32>(input: &CountingInput) {
    let claims = counting_claims::<W>(input);
    if let (Some(p), Some(n), 4) = (input.size.fpp(), input.common.expected_items, W) {
        // The default cap and k: the promises of any sizing hold.
        if let Ok(sizing) = timed("params", input, || L::params(n, p)) {
            let mut claims = claims(sizing);
            claims.asked.1 = None;
            check_claims(&claims, u64::MAX, input);
        }
    }
    let builder = builder::<L, W>(input);
    let named = (
        "CountingBloomBuilder",
        input as &dyn Debug,
        input.max_memory(),
    );
    let Some((claims, Some(filter))) = drive(named, &builder, claims, |_| false) else {
        return;
    };
    let record = &claims.record;
    assert_eq!(
        (filter.num_counters(), filter.num_hashes()),
        (record.num_counters, record.num_hashes)
    );
    assert_eq!(
        filter.overflow_probability().to_bits(),
        record.overflow_probability.to_bits(),
        "the filter's overflow probability is not its sizing's"
    );
}

/// The `build_counting` target.
pub fn counting_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<CountingInput>(data) else {
        return;
    };
    let run = match input.family.layout {
        (LayoutChoice::Standard, WidthChoice::Four) => run::<Standard, 4>,
        (LayoutChoice::Standard, WidthChoice::Eight) => run::<Standard, 8>,
        (LayoutChoice::Standard, WidthChoice::Sixteen) => run::<Standard, 16>,
        (LayoutChoice::Blocked, WidthChoice::Four) => run::<Blocked, 4>,
        (LayoutChoice::Blocked, WidthChoice::Eight) => run::<Blocked, 8>,
        (LayoutChoice::Blocked, WidthChoice::Sixteen) => run::<Blocked, 16>,
    };
    run(&input);
}

/// Typical settings, named: the seeds of the corpus generator (encoded
/// with [`FuzzBytes`](crate::build::FuzzBytes)) and of the unit tests.
pub fn seeds() -> Vec<(String, CountingInput)> {
    use LayoutChoice::{Blocked, Standard};
    use WidthChoice::{Eight, Four, Sixteen};
    fn kind(input: &mut CountingInput, layout: LayoutChoice, width: WidthChoice, named: bool) {
        input.family.layout = (layout, width);
        input.family.named = named;
    }
    let seed = seed::<CountingSettings>;
    vec![
        seed("standard4-fpp1e-2-n1e6", 0.01, 1_000_000, |input| {
            kind(input, Standard, Four, true)
        }),
        seed("blocked4-fpp1e-2-n1e6", 0.01, 1_000_000, |input| {
            kind(input, Blocked, Four, true)
        }),
        seed("standard8-fpp1e-3-n1e4", 0.001, 10_000, |input| {
            kind(input, Standard, Eight, true)
        }),
        seed("blocked16-fpp1e-1-n100-generic", 0.1, 100, |input| {
            kind(input, Blocked, Sixteen, false)
        }),
        seed("standard16-exp320-n1000-generic", 0.0, 1000, |input| {
            kind(input, Standard, Sixteen, false);
            input.size = Size::FppExponent(320);
        }),
        seed("standard4-counters8192-k5", 0.0, 0, |input| {
            input.size = Size::Explicit(8192);
            input.common.expected_items = None;
            input.family.hashes = Some(5);
        }),
        seed("blocked8-counters1000-n100", 0.0, 100, |input| {
            kind(input, Blocked, Eight, true);
            input.size = Size::Explicit(1000);
        }),
        seed("standard4-fpp1e-2-n1e6-capped", 0.01, 1_000_000, |input| {
            input.common.max_memory = Some(1 << 20)
        }),
        seed("blocked4-fpp1e-4-n500-k9-seed", 1e-4, 500, |input| {
            kind(input, Blocked, Four, false);
            input.family.hashes = Some(9);
            input.common.seed = 11;
        }),
        seed("standard4-exp640-n1e9", 0.0, 1_000_000_000, |input| {
            input.size = Size::FppExponent(640)
        }),
        seed("blocked16-counters1000-k3-named", 0.0, 1_000, |input| {
            input.size = Size::Explicit(1000);
            input.family = CountingSettings {
                hashes: Some(3),
                layout: (Blocked, Sixteen),
                named: true,
            };
        }),
        seed("fpp-nan", f64::NAN, 1_000, |_| {}),
    ]
}
