//! The binary format of a binary fuse filter (kind 9), and its view.
//!
//! Parameters: fingerprint bits (8, 16 or 32), arity (3 or 4), segment
//! length (a power of two up to 2^18), segment count, and the construction
//! attempt that built it. Payload: the fingerprints, little-endian, zero
//! padded to whole 8-byte words. The item counter is the distinct keys.

use std::io::{Read, Write};
use std::marker::PhantomData;

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::view::{Checksum, Viewable};
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};

use super::layout::{Fingerprint, Fuse, MAX_SEGMENT_LENGTH, Probe, Shape};
use super::{BinaryFuseConfig, BinaryFuseFilter, BinaryFuseView};
use crate::storage::{Borrowed, Payload, padded, zeroed};

/// The parameters of the header, by index.
const PARAM_NAMES: [&str; 5] = [
    "fingerprint bits",
    "arity",
    "segment length",
    "segment count",
    "attempt",
];

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidHeader, detail)
}

/// The shape a header describes, validated, for a `F`, `ARITY` filter.
fn shape_from_header<F: Fingerprint, const ARITY: usize>(header: &Header) -> Result<Shape, Error> {
    header.expect_params(PARAM_NAMES.len())?;
    let param = |index: usize| header.param(index, PARAM_NAMES[index]);
    let (bits, arity) = (param(0)?, param(1)?);
    if ![8, 16, 32].contains(&bits) || ![3, 4].contains(&arity) {
        return Err(invalid(format!(
            "{bits}-bit fingerprints, arity {arity}: a binary fuse filter has 8, 16 or 32 bits and arity 3 or 4"
        )));
    }
    if (bits, arity) != (u64::from(F::BITS), ARITY as u64) {
        return Err(Error::new(
            ErrorKind::WrongKind,
            format!(
                "a {bits}-bit {arity}-wise binary fuse filter; this type reads {}-bit {ARITY}-wise ones",
                F::BITS
            ),
        ));
    }
    let segment_length = param(2)?;
    if !segment_length.is_power_of_two() || !(4..=MAX_SEGMENT_LENGTH).contains(&segment_length) {
        return Err(invalid(format!(
            "segments of {segment_length} slots (a power of two from 4 to 2^18)"
        )));
    }
    let segment_count = param(3)?;
    let attempt = u32::try_from(param(4)?)
        .map_err(|_| invalid(format!("construction attempt {}", param(4).unwrap_or(0))))?;
    let shape = Shape {
        segment_length,
        segment_count,
        attempt,
    };
    let slots = segment_count
        .checked_add(ARITY as u64 - 1)
        .and_then(|segments| segments.checked_mul(segment_length))
        .filter(|&slots| segment_count > 0 && u32::try_from(slots).is_ok())
        .ok_or_else(|| {
            invalid(format!(
                "{segment_count} segments of {segment_length} slots"
            ))
        })?;
    if header.items > slots {
        return Err(invalid(format!(
            "{} keys in {slots} slots: a binary fuse filter holds at most one key a slot",
            header.items
        )));
    }
    header.expect_payload_len(padded(slots as usize * F::BYTES) as u64)?;
    Ok(shape)
}

/// The padding after the fingerprints must be zero: one file per filter.
fn check_padding<F: Fingerprint, const ARITY: usize>(
    shape: &Shape,
    payload: &[u8],
) -> Result<(), Error> {
    let used = shape.array_len(ARITY) as usize * F::BYTES;
    if payload[used..].iter().any(|&byte| byte != 0) {
        return Err(invalid("non-zero padding after the fingerprints".into()));
    }
    Ok(())
}

impl<F: Fingerprint, const ARITY: usize, S: Payload> Fuse<F, ARITY, S> {
    fn from_parts(header: &Header, shape: Shape, payload: S) -> Self {
        Self {
            hasher: header.hasher,
            shape,
            probe: Probe::new(shape),
            len: header.items,
            payload,
            _fingerprint: PhantomData,
        }
    }
}

