//! The builder targets: arbitrary parameters through the builders'
//! `sizing()`, `config()`, `params(n, p)` and, for small sizings, `build()`.
//! Every call must return, `Ok` or a typed error, within a second, and what
//! it returns must keep the sizing's promises.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
use filterlab_bloom::{
    BlockedBloomBuilder, BlockedBloomFilter, BloomBuilder, BloomFilter, BloomSizing, Filter,
    HashChoice, Kernel, Persist,
};
use filterlab_core::sizing::MIN_FPP;

/// The longest one call may take.
pub const CALL_LIMIT: Duration = Duration::from_secs(1);
/// The largest filter a target allocates (the fuzzer must not allocate gigabytes).
pub const BUILD_LIMIT_BYTES: u64 = 64 << 20;
/// The largest filter a target also serializes and reads back.
const ROUND_TRIP_LIMIT_BYTES: u64 = 1 << 20;
/// The builders' default memory cap (64 GiB).
const DEFAULT_MAX_MEMORY: u64 = 1 << 36;

/// How the builder is sized.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Size {
    /// `with_fpp(p)`, any f64 (NaN, infinities, subnormals, negatives).
    Fpp(f64),
    /// `with_fpp(10^(-e/64))`: reaches the meaningful range, 1 down to
    /// 1e-1023 and 0, far more often than raw f64 bits do.
    FppExponent(u16),
    /// `with_bits(m)`.
    Bits(u64),
}

impl Size {
    /// The FPP, for the FPP-sized variants.
    pub fn fpp(self) -> Option<f64> {
        match self {
            Size::Fpp(p) => Some(p),
            Size::FppExponent(e) => Some(10f64.powf(-f64::from(e) / 64.0)),
            Size::Bits(_) => None,
        }
    }
}

/// The lookup kernel asked of a blocked builder.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelChoice {
    /// No `kernel(..)` call: the builder detects the fastest.
    Detect,
    /// `Kernel::Scalar`.
    Scalar,
    /// `Kernel::Avx2` (a typed error where the CPU lacks it).
    Avx2,
}

/// One builder's settings, decoded from the fuzzer's bytes by `arbitrary`.
#[derive(Arbitrary, Clone, Debug)]
pub struct BuildInput {
    /// `with_fpp` or `with_bits`.
    pub size: Size,
    /// `expected_items(n)`, if called.
    pub expected_items: Option<u64>,
    /// `hashes(k)`, if called.
    pub hashes: Option<u32>,
    /// `max_memory(bytes)`, if called.
    pub max_memory: Option<u64>,
    /// `power_of_two(..)` (standard filter only).
    pub power_of_two: bool,
    /// `seed(s)`.
    pub seed: u64,
    /// `kernel(..)` (blocked filter only).
    pub kernel: KernelChoice,
}

impl BuildInput {
    /// Decodes the input as the targets do.
    pub fn from_fuzz_bytes(data: &[u8]) -> Option<Self> {
        Self::arbitrary(&mut Unstructured::new(data)).ok()
    }

    /// The bytes [`from_fuzz_bytes`](Self::from_fuzz_bytes) decodes into
    /// this input: arbitrary 1.x's encoding (integers little-endian, `bool`
    /// and `Option` tags one byte, enum variants a u32 scaled by the variant
    /// count, floats their bits). The corpus generator writes seeds with it;
    /// a unit test checks it against `arbitrary` itself.
    pub fn to_fuzz_bytes(&self) -> Vec<u8> {
        fn variant(out: &mut Vec<u8>, index: u64, count: u64) {
            // The smallest u32 x with (x · count) >> 32 == index.
            let x = (index << 32).div_ceil(count);
            out.extend_from_slice(&(x as u32).to_le_bytes());
        }
        fn option<T>(out: &mut Vec<u8>, value: Option<T>, some: impl FnOnce(&mut Vec<u8>, T)) {
            match value {
                Some(value) => {
                    out.push(1);
                    some(out, value);
                }
                None => out.push(0),
            }
        }
        let mut out = Vec::new();
        match self.size {
            Size::Fpp(p) => {
                variant(&mut out, 0, 3);
                out.extend_from_slice(&p.to_bits().to_le_bytes());
            }
            Size::FppExponent(e) => {
                variant(&mut out, 1, 3);
                out.extend_from_slice(&e.to_le_bytes());
            }
            Size::Bits(m) => {
                variant(&mut out, 2, 3);
                out.extend_from_slice(&m.to_le_bytes());
            }
        }
        option(&mut out, self.expected_items, |o, n| {
            o.extend_from_slice(&n.to_le_bytes())
        });
        option(&mut out, self.hashes, |o, k| {
            o.extend_from_slice(&k.to_le_bytes())
        });
        option(&mut out, self.max_memory, |o, b| {
            o.extend_from_slice(&b.to_le_bytes())
        });
        out.push(u8::from(self.power_of_two));
        out.extend_from_slice(&self.seed.to_le_bytes());
        let kernel = match self.kernel {
            KernelChoice::Detect => 0,
            KernelChoice::Scalar => 1,
            KernelChoice::Avx2 => 2,
        };
        variant(&mut out, kernel, 3);
        out
    }
}

