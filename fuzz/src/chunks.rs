//! The chunked-dump target: a scalable filter's `dump_chunks` output, as
//! mutated, reordered, dropped or repeated chunks, through
//! `restore_chunks` and `try_restore_chunks`. A restore either returns a
//! typed error or the filter whose canonical dump is exactly the chunks it
//! was given (never a partial or different filter); it never panics.
//!
//! Input layout: one control byte ([`Edit`]), then the chunks one after the
//! other, each as long as its own header says (48 bytes, the data length
//! at offset 12, then the data and an 8-byte checksum); a last piece too
//! short for that is a chunk of its own. Each input is restored three ways:
//! as it is; with every chunk's checksum recomputed (so mutated chunk
//! headers reach the sequence and layout checks); and with the dumped
//! stream resealed as well (the filter's own checksums, the layers' nested
//! ones, the dump's identity and length), so mutations reach the filter's
//! reader.

use filterlab_core::{Error, ErrorKind, Persist};
use filterlab_scalable::{BlockedBloomFilter, BloomFilter, Layer, ScalableBloomFilter};
use xxhash_rust::xxh3::xxh3_64;

use crate::decode::at_most_one;
use crate::exercise::exercise;
use crate::frame::reseal;

/// What the control byte does to the chunks before they are restored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    /// Bits 0-1: the cursor handed with each chunk: its own sequence number
    /// (0, 3), its position from 1 (1), or its sequence number with the
    /// selected chunk's off by one (2).
    pub cursors: u8,
    /// Bits 2-4: nothing (0, 7), swap the selected chunk with the next (1),
    /// drop it (2), repeat it (3), move the last chunk to its place (4), a
    /// source error in its place (5, through `try_restore_chunks`), cut it
    /// short by one to eight bytes (6).
    pub op: u8,
    /// Bits 5-7: which chunk, modulo their number.
    pub select: usize,
}

impl Edit {
    /// The edit a control byte describes.
    pub fn from_byte(byte: u8) -> Self {
        Self {
            cursors: byte & 3,
            op: (byte >> 2) & 7,
            select: usize::from(byte >> 5),
        }
    }

    /// The control byte of this edit.
    pub fn to_byte(self) -> u8 {
        (self.cursors & 3) | (self.op & 7) << 2 | ((self.select & 7) as u8) << 5
    }

    /// The cursor and bytes of each chunk after the edit, and where a
    /// source error replaces a chunk.
    fn apply(self, chunks: &[Vec<u8>]) -> (Vec<(u64, Vec<u8>)>, Option<usize>) {
        let mut chunks = chunks.to_vec();
        let at = if chunks.is_empty() {
            0
        } else {
            self.select % chunks.len()
        };
        let mut failure = None;
        match self.op {
            1 if at + 1 < chunks.len() => chunks.swap(at, at + 1),
            2 if !chunks.is_empty() => {
                chunks.remove(at);
            }
            3 if !chunks.is_empty() => chunks.insert(at, chunks[at].clone()),
            4 if !chunks.is_empty() => {
                let last = chunks.pop().unwrap_or_default();
                chunks.insert(at.min(chunks.len()), last);
            }
            5 => failure = Some(at),
            6 if !chunks.is_empty() => {
                let keep = chunks[at].len().saturating_sub(1 + self.select);
                chunks[at].truncate(keep);
            }
            _ => {}
        }
        let with_cursors = chunks
            .into_iter()
            .enumerate()
            .map(|(index, chunk)| {
                let own = crate::frame::u64_at(&chunk, SEQUENCE_AT).unwrap_or(0);
                let cursor = match self.cursors {
                    1 => index as u64 + 1,
                    2 if index == at => own.wrapping_add(1),
                    _ => own,
                };
                (cursor, chunk)
            })
            .collect();
        (with_cursors, failure)
    }
}

/// Bytes of a chunk's header, before its data.
pub const CHUNK_HEADER: usize = 48;
/// Offset of the data length (u32) in a chunk header; of the dump's
/// identity, the chunk's sequence number, the chunk count and the stream
/// length (u64 each).
const DATA_LEN_AT: usize = 12;
const ID_AT: usize = 16;
const SEQUENCE_AT: usize = 24;
const TOTAL_AT: usize = 32;
const STREAM_LEN_AT: usize = 40;

