//! The binary format of a Ribbon filter (kind 8), and its view.
//!
//! Parameters: fingerprint columns r of the narrow partitions, wide
//! partitions A (the first A have r + 1 columns), log2 of the partitions
//! P, slots S of all partitions, and groups of 64 slots of the wide
//! partitions. Payload: the P + 1 partition offsets in slots (`u32`,
//! little-endian, from 0 to S, zero padded to 8 bytes), then the solution
//! words (`u64`, little-endian): for each group of 64 slots one word per
//! column, r + 1 of them in the wide groups, r in the others, then one
//! zero group and r + 1 zero words. The item counter is the distinct keys.

use std::io::{Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::view::{Checksum, Viewable};
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};

use super::lookup::{Query, Ribbon};
use super::shape::{BAND, Widths};
use super::words::{word_count, word_index};
use super::{RibbonConfig, RibbonFilter, RibbonView};
use crate::storage::{Borrowed, Payload, padded, u32_at, zeroed};

/// The parameters of the header, by index.
const PARAM_NAMES: [&str; 5] = [
    "columns",
    "wide partitions",
    "log2 partitions",
    "slots",
    "wide groups",
];

/// The most fingerprint columns a partition has.
const MAX_COLUMNS: u64 = 32;

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidHeader, detail)
}

/// A header's parameters, validated: the widths, the slots and the groups
/// of the wide partitions.
fn layout_from_header(header: &Header) -> Result<(Widths, u64, u64), Error> {
    header.expect_params(PARAM_NAMES.len())?;
    let param = |index: usize| header.param(index, PARAM_NAMES[index]);
    let (columns, wide, log_partitions) = (param(0)?, param(1)?, param(2)?);
    let (slots, wide_groups) = (param(3)?, param(4)?);
    if log_partitions > 25 || slots > u64::from(u32::MAX) {
        return Err(invalid(format!(
            "2^{log_partitions} partitions of {slots} slots (at most 2^25 and 2^32)"
        )));
    }
    let partitions = 1u64 << log_partitions;
    let max_columns = columns.saturating_add(u64::from(wide > 0));
    if wide > partitions || !(1..=MAX_COLUMNS).contains(&max_columns) {
        return Err(invalid(format!(
            "{columns} columns, one more in {wide} of {partitions} partitions"
        )));
    }
    if slots < BAND * partitions || header.items > slots {
        return Err(invalid(format!(
            "{slots} slots for {partitions} partitions of at least {BAND} and {} keys",
            header.items
        )));
    }
    let wide_slots = wide_groups.saturating_mul(64);
    let aligned =
        wide == 0 && wide_groups == 0 || wide > 0 && wide_groups >= 2 * wide && wide_slots <= slots;
    if !aligned || (wide == partitions && wide_slots != slots) {
        return Err(invalid(format!(
            "{wide_groups} groups of 64 slots for {wide} wide partitions of {slots} slots"
        )));
    }
    let widths = Widths {
        log_partitions: log_partitions as u32,
        columns: columns as u32,
        wide,
    };
    let offsets_len = padded(4 * (partitions as usize + 1)) as u64;
    header.expect_payload_len(offsets_len + 8 * word_count(slots, columns, wide_groups))?;
    Ok((widths, slots, wide_groups))
}

/// Checks what a lookup indexes by: every partition at least a band wide,
/// the offsets from 0 to the slots, the wide partitions ending where their
/// groups end, and zeros in the padding. Reads only the offsets and the
/// last words, so that a view of a memory map touches a few pages.
fn check_payload(
    widths: &Widths,
    slots: u64,
    wide_groups: u64,
    payload: &[u8],
) -> Result<(), Error> {
    let partitions = widths.partitions() as usize;
    let offset = |index: usize| u64::from(u32_at(payload, index));
    if offset(0) != 0 || offset(partitions) != slots {
        return Err(invalid(format!(
            "the partition offsets run from {} to {}, not from 0 to {slots}",
            offset(0),
            offset(partitions)
        )));
    }
    for index in 0..partitions {
        if offset(index + 1) < offset(index) + BAND {
            return Err(invalid(format!(
                "partition {index} has {} slots, less than a band of {BAND}",
                offset(index + 1).saturating_sub(offset(index))
            )));
        }
    }
    if widths.wide > 0 && offset(widths.wide as usize) != 64 * wide_groups {
        return Err(invalid(format!(
            "the wide partitions end at slot {}, not at their groups' end {}",
            offset(widths.wide as usize),
            64 * wide_groups
        )));
    }
    let words_at = padded(4 * (partitions + 1));
    let columns = u64::from(widths.columns);
    let padding_at =
        words_at + 8 * word_index(slots.div_ceil(64), 0, columns, wide_groups) as usize;
    let offsets_padding = &payload[4 * (partitions + 1)..words_at];
    if offsets_padding
        .iter()
        .chain(&payload[padding_at..])
        .any(|&byte| byte != 0)
    {
        return Err(invalid("non-zero padding".into()));
    }
    Ok(())
}

