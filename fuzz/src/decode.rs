//! The decoder targets: one input is read as a file three ways (whole bytes,
//! a chunked stream, and the bytes with their checksums recomputed), the
//! ways must agree, and every filter that decodes re-encodes to the bytes
//! read and is then used as a caller would ([`exercise`]).
//!
//! The array filters' targets also open the file as views
//! ([`views_as_read`]).
//!
//! Input layout: one control byte ([`Control`]), then the file.

use filterlab_core::format::{FrameReader, FrameWriter};
use filterlab_core::view::{Checksum, Viewable};
use filterlab_core::{ErrorKind, Membership, mix64};
use filterlab_counting_bloom::{Blocked, CountingBloom, Standard};
use filterlab_scalable::{BlockedBloomFilter, BloomFilter, ScalableBloomFilter};
use xxhash_rust::xxh3::xxh3_64;

use crate::exercise::{Exercise, exercise};
use crate::frame::{ChunkedReader, Control, PAYLOAD_LEN_AT, reseal, u64_at};

/// The decoder target for `F`: `input` is a control byte and a file.
/// Returns whether the file, and the file resealed, decoded as `F` (a
/// target reading one format with several types checks that at most one
/// type accepts each).
pub fn target<F: Exercise>(input: &[u8]) -> [bool; 2] {
    as_read_and_resealed(input, read_every_way::<F>)
}

/// Splits a decoder input into its control byte and its file, and runs
/// `read` on the file and on the file with its checksums recomputed (once
/// when they were right); returns what each returned.
pub fn as_read_and_resealed(input: &[u8], read: impl Fn(Control, &[u8]) -> bool) -> [bool; 2] {
    let Some((&byte, file)) = input.split_first() else {
        return [false; 2];
    };
    let control = Control::from_byte(byte);
    let first = read(control, file);
    let mut sealed = file.to_vec();
    reseal(&mut sealed);
    let resealed = if sealed == file {
        first
    } else {
        read(control, &sealed)
    };
    [first, resealed]
}

/// Panics unless at most one of the types a target tries decoded each
/// version of the input: the header's parameters say which type it is.
pub fn at_most_one(decoded: &[[bool; 2]]) {
    for version in 0..2 {
        let types = decoded.iter().filter(|both| both[version]).count();
        assert!(types <= 1, "{types} types decode the same file");
    }
}

/// The `decode_bloom` target: format kind 1 as `BloomFilter` and as
/// `AtomicBloomFilter` (the same format; both must accept it).
pub fn bloom_target(input: &[u8]) {
    let [plain, atomic] = [
        target::<filterlab_bloom::BloomFilter>(input),
        target::<filterlab_bloom::AtomicBloomFilter>(input),
    ];
    assert_eq!(plain, atomic, "BloomFilter and AtomicBloomFilter disagree");
    as_read_and_resealed(input, views_as_read::<filterlab_bloom::BloomFilter>);
}

/// The `decode_blocked` target: format kind 2 as `BlockedBloomFilter`, and
/// as its views.
pub fn blocked_target(input: &[u8]) {
    target::<filterlab_bloom::BlockedBloomFilter>(input);
    as_read_and_resealed(input, views_as_read::<filterlab_bloom::BlockedBloomFilter>);
}

/// The `decode_split_block` target: format kind 7 as `SplitBlockBloomFilter`,
/// and as its views.
pub fn split_block_target(input: &[u8]) {
    target::<filterlab_bloom::SplitBlockBloomFilter>(input);
    as_read_and_resealed(
        input,
        views_as_read::<filterlab_bloom::SplitBlockBloomFilter>,
    );
}

