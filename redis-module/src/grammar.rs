//! RedisBloom's argument grammar for the commands that take options
//! (BF.RESERVE, BF.INSERT, CF.RESERVE, CF.INSERT), its error texts, and
//! the checks that run before anything is allocated. Its flow tests and
//! `src/rebloom.c` are the specification; the differences are listed in
//! the README.

use std::borrow::Cow;

use crate::options::{
    ERROR_RATE_CAP, MAX_BUCKET_SIZE, MAX_CAPACITY, MAX_EXPANSION, MAX_ITERATIONS, Options,
};

/// A command's arguments, the command name first: their bytes, and numbers
/// read the server's way (`RedisModule_StringToLongLong` and
/// `StringToDouble` in the module; Rust's parsers in the unit tests).
pub trait Argv {
    /// Arguments, the command name included.
    fn count(&self) -> usize;
    /// Argument `index`'s bytes (empty past the end).
    fn bytes(&self, index: usize) -> &[u8];
    /// Argument `index` as an integer.
    fn integer(&self, index: usize) -> Option<i64>;
    /// Argument `index` as a floating-point number.
    fn float(&self, index: usize) -> Option<f64>;
}

/// Why a command is refused: the reply the client gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// "ERR wrong number of arguments for '…' command".
    Arity,
    /// An error reply with this text.
    Text(Cow<'static, str>),
}

impl Refusal {
    /// An error reply of a fixed text.
    pub const fn text(text: &'static str) -> Self {
        Self::Text(Cow::Borrowed(text))
    }
}

/// A command's result: its reply was written, or it is refused.
pub type Parsed<T> = Result<T, Refusal>;

/// "ERR not found": the key does not exist (RedisBloom's text).
pub const NOT_FOUND: Refusal = Refusal::text("ERR not found");
/// The key holds another type.
pub const WRONG_TYPE: Refusal =
    Refusal::text("WRONGTYPE Operation against a key holding the wrong kind of value");
/// A RESERVE (or a first LOADCHUNK) on a key that exists.
pub const EXISTS: Refusal = Refusal::text("ERR item exists");

/// How to create a scalable Bloom filter: BF.RESERVE's arguments, or the
/// defaults and BF.INSERT's options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomParams {
    /// The compound FPP target.
    pub error_rate: f64,
    /// Items of the first layer.
    pub capacity: u64,
    /// Growth factor of the layers.
    pub expansion: u64,
    /// One layer, refusing keys past its capacity.
    pub non_scaling: bool,
    /// The tightening ratio of the layers (the module's).
    pub tightening: f64,
    /// The first layer's share of the error rate (the module's).
    pub first_share: Option<f64>,
    /// Whether the error rate asked for was lowered to [`ERROR_RATE_CAP`]
    /// (the module logs a warning, as RedisBloom does).
    pub capped: bool,
}

impl BloomParams {
    /// The module's defaults (BF.ADD and BF.MADD create with these).
    pub fn defaults(options: &Options) -> Self {
        Self {
            error_rate: options.bf_error_rate,
            capacity: options.bf_initial_size as u64,
            expansion: options.bf_expansion_factor as u64,
            non_scaling: false,
            tightening: options.bf_tightening,
            first_share: options.bf_first_share,
            capped: false,
        }
    }
}

/// BF.INSERT's options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomInsert {
    /// How to create the filter when the key is empty.
    pub params: BloomParams,
    /// Whether to create it (not NOCREATE).
    pub create: bool,
    /// Where the items start.
    pub items: usize,
}

/// Whether `argv[index]` is `word`, case-insensitively.
fn is(argv: &impl Argv, index: usize, word: &str) -> bool {
    argv.bytes(index).eq_ignore_ascii_case(word.as_bytes())
}

/// Where `word` is among the arguments from `from` on.
fn find(argv: &impl Argv, from: usize, word: &str) -> Option<usize> {
    (from..argv.count()).find(|&index| is(argv, index, word))
}

/// The first byte of an argument, lower case (0 for an empty one).
fn initial(argv: &impl Argv, index: usize, at: usize) -> u8 {
    argv.bytes(index).get(at).map_or(0, u8::to_ascii_lowercase)
}

/// An error rate in (0, 1), lowered to the cap.
fn error_rate(rate: f64, capped: &mut bool) -> Option<f64> {
    (rate > 0.0 && rate < 1.0).then(|| {
        *capped = rate > ERROR_RATE_CAP;
        rate.min(ERROR_RATE_CAP)
    })
}

/// A number in `least..=most`.
fn within(value: Option<i64>, least: i64, most: i64) -> Option<i64> {
    value.filter(|value| (least..=most).contains(value))
}

/// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`.
///
/// # Errors
///
/// RedisBloom's replies: the wrong number of arguments, an error rate or
/// a capacity that does not parse or is out of range, EXPANSION without
/// a value or with a bad one, EXPANSION with NONSCALING. An expansion of 0
/// (which RedisBloom reads as NONSCALING) is refused: say NONSCALING.
pub fn bf_reserve(argv: &impl Argv, options: &Options) -> Parsed<BloomParams> {
    if !(4..=7).contains(&argv.count()) {
        return Err(Refusal::Arity);
    }
    let mut capped = false;
    let Some(rate) = argv.float(2) else {
        return Err(Refusal::text("ERR bad error rate"));
    };
    let Some(error_rate) = error_rate(rate, &mut capped) else {
        return Err(Refusal::text(
            "ERR error rate must be in the range (0.000000, 1.000000)",
        ));
    };
    let Some(capacity) = argv.integer(3) else {
        return Err(Refusal::text("ERR bad capacity"));
    };
    if within(Some(capacity), 1, MAX_CAPACITY).is_none() {
        return Err(Refusal::text(
            "ERR capacity must be in the range [1, 1073741824]",
        ));
    }
    let non_scaling = find(argv, 4, "NONSCALING").is_some();
    let mut params = BloomParams {
        error_rate,
        capacity: capacity as u64,
        non_scaling,
        capped,
        ..BloomParams::defaults(options)
    };
    if let Some(at) = find(argv, 4, "EXPANSION") {
        if at + 1 == argv.count() {
            return Err(Refusal::text("ERR no expansion"));
        }
        let Some(expansion) = argv.integer(at + 1) else {
            return Err(Refusal::text("ERR bad expansion"));
        };
        if non_scaling {
            return Err(Refusal::text("Nonscaling filters cannot expand"));
        }
        if within(Some(expansion), 1, MAX_EXPANSION).is_none() {
            return Err(Refusal::text(
                "ERR expansion must be in the range [1, 32768]",
            ));
        }
        params.expansion = expansion as u64;
    }
    Ok(params)
}

/// `BF.INSERT key [CAPACITY capacity] [ERROR error] [EXPANSION expansion]
/// [NOCREATE] [NONSCALING] ITEMS item [item …]`, read as RedisBloom reads
/// it (by the options' first letters).
///
/// # Errors
///
/// RedisBloom's replies: the wrong number of arguments (no ITEMS, no item,
/// an option without its value), "Bad error rate", "Bad capacity", "Bad
/// expansion" (0 included), "Unknown argument received".
pub fn bf_insert(argv: &impl Argv, options: &Options) -> Parsed<BloomInsert> {
    let count = argv.count();
    if count < 4 {
        return Err(Refusal::Arity);
    }
    let mut insert = BloomInsert {
        params: BloomParams::defaults(options),
        create: true,
        items: 0,
    };
    let mut at = 2;
    while at < count && insert.items == 0 {
        match initial(argv, at, 0) {
            b'i' => insert.items = at + 1,
            b'e' => {
                if at + 1 == count {
                    return Err(Refusal::Arity);
                }
                if initial(argv, at, 1) == b'r' {
                    let rate = argv
                        .float(at + 1)
                        .and_then(|rate| error_rate(rate, &mut insert.params.capped));
                    let Some(rate) = rate else {
                        return Err(Refusal::text("Bad error rate"));
                    };
                    insert.params.error_rate = rate;
                } else {
                    let Some(expansion) = within(argv.integer(at + 1), 1, MAX_EXPANSION) else {
                        return Err(Refusal::text("Bad expansion"));
                    };
                    insert.params.expansion = expansion as u64;
                }
                at += 2;
            }
            b'c' => {
                if at + 1 == count {
                    return Err(Refusal::Arity);
                }
                let Some(capacity) = within(argv.integer(at + 1), 1, MAX_CAPACITY) else {
                    return Err(Refusal::text("Bad capacity"));
                };
                insert.params.capacity = capacity as u64;
                at += 2;
            }
            b'n' => {
                if initial(argv, at, 2) == b'c' {
                    insert.create = false;
                } else {
                    insert.params.non_scaling = true;
                }
                at += 1;
            }
            _ => return Err(Refusal::text("Unknown argument received")),
        }
    }
    if insert.items == 0 || insert.items >= count {
        return Err(Refusal::Arity);
    }
    Ok(insert)
}

/// What BF.INFO's optional third argument asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BloomField {
    /// Items the layers there are hold.
    Capacity,
    /// Bytes.
    Size,
    /// Layers.
    Filters,
    /// Items counted as inserted.
    Items,
    /// The growth factor (nil for a non-scaling filter).
    Expansion,
}

