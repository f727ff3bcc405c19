//! Partition keys and their order: the order decides which partition is
//! the minimum, and so which one is evicted.

use std::cmp::Ordering;
use std::fmt;

/// The key of a partition (a date, an hour, a batch number): a number or a
/// byte string, in a total order.
///
/// The order, which decides which partition is evicted:
///
/// - **numbers numerically**: decimals of any length, compared exactly
///   (`9 < 10 < 10.5`, `-3 < -2.5 < 0`; `007` and `7.0` are the same key as
///   `7`). Nothing is rounded through a float, so `9007199254740993` and
///   `9007199254740992` stay two partitions;
/// - **strings lexicographically**, byte by byte (`"2024-01-09" <
///   "2024-01-10"`, `"Z" < "a"`; ISO dates and zero-padded times sort as
///   time does);
/// - every number before every string.
///
/// [`parse`](Self::parse) makes a number of what reads as one (an optional
/// sign, digits, an optional `.` and digits: no exponent, no spaces) and a
/// string of everything else.
///
/// # Examples
///
/// ```
/// use filterlab_dedup::PartitionKey;
///
/// assert!(PartitionKey::parse(b"9") < PartitionKey::parse(b"10"));
/// assert_eq!(PartitionKey::parse(b"007"), PartitionKey::from(7u64));
/// assert!(PartitionKey::parse(b"2024-01-09") < PartitionKey::parse(b"2024-01-10"));
/// assert!(PartitionKey::from(1_000_000u64) < PartitionKey::text("0"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PartitionKey(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    Number(Decimal),
    Text(Box<[u8]>),
}

/// A decimal in canonical form: no leading zeros in the integer digits, no
/// trailing zeros in the fraction digits, and zero never negative.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Decimal {
    negative: bool,
    integer: Box<[u8]>,
    fraction: Box<[u8]>,
}

impl Decimal {
    /// The decimal `bytes` spell, if they spell one.
    fn parse(bytes: &[u8]) -> Option<Self> {
        let (negative, unsigned) = match bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, bytes),
        };
        let (integer, fraction) = match unsigned.iter().position(|&b| b == b'.') {
            Some(dot) => (&unsigned[..dot], &unsigned[dot + 1..]),
            None => (unsigned, &[][..]),
        };
        let all_digits = |digits: &[u8]| digits.iter().all(u8::is_ascii_digit);
        if integer.len() + fraction.len() == 0 || !all_digits(integer) || !all_digits(fraction) {
            return None;
        }
        let leading_zeros = integer.iter().take_while(|&&b| b == b'0').count();
        let trailing_zeros = fraction.iter().rev().take_while(|&&b| b == b'0').count();
        let integer = &integer[leading_zeros..];
        let fraction = &fraction[..fraction.len() - trailing_zeros];
        Some(Self {
            negative: negative && !(integer.is_empty() && fraction.is_empty()),
            integer: integer.into(),
            fraction: fraction.into(),
        })
    }

    /// Compares absolute values: more integer digits is larger, then digit
    /// by digit (the fractions, having no trailing zeros, compare as strings).
    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        self.integer
            .len()
            .cmp(&other.integer.len())
            .then_with(|| self.integer.cmp(&other.integer))
            .then_with(|| self.fraction.cmp(&other.fraction))
    }

    /// The canonical spelling: `-12.5`, `0`, `0.25`.
    fn canonical(&self) -> Vec<u8> {
        let mut text = Vec::with_capacity(self.integer.len() + self.fraction.len() + 3);
        if self.negative {
            text.push(b'-');
        }
        if self.integer.is_empty() {
            text.push(b'0');
        }
        text.extend_from_slice(&self.integer);
        if !self.fraction.is_empty() {
            text.push(b'.');
            text.extend_from_slice(&self.fraction);
        }
        text
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How a key is tagged in a checkpoint.
const NUMBER_TAG: u8 = 1;
const TEXT_TAG: u8 = 2;

impl PartitionKey {
    /// A number if `bytes` spell a decimal, a string otherwise.
    pub fn parse(bytes: &[u8]) -> Self {
        match Decimal::parse(bytes) {
            Some(number) => Self(Repr::Number(number)),
            None => Self::text(bytes),
        }
    }

    /// A string key, even if it reads as a number.
    pub fn text(bytes: impl AsRef<[u8]>) -> Self {
        Self(Repr::Text(bytes.as_ref().into()))
    }

    /// Whether the key is a number.
    pub fn is_number(&self) -> bool {
        matches!(self.0, Repr::Number(_))
    }

    /// The key as written: a number in its canonical spelling, a string as
    /// its bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.0 {
            Repr::Number(number) => number.canonical(),
            Repr::Text(text) => text.to_vec(),
        }
    }

    /// The checkpoint's tag byte for this key.
    pub(crate) fn tag(&self) -> u8 {
        match self.0 {
            Repr::Number(_) => NUMBER_TAG,
            Repr::Text(_) => TEXT_TAG,
        }
    }

    /// The key a checkpoint's tag and bytes describe, if they describe one
    /// as [`tag`](Self::tag) and [`to_bytes`](Self::to_bytes) write it.
    pub(crate) fn from_tagged(tag: u8, bytes: &[u8]) -> Option<Self> {
        match tag {
            NUMBER_TAG => Decimal::parse(bytes)
                .filter(|number| number.canonical() == bytes)
                .map(|number| Self(Repr::Number(number))),
            TEXT_TAG => Some(Self::text(bytes)),
            _ => None,
        }
    }
}