/// Runs `call`, panicking (a fuzz finding) when it takes longer than
/// [`CALL_LIMIT`]. Under libFuzzer `-timeout=1` also catches calls that never
/// return; this names the call when replaying a slow input.
pub fn timed<T>(what: &str, input: &dyn Debug, call: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = call();
    let took = start.elapsed();
    assert!(took <= CALL_LIMIT, "{what} took {took:?} for {input:?}");
    value
}

/// The checks every successful sizing must pass.
fn check_sizing(sizing: &BloomSizing, input: &BuildInput, blocked: bool) {
    let k = sizing.num_hashes;
    assert!((1..=64).contains(&k), "k = {k}: {sizing:?}");
    assert!(sizing.num_bits >= 1, "{sizing:?}");
    if blocked {
        assert!(
            sizing.num_bits.is_multiple_of(512),
            "a blocked sizing of {} bits is not a whole number of 512-bit blocks: {input:?}",
            sizing.num_bits
        );
    }
    let cap = input.max_memory.unwrap_or(DEFAULT_MAX_MEMORY);
    assert!(
        sizing.bytes() <= cap,
        "{} bytes over the cap of {cap}: {input:?}",
        sizing.bytes()
    );
    if let Some(n) = input.expected_items {
        assert_eq!(sizing.expected_items, n, "{input:?}");
    }
    assert!(sizing.expected_items >= 1, "{sizing:?}");
    let fpp = sizing.fpp_at_capacity;
    assert!(
        (0.0..=1.0).contains(&fpp),
        "FPP at capacity {fpp}: {input:?}"
    );
    assert!(
        (0.0..=1.0).contains(&sizing.fpp_classic),
        "classic FPP {}: {input:?}",
        sizing.fpp_classic
    );
    if let (Some(target), false) = (
        sizing.target_fpp,
        sizing.hash_choice == HashChoice::Explicit,
    ) {
        assert!(
            fpp <= target,
            "sizing claims {fpp:e}, above its target {target:e}: {input:?}"
        );
    }
    if !blocked && sizing.fpp_classic >= MIN_FPP {
        // The classic formula is a lower bound on the standard filter's
        // exact FPP (Bose et al.); a claim below it is wrong. Below
        // `MIN_FPP` both are subnormal floats with few significant bits,
        // and the theory promises no relative accuracy there.
        assert!(
            fpp >= sizing.fpp_classic * (1.0 - 1e-9),
            "claimed FPP {fpp:e} below the classic lower bound {:e} (m = {}, k = {k}, n = {}): {input:?}",
            sizing.fpp_classic,
            sizing.num_bits,
            sizing.expected_items
        );
    }
}

/// A few keys in and out of a freshly built filter, its FPPs, and (when
/// small) its bytes read back.
fn use_built<F: Filter + Persist + PartialEq + Debug>(filter: &mut F, input: &BuildInput) {
    let keys = [input.seed, !input.seed, 1, 2, 3];
    let hasher = *filter.hasher();
    for key in keys {
        let hash = hasher.hash(&key);
        filter
            .insert_hash(hash)
            .expect("a Bloom filter takes any key");
        assert!(filter.contains_hash(hash), "false negative: {input:?}");
    }
    assert!(filter.len() <= keys.len());
    let _ = timed("expected_fpp", input, || filter.expected_fpp());
    let capacity = filter.capacity().map_or(1, |c| c as u64);
    let fpp = timed("theoretical_fpp(capacity)", input, || {
        filter.theoretical_fpp(capacity)
    });
    if let Some(fpp) = fpp {
        assert!(
            (0.0..=1.0).contains(&fpp),
            "theoretical_fpp {fpp}: {input:?}"
        );
    }
    if filter.memory_usage() as u64 <= ROUND_TRIP_LIMIT_BYTES {
        let bytes = filter.to_bytes();
        assert_eq!(&F::from_bytes(&bytes).expect("reads what it wrote"), filter);
    }
}

fn bloom_builder(input: &BuildInput) -> BloomBuilder {
    let mut builder = match input.size {
        Size::Bits(m) => BloomFilter::with_bits(m),
        size => BloomFilter::with_fpp(size.fpp().unwrap_or(f64::NAN)),
    };
    if let Some(n) = input.expected_items {
        builder = builder.expected_items(n);
    }
    if let Some(k) = input.hashes {
        builder = builder.hashes(k);
    }
    if let Some(bytes) = input.max_memory {
        builder = builder.max_memory(bytes);
    }
    builder.power_of_two(input.power_of_two).seed(input.seed)
}

