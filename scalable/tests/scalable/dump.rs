//! Chunked dump and restore: a large filter comes back identical; every
//! damaged, missing, reordered or repeated chunk is a typed error.

use filterlab_scalable::{
    BloomFilter, CHUNK_OVERHEAD, DEFAULT_CHUNK_BYTES, Error, ErrorKind, FilterKind,
    ScalableBloomFilter, dump_chunks_of, dump_stream_chunks, inspect_chunk, try_restore_chunks_of,
    try_restore_stream_chunks,
};

use crate::{grown, insert_range};

type Chunks = Vec<(u64, Vec<u8>)>;

fn dump(filter: &ScalableBloomFilter, chunk_bytes: usize) -> Chunks {
    let mut chunks = Vec::new();
    let count = filter
        .dump_chunks(chunk_bytes, |cursor, chunk| {
            assert!(chunk.len() <= chunk_bytes);
            chunks.push((cursor, chunk.to_vec()));
            Ok(())
        })
        .unwrap();
    assert_eq!(count, chunks.len() as u64);
    chunks
}

fn restore_err(chunks: Chunks) -> ErrorKind {
    match <ScalableBloomFilter>::restore_chunks(chunks) {
        Ok(filter) => panic!("a damaged dump restored to {filter:?}"),
        Err(err) => err.kind(),
    }
}

/// Every way a dump can be damaged, applied to `chunks` (at least 4).
fn check_damage(chunks: &Chunks) {
    assert!(chunks.len() >= 4);
    let last = chunks.len() - 1;
    let with = |edit: &dyn Fn(&mut Chunks)| {
        let mut damaged = chunks.clone();
        edit(&mut damaged);
        restore_err(damaged)
    };
    let out_of_order = ErrorKind::InvalidHeader;
    // Missing: the first, a middle one, the last (the dump then ends early).
    assert_eq!(with(&|c| drop(c.remove(0))), out_of_order);
    assert_eq!(with(&|c| drop(c.remove(2))), out_of_order);
    assert_eq!(with(&|c| drop(c.pop())), ErrorKind::Truncated);
    assert_eq!(with(&|c| c.clear()), ErrorKind::Truncated);
    // Reordered, repeated (in the middle and after the last).
    assert_eq!(with(&|c| c.swap(1, 2)), out_of_order);
    assert_eq!(with(&|c| c.insert(2, c[1].clone())), out_of_order);
    assert_eq!(with(&|c| c.push(c[last].clone())), out_of_order);
    assert_eq!(with(&|c| c.push(c[0].clone())), out_of_order);
    // A chunk stored under another cursor.
    assert_eq!(with(&|c| c[1].0 = 7), out_of_order);
    // Truncated chunks: cut inside the data, inside the framing, emptied.
    assert_eq!(
        with(&|c| {
            let len = c[1].1.len();
            c[1].1.truncate(len - 9);
        }),
        ErrorKind::Truncated
    );
    assert_eq!(with(&|c| c[1].1.truncate(20)), ErrorKind::Truncated);
    assert_eq!(with(&|c| c[last].1.clear()), ErrorKind::Truncated);
    assert_eq!(with(&|c| c[1].1.push(0)), ErrorKind::LengthMismatch);
    // Corrupted: a bit flipped in the data, the sequence number, the checksum.
    for at in [CHUNK_OVERHEAD, 30, 100] {
        let flipped = with(&|c| {
            let len = c[1].1.len();
            c[1].1[at.min(len - 1)] ^= 0x10;
        });
        assert_eq!(flipped, ErrorKind::ChecksumMismatch, "flip at {at}");
    }
    assert_eq!(
        with(&|c| {
            let len = c[last].1.len();
            c[last].1[len - 1] ^= 1;
        }),
        ErrorKind::ChecksumMismatch
    );
    assert_eq!(with(&|c| c[0].1[0] ^= 1), ErrorKind::BadMagic);
}

/// Chunks of a 10-million-item filter restore to an identical filter, and
/// every kind of damage to them is refused.
#[test]
fn ten_million_items_round_trip_in_chunks() {
    let filter = grown(100_000, 10, 10_000_000);
    let bytes = filter.memory_usage();
    let chunks = dump(&filter, DEFAULT_CHUNK_BYTES);
    println!(
        "{} items in {} layers, {bytes} bytes, {} chunks of at most {DEFAULT_CHUNK_BYTES} bytes",
        filter.len(),
        filter.layers().len(),
        chunks.len()
    );
    assert!(chunks.len() as u64 >= bytes as u64 / DEFAULT_CHUNK_BYTES as u64);
    let restored =
        ScalableBloomFilter::restore_chunks(chunks.iter().map(|(c, b)| (*c, b))).unwrap();
    assert_eq!(restored, filter);
    check_damage(&chunks);
}

