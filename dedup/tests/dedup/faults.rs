//! Caller-supplied hashes: accepted when long enough, faults (typed and
//! counted, nothing else changed) when short or not hexadecimal. The
//! command's strict and permissive policies are tested in `cli`.

use filterlab_dedup::{Deduplicator, ErrorKind, Verdict};

#[test]
fn hex_hashes_of_enough_digits_are_checked() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(1_000_000)
        .build()
        .unwrap();
    let digits = dedup.sizing().hex_digits_required;
    assert_eq!(digits, 10, "log2(1e6 / 1e-6) = 39.9 bits");
    let sha1 = b"da39a3ee5e6b4b0d3255bfef95601890afd80709";
    assert_eq!(dedup.check_hex(sha1, None).unwrap(), Verdict::Unique);
    assert_eq!(
        dedup
            .check_hex(b"DA39A3EE5E6B4B0D3255BFEF95601890AFD80709", None)
            .unwrap(),
        Verdict::Duplicate
    );
    assert_eq!(
        dedup.check_hex(b"0123456789", None).unwrap(),
        Verdict::Unique
    );
    assert_eq!(
        dedup.check_hex(b"0123456789", None).unwrap(),
        Verdict::Duplicate
    );
    assert_eq!(dedup.metrics().faults, 0);
}

#[test]
fn short_or_malformed_hashes_are_faults_that_change_nothing_else() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(1_000_000)
        .build()
        .unwrap();
    dedup.check_hex(b"00000000aa", None).unwrap();
    let before = dedup.metrics();
    let cases: [(&[u8], ErrorKind); 4] = [
        (b"012345678", ErrorKind::HashTooShort),
        (b"", ErrorKind::HashTooShort),
        (b"0123456789xyz", ErrorKind::MalformedHash),
        (b"0x23456789ab", ErrorKind::MalformedHash),
    ];
    for (hex, kind) in cases {
        let err = dedup.check_hex(hex, None).unwrap_err();
        assert_eq!(err.kind(), kind, "{:?}", String::from_utf8_lossy(hex));
        assert!(err.kind().is_fault());
    }
    let after = dedup.metrics();
    assert_eq!(after.faults, 4);
    assert_eq!(
        (after.checks, after.uniques_stored),
        (before.checks, before.uniques_stored)
    );
    // Decoding alone counts nothing.
    assert!(dedup.decode_hex(b"1").is_err());
    assert_eq!(dedup.metrics().faults, 4);
}