impl<F: Fingerprint, const ARITY: usize> Persist for BinaryFuseFilter<F, ARITY> {
    type Config = BinaryFuseConfig;
    const KIND: FilterKind = FilterKind::BinaryFuse;

    fn config(&self) -> BinaryFuseConfig {
        BinaryFuseConfig::new::<F, ARITY>(self.inner.hasher)
    }

    fn header(&self) -> Header {
        let shape = &self.inner.shape;
        Header {
            kind: Self::KIND,
            hasher: self.inner.hasher,
            items: self.inner.len,
            params: vec![
                u64::from(F::BITS),
                ARITY as u64,
                shape.segment_length,
                shape.segment_count,
                u64::from(shape.attempt),
            ],
            payload_len: self.inner.payload.len() as u64,
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_bytes(&self.inner.payload)
    }

    fn config_from_header(header: &Header) -> Result<BinaryFuseConfig, Error> {
        shape_from_header::<F, ARITY>(header)?;
        Ok(BinaryFuseConfig::new::<F, ARITY>(header.hasher))
    }

    fn read_payload<R: Read>(
        _config: BinaryFuseConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let shape = shape_from_header::<F, ARITY>(header)?;
        // The length was checked against the slots, which fit in 2^32.
        let mut payload = zeroed(header.payload_len as usize, "the fingerprint array")?;
        input.read_bytes_into(&mut payload)?;
        // The checksum first, as the Ribbon filter's reader does.
        input.verify_checksum()?;
        check_padding::<F, ARITY>(&shape, &payload)?;
        Ok(Self {
            inner: Fuse::from_parts(header, shape, payload),
        })
    }
}

impl<F: Fingerprint, const ARITY: usize> Viewable for BinaryFuseFilter<F, ARITY> {
    type View<'a> = BinaryFuseView<'a, F, ARITY>;

    /// Validates the file as [`from_bytes`](Persist::from_bytes) does (the
    /// checksum unless deferred) and borrows its fingerprints.
    fn view(bytes: &[u8], checksum: Checksum) -> Result<BinaryFuseView<'_, F, ARITY>, Error> {
        let (file, view) = Borrowed::open(bytes, FilterKind::BinaryFuse, checksum)?;
        let shape = shape_from_header::<F, ARITY>(view.header())?;
        check_padding::<F, ARITY>(&shape, view.payload())?;
        Ok(BinaryFuseView {
            inner: Fuse::from_parts(view.header(), shape, view.payload()),
            file,
        })
    }

    fn verify_checksum(view: &BinaryFuseView<'_, F, ARITY>) -> Result<(), Error> {
        view.verify_checksum()
    }
}

impl<F: Fingerprint, const ARITY: usize> BinaryFuseFilter<F, ARITY> {
    /// Opens the filter held in `bytes` (a file in the binary format, for
    /// example a memory map) as a view: no copy, no allocation, the same
    /// answers. With [`Checksum::Verify`] the checksum is checked first
    /// (one pass at memory speed); with [`Checksum::Defer`] only the header
    /// and the layout are, and [`BinaryFuseView::verify_checksum`] checks
    /// the rest when asked.
    ///
    /// # Errors
    ///
    /// As [`Viewable::view`].
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_core::view::Checksum;
    /// use filterlab_static::BinaryFuseFilter;
    ///
    /// let filter = BinaryFuseFilter::<u8>::builder().build(0..1000u64)?;
    /// let bytes = filter.to_bytes();
    /// let view = BinaryFuseFilter::<u8>::view(&bytes, Checksum::Verify)?;
    /// assert!((0..1000u64).all(|key| view.contains(&key)));
    /// # Ok::<(), filterlab_static::Error>(())
    /// ```
    pub fn view(bytes: &[u8], checksum: Checksum) -> Result<BinaryFuseView<'_, F, ARITY>, Error> {
        <Self as Viewable>::view(bytes, checksum)
    }
}

filterlab_core::serde_via_format!(impl[F: Fingerprint, const ARITY: usize] BinaryFuseFilter<F, ARITY>);
