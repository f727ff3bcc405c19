//! The decoder targets: one input is read as a file three ways (whole bytes,
//! a chunked stream, and the bytes with their checksums recomputed), the
//! ways must agree, and every filter that decodes is then used: re-encoded,
//! queried, inserted into, merged with itself, asked for its FPPs.
//!
//! Input layout: one control byte ([`Control`]), then the file.

use std::fmt::Debug;

use filterlab_bloom::{AtomicBloomFilter, BlockedBloomFilter, BloomFilter, Kernel};
use filterlab_core::format::{FrameReader, FrameWriter};
use filterlab_core::{ErrorKind, Filter, Merge, Persist};
use xxhash_rust::xxh3::xxh3_64;

use crate::frame::{ChunkedReader, Control, PAYLOAD_LEN_AT, reseal, u64_at};

/// What a decoder target needs of a filter type.
pub trait Decoded: Filter + Persist + Merge + Clone + PartialEq + Debug + Extend<u64> {
    /// Type-specific calls on a decoded filter (accessors, conversions,
    /// kernels), beside the common ones.
    fn exercise_more(&self, keys: &[u64]);
}

impl Decoded for BloomFilter {
    fn exercise_more(&self, keys: &[u64]) {
        let _ = (self.set_bits(), self.fill_ratio(), self.estimated_len());
        let _ = self.classic_fpp(self.len() as u64);
        let _ = (self.num_bits(), self.num_hashes(), self.target_fpp());
        // The atomic twin answers the same and converts back unchanged.
        let atomic = self.clone().into_atomic();
        for key in keys {
            assert_eq!(atomic.contains(key), self.contains(key));
        }
        assert_eq!(&atomic.snapshot(), self);
        assert_eq!(&atomic.freeze(), self);
    }
}

impl Decoded for AtomicBloomFilter {
    fn exercise_more(&self, keys: &[u64]) {
        let _ = (self.set_bits(), self.fill_ratio(), self.estimated_len());
        let _ = (self.num_bits(), self.num_hashes(), self.target_fpp());
        // Inserts through a shared reference, as from many threads.
        let shared = self.clone();
        let before = shared.len();
        let mut new = 0usize;
        for key in keys {
            new += usize::from(shared.insert(&key.wrapping_add(0x5555)));
        }
        assert_eq!(
            Some(shared.len()),
            before.checked_add(new),
            "the atomic counter must count each new insert exactly"
        );
        let plain: BloomFilter = self.snapshot();
        for key in keys {
            assert_eq!(plain.contains(key), self.contains(key));
        }
    }
}

impl Decoded for BlockedBloomFilter {
    fn exercise_more(&self, keys: &[u64]) {
        let _ = (self.set_bits(), self.fill_ratio(), self.estimated_len());
        let _ = self.classic_fpp(self.len() as u64);
        let _ = (self.num_bits(), self.num_blocks(), self.target_fpp());
        // Every kernel this CPU runs gives the same answers.
        let answers = self.contains_many(keys.iter().copied());
        for kernel in [Kernel::Scalar, Kernel::Avx2] {
            if !kernel.is_available() {
                continue;
            }
            let mut other = self.clone();
            if other.set_kernel(kernel).is_ok() {
                assert_eq!(
                    other.contains_many(keys.iter().copied()),
                    answers,
                    "{kernel:?}"
                );
                let one_by_one: Vec<bool> = keys.iter().map(|key| other.contains(key)).collect();
                assert_eq!(one_by_one, answers, "{kernel:?} one key at a time");
            }
        }
    }
}

/// The decoder target for `F`: `input` is a control byte and a file.
pub fn target<F: Decoded>(input: &[u8]) {
    let Some((&byte, file)) = input.split_first() else {
        return;
    };
    let control = Control::from_byte(byte);
    read_every_way::<F>(control, file);
    let mut sealed = file.to_vec();
    reseal(&mut sealed);
    if sealed != file {
        read_every_way::<F>(control, &sealed);
    }
}

