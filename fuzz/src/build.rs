//! What the builder targets share: arbitrary settings decoded from the
//! fuzzer's bytes (and encoded back into those bytes for seeds), and one
//! driver for every builder: `sizing()`, `config()` and, for small sizings,
//! `build()`. Every call must return, `Ok` or a typed error, within a
//! second; what it returns must keep the sizing's promises ([`Claims`]);
//! a filter that is built must have the configuration its builder said and
//! is then used as a caller would ([`exercise`]). Each family's settings
//! and the promises particular to it are in `build_*.rs`.

use std::fmt::Debug;

use arbitrary::{Arbitrary, Unstructured};
use filterlab_core::sizing::MIN_FPP;
use filterlab_core::theory::bloom_fpp_classic;
use filterlab_core::{Error, ErrorKind, Membership, Persist};
use xxhash_rust::xxh3::xxh3_64;

use crate::exercise::{Exercise, exercise, timed};

/// The largest filter a target allocates (the fuzzer must not allocate gigabytes).
pub const BUILD_LIMIT_BYTES: u64 = 64 << 20;
/// The largest filter a target also serializes, reads back and exercises.
pub const EXERCISE_LIMIT_BYTES: u64 = 1 << 20;
/// The builders' default memory cap (64 GiB).
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 36;

/// Arbitrary 1.x's encoding of a value: what `Arbitrary::arbitrary`
/// decodes back into it (integers little-endian, `bool` and `Option` tags
/// one byte, enum variants a u32 scaled by the variant count, floats their
/// bits). The corpus generator writes seeds with it; unit tests check it
/// against `arbitrary` itself.
pub trait FuzzBytes {
    /// Appends the bytes `arbitrary` decodes into `self`.
    fn encode(&self, out: &mut Vec<u8>);

    /// The bytes `arbitrary` decodes into `self`.
    fn to_fuzz_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

macro_rules! le_bytes {
    ($($ty:ty),*) => {
        $(impl FuzzBytes for $ty {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        })*
    };
}

le_bytes!(u16, u32, u64);

impl FuzzBytes for f64 {
    fn encode(&self, out: &mut Vec<u8>) {
        self.to_bits().encode(out);
    }
}

impl FuzzBytes for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl<T: FuzzBytes> FuzzBytes for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_some().encode(out);
        if let Some(value) = self {
            value.encode(out);
        }
    }
}

impl<A: FuzzBytes, B: FuzzBytes> FuzzBytes for (A, B) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
    }
}

/// The enum tag `arbitrary` decodes into variant `index` of `count`: the
/// smallest u32 x with (x · count) >> 32 == index.
pub fn encode_variant(out: &mut Vec<u8>, index: usize, count: usize) {
    let x = ((index as u64) << 32).div_ceil(count as u64);
    (x as u32).encode(out);
}

/// Decodes one input as the targets do.
pub fn from_fuzz_bytes<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    T::arbitrary(&mut Unstructured::new(data)).ok()
}

/// A struct of settings: derives `Arbitrary` and `Default`, and encodes
/// its fields in order ([`FuzzBytes`]).
macro_rules! fuzz_input {
    ($(#[$meta:meta])* pub struct $name:ident {
        $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)*
    }) => {
        $(#[$meta])*
        #[derive(arbitrary::Arbitrary, Clone, Debug, Default)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $crate::build::FuzzBytes for $name {
            fn encode(&self, out: &mut Vec<u8>) {
                $($crate::build::FuzzBytes::encode(&self.$field, out);)*
            }
        }
    };
}