/// Cuts `bytes` into chunks, each as long as its header says.
pub fn split_chunks(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    while !bytes.is_empty() {
        let len = data_len(bytes).map_or(bytes.len(), |data| {
            (CHUNK_HEADER + data + 8).min(bytes.len())
        });
        chunks.push(bytes[..len].to_vec());
        bytes = &bytes[len..];
    }
    chunks
}

/// The data length a chunk's header states, if it holds a header.
fn data_len(chunk: &[u8]) -> Option<usize> {
    let field = chunk.get(DATA_LEN_AT..DATA_LEN_AT + 4)?;
    let len = u32::from_le_bytes(field.try_into().ok()?);
    (chunk.len() >= CHUNK_HEADER).then_some(len as usize)
}

/// The range of a chunk's data, as far as the chunk holds it.
fn data_range(chunk: &[u8]) -> Option<std::ops::Range<usize>> {
    let len = data_len(chunk)?;
    Some(CHUNK_HEADER..(CHUNK_HEADER + len).min(chunk.len()))
}

/// Recomputes every chunk's checksum (where the chunk is as long as its
/// header says); with `stream`, first reseals the dumped stream (the
/// concatenated data) and sets every header's identity, count and stream
/// length to the stream's.
pub fn reseal_chunks(chunks: &mut [Vec<u8>], stream: bool) {
    if stream {
        let ranges: Vec<_> = chunks.iter().map(|chunk| data_range(chunk)).collect();
        let mut data: Vec<u8> = chunks
            .iter()
            .zip(&ranges)
            .filter_map(|(chunk, range)| Some(&chunk[range.clone()?]))
            .flatten()
            .copied()
            .collect();
        reseal(&mut data);
        let id = xxh3_64(&data);
        let mut from = 0;
        let total = chunks.len() as u64;
        for (chunk, range) in chunks.iter_mut().zip(ranges) {
            let Some(range) = range else {
                continue;
            };
            let len = range.len();
            chunk[range].copy_from_slice(&data[from..from + len]);
            from += len;
            chunk[ID_AT..ID_AT + 8].copy_from_slice(&id.to_le_bytes());
            chunk[TOTAL_AT..TOTAL_AT + 8].copy_from_slice(&total.to_le_bytes());
            chunk[STREAM_LEN_AT..STREAM_LEN_AT + 8]
                .copy_from_slice(&(data.len() as u64).to_le_bytes());
        }
    }
    for chunk in chunks {
        let Some(len) = data_len(chunk) else {
            continue;
        };
        let end = CHUNK_HEADER + len;
        if chunk.len() == end + 8 {
            let sum = xxh3_64(&chunk[..end]);
            chunk[end..].copy_from_slice(&sum.to_le_bytes());
        }
    }
}

/// The `restore_chunks` target.
pub fn restore_target(input: &[u8]) {
    let Some((&byte, rest)) = input.split_first() else {
        return;
    };
    let edit = Edit::from_byte(byte);
    let mut chunks = split_chunks(rest);
    restore_both(edit, &chunks);
    let original = chunks.clone();
    reseal_chunks(&mut chunks, false);
    if chunks != original {
        restore_both(edit, &chunks);
    }
    let framed = chunks.clone();
    reseal_chunks(&mut chunks, true);
    if chunks != framed {
        restore_both(edit, &chunks);
    }
}

/// Restores the edited chunks with both layer types: at most one accepts.
fn restore_both(edit: Edit, chunks: &[Vec<u8>]) {
    let (edited, failure) = edit.apply(chunks);
    at_most_one(&[
        [restore::<BlockedBloomFilter>(&edited, failure), false],
        [restore::<BloomFilter>(&edited, failure), false],
    ]);
}

/// One restore; whether it returned a filter.
fn restore<L: Layer>(chunks: &[(u64, Vec<u8>)], failure: Option<usize>) -> bool {
    let restored = match failure {
        None => ScalableBloomFilter::<L>::restore_chunks(chunks.iter().cloned()),
        Some(at) => {
            let source = chunks
                .iter()
                .cloned()
                .map(Ok)
                .take(at)
                .chain(std::iter::once(Err(Error::new(
                    ErrorKind::Io,
                    "the fuzz source fails here",
                ))))
                .chain(chunks.iter().skip(at).cloned().map(Ok));
            let result = ScalableBloomFilter::<L>::try_restore_chunks(source);
            assert!(
                result.is_err(),
                "a restore whose source failed returned a filter"
            );
            result
        }
    };
    let Ok(filter) = restored else {
        return false;
    };
    check_canonical(&filter, chunks);
    exercise(&filter, xxh3_64(&filter.to_bytes()));
    true
}

