//! Filters that answer by comparing an r-bit fingerprint of the query with
//! a value retrieved from the filter (xor, binary fuse, Ribbon): a query
//! that is not in the set sees a value independent of its own fingerprint,
//! so it matches with probability exactly 2^−r. With two widths, r + 1
//! bits for a fraction of the queries and r for the rest, the FPP is the
//! mixture, which reaches any p between two powers of two.

use crate::Error;
use crate::sizing::check_fpp;

/// The widest fingerprint the mixed-width functions describe.
pub const MAX_FINGERPRINT_BITS: u32 = 32;

/// The FPP of an r-bit fingerprint filter: 2^−r, whatever its load.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::fingerprint_fpp;
///
/// assert_eq!(fingerprint_fpp(8), 1.0 / 256.0);
/// ```
pub fn fingerprint_fpp(bits: u32) -> f64 {
    (-f64::from(bits)).exp2()
}

/// The FPP of a filter that checks r + 1 fingerprint bits for a fraction
/// `wide` of the queries and `bits` = r for the others:
/// wide · 2^−(r+1) + (1 − wide) · 2^−r = 2^−r (1 − wide / 2).
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::mixed_fingerprint_fpp;
///
/// assert_eq!(mixed_fingerprint_fpp(6, 0.0), 1.0 / 64.0);
/// assert_eq!(mixed_fingerprint_fpp(6, 1.0), 1.0 / 128.0);
/// ```
pub fn mixed_fingerprint_fpp(bits: u32, wide: f64) -> f64 {
    fingerprint_fpp(bits) * (1.0 - wide / 2.0)
}

/// The cheapest mix of fingerprint widths whose FPP is at most `fpp`:
/// `(r, wide)` with r = ⌊log2(1/p)⌋ bits for every query and one more bit
/// for the fraction `wide` = 2(1 − p·2^r) of them, which makes
/// [`mixed_fingerprint_fpp`] equal p. Its cost, r + wide bits a key, is
/// within 0.086 bits of the bound log2(1/p) (the mixture of two powers of
/// two is convex); `wide` is 0 when p is a power of two.
///
/// # Errors
///
/// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
/// for an FPP outside (0, 1), or below 2^−[`MAX_FINGERPRINT_BITS`].
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{mixed_fingerprint_fpp, mixed_fingerprint_widths};
///
/// let (bits, wide) = mixed_fingerprint_widths(0.01)?;
/// assert_eq!(bits, 6);
/// assert!((mixed_fingerprint_fpp(bits, wide) - 0.01).abs() < 1e-15);
/// assert!(f64::from(bits) + wide < 0.01f64.recip().log2() + 0.09);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn mixed_fingerprint_widths(fpp: f64) -> Result<(u32, f64), Error> {
    check_fpp(fpp)?;
    if fpp < fingerprint_fpp(MAX_FINGERPRINT_BITS) {
        return Err(Error::invalid(format!(
            "an FPP of {fpp:e} needs more than {MAX_FINGERPRINT_BITS} fingerprint bits"
        )));
    }
    let mut bits = fpp.recip().log2().floor() as u32;
    // log2 rounds: keep 2^-bits >= fpp > 2^-(bits + 1).
    while bits > 0 && fingerprint_fpp(bits) < fpp {
        bits -= 1;
    }
    while fingerprint_fpp(bits + 1) >= fpp {
        bits += 1;
    }
    let wide = (2.0 * (1.0 - fpp / fingerprint_fpp(bits))).clamp(0.0, 1.0);
    Ok((bits, wide))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_meets_every_fpp_within_the_convexity_loss() {
        // From 0.999 to 4.2e-10 (2^-32 is 2.3e-10).
        for i in 0..=300 {
            let fpp = 10f64.powf(-f64::from(i) / 32.0).min(0.999);
            let (bits, wide) = mixed_fingerprint_widths(fpp).unwrap();
            let achieved = mixed_fingerprint_fpp(bits, wide);
            assert!(achieved <= fpp * (1.0 + 1e-12), "{fpp}: {achieved}");
            assert!(achieved >= fpp * (1.0 - 1e-12) || wide == 1.0, "{fpp}");
            let cost = f64::from(bits) + wide;
            let bound = fpp.recip().log2();
            assert!(
                cost >= bound - 1e-9 && cost <= bound + 0.0861,
                "{fpp}: {cost} vs {bound}"
            );
        }
        assert_eq!(mixed_fingerprint_widths(0.25).unwrap(), (2, 0.0));
        assert_eq!(mixed_fingerprint_widths(2f64.powi(-32)).unwrap(), (32, 0.0));
        assert!(mixed_fingerprint_widths(2f64.powi(-33)).is_err());
        assert!(mixed_fingerprint_widths(0.0).is_err());
        assert!(mixed_fingerprint_widths(f64::NAN).is_err());
    }

    /// Two independent uniform values match with probability 2^−r: the
    /// count over all pairs of 6-bit values.
    #[test]
    fn fingerprints_match_by_chance_as_stated() {
        let matches = (0..64u32)
            .flat_map(|a| (0..64u32).map(move |b| u32::from(a == b)))
            .sum::<u32>();
        assert_eq!(f64::from(matches) / 4096.0, fingerprint_fpp(6));
    }
}