/// Opens `bytes` as views of `F`, in place and one byte off (where blocks
/// are decoded from bytes): a verified view opens exactly when the reader
/// reads the file and then answers as the filter read; a deferred one
/// opens at least then, answers every lookup (never a panic), and fails
/// its checksum where the file is damaged. Says whether the file read.
fn views_as_read<F: Viewable>(_: Control, bytes: &[u8]) -> bool {
    let read = F::from_bytes(bytes);
    let probes: Vec<u64> = (0..64).map(|i| mix64(xxh3_64(bytes) ^ i)).collect();
    let mut shifted = vec![0; bytes.len() + 1];
    shifted[1..].copy_from_slice(bytes);
    for held in [bytes, &shifted[1..]] {
        let verified = F::view(held, Checksum::Verify);
        assert_eq!(
            verified.is_ok(),
            read.is_ok(),
            "{:?}",
            verified.as_ref().err()
        );
        if let (Ok(view), Ok(filter)) = (&verified, &read) {
            let expected: Vec<bool> = probes.iter().map(|&h| filter.contains_hash(h)).collect();
            let singles: Vec<bool> = probes.iter().map(|&h| view.contains_hash(h)).collect();
            let mut batched = vec![false; probes.len()];
            view.contains_hashes(&probes, &mut batched);
            assert_eq!(singles, expected, "the view answers otherwise");
            assert_eq!(batched, expected, "the view's batch answers otherwise");
        }
        match F::view(held, Checksum::Defer) {
            Ok(view) => {
                let mut found = vec![false; probes.len()];
                view.contains_hashes(&probes, &mut found);
                let checked = F::verify_checksum(&view);
                // A file whose only flaw is its item counter passes its
                // checksum: only the verified open counts the bits.
                assert!(checked.is_ok() || read.is_err(), "{checked:?}");
            }
            Err(err) => assert!(read.is_err(), "a deferred view refuses a valid file: {err}"),
        }
    }
    read.is_ok()
}

/// The `decode_cuckoo` target: format kind 5 as `CuckooFilter`.
pub fn cuckoo_target(input: &[u8]) {
    target::<filterlab_cuckoo::CuckooFilter>(input);
}

/// The `decode_counting` target: format kind 3 as every layout and counter
/// width (`CountingBloom<Standard | Blocked, 4 | 8 | 16>`); the header says
/// which, and exactly that type may accept the file.
pub fn counting_target(input: &[u8]) {
    at_most_one(&[
        target::<CountingBloom<Standard, 4>>(input),
        target::<CountingBloom<Standard, 8>>(input),
        target::<CountingBloom<Standard, 16>>(input),
        target::<CountingBloom<Blocked, 4>>(input),
        target::<CountingBloom<Blocked, 8>>(input),
        target::<CountingBloom<Blocked, 16>>(input),
    ]);
}

/// The `decode_scalable` target: format kind 4 with either layer type
/// (`ScalableBloomFilter<BlockedBloomFilter | BloomFilter>`).
pub fn scalable_target(input: &[u8]) {
    at_most_one(&[
        target::<ScalableBloomFilter<BlockedBloomFilter>>(input),
        target::<ScalableBloomFilter<BloomFilter>>(input),
    ]);
}

/// Reads `bytes` whole, streamed in chunks and with a small payload limit;
/// checks that the answers agree; exercises what decoded, and says whether
/// anything did.
fn read_every_way<F: Exercise>(control: Control, bytes: &[u8]) -> bool {
    let whole = F::from_bytes(bytes);
    let mut reader = ChunkedReader::new(bytes, control);
    let streamed = F::read_from(&mut reader);
    let consumed = reader.position();
    match (&whole, &streamed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "whole and streamed reads differ");
            assert_eq!(consumed, bytes.len(), "from_bytes accepted unread bytes");
        }
        (Ok(_), Err(err)) => panic!("from_bytes accepted what read_from refuses: {err}"),
        (Err(err), Ok(_)) => assert!(
            err.kind() == ErrorKind::LengthMismatch && consumed < bytes.len(),
            "read_from accepted what from_bytes refuses ({err}) after {consumed} of {} bytes",
            bytes.len()
        ),
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{a} / {b}"),
    }

    // A small limit: accepts only payloads within it, and otherwise agrees.
    let limited = F::read_from_with_limit(bytes, control.limit);
    let payload_len = u64_at(bytes, PAYLOAD_LEN_AT);
    match (&limited, &streamed) {
        (Ok(a), Ok(b)) => {
            assert!(payload_len.is_some_and(|len| len <= control.limit));
            assert_eq!(a, b);
        }
        (Ok(_), Err(err)) => panic!("the limited read accepted what read_from refuses: {err}"),
        (Err(err), Ok(_)) => assert!(
            err.kind() == ErrorKind::PayloadTooLarge
                && payload_len.is_some_and(|len| len > control.limit),
            "limit {}: {err}",
            control.limit
        ),
        (Err(_), Err(_)) => {}
    }

    let Ok(filter) = streamed else {
        return false;
    };
    round_trip(&filter, &bytes[..consumed]);
    exercise(&filter, xxh3_64(&bytes[..consumed]));
    true
}