/// Reads `bytes` whole, streamed in chunks and with a small payload limit;
/// checks that the answers agree; exercises what decoded.
fn read_every_way<F: Decoded>(control: Control, bytes: &[u8]) {
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

    if let Ok(filter) = streamed {
        exercise(&filter, &bytes[..consumed]);
    }
}

/// Everything a user may do with a filter they loaded.
fn exercise<F: Decoded>(filter: &F, read: &[u8]) {
    // One encoding per filter: writing it back gives the bytes read.
    let bytes = filter.to_bytes();
    assert_eq!(bytes, read, "re-encoding changed the bytes");
    let back = F::from_bytes(&bytes).expect("a filter reads its own bytes");
    assert_eq!(&back, filter);
    let config = Persist::config(filter);
    let expecting = F::read_from_expecting(&bytes[..], &config).expect("its own configuration");
    assert_eq!(&expecting, filter);

    // Keys that depend on the input, some of them probably present.
    let base = xxh3_64(read);
    let keys: Vec<u64> = (0..8)
        .map(|i| base.rotate_left(i * 8) ^ u64::from(i))
        .collect();
    let answers: Vec<bool> = keys.iter().map(|key| filter.contains(key)).collect();
    assert_eq!(filter.contains_many(keys.iter().copied()), answers);

    // Union and intersection with itself change no answer.
    let mut merged = filter.clone();
    merged.union(filter).expect("union with itself");
    assert_eq!(
        keys.iter().map(|k| merged.contains(k)).collect::<Vec<_>>(),
        answers
    );
    merged.intersect(filter).expect("intersection with itself");
    assert_eq!(
        keys.iter().map(|k| merged.contains(k)).collect::<Vec<_>>(),
        answers
    );
    let _ = (merged.len(), merged.expected_fpp());

    // New keys: one at a time, batched, and through Extend. The counter
    // grows by exactly the inserts that report a new key, and never wraps.
    let mut grown = filter.clone();
    let hasher = *grown.hasher();
    let mut count = grown.len();
    for key in &keys {
        let new = grown
            .insert_hash(hasher.hash(key))
            .expect("a Bloom filter takes any key");
        count = count
            .checked_add(usize::from(new))
            .expect("the item counter overflows");
        assert_eq!(grown.len(), count, "len after an insert");
        assert!(grown.contains(key), "false negative right after insert");
    }
    let batch: Vec<u64> = keys.iter().map(|key| hasher.hash(&!key)).collect();
    let new = grown
        .insert_hashes(&batch)
        .expect("a Bloom filter takes any batch");
    count = count.checked_add(new).expect("the item counter overflows");
    assert_eq!(grown.len(), count, "len after a batch");
    grown.extend(keys.iter().map(|key| key ^ 0xdead_beef));
    assert!(grown.len() >= count, "len went down after extend");
    assert!(
        keys.iter()
            .all(|key| grown.contains(key) && grown.contains(&!key))
    );
    let grown_bytes = grown.to_bytes();
    assert_eq!(
        F::from_bytes(&grown_bytes).expect("reads what it wrote"),
        grown
    );
    grown.clear();
    assert!(grown.is_empty());

    // Estimates and accessors last: the theory functions are the slowest
    // calls, and a slow one must not hide a counter that overflows above.
    let _ = (
        filter.memory_usage(),
        filter.is_empty(),
        format!("{filter:?}"),
    );
    let fpp = filter.expected_fpp();
    assert!((0.0..=1.0).contains(&fpp), "expected_fpp {fpp}");
    let len = filter.len() as u64;
    for items in [len, filter.capacity().map_or(1, |c| c as u64)] {
        if let Some(fpp) = filter.theoretical_fpp(items) {
            assert!(
                (0.0..=1.0).contains(&fpp),
                "theoretical_fpp({items}) = {fpp}"
            );
        }
    }
    filter.exercise_more(&keys);
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