/// An enum of choices without data (the first is the default): derives
/// `Arbitrary` and encodes its variant ([`FuzzBytes`]).
macro_rules! fuzz_choice {
    ($(#[$meta:meta])* pub enum $name:ident {
        $(#[$first_meta:meta])* $first:ident,
        $($(#[$variant_meta:meta])* $variant:ident,)*
    }) => {
        $(#[$meta])*
        #[derive(arbitrary::Arbitrary, Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub enum $name {
            $(#[$first_meta])*
            #[default]
            $first,
            $($(#[$variant_meta])* $variant,)*
        }

        impl $crate::build::FuzzBytes for $name {
            fn encode(&self, out: &mut Vec<u8>) {
                let all = [Self::$first, $(Self::$variant),*];
                let index = all.iter().position(|v| v == self).unwrap_or(0);
                $crate::build::encode_variant(out, index, all.len());
            }
        }
    };
}

pub(crate) use {fuzz_choice, fuzz_input};

/// A size or a probability, from the fuzzer's bytes.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Size {
    /// `with_fpp(p)`, any f64 (NaN, infinities, subnormals, negatives).
    Fpp(f64),
    /// `with_fpp(10^(-e/64))`: reaches the meaningful range, 1 down to
    /// 1e-1023 and 0, far more often than raw f64 bits do.
    FppExponent(u16),
    /// An explicit size: `with_bits(m)`, `with_counters(m)`, `with_buckets(b)`
    /// (for a ratio with no size alternative, the fraction m / 2^64).
    Explicit(u64),
}

impl Default for Size {
    fn default() -> Self {
        Size::Fpp(0.01)
    }
}

impl Size {
    /// The FPP, for the FPP-sized variants.
    pub fn fpp(self) -> Option<f64> {
        match self {
            Size::Fpp(p) => Some(p),
            Size::FppExponent(e) => Some(10f64.powf(-f64::from(e) / 64.0)),
            Size::Explicit(_) => None,
        }
    }

    /// A probability or ratio: the FPP, or the explicit size as a fraction
    /// of 2^64 (evenly over [0, 1)).
    pub fn ratio(self) -> f64 {
        match self {
            Size::Explicit(m) => m as f64 / 2f64.powi(64),
            size => size.fpp().unwrap_or(f64::NAN),
        }
    }
}

impl FuzzBytes for Size {
    fn encode(&self, out: &mut Vec<u8>) {
        let (index, payload) = match *self {
            Size::Fpp(p) => (0, p.to_bits()),
            Size::FppExponent(e) => (1, u64::from(e)),
            Size::Explicit(m) => (2, m),
        };
        encode_variant(out, index, 3);
        match self {
            Size::FppExponent(e) => e.encode(out),
            _ => payload.encode(out),
        }
    }
}

fuzz_input! {
    /// The settings every builder takes (the scalable builder's
    /// `initial_capacity` is its `expected_items`).
    pub struct Common {
        /// `expected_items(n)`, if called.
        pub expected_items: Option<u64>,
        /// `max_memory(bytes)`, if called.
        pub max_memory: Option<u64>,
        /// `seed(s)`.
        pub seed: u64,
    }
}

/// One builder's settings: its size, the common settings, and the family's
/// own (`F`).
#[derive(Arbitrary, Clone, Debug, Default)]
pub struct Settings<F> {
    /// `with_fpp` or the explicit size (the scalable filter's target).
    pub size: Size,
    /// The settings every builder takes.
    pub common: Common,
    /// The family's own settings.
    pub family: F,
}

impl<F: FuzzBytes> FuzzBytes for Settings<F> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.size.encode(out);
        self.common.encode(out);
        self.family.encode(out);
    }
}

impl<F: Default> Settings<F> {
    /// FPP `p` at `n` items, every other setting left at its default.
    pub fn fpp(p: f64, n: u64) -> Self {
        let common = Common {
            expected_items: Some(n),
            ..Common::default()
        };
        Self {
            size: Size::Fpp(p),
            common,
            family: F::default(),
        }
    }

    /// The memory cap the builder applies.
    pub fn max_memory(&self) -> u64 {
        self.common.max_memory.unwrap_or(DEFAULT_MAX_MEMORY)
    }
}

/// A named seed: FPP `p` at `n` items, then `set` changes settings.
pub fn seed<F: Default>(
    name: &str,
    p: f64,
    n: u64,
    set: fn(&mut Settings<F>),
) -> (String, Settings<F>) {
    let mut input = Settings::fpp(p, n);
    set(&mut input);
    (name.to_owned(), input)
}

/// The setters every builder has, for [`with_common`].
pub trait CommonBuilder: Sized {
    /// `expected_items(n)` (the scalable builder's `initial_capacity(n)`).
    fn items(self, items: u64) -> Self;
    /// `max_memory(bytes)`.
    fn memory(self, bytes: u64) -> Self;
    /// `seed(s)`.
    fn seeded(self, seed: u64) -> Self;
}

/// Implements [`CommonBuilder`] with a builder's own setters.
macro_rules! common_builder {
    ([$($generics:tt)*] $builder:ty, $items:ident) => {
        impl<$($generics)*> $crate::build::CommonBuilder for $builder {
            fn items(self, items: u64) -> Self {
                self.$items(items)
            }

            fn memory(self, bytes: u64) -> Self {
                self.max_memory(bytes)
            }

            fn seeded(self, seed: u64) -> Self {
                self.seed(seed)
            }
        }
    };
}

pub(crate) use common_builder;

/// `builder` with the common settings applied.
pub fn with_common<B: CommonBuilder>(builder: B, common: &Common) -> B {
    let builder = maybe(builder, common.expected_items, B::items);
    maybe(builder, common.max_memory, B::memory).seeded(common.seed)
}

/// `set(builder, value)` when the settings have a value, else `builder`.
pub fn maybe<B, T>(builder: B, value: Option<T>, set: impl FnOnce(B, T) -> B) -> B {
    match value {
        Some(value) => set(builder, value),
        None => builder,
    }
}

/// The promises a sizing record keeps, whatever the family.
pub trait Claims: Debug {
    /// Bytes the filter will take.
    fn bytes(&self) -> u64;

    /// The FPP claimed at the load sized for, and the target it must meet
    /// (`None` where the caller fixed what decides it, e.g. k).
    fn fpp(&self) -> (f64, Option<f64>);

    /// The promises particular to the family; `input` for the messages.
    fn check(&self, input: &dyn Debug);
}

/// A builder under test: its three calls.
pub trait Builder {
    /// What `build()` makes.
    type Filter: Exercise;
    /// What `sizing()` returns.
    type Sizing;
    /// `sizing()`.
    fn sizing(&self) -> Result<Self::Sizing, Error>;
    /// `config()`.
    fn config(&self) -> Result<<Self::Filter as Persist>::Config, Error>;
    /// `build()`.
    fn build(&self) -> Result<Self::Filter, Error>;
}

/// Implements [`Builder`] with a builder's own `sizing`, `config` and `build`.
macro_rules! builder {
    ([$($generics:tt)*] $builder:ty => $filter:ty, $sizing:ty) => {
        impl<$($generics)*> $crate::build::Builder for $builder {
            type Filter = $filter;
            type Sizing = $sizing;

            fn sizing(&self) -> Result<$sizing, filterlab_core::Error> {
                <$builder>::sizing(self)
            }

            fn config(
                &self,
            ) -> Result<<$filter as filterlab_core::Persist>::Config, filterlab_core::Error> {
                <$builder>::config(self)
            }

            fn build(&self) -> Result<$filter, filterlab_core::Error> {
                <$builder>::build(self)
            }
        }
    };
}

pub(crate) use builder;

/// The same error kinds, or the same success, from two calls that must agree.
fn same_outcome<A: Debug, B: Debug>(a: &Result<A, Error>, b: &Result<B, Error>, what: &str) {
    match (a, b) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{what}: {a} / {b}"),
        _ => panic!("{what} disagree: {a:?} / {b:?}"),
    }
}

/// How a sizing may refuse: a parameter outside its domain, or too much
/// memory. Any other kind is a finding.
pub fn sizing_refusal(err: &Error, input: &dyn Debug) {
    let kind = err.kind();
    let allowed = [ErrorKind::InvalidParameter, ErrorKind::TooLarge];
    assert!(
        allowed.contains(&kind),
        "a sizing refused with {err}: {input:?}"
    );
}

/// Runs `builder` (named `name`, made from `input`, under the memory cap
/// `max_memory`): `sizing()` refuses only with `InvalidParameter` or
/// `TooLarge`, and `config()` agrees with it (or succeeds where the sizing
/// is too large, which `build()` then refuses too); a sizing (as `claims`
/// makes it into [`Claims`]) keeps its promises and fits the cap; when it is
/// at most [`BUILD_LIMIT_BYTES`], `build()` succeeds (or refuses as
/// `may_refuse` allows) with the configuration `config()` said, within the
/// cap, and when it is at most [`EXERCISE_LIMIT_BYTES`] the filter reads
/// back and is exercised. The claims, and the filter if one was built.
pub fn drive<B: Builder, C: Claims>(
    (name, input, max_memory): (&str, &dyn Debug, u64),
    builder: &B,
    claims: impl FnOnce(B::Sizing) -> C,
    may_refuse: impl FnOnce(&Error) -> bool,
) -> Option<(C, Option<B::Filter>)>
where
    B::Sizing: Debug,
{
    let sizing = timed(&format!("{name}::sizing"), input, || builder.sizing());
    let config = timed(&format!("{name}::config"), input, || builder.config());
    let (sizing, config) = match (sizing, config) {
        (Ok(sizing), Ok(config)) => (claims(sizing), config),
        (Err(err), Ok(_)) => {
            // A configuration that is valid but does not fit (the scalable
            // builder's `config()` checks the settings alone): `build()`
            // refuses it the same way, before allocating.
            sizing_refusal(&err, input);
            let built = timed(&format!("{name}::build"), input, || builder.build());
            same_outcome(&Err::<(), _>(err), &built, "sizing and build");
            return None;
        }
        (sizing, config) => {
            same_outcome(&sizing, &config, "sizing and config");
            sizing
                .err()
                .iter()
                .for_each(|err| sizing_refusal(err, input));
            return None;
        }
    };
    check_claims(&sizing, max_memory, input);
    if sizing.bytes() > BUILD_LIMIT_BYTES {
        return Some((sizing, None));
    }
    let filter = match timed(&format!("{name}::build"), input, || builder.build()) {
        Ok(filter) => filter,
        Err(err) if may_refuse(&err) => return Some((sizing, None)),
        Err(err) => panic!("sizing succeeded, build failed: {err}: {input:?}"),
    };
    assert_eq!(filter.config(), config, "the built filter's configuration");
    let memory = filter.memory_usage() as u64;
    assert!(
        memory <= max_memory,
        "a filter of {memory} bytes over the cap of {max_memory}: {input:?}"
    );
    if memory <= EXERCISE_LIMIT_BYTES {
        let bytes = filter.to_bytes();
        let back =
            B::Filter::read_from_expecting(&bytes[..], &config).expect("reads what it wrote");
        assert!(back == filter, "read back unequal: {input:?}");
        exercise(&filter, xxh3_64(format!("{input:?}").as_bytes()));
    }
    Some((sizing, Some(filter)))
}

/// The promises of any sizing: an FPP in [0, 1], at most its target;
/// within the memory cap; and the family's own.
pub fn check_claims(claims: &impl Claims, max_memory: u64, input: &dyn Debug) {
    let (fpp, target) = claims.fpp();
    assert!(
        (0.0..=1.0).contains(&fpp),
        "FPP {fpp}: {claims:?} for {input:?}"
    );
    if let Some(target) = target {
        assert!(
            fpp <= target,
            "the sizing claims {fpp:e}, above its target {target:e}: {claims:?} for {input:?}"
        );
    }
    let bytes = claims.bytes();
    assert!(
        bytes <= max_memory,
        "{bytes} bytes over the cap of {max_memory}: {input:?}"
    );
    claims.check(input);
}

/// A sizing record of an array of cells probed k times a key: the Bloom
/// filters' (bits) and the counting filters' (counters).
pub trait ArrayRecord: Debug {
    /// Cells in the array.
    fn cells(&self) -> u64;
    /// Probes a key.
    fn hashes(&self) -> u32;
    /// The load sized for.
    fn items(&self) -> u64;
    /// The exact FPP claimed at that load.
    fn claimed_fpp(&self) -> f64;
    /// The target, if sized for one and the caller did not fix k.
    fn binding_target(&self) -> Option<f64>;
    /// Bytes of the array.
    fn record_bytes(&self) -> u64;
}

/// Implements [`ArrayRecord`] for a sizing record, given the field holding
/// its cells (the records share the names of the others).
macro_rules! array_record {
    ($record:ty, $cells:ident) => {
        impl $crate::build::ArrayRecord for $record {
            fn cells(&self) -> u64 {
                self.$cells
            }

            fn hashes(&self) -> u32 {
                self.num_hashes
            }

            fn items(&self) -> u64 {
                self.expected_items
            }

            fn claimed_fpp(&self) -> f64 {
                self.fpp_at_capacity
            }

            fn binding_target(&self) -> Option<f64> {
                let explicit = self.hash_choice == filterlab_bloom::HashChoice::Explicit;
                self.target_fpp.filter(|_| !explicit)
            }

            fn record_bytes(&self) -> u64 {
                self.bytes()
            }
        }
    };
}

pub(crate) use array_record;

/// An array sizing and what the settings asked of it.
#[derive(Debug)]
pub struct ArrayClaims<R> {
    /// The sizing record.
    pub record: R,
    /// Cells per block for a blocked layout, `None` for a standard one.
    pub block: Option<u64>,
    /// The settings' `expected_items`, and explicit size.
    pub asked: (Option<u64>, Option<u64>),
}

impl<R: ArrayRecord> Claims for ArrayClaims<R> {
    fn bytes(&self) -> u64 {
        self.record.record_bytes()
    }

    fn fpp(&self) -> (f64, Option<f64>) {
        (self.record.claimed_fpp(), self.record.binding_target())
    }

    /// k in 1..=64; the load asked for; whole blocks for a blocked layout,
    /// the size asked for for a standard one, whose FPP is never below the
    /// classic formula, a lower bound on the exact one (Bose et al.), where
    /// that bound is at least `MIN_FPP`.
    fn check(&self, input: &dyn Debug) {
        let record = &self.record;
        let (k, cells, items) = (record.hashes(), record.cells(), record.items());
        assert!((1..=64).contains(&k), "k = {k}: {record:?}");
        assert!(cells >= 1 && items >= 1, "{record:?}");
        if let Some(asked) = self.asked.0 {
            assert_eq!(items, asked, "{input:?}");
        }
        if let Some(block) = self.block {
            assert!(
                cells.is_multiple_of(block),
                "{cells} cells are not whole blocks of {block}: {input:?}"
            );
            return;
        }
        if let Some(asked) = self.asked.1 {
            assert_eq!(cells, asked, "not the size asked for: {input:?}");
        }
        let classic = timed("bloom_fpp_classic", input, || {
            bloom_fpp_classic(cells, k, items)
        });
        if classic < MIN_FPP {
            // Below `MIN_FPP` both are subnormal floats with few
            // significant bits, and the theory promises no relative
            // accuracy there.
            return;
        }
        let fpp = record.claimed_fpp();
        assert!(
            fpp >= classic * (1.0 - 1e-9),
            "claimed FPP {fpp:e} below the classic lower bound {classic:e} (m = {cells}, k = {k}, n = {items}): {input:?}"
        );
    }
}