/// One encoding per filter: writing a filter back gives the bytes read
/// (or, for a file of an older layout, bytes of the current one), which
/// read back equal, also when the caller expects its configuration.
fn round_trip<F: Exercise>(filter: &F, read: &[u8]) {
    let bytes = filter.to_bytes();
    if F::current_layout(read) {
        assert_eq!(bytes, read, "re-encoding changed the bytes");
    } else {
        assert!(F::current_layout(&bytes), "written in an older layout");
    }
    let back = F::from_bytes(&bytes).expect("a filter reads its own bytes");
    assert!(&back == filter, "read back unequal");
    let config = filter.config();
    let expecting = F::read_from_expecting(&bytes[..], &config).expect("its own configuration");
    assert!(&expecting == filter, "read back unequal");
}

/// The framing target: any kind, through `FrameReader` alone. A header that
/// opens must describe itself truthfully, and a frame read to its end must be
/// what `FrameWriter` writes for that header and payload.
pub fn frame_target(input: &[u8]) {
    let Some((&byte, file)) = input.split_first() else {
        return;
    };
    let control = Control::from_byte(byte);
    read_frame(control, file);
    let mut sealed = file.to_vec();
    reseal(&mut sealed);
    if sealed != file {
        read_frame(control, &sealed);
    }
}

fn read_frame(control: Control, bytes: &[u8]) {
    // Limits both below and above what the input holds.
    for limit in [control.limit, u64::MAX] {
        let mut reader = ChunkedReader::new(bytes, control);
        let Ok(mut frame) = FrameReader::open_any(&mut reader, limit) else {
            continue;
        };
        let header = frame.header().clone();
        assert!(header.payload_len <= limit);
        assert!(header.params.len() <= filterlab_core::format::MAX_PARAMS);
        // Half of the payload as words (read_words must neither allocate for
        // a crafted length nor accept one the input does not hold), the rest
        // as bytes.
        let words = usize::try_from(header.payload_len / 16).unwrap_or(usize::MAX);
        let Ok(words) = frame.read_words(words) else {
            continue;
        };
        let mut payload: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let rest = header.payload_len - payload.len() as u64;
        let mut tail = vec![0u8; usize::try_from(rest).unwrap_or(usize::MAX).min(bytes.len())];
        if (tail.len() as u64) < rest {
            // The input cannot hold it; reading must fail, not allocate.
            assert!(frame.read_bytes_into(&mut tail).is_err());
            continue;
        }
        if frame.read_bytes_into(&mut tail).is_err() {
            continue;
        }
        payload.extend_from_slice(&tail);
        if frame.finish().is_err() {
            continue;
        }
        let consumed = reader.position();
        let mut writer = FrameWriter::new(Vec::new(), &header).expect("a header that was read");
        writer.write_bytes(&payload).expect("its own payload");
        let written = writer.finish().expect("the whole payload");
        assert_eq!(
            written,
            &bytes[..consumed],
            "the frame does not re-encode to its bytes"
        );
    }
}