impl BloomField {
    /// Every field, in BF.INFO's order.
    pub const ALL: [Self; 5] = [
        Self::Capacity,
        Self::Size,
        Self::Filters,
        Self::Items,
        Self::Expansion,
    ];

    /// Its label in the full reply.
    pub fn label(self) -> &'static str {
        match self {
            Self::Capacity => "Capacity",
            Self::Size => "Size",
            Self::Filters => "Number of filters",
            Self::Items => "Number of items inserted",
            Self::Expansion => "Expansion rate",
        }
    }

    /// The field BF.INFO's argument names.
    ///
    /// # Errors
    ///
    /// "Invalid information value" for any other word.
    pub fn named(word: &[u8]) -> Parsed<Self> {
        let name = String::from_utf8_lossy(word).to_ascii_lowercase();
        Ok(match name.as_str() {
            "capacity" => Self::Capacity,
            "size" => Self::Size,
            "filters" => Self::Filters,
            "items" => Self::Items,
            "expansion" => Self::Expansion,
            _ => return Err(Refusal::text("Invalid information value")),
        })
    }
}

/// How to create a cuckoo filter: CF.RESERVE's arguments, or the defaults
/// and CF.INSERT's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooParams {
    /// Items the first table holds at the target FPP.
    pub capacity: u64,
    /// BUCKETSIZE as given (recorded and reported).
    pub bucket_size: u32,
    /// Kicks before an insert is refused or the filter grows.
    pub max_iterations: u32,
    /// Growth factor of the sub-tables; 0 for a filter that does not grow.
    pub expansion: u32,
}

impl CuckooParams {
    /// The module's defaults with `capacity`.
    pub fn defaults(options: &Options, capacity: u64) -> Self {
        Self {
            capacity,
            bucket_size: options.cf_bucket_size as u32,
            max_iterations: options.cf_max_iterations as u32,
            expansion: options.cf_expansion_factor as u32,
        }
    }
}

/// `CF.RESERVE key capacity [BUCKETSIZE bucketsize] [MAXITERATIONS
/// maxiterations] [EXPANSION expansion]`.
///
/// # Errors
///
/// RedisBloom's replies: the wrong number of arguments, "Bad capacity",
/// an option that does not parse or is out of its range, a capacity below
/// twice the bucket size or above 2^30.
pub fn cf_reserve(argv: &impl Argv, options: &Options) -> Parsed<CuckooParams> {
    let count = argv.count();
    if count < 3 || count.is_multiple_of(2) {
        return Err(Refusal::Arity);
    }
    let Some(capacity) = argv.integer(2) else {
        return Err(Refusal::text("Bad capacity"));
    };
    let mut params = CuckooParams::defaults(options, 0);
    let option = |word: &'static str, least: i64, most: i64| -> Parsed<Option<i64>> {
        let Some(at) = find(argv, 3, word) else {
            return Ok(None);
        };
        let Some(value) = argv.integer(at + 1).filter(|_| at + 1 < count) else {
            return Err(Refusal::Text(format!("Couldn't parse {word}").into()));
        };
        if !(least..=most).contains(&value) {
            return Err(Refusal::Text(
                format!("{word}: value must be in the range [{least}, {most}]").into(),
            ));
        }
        Ok(Some(value))
    };
    if let Some(kicks) = option("MAXITERATIONS", 1, MAX_ITERATIONS)? {
        params.max_iterations = kicks as u32;
    }
    if let Some(size) = option("BUCKETSIZE", 1, MAX_BUCKET_SIZE)? {
        params.bucket_size = size as u32;
    }
    if let Some(expansion) = option("EXPANSION", 0, MAX_EXPANSION)? {
        params.expansion = expansion as u32;
    }
    if i64::from(params.bucket_size) * 2 > capacity || capacity > MAX_CAPACITY {
        return Err(Refusal::text(
            "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
        ));
    }
    params.capacity = capacity as u64;
    Ok(params)
}

/// CF.INSERT's (and CF.INSERTNX's) options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooInsert {
    /// Capacity of a filter it creates.
    pub capacity: u64,
    /// Whether to create one (not NOCREATE).
    pub create: bool,
    /// Where the items start.
    pub items: usize,
}

