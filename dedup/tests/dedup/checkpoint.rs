//! Checkpoints: the round trip, every way a file can be wrong (each
//! leaving the running state untouched), interrupted writes, and the
//! golden file that pins the format.

use std::io::{self, Write};
use std::path::PathBuf;

use filterlab_core::ErrorKind as CoreKind;
use filterlab_core::FilterKind;
use filterlab_core::format::{FrameReader, FrameWriter};
use filterlab_dedup::{AtomicFile, Deduplicator, ErrorKind, PartitionKey, SizingMode, Verdict};

use crate::{key, scratch_dir, scratch_state, snapshot};

fn builder() -> filterlab_dedup::DeduplicatorBuilder {
    Deduplicator::with_fpp(0.001)
        .expected_items(200)
        .partitions(3)
        .search_all(true)
        .seed(5)
}

/// A de-duplicator with keys in three partitions (one evicted) and every counter moving.
fn filled(offset: u64) -> Deduplicator {
    let mut dedup = builder().build().unwrap();
    for day in 0..4u64 {
        let partition = PartitionKey::from(day + offset);
        dedup
            .check_many((day * 50..day * 50 + 80).map(key), Some(&partition))
            .unwrap();
    }
    dedup
        .check("late", Some(&PartitionKey::from(offset)))
        .unwrap();
    dedup.record_fault();
    dedup
}

/// A scratch directory for `test` holding `dedup`'s checkpoint in a file
/// named `state`: (the directory, the file).
fn saved(test: &str, dedup: &Deduplicator) -> (PathBuf, PathBuf) {
    let (dir, path) = scratch_state(test);
    dedup.write_checkpoint(&path).unwrap();
    (dir, path)
}

