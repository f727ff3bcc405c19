//! Byte-level helpers shared by the decoder targets: resealing a file's
//! checksums after mutation, and a reader that hands out a file in small,
//! uneven chunks.

use std::io::{self, Read};

use filterlab_core::format::MAGIC;
use xxhash_rust::xxh3::xxh3_64;

/// Offset of the item counter in every filterlab header.
pub const ITEMS_AT: usize = 24;
/// Offset of the payload length in every filterlab header.
pub const PAYLOAD_LEN_AT: usize = 32;
/// Bytes of a header before its parameters.
pub const PARAMS_AT: usize = 40;

/// The u64 at `at`, little-endian, if the input holds it.
pub fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let field = bytes.get(at..at + 8)?;
    Some(u64::from_le_bytes(field.try_into().ok()?))
}

/// Where the header checksum sits: `40 + 8·P`, P being the u16 parameter
/// count at offset 14.
pub fn header_checksum_at(bytes: &[u8]) -> Option<usize> {
    let count = bytes.get(14..16)?;
    Some(PARAMS_AT + 8 * usize::from(u16::from_le_bytes([count[0], count[1]])))
}

/// Recomputes, in place, the header checksum (XXH3-64 seed 0 over the header
/// bytes before it) and the trailing checksum (XXH3-64 seed 0 over every byte
/// before the last 8), each where the input is long enough to hold it without
/// the two overlapping. A mutated file then reaches the checks behind the
/// checksums: parameters, lengths, counters.
///
/// Files nested in the payload (a scalable filter's layers are complete
/// files of their own kind) are resealed first, each within its own extent
/// (its header's parameter count and payload length), for as long as the
/// payload holds one starting with the format's magic; otherwise the layers'
/// own checksums would stop every mutation of a layer.
pub fn reseal(bytes: &mut [u8]) {
    let Some(at) = header_checksum_at(bytes) else {
        return;
    };
    if bytes.len() >= at + 8 {
        let sum = xxh3_64(&bytes[..at]);
        bytes[at..at + 8].copy_from_slice(&sum.to_le_bytes());
    }
    if bytes.len() >= at + 16 {
        let end = bytes.len() - 8;
        let mut nested = at + 8;
        while let Some(len) = nested_frame_len(&bytes[nested..end]) {
            reseal(&mut bytes[nested..nested + len]);
            nested += len;
        }
        let sum = xxh3_64(&bytes[..end]);
        bytes[end..].copy_from_slice(&sum.to_le_bytes());
    }
}

/// The length of the complete file at the start of `payload` (header,
/// payload, trailing checksum, as its header says), if `payload` begins with
/// the format's magic and holds all of it.
fn nested_frame_len(payload: &[u8]) -> Option<usize> {
    if !payload.starts_with(&MAGIC) {
        return None;
    }
    let header = header_checksum_at(payload)? + 8;
    let body = usize::try_from(u64_at(payload, PAYLOAD_LEN_AT)?).ok()?;
    let len = header.checked_add(body)?.checked_add(8)?;
    (len <= payload.len()).then_some(len)
}

/// How a decoder target reads its input, from the input's first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    /// The most bytes one `read` returns: 1..=64.
    pub max_chunk: usize,
    /// Whether every seventh `read` fails with `ErrorKind::Interrupted`
    /// (which `read_exact` must retry).
    pub interrupt: bool,
    /// A small payload limit for `read_from_with_limit`: 0..=1020 bytes.
    pub limit: u64,
}

impl Control {
    /// Bits 0-5: max chunk − 1; bit 6: interruptions; the byte times 4 (bit 7
    /// included): the small payload limit.
    pub fn from_byte(byte: u8) -> Self {
        Self {
            max_chunk: 1 + usize::from(byte & 0x3f),
            interrupt: byte & 0x40 != 0,
            limit: u64::from(byte) * 4,
        }
    }
}

