//! The `build_bloom` and `build_blocked` targets: `BloomFilter` and
//! `BlockedBloomFilter` builders (`with_fpp`, `with_bits`, `params`) with
//! arbitrary settings, through [`drive`].

use filterlab_bloom::{
    BlockedBloomBuilder, BlockedBloomFilter, BloomBuilder, BloomFilter, BloomSizing, Kernel,
    Persist,
};
use filterlab_core::Error;

use crate::build::{
    ArrayClaims, Common, EXERCISE_LIMIT_BYTES, Settings, Size, array_record, builder,
    common_builder, drive, from_fuzz_bytes, fuzz_choice, fuzz_input, maybe, seed, with_common,
};
use crate::exercise::timed;

fuzz_choice! {
    /// The lookup kernel asked of a blocked builder.
    pub enum KernelChoice {
        /// No `kernel(..)` call: the builder detects the fastest.
        Detect,
        /// `Kernel::Scalar`.
        Scalar,
        /// `Kernel::Avx2` (a typed error where the CPU lacks it).
        Avx2,
    }
}

fuzz_input! {
    /// A Bloom builder's own settings.
    pub struct BloomSettings {
        /// `hashes(k)`, if called.
        pub hashes: Option<u32>,
        /// `power_of_two(..)` (standard filter only).
        pub power_of_two: bool,
        /// `kernel(..)` (blocked filter only).
        pub kernel: KernelChoice,
    }
}

/// One Bloom builder's settings, decoded from the fuzzer's bytes by `arbitrary`.
pub type BuildInput = Settings<BloomSettings>;

common_builder!([] BloomBuilder, expected_items);
common_builder!([] BlockedBloomBuilder, expected_items);
builder!([] BloomBuilder => BloomFilter, BloomSizing);
builder!([] BlockedBloomBuilder => BlockedBloomFilter, BloomSizing);
array_record!(BloomSizing, num_bits);

fn bloom_builder(input: &BuildInput) -> BloomBuilder {
    let builder = match input.size {
        Size::Explicit(m) => BloomFilter::with_bits(m),
        size => BloomFilter::with_fpp(size.fpp().unwrap_or(f64::NAN)),
    };
    let builder = maybe(builder, input.family.hashes, BloomBuilder::hashes);
    with_common(builder, &input.common).power_of_two(input.family.power_of_two)
}

fn blocked_builder(input: &BuildInput) -> BlockedBloomBuilder {
    let builder = match input.size {
        Size::Explicit(m) => BlockedBloomFilter::with_bits(m),
        size => BlockedBloomFilter::with_fpp(size.fpp().unwrap_or(f64::NAN)),
    };
    let builder = maybe(builder, input.family.hashes, BlockedBloomBuilder::hashes);
    let kernel = match input.family.kernel {
        KernelChoice::Detect => None,
        KernelChoice::Scalar => Some(Kernel::Scalar),
        KernelChoice::Avx2 => Some(Kernel::Avx2),
    };
    maybe(
        with_common(builder, &input.common),
        kernel,
        BlockedBloomBuilder::kernel,
    )
}

/// The claims of a Bloom sizing: whole blocks of `block` bits, or (for the
/// standard filter, unless rounded to a power of two) the bits asked for.
fn claims(
    input: &BuildInput,
    block: Option<u64>,
) -> impl FnOnce(BloomSizing) -> ArrayClaims<BloomSizing> {
    let asked = match input.size {
        Size::Explicit(m) if !input.family.power_of_two => Some(m),
        _ => None,
    };
    move |record| ArrayClaims {
        record,
        block,
        asked: (input.common.expected_items, asked),
    }
}

/// `params(n, p)` where the settings have both (a sizing, or a typed error).
fn params(input: &BuildInput, name: &str, params: fn(u64, f64) -> Result<BloomSizing, Error>) {
    if let (Some(p), Some(n)) = (input.size.fpp(), input.common.expected_items) {
        let _ = timed(name, input, || params(n, p));
    }
}