macro_rules! from_integers {
    ($($int:ty),*) => {$(
        impl From<$int> for PartitionKey {
            /// A number key.
            fn from(value: $int) -> Self {
                Self::parse(value.to_string().as_bytes())
            }
        }
    )*};
}

from_integers!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

impl Ord for PartitionKey {
    /// Numbers numerically, then strings byte by byte.
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            (Repr::Number(a), Repr::Number(b)) => a.cmp(b),
            (Repr::Text(a), Repr::Text(b)) => a.cmp(b),
            (Repr::Number(_), Repr::Text(_)) => Ordering::Less,
            (Repr::Text(_), Repr::Number(_)) => Ordering::Greater,
        }
    }
}

impl PartialOrd for PartitionKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for PartitionKey {
    /// The key as written; a string that is not UTF-8 with replacement characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.to_bytes()))
    }
}

impl fmt::Debug for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Number(_) => write!(f, "Number({self})"),
            Repr::Text(text) => write!(f, "Text({:?})", String::from_utf8_lossy(text)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> PartitionKey {
        PartitionKey::parse(text.as_bytes())
    }

    #[test]
    fn numbers_order_numerically_and_exactly() {
        let sorted = [
            "-100",
            "-9.5",
            "-9",
            "-0.01",
            "0",
            "0.001",
            "0.01",
            "0.5",
            "0.51",
            "1",
            "9",
            "10",
            "10.25",
            "99",
            "100",
            "9007199254740992",
            "9007199254740993",
        ];
        for pair in sorted.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(key("007"), key("7"));
        assert_eq!(key("7.000"), key("7"));
        assert_eq!(key("-0"), key("0"));
        assert_eq!(key("+3"), key("3"));
        assert_eq!(key(".5"), key("0.5"));
        assert_eq!(key("5."), key("5"));
        assert_eq!(PartitionKey::from(-42i64), key("-42"));
    }

    #[test]
    fn strings_order_bytewise_after_numbers() {
        for text in [
            "",
            "-",
            ".",
            "1e3",
            "1,5",
            " 1",
            "abc",
            "2024-01-10",
            "\u{ff}",
        ] {
            assert!(!key(text).is_number(), "{text:?}");
            assert!(key("99999999999999999999") < key(text));
        }
        assert!(key("2024-01-09") < key("2024-01-10"));
        assert!(key("Z") < key("a"));
        assert!(PartitionKey::text([0xff]) > key("zzz"));
        assert!(!PartitionKey::text("5").is_number());
    }

    #[test]
    fn tagged_round_trip() {
        for k in [
            key("-12.50"),
            key("0"),
            key("abc"),
            PartitionKey::text([0xfe, 0]),
        ] {
            let back = PartitionKey::from_tagged(k.tag(), &k.to_bytes()).unwrap();
            assert_eq!(back, k);
        }
        assert!(PartitionKey::from_tagged(NUMBER_TAG, b"007").is_none());
        assert!(PartitionKey::from_tagged(NUMBER_TAG, b"x").is_none());
        assert!(PartitionKey::from_tagged(9, b"1").is_none());
    }
}
