//! Filters answered from borrowed bytes: a file in the binary format
//! ([`format`](crate::format)) held in a byte slice, typically a memory
//! map, opened without copying it.
//!
//! [`FileView`] validates a file's header and lengths and hands out its
//! payload as a sub-slice; a filter type that can answer from such a slice
//! implements [`Viewable`], whose view borrows the payload and answers
//! through [`Membership`] with no copy and no allocation. The payload is
//! read as little-endian values at any alignment, so a view is the same on
//! every platform and needs no `unsafe`.

use std::fmt;

use xxhash_rust::xxh3::xxh3_64;

use crate::format::{FilterKind, FrameReader, Header, Persist};
use crate::{Error, ErrorKind, Membership};

/// Bytes of a header with no parameters, its checksum included.
const FIXED_HEADER_LEN: usize = 48;

/// When a view checks the checksum over the whole file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Checksum {
    /// While opening: one pass over the bytes at memory speed (XXH3), which
    /// reads every page of a memory map once.
    Verify,
    /// Later, when the caller asks ([`FileView::verify_checksum`]): opening
    /// reads only the header and what the filter validates of its layout,
    /// so a memory map costs only the pages queries touch. A corrupted
    /// payload then gives wrong answers (never a panic) until it is
    /// verified.
    Defer,
}

/// A filterlab file borrowed from a byte slice: its validated header and its
/// payload as a sub-slice of the input, nothing copied.
///
/// # Examples
///
/// ```
/// use filterlab_core::format::{FilterKind, FrameWriter, Header};
/// use filterlab_core::view::{Checksum, FileView};
/// use filterlab_core::KeyHasher;
///
/// let header = Header { kind: FilterKind::Bloom, hasher: KeyHasher::new(1), items: 0,
///                       params: vec![64], payload_len: 8 };
/// let mut frame = FrameWriter::new(Vec::new(), &header)?;
/// frame.write_words(&[0xff])?;
/// let bytes = frame.finish()?;
///
/// let file = FileView::open(&bytes, FilterKind::Bloom, Checksum::Verify)?;
/// assert_eq!(file.header().params, [64]);
/// assert_eq!(file.payload(), &0xffu64.to_le_bytes());
/// # Ok::<(), filterlab_core::Error>(())
/// ```
#[derive(Clone)]
pub struct FileView<'a> {
    header: Header,
    /// Every byte the checksum covers: the header and the payload.
    covered: &'a [u8],
    payload: &'a [u8],
    stored_checksum: u64,
}

impl<'a> FileView<'a> {
    /// Validates the header of a `kind` file held in `bytes` (magic,
    /// version, kind, header checksum), checks that the bytes hold exactly
    /// its payload and trailing checksum, and with [`Checksum::Verify`]
    /// checks that checksum.
    ///
    /// # Errors
    ///
    /// As [`FrameReader::open`] for the header; [`ErrorKind::Truncated`]
    /// when the bytes end before the file does;
    /// [`ErrorKind::LengthMismatch`] when bytes follow it;
    /// [`ErrorKind::ChecksumMismatch`].
    pub fn open(bytes: &'a [u8], kind: FilterKind, checksum: Checksum) -> Result<Self, Error> {
        let header = FrameReader::open(bytes, kind, u64::MAX)?.header().clone();
        let header_len = FIXED_HEADER_LEN + 8 * header.params.len();
        let truncated = || Error::new(ErrorKind::Truncated, "the input ended inside the filter");
        let payload_end = usize::try_from(header.payload_len)
            .ok()
            .and_then(|len| header_len.checked_add(len))
            .ok_or_else(truncated)?;
        let file_end = payload_end.checked_add(8).ok_or_else(truncated)?;
        if bytes.len() < file_end {
            return Err(truncated());
        }
        if bytes.len() > file_end {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!("{} bytes follow the filter", bytes.len() - file_end),
            ));
        }
        let mut stored = [0; 8];
        stored.copy_from_slice(&bytes[payload_end..file_end]);
        let view = Self {
            header,
            covered: &bytes[..payload_end],
            payload: &bytes[header_len..payload_end],
            stored_checksum: u64::from_le_bytes(stored),
        };
        if checksum == Checksum::Verify {
            view.verify_checksum()?;
        }
        Ok(view)
    }

    /// The validated header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The payload: the bytes between the header and the checksum.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// Checks the file's checksum (XXH3-64 over the header and the
    /// payload): one sequential pass at memory speed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ChecksumMismatch`] when the bytes were corrupted.
    pub fn verify_checksum(&self) -> Result<(), Error> {
        if xxh3_64(self.covered) == self.stored_checksum {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::ChecksumMismatch,
                "payload checksum does not match",
            ))
        }
    }
}