fn blocked_builder(input: &BuildInput) -> BlockedBloomBuilder {
    let mut builder = match input.size {
        Size::Bits(m) => BlockedBloomFilter::with_bits(m),
        size => BlockedBloomFilter::with_fpp(size.fpp().unwrap_or(f64::NAN)),
    };
    if let Some(n) = input.expected_items {
        builder = builder.expected_items(n);
    }
    if let Some(k) = input.hashes {
        builder = builder.hashes(k);
    }
    if let Some(bytes) = input.max_memory {
        builder = builder.max_memory(bytes);
    }
    match input.kernel {
        KernelChoice::Detect => {}
        KernelChoice::Scalar => builder = builder.kernel(Kernel::Scalar),
        KernelChoice::Avx2 => builder = builder.kernel(Kernel::Avx2),
    }
    builder.seed(input.seed)
}

/// The `build_bloom` target.
pub fn bloom_target(data: &[u8]) {
    let Some(input) = BuildInput::from_fuzz_bytes(data) else {
        return;
    };
    let builder = bloom_builder(&input);
    let sizing = timed("BloomBuilder::sizing", &input, || builder.sizing());
    let config = timed("BloomBuilder::config", &input, || builder.config());
    assert_eq!(sizing.is_ok(), config.is_ok(), "{input:?}");
    if let (Some(p), Some(n)) = (input.size.fpp(), input.expected_items) {
        let _ = timed("BloomFilter::params", &input, || BloomFilter::params(n, p));
    }
    let (Ok(sizing), Ok(config)) = (sizing, config) else {
        return;
    };
    check_sizing(&sizing, &input, false);
    assert_eq!(
        (config.num_bits, config.num_hashes),
        (sizing.num_bits, sizing.num_hashes)
    );
    if sizing.bytes() > BUILD_LIMIT_BYTES {
        return;
    }
    let mut filter = timed("BloomBuilder::build", &input, || builder.build())
        .unwrap_or_else(|err| panic!("sizing succeeded, build failed: {err}: {input:?}"));
    assert_eq!(Persist::config(&filter), config);
    use_built(&mut filter, &input);
    if sizing.bytes() <= ROUND_TRIP_LIMIT_BYTES {
        let atomic = timed("BloomBuilder::build_atomic", &input, || {
            builder.build_atomic()
        })
        .expect("build_atomic where build succeeds");
        assert_eq!(Persist::config(&atomic), config);
    }
}

/// The `build_blocked` target.
pub fn blocked_target(data: &[u8]) {
    let Some(input) = BuildInput::from_fuzz_bytes(data) else {
        return;
    };
    let builder = blocked_builder(&input);
    let sizing = timed("BlockedBloomBuilder::sizing", &input, || builder.sizing());
    let config = timed("BlockedBloomBuilder::config", &input, || builder.config());
    assert_eq!(sizing.is_ok(), config.is_ok(), "{input:?}");
    if let (Some(p), Some(n)) = (input.size.fpp(), input.expected_items) {
        let _ = timed("BlockedBloomFilter::params", &input, || {
            BlockedBloomFilter::params(n, p)
        });
    }
    let (Ok(sizing), Ok(config)) = (sizing, config) else {
        return;
    };
    check_sizing(&sizing, &input, true);
    assert_eq!(
        (config.num_blocks * 512, config.num_hashes),
        (sizing.num_bits, sizing.num_hashes)
    );
    if sizing.bytes() > BUILD_LIMIT_BYTES {
        return;
    }
    let built = timed("BlockedBloomBuilder::build", &input, || builder.build());
    let mut filter = match built {
        Ok(filter) => filter,
        // The one refusal allowed after a sizing: a kernel this CPU lacks.
        Err(_) if input.kernel == KernelChoice::Avx2 && !Kernel::Avx2.is_available() => return,
        Err(err) => panic!("sizing succeeded, build failed: {err}: {input:?}"),
    };
    assert_eq!(Persist::config(&filter), config);
    use_built(&mut filter, &input);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<BuildInput> {
        let base = BuildInput {
            size: Size::Fpp(0.01),
            expected_items: Some(1_000),
            hashes: None,
            max_memory: None,
            power_of_two: false,
            seed: 0,
            kernel: KernelChoice::Detect,
        };
        vec![
            base.clone(),
            BuildInput {
                size: Size::FppExponent(300),
                hashes: Some(7),
                max_memory: Some(1 << 20),
                power_of_two: true,
                seed: u64::MAX,
                kernel: KernelChoice::Avx2,
                ..base.clone()
            },
            BuildInput {
                size: Size::Bits(u64::MAX),
                expected_items: None,
                kernel: KernelChoice::Scalar,
                ..base.clone()
            },
            BuildInput {
                size: Size::Fpp(f64::NAN),
                ..base
            },
        ]
    }

    #[test]
    fn seed_encoding_is_what_arbitrary_decodes() {
        for input in inputs() {
            let bytes = input.to_fuzz_bytes();
            let decoded = BuildInput::from_fuzz_bytes(&bytes).unwrap();
            assert_eq!(format!("{decoded:?}"), format!("{input:?}"));
            assert_eq!(decoded.to_fuzz_bytes(), bytes);
        }
    }

    #[test]
    fn typical_inputs_pass() {
        for input in inputs() {
            bloom_target(&input.to_fuzz_bytes());
            blocked_target(&input.to_fuzz_bytes());
        }
    }
}