#[test]
fn round_trip_through_a_file() {
    let original = filled(0);
    let (dir, path) = saved("round-trip", &original);
    let mut restored = builder().build().unwrap();
    restored.read_checkpoint(&path).unwrap();
    assert_eq!(snapshot(&restored), snapshot(&original));
    assert_eq!(restored.metrics(), original.metrics());
    assert_eq!(restored.status(), original.status());
    // It answers as the original would.
    for i in 150..230 {
        assert_eq!(
            restored
                .check(&key(i), Some(&PartitionKey::from(3u8)))
                .unwrap(),
            Verdict::Duplicate
        );
    }
    // Search-all and the alarms are behaviour, not state: a run may change them.
    let mut other_behaviour = builder().search_all(false).alarms([10.0]).build().unwrap();
    other_behaviour.read_checkpoint(&path).unwrap();
    assert_eq!(other_behaviour.metrics(), original.metrics());
    // Restoring moves the alarms to the restored fill level.
    let events = other_behaviour.take_events();
    assert_eq!(
        events.iter().map(|e| e.threshold).collect::<Vec<_>>(),
        [10.0]
    );
    // Unpartitioned too.
    let mut plain = Deduplicator::with_fpp(0.01)
        .expected_items(100)
        .build()
        .unwrap();
    plain.check_many((0..60).map(key), None).unwrap();
    plain.write_checkpoint(&path).unwrap();
    let mut back = Deduplicator::with_fpp(0.01)
        .expected_items(100)
        .build()
        .unwrap();
    back.read_checkpoint(&path).unwrap();
    assert_eq!(snapshot(&back), snapshot(&plain));
    assert!(!dir.join(".state.tmp").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// Reads `bytes` into a running de-duplicator and checks that it fails
/// with `expected` and leaves the running state exactly as it was.
fn rejected(bytes: &[u8], target: &mut Deduplicator) -> ErrorKind {
    let before = (snapshot(target), target.status());
    let err = target.read_checkpoint_from(bytes).unwrap_err();
    assert_eq!(
        (snapshot(target), target.status()),
        before,
        "state changed by {err}"
    );
    err.kind()
}

#[test]
fn a_missing_file_is_its_own_error_and_changes_nothing() {
    let dir = scratch_dir("missing");
    let mut running = filled(10);
    let before = snapshot(&running);
    let err = running.read_checkpoint(dir.join("absent")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CheckpointMissing);
    assert!(err.to_string().contains("absent"), "{err}");
    assert_eq!(snapshot(&running), before);
    // A directory is not a checkpoint either.
    let err = running.read_checkpoint(&dir).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Filter(CoreKind::Io)),
        "{err}"
    );
    assert_eq!(snapshot(&running), before);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn truncated_files_fail_and_change_nothing() {
    let bytes = snapshot(&filled(0));
    let mut running = filled(10);
    for len in (0..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
        let kind = rejected(&bytes[..len], &mut running);
        assert!(
            matches!(
                kind,
                ErrorKind::Filter(CoreKind::Truncated | CoreKind::LengthMismatch)
            ),
            "{len}: {kind:?}"
        );
    }
}

#[test]
fn corrupt_files_fail_and_change_nothing() {
    let bytes = snapshot(&filled(0));
    let mut running = filled(10);
    for at in 0..bytes.len() {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 1 << (at % 8);
        rejected(&corrupt, &mut running);
    }
}

/// Every way a checkpoint can be damaged, as (what, damaged bytes): cut
/// short at each region's edge, followed by bytes (one, a word, or a second
/// copy of itself), or a byte flipped in each region. The regions of a
/// checkpoint: magic and framing (0..40), the 14 parameters (40..152), the
/// header checksum (152..160), the first partition's tag (160) and key
/// length (161..169), the nested filters, the trailing checksum.
pub(crate) fn damaged_versions(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let len = bytes.len();
    let mut versions = Vec::new();
    for cut in [0, 1, 8, 48, 159, 160, 170, len / 2, len - 8, len - 1] {
        versions.push((format!("truncated to {cut} bytes"), bytes[..cut].to_vec()));
    }
    for tail in [&b"\n"[..], b"\0", b"junk", bytes] {
        let mut longer = bytes.to_vec();
        longer.extend_from_slice(tail);
        versions.push((format!("followed by {} bytes", tail.len()), longer));
    }
    for at in [0, 9, 40, 60, 155, 160, 165, len / 2, len - 9, len - 1] {
        let mut flipped = bytes.to_vec();
        flipped[at] ^= 0x20;
        versions.push((format!("byte {at} flipped"), flipped));
    }
    versions
}

#[test]
fn every_damaged_checkpoint_is_refused_from_a_reader_and_a_file_and_changes_nothing() {
    let bytes = snapshot(&filled(0));
    let (dir, path) = scratch_state("damaged-files");
    let mut running = filled(10);
    let before = (snapshot(&running), running.status());
    for (what, damaged) in damaged_versions(&bytes) {
        let from_reader = rejected(&damaged, &mut running);
        std::fs::write(&path, &damaged).unwrap();
        let err = running.read_checkpoint(&path).unwrap_err();
        assert_eq!(err.kind(), from_reader, "{what}: {err}");
        assert!(matches!(err.kind(), ErrorKind::Filter(_)), "{what}: {err}");
        if what.starts_with("followed by") {
            assert_eq!(err.kind(), ErrorKind::Filter(CoreKind::LengthMismatch));
            assert!(err.to_string().contains("after the checkpoint"), "{err}");
        }
        assert_eq!((snapshot(&running), running.status()), before, "{what}");
        assert_eq!(std::fs::read(&path).unwrap(), damaged, "{what}: file kept");
    }
    // The undamaged file still reads.
    std::fs::write(&path, &bytes).unwrap();
    running.read_checkpoint(&path).unwrap();
    assert_eq!(snapshot(&running), bytes);
    std::fs::remove_dir_all(dir).unwrap();
}

/// The checkpoint `bytes` with its header parameters changed by `edit`,
/// re-framed so every checksum is valid.
fn reframed(bytes: &[u8], edit: impl FnOnce(&mut Vec<u64>)) -> Vec<u8> {
    let mut frame = FrameReader::open(bytes, FilterKind::DedupCheckpoint, u64::MAX).unwrap();
    let mut header = frame.header().clone();
    let mut payload = vec![0u8; header.payload_len as usize];
    frame.read_bytes_into(&mut payload).unwrap();
    edit(&mut header.params);
    let mut out = FrameWriter::new(Vec::new(), &header).unwrap();
    out.write_bytes(&payload).unwrap();
    out.finish().unwrap()
}

#[test]
fn other_versions_and_inconsistent_headers_fail_and_change_nothing() {
    let bytes = snapshot(&filled(0));
    let mut running = filled(10);
    let mut framing = bytes.clone();
    framing[8] = 2;
    let cases = [
        (
            "another framing version (core's, at byte 8)",
            framing,
            CoreKind::UnsupportedVersion,
        ),
        // The rest re-framed with valid checksums.
        (
            "another layout version",
            reframed(&bytes, |p| p[0] = 2),
            CoreKind::UnsupportedVersion,
        ),
        (
            "checks that do not add up",
            reframed(&bytes, |p| p[8] += 1),
            CoreKind::InvalidHeader,
        ),
        (
            "more live partitions than the count",
            reframed(&bytes, |p| p[7] = 4),
            CoreKind::InvalidHeader,
        ),
        (
            "an unknown sizing mode",
            reframed(&bytes, |p| p[3] = 7),
            CoreKind::InvalidHeader,
        ),
    ];
    for (what, file, kind) in cases {
        assert_eq!(
            rejected(&file, &mut running),
            ErrorKind::Filter(kind),
            "{what}"
        );
    }
    // The re-framing itself keeps a valid file valid.
    running
        .read_checkpoint_from(&reframed(&bytes, |_| {})[..])
        .unwrap();
}

#[test]
fn another_configuration_fails_and_changes_nothing() {
    let bytes = snapshot(&filled(0));
    let differently = [
        ("N", builder().expected_items(201)),
        (
            "P",
            Deduplicator::with_fpp(0.002)
                .expected_items(200)
                .partitions(3)
                .seed(5),
        ),
        ("partition count", builder().partitions(4)),
        ("seed", builder().seed(6)),
        ("sizing", builder().sizing_mode(SizingMode::Exact)),
    ];
    for (what, other) in differently {
        let mut running = other.build().unwrap();
        running
            .check("something", Some(&PartitionKey::from(1u8)))
            .unwrap();
        let kind = rejected(&bytes, &mut running);
        assert_eq!(kind, ErrorKind::Filter(CoreKind::ConfigMismatch), "{what}");
    }
    // An unpartitioned checkpoint for a partitioned run, and back.
    let plain = Deduplicator::with_fpp(0.001)
        .expected_items(200)
        .seed(5)
        .build()
        .unwrap();
    let mut partitioned = builder().build().unwrap();
    assert_eq!(
        rejected(&snapshot(&plain), &mut partitioned),
        ErrorKind::Filter(CoreKind::ConfigMismatch)
    );
    let mut plain = plain;
    assert_eq!(
        rejected(&bytes, &mut plain),
        ErrorKind::Filter(CoreKind::ConfigMismatch)
    );
    // A Bloom filter's file is not a checkpoint.
    let bloom = filterlab_bloom::BloomFilter::with_fpp(0.01)
        .expected_items(10)
        .build()
        .unwrap();
    let mut running = filled(10);
    assert_eq!(
        rejected(&bloom.to_bytes(), &mut running),
        ErrorKind::Filter(CoreKind::WrongKind)
    );
}

/// A writer that fails after `limit` bytes, like a disk that fills up or a
/// process that dies mid-write.
struct FailAfter<W> {
    inner: W,
    limit: usize,
}

impl<W: Write> Write for FailAfter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.limit == 0 {
            return Err(io::Error::other("simulated failure"));
        }
        let take = bytes.len().min(self.limit);
        let written = self.inner.write(&bytes[..take])?;
        self.limit -= written;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[test]
fn an_interrupted_write_leaves_the_previous_checkpoint_loadable() {
    let (dir, path) = saved("interrupted", &filled(0));
    let old_bytes = std::fs::read(&path).unwrap();
    let new = filled(20);
    let new_bytes = snapshot(&new);
    for limit in [0, 1, 47, 200, new_bytes.len() / 2, new_bytes.len() - 1] {
        // A write that fails: the temporary file is removed on drop.
        let file = AtomicFile::create(&path).unwrap();
        let temporary = file.temporary_path().to_path_buf();
        let mut failing = FailAfter { inner: file, limit };
        assert!(new.write_checkpoint_to(&mut failing).is_err(), "{limit}");
        drop(failing);
        assert!(!temporary.exists());
        assert_eq!(std::fs::read(&path).unwrap(), old_bytes);

        // A crash mid-write: no cleanup runs, the temporary file stays
        // (written here as the dead writer left it: its lock went with it).
        std::fs::write(&temporary, &new_bytes[..limit]).unwrap();
        let mut loaded = builder().build().unwrap();
        loaded.read_checkpoint(&path).unwrap();
        assert_eq!(
            snapshot(&loaded),
            old_bytes,
            "after a crash at byte {limit}"
        );
    }
    // The next checkpoint goes through despite the leftover temporary file
    // (of this pid: reused, emptied first).
    new.write_checkpoint(&path).unwrap();
    let mut loaded = builder().build().unwrap();
    loaded.read_checkpoint(&path).unwrap();
    assert_eq!(snapshot(&loaded), new_bytes);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["state"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn stale_temporaries_are_removed_and_a_live_writers_is_kept() {
    let (dir, path) = saved("stale", &filled(0));
    let old_bytes = std::fs::read(&path).unwrap();
    // A writer of this process, mid-write: its temporary is locked.
    let mut live = AtomicFile::create(&path).unwrap();
    live.write_all(b"half").unwrap();
    let dead = dir.join(".state.tmp-1");
    std::fs::write(&dead, b"left by a writer killed mid-write").unwrap();
    let elsewhere = dir.join(".elsewhere.tmp-1");
    std::fs::write(&elsewhere, b"another file's").unwrap();

    assert_eq!(
        AtomicFile::remove_stale(&path).unwrap(),
        std::slice::from_ref(&dead)
    );
    assert!(!dead.exists());
    assert!(elsewhere.exists());
    assert!(live.temporary_path().exists());
    assert_eq!(std::fs::read(&path).unwrap(), old_bytes);
    // Nothing more to remove, and the live writer finishes as if alone.
    assert!(AtomicFile::remove_stale(&path).unwrap().is_empty());
    live.write_all(b" and the rest").unwrap();
    live.commit().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"half and the rest");
    // A path that names no file has no temporaries.
    let err = AtomicFile::remove_stale("").unwrap_err();
    assert!(err.to_string().contains("names no file"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The format never changes by accident: a fixed state writes exactly the
/// committed bytes, and they read back. Regenerate (after a deliberate
/// format change, with a new CHECKPOINT_VERSION) with DEDUP_BLESS=1.
#[test]
fn golden_checkpoint() {
    let golden_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/dedup-checkpoint-v1.bin"
    );
    let build = || {
        Deduplicator::with_fpp(0.01)
            .expected_items(64)
            .partitions(2)
            .sizing_mode(SizingMode::Exact)
            .seed(0x5eed)
            .build()
            .unwrap()
    };
    let mut dedup = build();
    dedup
        .check_many(["a", "b", "c"], Some(&PartitionKey::parse(b"2024-01-01")))
        .unwrap();
    dedup
        .check_many(["a", "d"], Some(&PartitionKey::parse(b"-1.5")))
        .unwrap();
    dedup.check("x", Some(&PartitionKey::parse(b"-7"))).unwrap();
    let bytes = snapshot(&dedup);
    if std::env::var_os("DEDUP_BLESS").is_some() {
        std::fs::write(golden_path, &bytes).unwrap();
    }
    let golden = std::fs::read(golden_path).expect("the golden file (DEDUP_BLESS=1 writes it)");
    assert_eq!(bytes, golden, "the checkpoint format changed");
    let mut back = build();
    back.read_checkpoint_from(&golden[..]).unwrap();
    assert_eq!(back.metrics().uniques_stored, 5);
    assert_eq!(back.metrics().dropped, 1);
}