#[test]
fn small_dumps_and_their_damage() {
    let filter = grown(100, 3, 2000);
    for chunk_bytes in [64, 100, 1000, 4096] {
        let chunks = dump(&filter, chunk_bytes);
        let restored = ScalableBloomFilter::restore_chunks(chunks.clone()).unwrap();
        assert_eq!(restored, filter);
        if chunks.len() >= 4 {
            check_damage(&chunks);
        }
    }
    // One chunk holding everything.
    let whole = dump(&filter, 1 << 20);
    assert_eq!(whole.len(), 1);
    assert_eq!(
        ScalableBloomFilter::restore_chunks(whole.clone()).unwrap(),
        filter
    );
    // Its header claiming a shorter stream than it holds, checksum resealed
    // (found by the restore_chunks fuzz target).
    let mut short = whole.clone();
    let chunk = &mut short[0].1;
    let stream_len = u64::from_le_bytes(chunk[40..48].try_into().unwrap());
    chunk[40..48].copy_from_slice(&(stream_len - 1).to_le_bytes());
    let end = chunk.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&chunk[..end]);
    chunk[end..].copy_from_slice(&sum.to_le_bytes());
    assert_eq!(restore_err(short), ErrorKind::LengthMismatch);

    // Chunks of two dumps of different filters do not mix.
    let mut other = filter.clone();
    insert_range(&mut other, 4, 0, 10);
    let (a, b) = (dump(&filter, 1000), dump(&other, 1000));
    assert_eq!(a.len(), b.len());
    let mut mixed = a.clone();
    mixed[2] = b[2].clone();
    assert_eq!(restore_err(mixed), ErrorKind::InvalidHeader);

    // Chunk sizes outside the limits, and a failing store.
    for bad in [0, CHUNK_OVERHEAD, 63] {
        let err = filter.dump_chunks(bad, |_, _| Ok(())).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidParameter);
    }
    let mut stored = 0;
    let err = filter
        .dump_chunks(100, |cursor, _| {
            stored += 1;
            if cursor == 3 {
                Err(Error::new(ErrorKind::Io, "disk full"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
    assert_eq!((err.kind(), stored), (ErrorKind::Io, 3));

    // A source that fails passes its error through.
    let chunks = dump(&filter, 1000);
    let failing = chunks.into_iter().enumerate().map(|(i, chunk)| {
        if i == 2 {
            Err(Error::new(ErrorKind::Io, "socket closed"))
        } else {
            Ok(chunk)
        }
    });
    let err = <ScalableBloomFilter>::try_restore_chunks(failing).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
}

/// Any filterlab filter dumps and restores through the same chunks, and a
/// chunk of another kind is refused.
#[test]
fn any_filter_dumps_through_the_same_chunks() {
    let mut bloom = BloomFilter::with_fpp(0.01)
        .expected_items(5_000)
        .build()
        .unwrap();
    bloom.insert_many(0..5_000u64);
    let mut chunks = Vec::new();
    let count = dump_chunks_of(&bloom, 1024, |cursor, chunk| {
        chunks.push((cursor, chunk.to_vec()));
        Ok(())
    })
    .unwrap();
    assert!(count > 4 && count == chunks.len() as u64);
    for (cursor, chunk) in &chunks {
        let header = inspect_chunk(FilterKind::Bloom, chunk).unwrap();
        assert_eq!((header.sequence, header.total), (*cursor, count));
        let mut damaged = chunk.clone();
        damaged[50] ^= 1;
        let err = inspect_chunk(FilterKind::Bloom, &damaged).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ChecksumMismatch);
        let err = inspect_chunk(FilterKind::ScalableBloom, chunk).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WrongKind);
    }
    let restored: BloomFilter = try_restore_chunks_of(chunks.iter().cloned().map(Ok)).unwrap();
    assert_eq!(restored, bloom);
    assert!((0..5_000u64).all(|key| restored.contains(&key)));
    let err = <ScalableBloomFilter>::restore_chunks(chunks).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongKind);
}

/// A stream of the caller's (a filter with fields around it) dumps and
/// restores through the same chunks; a reader that leaves bytes is refused.
#[test]
fn a_stream_around_a_filter_dumps_through_the_same_chunks() {
    let mut bloom = BloomFilter::with_fpp(0.01)
        .expected_items(1_000)
        .build()
        .unwrap();
    bloom.insert_many(0..1_000u64);
    let write = |out: &mut dyn std::io::Write| {
        out.write_all(&42u64.to_le_bytes())?;
        bloom.write_to(out)
    };
    let mut chunks = Vec::new();
    dump_stream_chunks(FilterKind::Bloom, 256, write, |cursor, chunk| {
        chunks.push((cursor, chunk.to_vec()));
        Ok(())
    })
    .unwrap();
    let read = |input: &mut dyn std::io::Read| {
        let mut field = [0u8; 8];
        input.read_exact(&mut field)?;
        Ok((u64::from_le_bytes(field), BloomFilter::read_from(input)?))
    };
    let (field, restored) =
        try_restore_stream_chunks(FilterKind::Bloom, chunks.iter().cloned().map(Ok), read).unwrap();
    assert_eq!((field, &restored), (42, &bloom));
    let short = |input: &mut dyn std::io::Read| {
        let mut field = [0u8; 8];
        input.read_exact(&mut field)?;
        Ok(())
    };
    let err = try_restore_stream_chunks(FilterKind::Bloom, chunks.into_iter().map(Ok), short)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LengthMismatch);
}
