//! Serde support: a filter (de)serializes as its binary format, so a filter
//! read through serde is validated exactly like one read from a file.
//!
//! Filter crates implement `Serialize`/`Deserialize` with these two functions.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;

use crate::Persist;

/// Serializes `filter` as a byte string holding its binary format.
///
/// # Errors
///
/// Whatever the serializer reports.
pub fn serialize<F: Persist, S: Serializer>(filter: &F, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_bytes(&filter.to_bytes())
}

/// Deserializes a filter from a byte string (or a sequence of bytes, for
/// formats without byte strings) and validates it as [`Persist::from_bytes`] does.
///
/// # Errors
///
/// A custom deserializer error carrying the filterlab error for invalid bytes.
pub fn deserialize<'de, F: Persist, D: Deserializer<'de>>(deserializer: D) -> Result<F, D::Error> {
    struct BytesVisitor;

    impl<'de> Visitor<'de> for BytesVisitor {
        type Value = Vec<u8>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a filterlab filter as bytes")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
            Ok(bytes.to_vec())
        }

        fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(bytes)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            // Grows with the elements actually present, not with a size hint.
            let mut bytes = Vec::new();
            while let Some(byte) = seq.next_element::<u8>()? {
                bytes.push(byte);
            }
            Ok(bytes)
        }
    }

    let bytes = deserializer.deserialize_byte_buf(BytesVisitor)?;
    F::from_bytes(&bytes).map_err(de::Error::custom)
}
