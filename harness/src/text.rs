//! How numbers read in the report, `compare` and `recommend`.

/// A count as 10^k when it is a power of ten, with a multiplier when it is a
/// round multiple (2·10^4), else in full.
pub fn format_count(value: u64) -> String {
    if value < 1000 {
        return value.to_string();
    }
    let mut mantissa = value;
    let mut exponent = 0;
    while mantissa.is_multiple_of(10) {
        mantissa /= 10;
        exponent += 1;
    }
    match (mantissa, exponent) {
        (1, e) => format!("10^{e}"),
        (m, e) if m < 10 && e >= 3 => format!("{m}·10^{e}"),
        _ => value.to_string(),
    }
}

/// Scientific notation with 3 significant digits.
pub fn sci(value: f64) -> String {
    if value == 0.0 {
        "0".to_owned()
    } else {
        format!("{value:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_well() {
        assert_eq!(format_count(1_000_000), "10^6");
        assert_eq!(format_count(20_000), "2·10^4");
        assert_eq!(format_count(123_456), "123456");
        assert_eq!(format_count(400), "400");
    }

    #[test]
    fn fpps_read_well() {
        assert_eq!(sci(0.0), "0");
        assert_eq!(sci(0.009_704), "9.70e-3");
    }
}
