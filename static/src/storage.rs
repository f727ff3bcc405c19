//! Where a filter's payload lives, and how values are read from it.
//!
//! A filter keeps its payload as the bytes of its file format: its own
//! boxed bytes once built or read, or a borrowed slice of a file (a view of
//! a memory map). Values are read as little-endian at any alignment, so
//! the same query code serves both, on every platform, with no `unsafe`:
//! a view answers with exactly the filter's instructions.

use filterlab_core::view::{Checksum, FileView};
use filterlab_core::{Error, FilterKind};

/// A filter's payload bytes: its own, or borrowed from a file.
pub(crate) trait Payload {
    /// The bytes.
    fn bytes(&self) -> &[u8];
}

impl Payload for Vec<u8> {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl Payload for &[u8] {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// The `index`-th little-endian value of `N` bytes in `bytes`; zeros past
/// the end (never reached: readers validate every index a query makes).
#[inline]
pub(crate) fn le_bytes<const N: usize>(bytes: &[u8], index: usize) -> [u8; N] {
    // One comparison: `index` against the number of whole chunks.
    let (chunks, _) = bytes.as_chunks::<N>();
    chunks.get(index).copied().unwrap_or([0; N])
}

/// The `index`-th little-endian `u32` of `bytes`.
#[inline]
pub(crate) fn u32_at(bytes: &[u8], index: usize) -> u32 {
    u32::from_le_bytes(le_bytes(bytes, index))
}

/// `len` rounded up to a whole number of 8-byte words: payloads are padded
/// so that the next part (and the file's checksum) starts aligned.
pub(crate) const fn padded(len: usize) -> usize {
    len.div_ceil(8) * 8
}

/// A zeroed vector of `len` integers, or
/// [`ErrorKind::TooLarge`](filterlab_core::ErrorKind::TooLarge) instead of
/// an abort when it cannot be allocated. The reservation is tried first;
/// the vector itself is then allocated zeroed, which the OS provides
/// lazily: no pass writes zeros over it.
pub(crate) fn zeroed<T: Copy + Default>(len: usize, what: &str) -> Result<Vec<T>, Error> {
    let mut probe: Vec<T> = Vec::new();
    probe.try_reserve_exact(len).map_err(|_| {
        Error::new(
            filterlab_core::ErrorKind::TooLarge,
            format!("cannot allocate {len} entries for {what}"),
        )
    })?;
    drop(probe);
    Ok(vec![T::default(); len])
}

/// The file a view borrows: for its deferred checksum. None for a view of
/// a filter's own payload, whose bytes were checked when read.
#[derive(Clone, Copy)]
pub(crate) struct Borrowed<'a> {
    file: Option<(&'a [u8], FilterKind)>,
}

impl<'a> Borrowed<'a> {
    /// Opens `file` as a file of `kind` (header, lengths, and the checksum
    /// unless deferred).
    pub(crate) fn open(
        file: &'a [u8],
        kind: FilterKind,
        checksum: Checksum,
    ) -> Result<(Self, FileView<'a>), Error> {
        let view = FileView::open(file, kind, checksum)?;
        Ok((
            Self {
                file: Some((file, kind)),
            },
            view,
        ))
    }

    /// A view of a filter's own payload: no file, nothing to check.
    pub(crate) const fn unframed() -> Self {
        Self { file: None }
    }

    /// Checks the whole file's checksum.
    pub(crate) fn verify_checksum(&self) -> Result<(), Error> {
        match self.file {
            Some((file, kind)) => FileView::open(file, kind, Checksum::Verify).map(drop),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_little_endian_at_any_offset() {
        let bytes: Vec<u8> = (1..=17).collect();
        assert_eq!(u32_at(&bytes[1..], 0), 0x0504_0302);
        assert_eq!(le_bytes::<8>(&bytes, 1), [9, 10, 11, 12, 13, 14, 15, 16]);
        assert_eq!(le_bytes::<8>(&bytes, 2), [0; 8], "past the end");
        assert_eq!(padded(0), 0);
        assert_eq!(padded(9), 16);
    }
}