/// A restored filter came from exactly its own dump: cursors 1, 2, …; the
/// chunks' data is its binary format, which reads back as it; and, where
/// the chunk size is one `dump_chunks` takes, dumping it again gives the
/// same chunks byte for byte.
fn check_canonical<L: Layer>(filter: &ScalableBloomFilter<L>, chunks: &[(u64, Vec<u8>)]) {
    for (index, (cursor, _)) in chunks.iter().enumerate() {
        assert_eq!(
            *cursor,
            index as u64 + 1,
            "restored from chunks out of order"
        );
    }
    let stream: Vec<u8> = chunks
        .iter()
        .filter_map(|(_, chunk)| Some(&chunk[data_range(chunk)?]))
        .flatten()
        .copied()
        .collect();
    let bytes = filter.to_bytes();
    assert!(
        stream == bytes,
        "restored a filter that is not the dumped one"
    );
    let read = ScalableBloomFilter::<L>::from_bytes(&stream).expect("the dumped stream reads");
    assert!(read == *filter, "the restored and the read filters differ");
    let capacity = chunks.first().and_then(|(_, chunk)| data_len(chunk));
    let chunk_bytes = capacity.map_or(0, |data| data + CHUNK_HEADER + 8);
    if (filterlab_scalable::MIN_CHUNK_BYTES..=filterlab_scalable::MAX_CHUNK_BYTES)
        .contains(&chunk_bytes)
    {
        let mut again = Vec::new();
        filter
            .dump_chunks(chunk_bytes, |cursor, chunk| {
                again.push((cursor, chunk.to_vec()));
                Ok(())
            })
            .expect("dump_chunks");
        assert!(again == chunks, "the dump of the restored filter differs");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(chunk_bytes: usize) -> Vec<Vec<u8>> {
        let mut filter = ScalableBloomFilter::with_fpp(0.01)
            .initial_capacity(20)
            .build()
            .unwrap();
        filter.insert_many(0..70u64).unwrap();
        let mut chunks = Vec::new();
        filter
            .dump_chunks(chunk_bytes, |_, chunk| {
                chunks.push(chunk.to_vec());
                Ok(())
            })
            .unwrap();
        assert!(filter.len() > 60 && chunks.len() > 3);
        chunks
    }

    #[test]
    fn split_gives_back_the_chunks() {
        let chunks = dump(100);
        assert_eq!(split_chunks(&chunks.concat()), chunks);
    }

    #[test]
    fn resealing_a_dump_changes_nothing_and_repairs_a_mutation() {
        let chunks = dump(256);
        let mut sealed = chunks.clone();
        reseal_chunks(&mut sealed, true);
        assert_eq!(sealed, chunks);
        // A flipped bit in the filter's item counter (the first chunk's
        // data at 24): the chunk checksum, then the filter's header checksum,
        // then the dump's identity stop it; resealing all of them lets the
        // restore reach the filter's reader, which refuses the count.
        let mut mutated = chunks.clone();
        mutated[0][CHUNK_HEADER + 24] ^= 0x10;
        let cursors = |chunks: &[Vec<u8>]| -> Vec<(u64, Vec<u8>)> {
            (1..).zip(chunks.iter().cloned()).collect()
        };
        let err = ScalableBloomFilter::<BlockedBloomFilter>::restore_chunks(cursors(&mutated))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ChecksumMismatch);
        reseal_chunks(&mut mutated, true);
        let result = ScalableBloomFilter::<BlockedBloomFilter>::restore_chunks(cursors(&mutated));
        assert_eq!(result.unwrap_err().kind(), ErrorKind::InvalidHeader);
    }

    #[test]
    fn edits_and_targets_run() {
        let chunks = dump(128);
        for byte in 0..=255u8 {
            assert_eq!(Edit::from_byte(byte).to_byte(), byte);
            let mut input = vec![byte];
            input.extend(chunks.concat());
            restore_target(&input);
        }
    }
}
