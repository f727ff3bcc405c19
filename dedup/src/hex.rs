//! Caller-supplied hashes: hexadecimal strings of at least the bits the
//! sizing needs, turned into the 64-bit hash the filters probe with.

use filterlab_core::mix64;

use crate::error::{Error, ErrorKind};

/// Turns a hexadecimal hash of at least `min_digits` digits into a 64-bit
/// probe hash.
///
/// Up to 16 digits are read as a number; the digits of longer hashes (a
/// SHA-1 has 40) are folded in as well, each rotating the value by 4 bits
/// before being XORed into it, so every supplied bit counts. The value is
/// then spread over all 64 bits by SplitMix64's finaliser, a bijection: a
/// short hash whose top bits are zero still reaches the whole bit array
/// (the probes use the high bits), and two distinct hashes of up to 16
/// digits never collide.
pub(crate) fn decode_hex_hash(hex: &[u8], min_digits: usize) -> Result<u64, Error> {
    if hex.len() < min_digits {
        return Err(Error::new(
            ErrorKind::HashTooShort,
            format!(
                "{} hex digits ({} bits), the sizing needs at least {min_digits} ({} bits)",
                hex.len(),
                4 * hex.len(),
                4 * min_digits
            ),
        ));
    }
    let mut value = 0u64;
    for (at, &byte) in hex.iter().enumerate() {
        let digit = match byte {
            b'0'..=b'9' => byte - b'0',
            b'a'..=b'f' => byte - b'a' + 10,
            b'A'..=b'F' => byte - b'A' + 10,
            _ => {
                return Err(Error::new(
                    ErrorKind::MalformedHash,
                    format!(
                        "byte {} ({:?}) is not a hex digit",
                        at + 1,
                        char::from(byte).escape_default().to_string()
                    ),
                ));
            }
        };
        value = value.rotate_left(4) ^ u64::from(digit);
    }
    Ok(mix64(value))
}

/// The hex digits that carry `bits` bits.
pub(crate) fn digits_for_bits(bits: u32) -> usize {
    bits.div_ceil(4) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hashes_are_read_as_numbers_and_spread() {
        assert_eq!(decode_hex_hash(b"00ff", 4).unwrap(), mix64(0xff));
        assert_eq!(decode_hex_hash(b"00FF", 4).unwrap(), mix64(0xff));
        assert_eq!(
            decode_hex_hash(b"0123456789abcdef", 16).unwrap(),
            mix64(0x0123_4567_89ab_cdef)
        );
        // The top bits are used even for a short hash.
        assert_ne!(decode_hex_hash(b"0001", 1).unwrap() >> 60, 0);
    }

    #[test]
    fn long_hashes_fold_every_digit() {
        let sha1 = b"da39a3ee5e6b4b0d3255bfef95601890afd80709";
        let mut other = *sha1;
        other[39] = b'8';
        assert_ne!(
            decode_hex_hash(sha1, 16).unwrap(),
            decode_hex_hash(&other, 16).unwrap()
        );
    }

    #[test]
    fn faults() {
        let cases: [(&[u8], usize, ErrorKind); 4] = [
            (b"abc", 4, ErrorKind::HashTooShort),
            (b"", 1, ErrorKind::HashTooShort),
            (b"12g4", 4, ErrorKind::MalformedHash),
            (b"0x12", 4, ErrorKind::MalformedHash),
        ];
        for (hex, digits, kind) in cases {
            assert_eq!(decode_hex_hash(hex, digits).unwrap_err().kind(), kind);
        }
        assert_eq!(digits_for_bits(44), 11);
        assert_eq!(digits_for_bits(64), 16);
    }
}