/// A reader over `data` whose reads return 1..=`max_chunk` bytes, the sizes
/// taken in turn from the data itself (so they vary with the input), and
/// never more than the caller asked for: most reads return fewer bytes than
/// asked, as a socket or pipe does.
#[derive(Debug)]
pub struct ChunkedReader<'a> {
    data: &'a [u8],
    position: usize,
    reads: usize,
    control: Control,
}

impl<'a> ChunkedReader<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8], control: Control) -> Self {
        Self {
            data,
            position: 0,
            reads: 0,
            control,
        }
    }

    /// Bytes handed out so far.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl Read for ChunkedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        if self.control.interrupt && self.reads % 7 == 3 {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "fuzz interruption",
            ));
        }
        let pattern = if self.data.is_empty() {
            0
        } else {
            self.data[self.reads % self.data.len()]
        };
        let size = 1 + usize::from(pattern) % self.control.max_chunk;
        let remaining = &self.data[self.position..];
        let n = size.min(buf.len()).min(remaining.len());
        buf[..n].copy_from_slice(&remaining[..n]);
        self.position += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_reader_returns_everything_in_small_reads() {
        let data: Vec<u8> = (0..=255).collect();
        for byte in [0u8, 3, 0x3f, 0x47, 0xff] {
            let control = Control::from_byte(byte);
            let mut reader = ChunkedReader::new(&data, control);
            let mut out = Vec::new();
            let mut buf = [0u8; 100];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        assert!(n <= control.max_chunk);
                        out.extend_from_slice(&buf[..n]);
                    }
                    Err(err) => assert_eq!(err.kind(), io::ErrorKind::Interrupted),
                }
            }
            assert_eq!(out, data);
            assert_eq!(reader.position(), data.len());
        }
    }

    #[test]
    fn reseal_matches_what_the_writer_writes() {
        use filterlab_bloom::BloomFilter;
        let mut filter = BloomFilter::with_bits(200).hashes(3).build().unwrap();
        filter.insert("x");
        let bytes = filter.to_bytes();
        let mut corrupted = bytes.clone();
        let header_sum = header_checksum_at(&bytes).unwrap();
        corrupted[header_sum] ^= 1;
        let last = corrupted.len() - 1;
        corrupted[last] ^= 1;
        assert!(BloomFilter::from_bytes(&corrupted).is_err());
        reseal(&mut corrupted);
        assert_eq!(corrupted, bytes);
        // Short inputs are left alone rather than overlapping the checksums.
        let mut short = bytes[..header_sum + 12].to_vec();
        let before = short.clone();
        reseal(&mut short);
        assert_eq!(short[..header_sum], before[..header_sum]);
    }

    #[test]
    fn reseal_reaches_the_layers_of_a_scalable_filter() {
        use filterlab_core::ErrorKind;
        use filterlab_scalable::ScalableBloomFilter;
        let mut filter = ScalableBloomFilter::with_fpp(0.01)
            .initial_capacity(10)
            .build()
            .unwrap();
        filter.insert_many(0..25u64).unwrap();
        let bytes = filter.to_bytes();
        let mut sealed = bytes.clone();
        reseal(&mut sealed);
        assert_eq!(sealed, bytes, "resealing a valid file changes nothing");
        // The first layer's item counter: behind the outer header (9
        // parameters) and its checksum, at 24 into the layer.
        let layer = PARAMS_AT + 9 * 8 + 8;
        assert!(bytes[layer..].starts_with(&MAGIC));
        let mut mutated = bytes.clone();
        mutated[layer + ITEMS_AT] ^= 1;
        let err =
            ScalableBloomFilter::<filterlab_scalable::BlockedBloomFilter>::from_bytes(&mutated);
        assert_eq!(err.unwrap_err().kind(), ErrorKind::ChecksumMismatch);
        reseal(&mut mutated);
        let err =
            ScalableBloomFilter::<filterlab_scalable::BlockedBloomFilter>::from_bytes(&mutated);
        assert_eq!(err.unwrap_err().kind(), ErrorKind::InvalidHeader);
    }
}