/// The `build_bloom` target.
pub fn bloom_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<BuildInput>(data) else {
        return;
    };
    params(&input, "BloomFilter::params", BloomFilter::params);
    let builder = bloom_builder(&input);
    let named = ("BloomBuilder", &input as _, input.max_memory());
    let Some((claims, Some(filter))) = drive(named, &builder, claims(&input, None), |_| false)
    else {
        return;
    };
    let record = &claims.record;
    assert_eq!(
        (filter.num_bits(), filter.num_hashes()),
        (record.num_bits, record.num_hashes)
    );
    if record.bytes() <= EXERCISE_LIMIT_BYTES {
        let atomic = timed("BloomBuilder::build_atomic", &input, || {
            builder.build_atomic()
        })
        .expect("build_atomic where build succeeds");
        assert_eq!(Persist::config(&atomic), Persist::config(&filter));
    }
}

/// The `build_blocked` target.
pub fn blocked_target(data: &[u8]) {
    let Some(input) = from_fuzz_bytes::<BuildInput>(data) else {
        return;
    };
    params(
        &input,
        "BlockedBloomFilter::params",
        BlockedBloomFilter::params,
    );
    let builder = blocked_builder(&input);
    // The one refusal allowed after a sizing: a kernel this CPU lacks.
    let lacks_kernel =
        |_: &Error| input.family.kernel == KernelChoice::Avx2 && !Kernel::Avx2.is_available();
    let named = ("BlockedBloomBuilder", &input as _, input.max_memory());
    if let Some((claims, Some(filter))) =
        drive(named, &builder, claims(&input, Some(512)), lacks_kernel)
    {
        assert_eq!(
            (filter.num_blocks() * 512, filter.num_hashes()),
            (claims.record.num_bits, claims.record.num_hashes)
        );
    }
}

/// Typical settings, named: the seeds of the corpus generator (encoded
/// with [`FuzzBytes`](crate::build::FuzzBytes)) and of the unit tests.
pub fn seeds() -> Vec<(String, BuildInput)> {
    fn explicit(input: &mut BuildInput, m: u64, k: Option<u32>) {
        input.size = Size::Explicit(m);
        input.family.hashes = k;
    }
    let seed = seed::<BloomSettings>;
    vec![
        seed("fpp1e-2-n1e6", 0.01, 1_000_000, |_| {}),
        seed("fpp1e-3-n1e4-seed", 0.001, 10_000, |input| {
            input.common.seed = 42
        }),
        seed("exp128-n1e5-pow2", 0.0, 100_000, |input| {
            input.size = Size::FppExponent(128);
            input.family.power_of_two = true;
        }),
        seed("fpp1e-6-n1000-k20", 1e-6, 1_000, |input| {
            input.family.hashes = Some(20)
        }),
        seed("bits2e20-n1000", 0.0, 1_000, |input| {
            explicit(input, 1 << 20, None)
        }),
        seed("bits8192-k7", 0.0, 0, |input| {
            explicit(input, 8192, Some(7));
            input.common.expected_items = None;
        }),
        seed("bits2e20-k3-capped", 0.0, 0, |input| {
            explicit(input, 1 << 20, Some(3));
            input.common = Common {
                expected_items: None,
                max_memory: Some(1 << 16),
                seed: 0,
            };
        }),
        seed("fpp5e-2-n1-scalar", 0.05, 1, |input| {
            input.common.max_memory = Some(1 << 30);
            input.family.kernel = KernelChoice::Scalar;
        }),
        seed("exp640-n1e9", 0.0, 1_000_000_000, |input| {
            input.size = Size::FppExponent(640)
        }),
        seed("fpp5e-1-n10-avx2", 0.5, 10, |input| {
            input.family.kernel = KernelChoice::Avx2;
            input.common.seed = 7;
        }),
        seed("exp300-k7-capped-pow2-avx2", 0.0, 1_000, |input| {
            input.size = Size::FppExponent(300);
            input.common = Common {
                expected_items: Some(1_000),
                max_memory: Some(1 << 20),
                seed: u64::MAX,
            };
            input.family = BloomSettings {
                hashes: Some(7),
                power_of_two: true,
                kernel: KernelChoice::Avx2,
            };
        }),
        seed("bits-u64max-scalar", 0.0, 0, |input| {
            input.size = Size::Explicit(u64::MAX);
            input.common.expected_items = None;
            input.family.kernel = KernelChoice::Scalar;
        }),
        seed("fpp-nan", f64::NAN, 1_000, |_| {}),
    ]
}
