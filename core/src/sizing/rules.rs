//! The parameter rules: one definition of a valid FPP, item count and hash
//! count for every builder, every format reader and the CLI.

use crate::format::Header;
use crate::{Error, ErrorKind};

/// The most hash probes a filter accepts. No FPP a 64-bit key hash can
/// deliver needs more, and each probe is a memory access.
pub const MAX_HASHES: u32 = 64;

/// The smallest FPP target accepted: 1e-300.
///
/// The exact formulas keep a relative error below 1e-12 down to here; below
/// f64's normal range (about 2.2e-308) probabilities lose digits and then
/// round to 0, and a sizing's exact FPP can sit a few orders of magnitude
/// under its target (k is a whole number; power-of-two sizing rounds the
/// array up), so the margin keeps every sized filter's claimed FPP a full-
/// precision number. (Far above it, a 64-bit key hash already limits any
/// filter to about n / 2^64; see
/// [`SizeSearch::hash_bits_needed`](super::SizeSearch::hash_bits_needed).)
pub const MIN_FPP: f64 = 1e-300;

/// The shape of every parameter rule: `Ok(())` when the rule `holds`, else
/// [`ErrorKind::InvalidParameter`] saying `detail()` (built only then).
///
/// # Errors
///
/// As said.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::ensure;
///
/// let kicks = 0;
/// let checked = ensure(kicks > 0, || format!("max kicks must be positive, got {kicks}"));
/// assert!(checked.unwrap_err().detail().contains("got 0"));
/// ```
pub fn ensure(holds: bool, detail: impl FnOnce() -> String) -> Result<(), Error> {
    if holds {
        Ok(())
    } else {
        Err(Error::invalid(detail()))
    }
}

/// Checks an FPP target: strictly inside (0, 1) and at least [`MIN_FPP`].
///
/// # Errors
///
/// [`ErrorKind::InvalidParameter`] otherwise (NaN included).
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::check_fpp;
///
/// assert!(check_fpp(0.01).is_ok() && check_fpp(1e-300).is_ok());
/// assert!(check_fpp(1.0).is_err() && check_fpp(f64::NAN).is_err());
/// assert!(check_fpp(1e-320).is_err());
/// ```
pub fn check_fpp(fpp: f64) -> Result<(), Error> {
    ensure(fpp > 0.0 && fpp < 1.0, || {
        format!("the false-positive probability must be in (0, 1), got {fpp}")
    })?;
    ensure(fpp >= MIN_FPP, || {
        format!(
            "the false-positive probability must be at least {MIN_FPP:e} (FPPs below it are not \
             evaluated to full precision in f64), got {fpp:e}"
        )
    })
}

/// Checks an expected item count: at least 1.
///
/// # Errors
///
/// [`ErrorKind::InvalidParameter`] for 0.
pub fn check_items(items: u64) -> Result<(), Error> {
    ensure(items > 0, || "expected items must be at least 1".to_owned())
}

/// Checks a number of probes per key: 1..=[`MAX_HASHES`].
///
/// # Errors
///
/// [`ErrorKind::InvalidParameter`] otherwise.
pub fn check_hashes(hashes: u32) -> Result<(), Error> {
    ensure((1..=MAX_HASHES).contains(&hashes), || {
        format!("the number of hashes must be in 1..={MAX_HASHES}, got {hashes}")
    })
}

/// Bytes in a human unit (binary prefixes).
///
/// # Examples
///
/// ```
/// assert_eq!(filterlab_core::sizing::human_bytes(8 << 30), "8.00 GiB");
/// ```
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// Reads a hash count from header parameter `index` (named `num_hashes`),
/// by the rule of [`check_hashes`].
///
/// # Errors
///
/// Those of [`Header::param`]; [`ErrorKind::InvalidHeader`] for a count
/// outside 1..=[`MAX_HASHES`].
pub fn hashes_from_header(header: &Header, index: usize) -> Result<u32, Error> {
    let num_hashes = header.param(index, "num_hashes")?;
    u32::try_from(num_hashes)
        .ok()
        .filter(|&k| check_hashes(k).is_ok())
        .ok_or_else(|| Error::new(ErrorKind::InvalidHeader, format!("{num_hashes} hashes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        for bad in [0.0, 1.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
            assert_eq!(
                check_fpp(bad).unwrap_err().kind(),
                ErrorKind::InvalidParameter
            );
        }
        assert!(check_items(0).is_err() && check_items(1).is_ok());
        assert!(check_hashes(0).is_err() && check_hashes(65).is_err());
        assert!(check_hashes(1).is_ok() && check_hashes(64).is_ok());
        // Every probe a key may have has a block multiplier.
        assert_eq!(crate::BLOCK_MULTIPLIERS.len(), MAX_HASHES as usize);
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        // The floor: 1e-300 itself is accepted, nothing below it.
        assert!(check_fpp(MIN_FPP).is_ok());
        for tiny in [9.99e-301, 1e-310, f64::MIN_POSITIVE, 5e-324] {
            let err = check_fpp(tiny).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidParameter);
            assert!(err.detail().contains("at least 1e-300"), "{err}");
        }
        assert!(
            check_fpp(1.5)
                .unwrap_err()
                .detail()
                .contains("must be in (0, 1)")
        );
    }
}
