//! What every filter's sizing record shares: why k was chosen, the load and
//! target a filter was sized for (two header parameters of every format),
//! and the key-hash lines every sizing report ends with.

use std::fmt;

use crate::format::Header;
use crate::sizing::rules::{check_fpp, human_bytes};
use crate::{Error, ErrorKind};

/// Why a sizing chose its number of hashes (probes per key), in the
/// sizing records of the Bloom filters and the filters built like them.
///
/// Its `Display` is the reason as a sizing report prints it.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::HashChoice;
///
/// let why = HashChoice::Optimal { optimum: 6.93 };
/// assert!(why.to_string().starts_with("nearest integer to (m/n)·ln 2 = 6.93"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum HashChoice {
    /// The integer near the real optimum (m/n)·ln 2 with the lowest exact FPP.
    Optimal {
        /// The real-valued optimum.
        optimum: f64,
    },
    /// The smallest k that still meets the target with the rounded-up array
    /// (power-of-two sizing): fewer probes, same guarantee.
    SmallestMeetingTarget {
        /// The real-valued optimum for the rounded array.
        optimum: f64,
    },
    /// The k with the lowest exact FPP, searched from `approximate`, the
    /// best k under the blocked filter's independent-bits approximation
    /// (Putze et al.); well below (m/n)·ln 2 at many bits per item.
    Blocked {
        /// The best k of the approximation.
        approximate: u32,
    },
    /// Given explicitly by the caller.
    Explicit,
    /// Fixed by the filter's layout (a split block: one probe in each of
    /// its eight 32-bit words).
    FixedByLayout,
}

impl fmt::Display for HashChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Optimal { optimum } => write!(
                f,
                "nearest integer to (m/n)·ln 2 = {optimum:.2} with the lower exact FPP"
            ),
            Self::SmallestMeetingTarget { optimum } => write!(
                f,
                "smallest k meeting the target with this array (optimum {optimum:.2}); fewer probes per lookup"
            ),
            Self::Blocked { approximate } => write!(
                f,
                "lowest exact FPP for blocks, searched from the approximation's best k = {approximate}"
            ),
            Self::Explicit => f.write_str("given explicitly"),
            Self::FixedByLayout => {
                f.write_str("fixed by the layout: one probe per word of the block")
            }
        }
    }
}

/// The load and FPP target a filter was sized for: written in its header as
/// two parameters, part of its equality, reported by `capacity()` and
/// `target_fpp()`. Every filter records them the same way.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::SizedFor;
///
/// let sized_for = SizedFor { items: 1000, fpp: Some(0.01) };
/// assert_eq!(sized_for.params(), [1000, 0.01f64.to_bits()]);
/// assert_eq!(sized_for.capacity(), Some(1000));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SizedFor {
    /// The items the filter was sized for (at least 1).
    pub items: u64,
    /// The FPP target, or `None` for a filter of an explicit size.
    pub fpp: Option<f64>,
}

impl SizedFor {
    /// Sized for `items` items at `fpp` (`None` for an explicit size).
    pub fn new(items: u64, fpp: Option<f64>) -> Self {
        Self { items, fpp }
    }

    /// The two header parameters: the load, then the target's bits (0 for
    /// none).
    pub fn params(self) -> [u64; 2] {
        [self.items, self.fpp.map_or(0, f64::to_bits)]
    }

    /// Reads the two header parameters at `first` (named `capacity`) and
    /// `first + 1` (`target_fpp`).
    ///
    /// # Errors
    ///
    /// Those of [`Header::param`]; [`ErrorKind::InvalidHeader`] for a zero
    /// load or a target [`check_fpp`] refuses.
    pub fn from_header(header: &Header, first: usize) -> Result<Self, Error> {
        let items = header.param(first, "capacity")?;
        if items == 0 {
            return Err(Error::new(ErrorKind::InvalidHeader, "zero capacity"));
        }
        let target = header.param(first + 1, "target_fpp")?;
        let fpp = (target != 0).then(|| f64::from_bits(target));
        if let Some(fpp) = fpp.filter(|&fpp| check_fpp(fpp).is_err()) {
            return Err(Error::new(
                ErrorKind::InvalidHeader,
                format!("target FPP {fpp}"),
            ));
        }
        Ok(Self { items, fpp })
    }