impl fmt::Debug for FileView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileView")
            .field("header", &self.header)
            .field("payload_len", &self.payload.len())
            .finish_non_exhaustive()
    }
}

/// A filter type whose files open as views: the filter answering from the
/// borrowed bytes of its file (a memory map), with no copy and no
/// allocation, exactly as the filter read from them would.
///
/// A view validates what the filter's reader validates (the header, its
/// parameters against the payload length, the layout its queries index),
/// so a damaged file is refused, never a panic; only the checksum may be
/// left for later ([`Checksum::Defer`]).
pub trait Viewable: Persist + Membership {
    /// The view borrowing a file's bytes.
    type View<'a>: Membership + fmt::Debug;

    /// Opens the file held in `bytes` as a view.
    ///
    /// # Errors
    ///
    /// As [`FileView::open`]; those of [`Persist::config_from_header`] for
    /// parameters that contradict each other or the payload length; the
    /// filter's own for a payload whose layout is invalid.
    fn view(bytes: &[u8], checksum: Checksum) -> Result<Self::View<'_>, Error>;

    /// Checks the checksum of the file `view` borrows (for a view opened
    /// with [`Checksum::Defer`]): one pass at memory speed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ChecksumMismatch`] when the bytes were corrupted.
    fn verify_checksum(view: &Self::View<'_>) -> Result<(), Error>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyHasher;
    use crate::format::FrameWriter;

    fn file(words: &[u64]) -> Vec<u8> {
        let header = Header {
            kind: FilterKind::Ribbon,
            hasher: KeyHasher::new(3),
            items: 2,
            params: vec![5, 6, 7],
            payload_len: 8 * words.len() as u64,
        };
        let mut frame = FrameWriter::new(Vec::new(), &header).unwrap();
        frame.write_words(words).unwrap();
        frame.finish().unwrap()
    }

    #[test]
    fn the_payload_is_a_sub_slice_and_every_damage_is_refused() {
        let bytes = file(&[1, 2, 3]);
        let view = FileView::open(&bytes, FilterKind::Ribbon, Checksum::Verify).unwrap();
        assert_eq!(view.header().params, [5, 6, 7]);
        assert_eq!(view.payload().len(), 24);
        assert!(std::ptr::eq(view.payload(), &raw const bytes[72..96]));

        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x10;
            assert!(
                FileView::open(&damaged, FilterKind::Ribbon, Checksum::Verify).is_err(),
                "flip at {at}"
            );
            // Deferred: a flip in the payload or its checksum opens, and
            // the later check finds it.
            if let Ok(view) = FileView::open(&damaged, FilterKind::Ribbon, Checksum::Defer) {
                assert!(at >= 72, "a header flip at {at} opened");
                assert_eq!(
                    view.verify_checksum().unwrap_err().kind(),
                    ErrorKind::ChecksumMismatch
                );
            }
        }
        for len in 0..bytes.len() {
            let err =
                FileView::open(&bytes[..len], FilterKind::Ribbon, Checksum::Defer).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Truncated, "{len} bytes");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let err = FileView::open(&longer, FilterKind::Ribbon, Checksum::Verify).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthMismatch);
        let err = FileView::open(&bytes, FilterKind::Bloom, Checksum::Verify).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WrongKind);
    }

    #[test]
    fn a_crafted_payload_length_is_truncation_not_a_panic() {
        let mut bytes = file(&[1]);
        bytes[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        // The header's own checksum, recomputed so that only the length is wrong.
        let sealed = xxh3_64(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sealed.to_le_bytes());
        let err = FileView::open(&bytes, FilterKind::Ribbon, Checksum::Defer).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Truncated);
    }
}
