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

/// Rows laid out in columns as wide as their widest cell (counted in
/// characters, not bytes), two spaces apart; the columns marked in `right`
/// aligned right (numbers), the others left. Lines carry no trailing spaces.
pub fn columns(rows: &[Vec<String>], right: &[bool]) -> String {
    let count = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..count)
        .map(|column| {
            rows.iter()
                .filter_map(|row| row.get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[column] - cell.chars().count());
            if right.get(column).copied().unwrap_or(false) {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// "1 memory access", "7 memory accesses": `count` and the noun, singular
/// or plural as `count` needs.
pub fn plural(count: u64, singular: &str, plural: &str) -> String {
    format!("{count} {}", if count == 1 { singular } else { plural })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_on_characters() {
        let rows = vec![
            vec!["filter".to_owned(), "ns".to_owned(), "note".to_owned()],
            vec![
                "scalable_cuckoo_filter 0.5".to_owned(),
                "7.5".to_owned(),
                "ok".to_owned(),
            ],
            vec![
                "BloomFilter (pow2)".to_owned(),
                "120.0".to_owned(),
                String::new(),
            ],
            vec!["a×b".to_owned(), "1".to_owned(), "x".to_owned()],
        ];
        let text = columns(&rows, &[false, true, false]);
        let lines: Vec<&str> = text.lines().collect();
        // Widths 26 and 5 in characters ("×" is one character, two bytes).
        assert_eq!(lines[0], format!("{:<26}  {:>5}  note", "filter", "ns"));
        assert_eq!(
            lines[1],
            format!("{:<26}  {:>5}  ok", "scalable_cuckoo_filter 0.5", "7.5")
        );
        assert_eq!(
            lines[2],
            format!("{:<26}  {:>5}", "BloomFilter (pow2)", "120.0")
        );
        assert_eq!(lines[3], format!("a×b{}  {:>5}  x", " ".repeat(23), "1"));
        assert_eq!(
            plural(1, "memory access", "memory accesses"),
            "1 memory access"
        );
        assert_eq!(plural(7, "layer", "layers"), "7 layers");
    }

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
