//! The redis module's data types as `rdb_load` reads them
//! (`filterlab_redis_module::stored::Stored::load`): a value's tag, its
//! fields, its filter streamed in string buffers, or the chunks of a
//! restore under way. A payload either loads or is refused with a typed
//! error (the module then logs it and refuses the key); it never panics.
//! A value that loads saves to a payload that loads back equal and saves
//! the same again, and a filter dumps to chunks that restore it.
//!
//! Input layout: one control byte (bit 0: BF or CF; bit 1: reseal the
//! filter's checksums inside the buffers, so mutations reach its reader;
//! bit 2: encoding version 2, which is refused), then the payload's items:
//! a tag byte, even for an unsigned integer (8 little-endian bytes
//! follow, fewer at the end), odd for a string buffer (a 4-byte
//! little-endian length, then that many bytes, fewer at the end).

use std::fmt::Debug;

use filterlab_redis_module::bloom::Bloom;
use filterlab_redis_module::cuckoo::Cuckoo;
use filterlab_redis_module::payload::{Item, Recorded};
use filterlab_redis_module::stored::{FilterValue, Stored, dump_all, load_chunks};

use crate::frame::reseal;

/// The payload `bytes` encode.
pub fn items_of(bytes: &[u8]) -> Vec<Item> {
    let mut items = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let tag = bytes[at];
        at += 1;
        if tag.is_multiple_of(2) {
            let mut value = [0u8; 8];
            let end = (at + 8).min(bytes.len());
            value[..end - at].copy_from_slice(&bytes[at..end]);
            items.push(Item::Unsigned(u64::from_le_bytes(value)));
            at = end;
        } else {
            let mut len = [0u8; 4];
            let end = (at + 4).min(bytes.len());
            len[..end - at].copy_from_slice(&bytes[at..end]);
            at = end;
            let end = at
                .saturating_add(u32::from_le_bytes(len) as usize)
                .min(bytes.len());
            items.push(Item::Buffer(bytes[at..end].to_vec()));
            at = end;
        }
    }
    items
}

/// The bytes that encode `items` (the seeds' encoding).
pub fn bytes_of(items: &[Item]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for item in items {
        match item {
            Item::Unsigned(value) => {
                bytes.push(0);
                bytes.extend_from_slice(&value.to_le_bytes());
            }
            Item::Buffer(buffer) => {
                bytes.push(1);
                bytes.extend_from_slice(&(buffer.len() as u32).to_le_bytes());
                bytes.extend_from_slice(buffer);
            }
        }
    }
    bytes
}

/// The filter's checksums recomputed inside a ready value's buffers (after
/// `skip` bytes of fields), the buffers cut where they were.
fn resealed(items: &[Item], skip: usize) -> Vec<Item> {
    let mut stream = Vec::new();
    let mut cuts = Vec::new();
    for item in items {
        if let Item::Buffer(buffer) = item {
            stream.extend_from_slice(buffer);
            cuts.push(buffer.len());
        }
    }
    if stream.len() > skip {
        reseal(&mut stream[skip..]);
    }
    let mut at = 0;
    let mut cut = cuts.into_iter();
    items
        .iter()
        .map(|item| match item {
            Item::Buffer(_) => {
                let len = cut.next().unwrap_or(0);
                at += len;
                Item::Buffer(stream[at - len..at].to_vec())
            }
            unsigned => unsigned.clone(),
        })
        .collect()
}

/// The target: see the module docs.
pub fn module_target(input: &[u8]) {
    let Some((&control, rest)) = input.split_first() else {
        return;
    };
    let mut items = items_of(rest);
    let version = if control & 4 == 0 { 1 } else { 2 };
    if control & 1 == 0 {
        if control & 2 != 0 {
            items = resealed(&items, 0);
        }
        check::<Bloom>(items, version);
    } else {
        if control & 2 != 0 {
            items = resealed(&items, 16);
        }
        check::<Cuckoo>(items, version);
    }
}

fn check<F: FilterValue + Clone + PartialEq + Debug>(items: Vec<Item>, version: i32) {
    let mut payload = Recorded { items, at: 0 };
    let Ok(value) = Stored::<F>::load(&mut payload, version) else {
        return;
    };
    assert_eq!(version, 1, "encoding version {version} loaded");
    let mut saved = Recorded::default();
    value.save(&mut saved).expect("a loaded value saves");
    let again = Stored::<F>::load(&mut saved.clone(), 1).expect("a saved value loads");
    assert_eq!(again, value);
    let mut resaved = Recorded::default();
    again.save(&mut resaved).expect("a loaded value saves");
    assert_eq!(resaved.items, saved.items);
    if let Stored::Ready(filter) = &value {
        let mut chunks = Vec::new();
        dump_all(filter, |cursor, chunk| {
            chunks.push((cursor, chunk.to_vec()));
            Ok(())
        })
        .expect("a filter dumps");
        let chunks = chunks
            .iter()
            .map(|(cursor, chunk)| (*cursor, chunk.as_slice()));
        let key = load_chunks::<F>(chunks).expect("the chunks of a dump load");
        assert_eq!(key.as_ref().and_then(Stored::ready), Some(filter));
    }
}