impl<S: Payload> Ribbon<S> {
    fn from_parts(
        header: &Header,
        (widths, slots, wide_groups): (Widths, u64, u64),
        payload: S,
    ) -> Self {
        let words_at = padded(4 * (widths.partitions() as usize + 1));
        Self {
            hasher: header.hasher,
            widths,
            slots,
            len: header.items,
            query: Query::new(widths, wide_groups, words_at),
            payload,
        }
    }
}

impl Persist for RibbonFilter {
    type Config = RibbonConfig;
    const KIND: FilterKind = FilterKind::Ribbon;

    fn config(&self) -> RibbonConfig {
        let widths = &self.inner.widths;
        RibbonConfig {
            hasher: self.inner.hasher,
            columns: widths.columns,
            partitions: widths.partitions(),
            wide_partitions: widths.wide,
        }
    }

    fn header(&self) -> Header {
        let inner = &self.inner;
        Header {
            kind: Self::KIND,
            hasher: inner.hasher,
            items: inner.len,
            params: vec![
                u64::from(inner.widths.columns),
                inner.widths.wide,
                u64::from(inner.widths.log_partitions),
                inner.slots,
                inner.query.wide_groups,
            ],
            payload_len: inner.payload.len() as u64,
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_bytes(&self.inner.payload)
    }

    fn config_from_header(header: &Header) -> Result<RibbonConfig, Error> {
        let (widths, ..) = layout_from_header(header)?;
        Ok(RibbonConfig {
            hasher: header.hasher,
            columns: widths.columns,
            partitions: widths.partitions(),
            wide_partitions: widths.wide,
        })
    }

    fn read_payload<R: Read>(
        _config: RibbonConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let layout = layout_from_header(header)?;
        // The length was checked against the slots, which fit in 2^32.
        let mut payload = zeroed(header.payload_len as usize, "the Ribbon filter")?;
        input.read_bytes_into(&mut payload)?;
        // The checksum first: a damaged payload is reported as damaged,
        // not as the first layout check it happens to fail.
        input.verify_checksum()?;
        check_payload(&layout.0, layout.1, layout.2, &payload)?;
        Ok(Self {
            inner: Ribbon::from_parts(header, layout, payload),
        })
    }
}

impl Viewable for RibbonFilter {
    type View<'a> = RibbonView<'a>;

    /// Validates the file as [`from_bytes`](Persist::from_bytes) does (the
    /// checksum unless deferred) and borrows its payload.
    fn view(bytes: &[u8], checksum: Checksum) -> Result<RibbonView<'_>, Error> {
        let (file, view) = Borrowed::open(bytes, FilterKind::Ribbon, checksum)?;
        let layout = layout_from_header(view.header())?;
        check_payload(&layout.0, layout.1, layout.2, view.payload())?;
        Ok(RibbonView {
            inner: Ribbon::from_parts(view.header(), layout, view.payload()),
            file,
        })
    }

    fn verify_checksum(view: &RibbonView<'_>) -> Result<(), Error> {
        view.verify_checksum()
    }
}

impl RibbonFilter {
    /// Opens the filter held in `bytes` (a file in the binary format, for
    /// example a memory map) as a view: no copy, no allocation, the same
    /// answers. With [`Checksum::Verify`] the checksum is checked first
    /// (one pass at memory speed); with [`Checksum::Defer`] only the header
    /// and the partition offsets are, and [`RibbonView::verify_checksum`]
    /// checks the rest when asked.
    ///
    /// # Errors
    ///
    /// As [`Viewable::view`].
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_core::view::Checksum;
    /// use filterlab_static::RibbonFilter;
    ///
    /// let filter = RibbonFilter::with_fpp(0.001).build(0..10_000u64)?;
    /// let bytes = filter.to_bytes();
    /// let view = RibbonFilter::view(&bytes, Checksum::Defer)?;
    /// assert!((0..10_000u64).all(|key| view.contains(&key)));
    /// view.verify_checksum()?;
    /// # Ok::<(), filterlab_static::Error>(())
    /// ```
    pub fn view(bytes: &[u8], checksum: Checksum) -> Result<RibbonView<'_>, Error> {
        <Self as Viewable>::view(bytes, checksum)
    }
}

filterlab_core::serde_via_format!(RibbonFilter);