    /// The load as `Membership::capacity` reports it.
    pub fn capacity(self) -> Option<usize> {
        usize::try_from(self.items).ok()
    }

    /// The first two lines of a sizing report: the expected items and the
    /// target (or that the size was explicit).
    ///
    /// # Errors
    ///
    /// Those of the formatter.
    pub fn write_report_lines(self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  expected items      {}", self.items)?;
        match self.fpp {
            Some(p) => writeln!(f, "  target FPP          {p:.3e}"),
            None => writeln!(f, "  target FPP          (none: explicit size)"),
        }
    }
}

impl PartialEq for SizedFor {
    /// Bitwise on the target, so a filter equals itself read back.
    fn eq(&self, other: &Self) -> bool {
        self.params() == other.params()
    }
}

impl Eq for SizedFor {}

/// What a sizing says of the 64-bit key hash: the bits its target needs,
/// log2(n/p), and for filters that take several fields from the hash (a
/// cuckoo filter's bucket index and fingerprint) the bits they use. Above
/// 64 a 64-bit key hash limits the FPP (about n / 2^64) whatever the array.
///
/// Its `Display` is the last line(s) of a sizing report: the bits, and a
/// warning when the hash is too short.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::HashBits;
///
/// let bits = HashBits::new(1 << 40, 80.0);
/// assert!(bits.limited());
/// assert!(bits.to_string().contains("WARNING"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HashBits {
    /// The distinct items sized for.
    pub items: u64,
    /// Bits of key hash the target needs: log2(n/p).
    pub needed: f64,
    /// Bits of the hash the filter takes, and what shares them when they
    /// exceed 64 (e.g. "the bucket index and fingerprint"); `None` for
    /// filters that derive everything from one hash (Bloom filters).
    pub used: Option<(f64, &'static str)>,
}

impl HashBits {
    /// What a sizing for `items` items whose target needs `needed` bits says
    /// of a filter that derives everything from one hash.
    pub fn new(items: u64, needed: f64) -> Self {
        Self {
            items,
            needed,
            used: None,
        }
    }

    /// The same for a filter that takes `used` bits of the hash, which
    /// `sharing` (e.g. "the bucket index and fingerprint") share when over
    /// 64.
    #[must_use]
    pub fn using(self, used: f64, sharing: &'static str) -> Self {
        Self {
            used: Some((used, sharing)),
            ..self
        }
    }

    /// Whether a 64-bit key hash is too short for the target at this size.
    pub fn limited(&self) -> bool {
        self.needed > 64.0 || self.used.is_some_and(|(used, _)| used > 64.0)
    }
}

impl fmt::Display for HashBits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let needed = self.needed;
        let (bits, why) = match self.used {
            None => (
                format!("64-bit key hash; the target needs {needed:.1}"),
                "cannot deliver this FPP at this many items:".to_owned(),
            ),
            Some((used, sharing)) => (
                format!("uses {used:.1} of the 64-bit key hash; the target needs {needed:.1}"),
                format!("is too short for this size and target: {sharing} share bits, or"),
            ),
        };
        write!(f, "  hash bits           {bits}")?;
        if self.limited() {
            write!(
                f,
                "\n  WARNING             a 64-bit key hash {why} distinct keys sharing a hash \
                 alone give about n/2^64 = {:.1e}",
                self.items as f64 / 2f64.powi(64)
            )?;
        }
        Ok(())
    }
}

/// The memory a sizing takes, as every sizing report prints it: the bytes
/// in a binary unit and the bits per item.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::memory_summary;
///
/// assert_eq!(memory_summary(1 << 20, 9.59), "1.00 MiB (9.59 bits per item)");
/// ```
pub fn memory_summary(bytes: u64, bits_per_item: f64) -> String {
    format!("{} ({bits_per_item:.2} bits per item)", human_bytes(bytes))
}