/// `CF.INSERT key [CAPACITY capacity] [NOCREATE] ITEMS item [item …]`.
///
/// # Errors
///
/// RedisBloom's replies: the wrong number of arguments, "Bad capacity", a
/// capacity out of range, "Unknown argument received".
pub fn cf_insert(argv: &impl Argv, options: &Options) -> Parsed<CuckooInsert> {
    let count = argv.count();
    if count < 4 {
        return Err(Refusal::Arity);
    }
    let mut insert = CuckooInsert {
        capacity: options.cf_initial_size as u64,
        create: true,
        items: 0,
    };
    let mut at = 2;
    while at < count && insert.items == 0 {
        match initial(argv, at, 0) {
            b'c' => {
                if at + 1 == count {
                    return Err(Refusal::Arity);
                }
                let Some(capacity) = argv.integer(at + 1) else {
                    return Err(Refusal::text("Bad capacity"));
                };
                if within(Some(capacity), 4, MAX_CAPACITY).is_none() {
                    return Err(Refusal::text(
                        "Capacity must be in the range [cf-bucket-size * 2, 1073741824]",
                    ));
                }
                insert.capacity = capacity as u64;
                at += 2;
            }
            b'i' => insert.items = at + 1,
            b'n' => {
                insert.create = false;
                at += 1;
            }
            _ => return Err(Refusal::text("Unknown argument received")),
        }
    }
    if insert.items == 0 || insert.items >= count {
        return Err(Refusal::Arity);
    }
    Ok(insert)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Arguments split on spaces, numbers read by Rust's parsers.
    pub(crate) struct Words(pub(crate) Vec<String>);

    impl Words {
        pub(crate) fn of(line: &str) -> Self {
            Self(line.split(' ').map(str::to_owned).collect())
        }
    }

    impl Argv for Words {
        fn count(&self) -> usize {
            self.0.len()
        }
        fn bytes(&self, index: usize) -> &[u8] {
            self.0.get(index).map_or(&[], |word| word.as_bytes())
        }
        fn integer(&self, index: usize) -> Option<i64> {
            self.0.get(index)?.parse().ok()
        }
        fn float(&self, index: usize) -> Option<f64> {
            self.0.get(index)?.parse().ok()
        }
    }

    fn refusal<T: std::fmt::Debug>(parsed: Parsed<T>) -> String {
        match parsed.unwrap_err() {
            Refusal::Arity => "arity".to_owned(),
            Refusal::Text(text) => text.into_owned(),
        }
    }

    #[test]
    fn bf_reserve_reads_redisbloom_s_grammar() {
        let options = Options::default();
        let reserve = |line: &str| bf_reserve(&Words::of(line), &options);
        let params = reserve("BF.RESERVE k 0.001 1000 EXPANSION 4").unwrap();
        assert_eq!(
            (params.error_rate, params.capacity, params.expansion),
            (0.001, 1000, 4)
        );
        assert!(!params.non_scaling && !params.capped);
        let params = reserve("bf.reserve k 0.99 3 nonscaling").unwrap();
        assert!(params.non_scaling && params.capped);
        assert_eq!(params.error_rate, ERROR_RATE_CAP);
        for (line, says) in [
            ("BF.RESERVE k", "arity"),
            ("BF.RESERVE k 0.01", "arity"),
            ("BF.RESERVE k 0.01 1 1 1 1 1", "arity"),
            ("BF.RESERVE k blah 1000", "ERR bad error rate"),
            ("BF.RESERVE k 0 100", "(0.000000, 1.000000)"),
            ("BF.RESERVE k 1 100", "(0.000000, 1.000000)"),
            ("BF.RESERVE k 7.7 1000", "(0.000000, 1.000000)"),
            ("BF.RESERVE k 0.001 blah", "ERR bad capacity"),
            ("BF.RESERVE k 0.01 0", "[1, 1073741824]"),
            ("BF.RESERVE k 0.01 1000000000000000000", "[1, 1073741824]"),
            ("BF.RESERVE k 0.01 4 EXPANSION", "ERR no expansion"),
            ("BF.RESERVE k 0.01 4 EXPANSION str", "ERR bad expansion"),
            (
                "BF.RESERVE k 0.01 4 EXPANSION 0",
                "expansion must be in the range [1, 32768]",
            ),
            (
                "BF.RESERVE k 0.1 1 EXPANSION -1",
                "expansion must be in the range",
            ),
            (
                "BF.RESERVE k 0.01 1000 NONSCALING EXPANSION 2",
                "cannot expand",
            ),
        ] {
            assert!(refusal(reserve(line)).contains(says), "{line}");
        }
    }

    #[test]
    fn bf_insert_reads_options_by_their_first_letters() {
        let options = Options::default();
        let insert = |line: &str| bf_insert(&Words::of(line), &options);
        let parsed =
            insert("BF.INSERT k ERROR 0.001 CAPACITY 50000 EXPANSION 4 ITEMS a b").unwrap();
        assert_eq!(parsed.items, 9);
        assert_eq!(
            (
                parsed.params.error_rate,
                parsed.params.capacity,
                parsed.params.expansion
            ),
            (0.001, 50000, 4)
        );
        let parsed = insert("BF.INSERT k NOCREATE NONSCALING ITEMS a").unwrap();
        assert!(!parsed.create && parsed.params.non_scaling);
        assert_eq!(parsed.params.capacity, 100);
        for (line, says) in [
            ("BF.INSERT k", "arity"),
            ("BF.INSERT k NOCREATE ITEMS", "arity"),
            ("BF.INSERT k NOCREATE CAPACITY", "arity"),
            ("BF.INSERT k ERROR", "arity"),
            ("BF.INSERT k CAPACITY 0.3", "Bad capacity"),
            ("BF.INSERT k ERROR big", "Bad error rate"),
            ("BF.INSERT k EXPANSION -1 ITEMS foo", "Bad expansion"),
            ("BF.INSERT k EXPANSION 0 ITEMS foo", "Bad expansion"),
            (
                "BF.INSERT k DONTEXIST NOCREATE",
                "Unknown argument received",
            ),
        ] {
            assert_eq!(refusal(insert(line)), says, "{line}");
        }
    }

    #[test]
    fn cf_reserve_and_insert_read_redisbloom_s_grammar() {
        let options = Options::default();
        let reserve = |line: &str| cf_reserve(&Words::of(line), &options);
        let params =
            reserve("CF.RESERVE k 1000 BUCKETSIZE 4 MAXITERATIONS 500 EXPANSION 0").unwrap();
        assert_eq!(
            params,
            CuckooParams {
                capacity: 1000,
                bucket_size: 4,
                max_iterations: 500,
                expansion: 0
            }
        );
        for (line, says) in [
            ("CF.RESERVE k", "arity"),
            ("CF.RESERVE k 10 BUCKETSIZE", "arity"),
            ("CF.RESERVE k str", "Bad capacity"),
            ("CF.RESERVE k 1", "[2 * BUCKETSIZE, 1073741824]"),
            (
                "CF.RESERVE k 10 EXPANSION -1",
                "EXPANSION: value must be in the range [0, 32768]",
            ),
            (
                "CF.RESERVE k 10 BUCKETSIZE 0",
                "BUCKETSIZE: value must be in the range [1, 255]",
            ),
            (
                "CF.RESERVE k 10 MAXITERATIONS 0",
                "MAXITERATIONS: value must be in the range",
            ),
            (
                "CF.RESERVE k 10 MAXITERATIONS string",
                "Couldn't parse MAXITERATIONS",
            ),
            (
                "CF.RESERVE k 10 BUCKETSIZE string",
                "Couldn't parse BUCKETSIZE",
            ),
            ("CF.RESERVE k 10 x EXPANSION", "Couldn't parse EXPANSION"),
            (
                "CF.RESERVE k 67108864 BUCKETSIZE 33554432 MAXITERATIONS 1337 EXPANSION 1337",
                "BUCKETSIZE",
            ),
        ] {
            assert!(
                refusal(reserve(line)).contains(says),
                "{line}: {}",
                refusal(reserve(line))
            );
        }
        let insert = |line: &str| cf_insert(&Words::of(line), &options);
        let parsed = insert("CF.INSERT k CAPACITY 10000 NOCREATE ITEMS a").unwrap();
        assert_eq!(
            (parsed.capacity, parsed.create, parsed.items),
            (10000, false, 6)
        );
        for (line, says) in [
            ("CF.INSERT k element", "arity"),
            ("CF.INSERT k NOCREATE CAPACITY", "arity"),
            ("CF.INSERT k NOCREATE ITEMS", "arity"),
            ("CF.INSERT k CAPACITY str ITEMS a", "Bad capacity"),
            (
                "CF.INSERT k CAPACITY 3 ITEMS a",
                "[cf-bucket-size * 2, 1073741824]",
            ),
            ("CF.INSERT k DONTEXIST ITEMS a", "Unknown argument received"),
        ] {
            assert!(refusal(insert(line)).contains(says), "{line}");
        }
    }

    #[test]
    fn bf_info_fields_are_named() {
        assert_eq!(BloomField::named(b"CAPACITY"), Ok(BloomField::Capacity));
        assert_eq!(BloomField::named(b"expansion"), Ok(BloomField::Expansion));
        assert_eq!(
            refusal(BloomField::named(b"wrong")),
            "Invalid information value"
        );
        assert_eq!(
            BloomField::ALL.map(BloomField::label)[2],
            "Number of filters"
        );
    }
}
