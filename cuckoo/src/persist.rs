//! The binary format of a cuckoo filter (kind 5): every parameter in the
//! header, each sub-table's width and capacity, the packed tables and the
//! overflow's classes as the payload, everything validated on the way in.
//! The layout is documented in the crate README. Layout 2 is written;
//! layout 1 (ten parameters: every sub-table at the first one's width, no
//! overflow) is still read.

use std::io::{Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::sizing::SizedFor;
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};

use crate::config::{
    CuckooConfig, DEFAULT_TIGHTENING, Growth, check_capacity, check_fingerprint_bits, check_growth,
    check_max_kicks, check_memory_limit, in_header,
};
use crate::filter::CuckooFilter;
use crate::overflow::{CLASS_BYTES, Class, Overflow};
use crate::table::{SLOTS, Table, alternate, data_bytes, table_bytes};

/// Header parameters, in order (layout 1 has the first ten).
const PARAM_NAMES: [&str; 13] = [
    "slots_per_bucket",
    "fingerprint_bits",
    "buckets",
    "max_kicks",
    "expansion",
    "max_tables",
    "tables",
    "max_memory",
    "capacity",
    "target_fpp",
    "layout",
    "tightening",
    "overflow_classes",
];

/// The layout this build writes.
const LAYOUT: u64 = 2;

/// Parameters of layout 1, which had no layout parameter.
const LAYOUT_1_PARAMS: usize = 10;

/// Bytes of one sub-table's entry in the directory: its width and its
/// capacity, a `u64` each.
const DIRECTORY_ENTRY_BYTES: u64 = 16;

/// Bytes of one overflow class: sub-table, bucket, fingerprint and copies,
/// a `u64` each.
const CLASS_ENTRY_BYTES: u64 = 32;

/// Payload bytes read per step: memory grows with the bytes received.
const CHUNK_BYTES: u64 = 1 << 16;

/// Everything a header says, validated.
struct Layout {
    /// 1 or 2.
    version: u64,
    config: CuckooConfig,
    sized_for: SizedFor,
    max_memory: u64,
    /// Buckets of each table, oldest first.
    table_buckets: Vec<u64>,
    /// Classes in the overflow (layout 2).
    overflow_classes: u64,
}

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidHeader, detail)
}

impl Layout {
    fn from_header(header: &Header) -> Result<Self, Error> {
        let version = if header.params.len() == LAYOUT_1_PARAMS {
            1
        } else {
            header.expect_params(PARAM_NAMES.len())?;
            let layout = header.param(10, PARAM_NAMES[10])?;
            if layout != LAYOUT {
                return Err(Error::new(
                    ErrorKind::UnsupportedVersion,
                    format!("cuckoo layout {layout}, this build reads 1 and {LAYOUT}"),
                ));
            }
            LAYOUT
        };
        let param = |index: usize| header.param(index, PARAM_NAMES[index]);
        let small = |index: usize| -> Result<u32, Error> {
            let value = param(index)?;
            u32::try_from(value).map_err(|_| invalid(format!("{} = {value}", PARAM_NAMES[index])))
        };
        if param(0)? != u64::from(SLOTS) {
            return Err(invalid(format!(
                "{} slots per bucket, only 4 are supported",
                param(0)?
            )));
        }
        let fingerprint_bits = small(1)?;
        check_fingerprint_bits(fingerprint_bits).map_err(in_header)?;
        let buckets = param(2)?;
        if buckets == 0 {
            return Err(invalid("zero buckets".to_owned()));
        }
        let max_kicks = small(3)?;
        check_max_kicks(max_kicks).map_err(in_header)?;
        let (expansion, max_tables) = (small(4)?, small(5)?);
        // Layout 1 had no tightening: its sub-tables kept the first width.
        // Sub-tables added after reading it tighten with the default.
        let tightening = if version == 1 { None } else { Some(param(11)?) };
        let growth = growth_of(expansion, max_tables, tightening)?;
        let tables = param(6)?;
        if tables == 0 || tables > u64::from(max_tables) {
            return Err(invalid(format!(
                "{tables} tables, at most {max_tables} allowed"
            )));
        }
        let max_memory = param(7)?;
        check_memory_limit(max_memory).map_err(in_header)?;
        let mut table_buckets = vec![buckets];
        for _ in 1..tables {
            let next = table_buckets
                .last()
                .and_then(|&last| last.checked_mul(u64::from(expansion)))
                .ok_or_else(|| {
                    invalid(format!("{tables} tables from {buckets} buckets overflow"))
                })?;
            table_buckets.push(next);
        }
        let sized_for = SizedFor::from_header(header, 8)?;
        check_capacity(sized_for.items, buckets).map_err(in_header)?;
        let overflow_classes = if version == 1 { 0 } else { param(12)? };
        if growth.is_none() && overflow_classes != 0 {
            return Err(invalid(format!(
                "{overflow_classes} overflow classes in a filter that does not grow"
            )));
        }
        let layout = Self {
            version,
            config: CuckooConfig {
                buckets,
                fingerprint_bits,
                max_kicks,
                growth,
                hasher: header.hasher,
            },
            sized_for,
            max_memory,
            table_buckets,
            overflow_classes,
        };
        let widths = vec![fingerprint_bits; layout.table_buckets.len()];
        if version == 1 {
            // Every width is known: check the sizes before the payload.
            layout.check_sizes(header, &widths)?;
        } else if header.payload_len < layout.payload_len(&widths).unwrap_or(u64::MAX) {
            // Widths never shrink: the first one's gives the least payload.
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!(
                    "payload of {} bytes, too short for {tables} sub-tables of at least {fingerprint_bits}-bit fingerprints",
                    header.payload_len
                ),
            ));
        }
        Ok(layout)
    }

    /// Checks the memory and payload the tables of `widths` take against
    /// the header.
    fn check_sizes(&self, header: &Header, widths: &[u32]) -> Result<(), Error> {
        let shapes = || {
            self.table_buckets
                .iter()
                .copied()
                .zip(widths.iter().copied())
        };
        let memory = sum(shapes().map(|(buckets, bits)| table_bytes(buckets, bits)))
            .and_then(|tables| tables.checked_add(self.overflow_classes.checked_mul(CLASS_BYTES)?));
        if memory.is_none_or(|memory| memory > self.max_memory) {
            return Err(invalid(format!(
                "{} tables from {} buckets and {} overflow classes exceed the memory limit of {} bytes",
                self.table_buckets.len(),
                self.config.buckets,
                self.overflow_classes,
                self.max_memory
            )));
        }
        header.expect_payload_len(self.payload_len(widths).unwrap_or(u64::MAX))?;
        let slots = self
            .table_buckets
            .iter()
            .map(|&buckets| buckets.saturating_mul(u64::from(SLOTS)))
            .fold(0, u64::saturating_add);
        // Copies in the overflow are not in slots: only without any is the
        // counter bounded by the slots.
        if self.overflow_classes == 0 && header.items > slots {
            return Err(invalid(format!("{} items in {slots} slots", header.items)));
        }
        Ok(())
    }

    /// The payload's length with tables of `widths`; `None` past 2^64.
    fn payload_len(&self, widths: &[u32]) -> Option<u64> {
        let directory = if self.version == 1 {
            0
        } else {
            DIRECTORY_ENTRY_BYTES * self.table_buckets.len() as u64
        };
        let shapes = self.table_buckets.iter().zip(widths);
        sum(shapes.map(|(&buckets, &bits)| data_bytes(buckets, bits)))?
            .checked_add(directory)?
            .checked_add(self.overflow_classes.checked_mul(CLASS_ENTRY_BYTES)?)
    }

    /// Each table's width and capacity: read from the directory (layout
    /// 2), or the first table's width and its capacity times the
    /// expansion per sub-table (layout 1).
    fn directory<R: Read>(
        &self,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Vec<(u32, u64)>, Error> {
        let first = (self.config.fingerprint_bits, self.sized_for.items);
        if self.version == 1 {
            let expansion = self.config.growth.map_or(1, |growth| growth.expansion);
            let mut capacity = first.1;
            return Ok(self
                .table_buckets
                .iter()
                .map(|&buckets| {
                    let entry = (
                        first.0,
                        capacity.min(buckets.saturating_mul(u64::from(SLOTS))),
                    );
                    capacity = capacity.saturating_mul(u64::from(expansion));
                    entry
                })
                .collect());
        }
        let tables = self.table_buckets.len();
        let words = input.read_words(2 * tables)?;
        let mut directory = Vec::with_capacity(tables);
        let mut previous = 0;
        for (index, (entry, &buckets)) in words.chunks_exact(2).zip(&self.table_buckets).enumerate()
        {
            let bits = u32::try_from(entry[0]).unwrap_or(u32::MAX);
            check_fingerprint_bits(bits).map_err(in_header)?;
            if bits < previous {
                return Err(invalid(format!(
                    "sub-table {index} has {bits}-bit fingerprints, narrower than the {previous} bits of the one before"
                )));
            }
            let capacity = entry[1];
            let slots = buckets.saturating_mul(u64::from(SLOTS));
            if capacity == 0 || capacity > slots {
                return Err(invalid(format!(
                    "sub-table {index} takes {capacity} fingerprints in {slots} slots"
                )));
            }
            directory.push((bits, capacity));
            previous = bits;
        }
        if directory.first() != Some(&first) {
            return Err(invalid(format!(
                "the first sub-table's width and capacity {:?} are not the header's {first:?}",
                directory.first()
            )));
        }
        let widths: Vec<u32> = directory.iter().map(|&(bits, _)| bits).collect();
        self.check_sizes(header, &widths)?;
        Ok(directory)
    }

    /// Reads the overflow's classes and checks each against the tables:
    /// in increasing order, in range, its bucket the lower of the
    /// fingerprint's two, the fingerprint held by its table there, at
    /// least one copy.
    fn overflow<R: Read>(
        &self,
        tables: &[Table],
        input: &mut FrameReader<R>,
    ) -> Result<Overflow, Error> {
        let mut overflow = Overflow::default();
        let mut previous: Option<Class> = None;
        let mut total = 0u64;
        for _ in 0..self.overflow_classes {
            let words = input.read_words(4)?;
            let (index, bucket, fingerprint, copies) = (words[0], words[1], words[2], words[3]);
            let table = usize::try_from(index)
                .ok()
                .and_then(|index| tables.get(index))
                .ok_or_else(|| {
                    invalid(format!(
                        "an overflow class in sub-table {index} of {}",
                        tables.len()
                    ))
                })?;
            let lanes = table.lanes();
            if bucket >= table.buckets() || fingerprint == 0 || fingerprint >> lanes.bits() != 0 {
                return Err(invalid(format!(
                    "overflow class ({index}, {bucket}, {fingerprint}) out of range"
                )));
            }
            let other = alternate(table.buckets(), bucket, fingerprint);
            let held = [bucket, other]
                .iter()
                .any(|&b| lanes.count(table.bucket(lanes, b), fingerprint) > 0);
            if other < bucket || !held {
                return Err(invalid(format!(
                    "overflow class ({index}, {bucket}, {fingerprint}) is not a fingerprint its table holds at its lower bucket"
                )));
            }
            let class = Class::new(index as u32, bucket, fingerprint);
            if copies == 0 || previous.is_some_and(|previous| previous >= class) {
                return Err(invalid(format!(
                    "overflow class ({index}, {bucket}, {fingerprint}): {copies} copies, or out of order"
                )));
            }
            total = total
                .checked_add(copies)
                .ok_or_else(|| invalid("more than 2^64 copies in the overflow".to_owned()))?;
            overflow.insert(class, copies);
            previous = Some(class);
        }
        Ok(overflow)
    }
}

/// The growth policy of a header's expansion, table cap and tightening
/// ratio (`None` for layout 1, which had none).
fn growth_of(
    expansion: u32,
    max_tables: u32,
    tightening: Option<u64>,
) -> Result<Option<Growth>, Error> {
    if expansion == 0 {
        if max_tables != 1 {
            return Err(invalid(format!(
                "a filter that does not grow has 1 table, not at most {max_tables}"
            )));
        }
        if tightening.is_some_and(|bits| bits != 0) {
            return Err(invalid(
                "a filter that does not grow has no tightening ratio".to_owned(),
            ));
        }
        return Ok(None);
    }
    let growth = Growth {
        expansion,
        max_tables,
        tightening: tightening.map_or(DEFAULT_TIGHTENING, f64::from_bits),
    };
    check_growth(growth).map_err(in_header)?;
    Ok(Some(growth))
}

/// The sum of `sizes`; `None` when one is, or the sum overflows.
fn sum(mut sizes: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    sizes.try_fold(0u64, |total, size| total.checked_add(size?))
}

/// Reads `len` payload bytes, reserving memory only as they arrive.
fn read_data<R: Read>(input: &mut FrameReader<R>, len: u64) -> Result<Vec<u8>, Error> {
    let mut data: Vec<u8> = Vec::new();
    let mut left = len;
    while left > 0 {
        let take = left.min(CHUNK_BYTES) as usize;
        let start = data.len();
        data.try_reserve(take)
            .map_err(|_| Error::new(ErrorKind::TooLarge, format!("cannot reserve {len} bytes")))?;
        data.resize(start + take, 0);
        input.read_bytes_into(&mut data[start..])?;
        left -= take as u64;
    }
    Ok(data)
}

impl Persist for CuckooFilter {
    type Config = CuckooConfig;
    const KIND: FilterKind = FilterKind::Cuckoo;

    fn config(&self) -> CuckooConfig {
        self.config()
    }

    fn header(&self) -> Header {
        let config = self.config();
        let [capacity, target_fpp] = self.sized_for().params();
        let (expansion, max_tables, tightening) = config.growth.map_or((0, 1, 0), |growth| {
            (
                growth.expansion,
                growth.max_tables,
                growth.tightening.to_bits(),
            )
        });
        let tables = self.table_list();
        let overflow = self.overflow();
        let data: u64 = tables.iter().map(|table| table.data().len() as u64).sum();
        Header {
            kind: FilterKind::Cuckoo,
            hasher: config.hasher,
            items: self.len() as u64,
            params: vec![
                u64::from(SLOTS),
                u64::from(config.fingerprint_bits),
                config.buckets,
                u64::from(config.max_kicks),
                u64::from(expansion),
                u64::from(max_tables),
                tables.len() as u64,
                self.max_memory(),
                capacity,
                target_fpp,
                LAYOUT,
                tightening,
                overflow.classes() as u64,
            ],
            payload_len: DIRECTORY_ENTRY_BYTES * tables.len() as u64
                + data
                + CLASS_ENTRY_BYTES * overflow.classes() as u64,
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        let tables = self.table_list();
        let directory: Vec<u64> = tables
            .iter()
            .flat_map(|table| [u64::from(table.bits()), table.capacity()])
            .collect();
        out.write_words(&directory)?;
        for table in tables {
            out.write_bytes(table.data())?;
        }
        for (class, copies) in self.overflow().iter() {
            out.write_words(&[
                u64::from(class.table()),
                class.bucket(),
                class.fingerprint(),
                copies,
            ])?;
        }
        Ok(())
    }

    fn config_from_header(header: &Header) -> Result<CuckooConfig, Error> {
        Layout::from_header(header).map(|layout| layout.config)
    }

    fn read_payload<R: Read>(
        _config: CuckooConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let layout = Layout::from_header(header)?;
        let directory = layout.directory(header, input)?;
        let mut tables = Vec::with_capacity(layout.table_buckets.len());
        for (&buckets, &(bits, capacity)) in layout.table_buckets.iter().zip(&directory) {
            let len = data_bytes(buckets, bits).unwrap_or(u64::MAX);
            let table = Table::from_data(buckets, bits, capacity, read_data(input, len)?);
            if table.has_stray_bits() {
                return Err(invalid("bits set beyond the last bucket".to_owned()));
            }
            tables.push(table);
        }
        let overflow = layout.overflow(&tables, input)?;
        let held = tables
            .iter()
            .map(Table::occupied)
            .try_fold(overflow.total(), u64::checked_add);
        if held != Some(header.items) {
            return Err(invalid(format!(
                "the item counter says {}, the tables and the overflow hold {}",
                header.items,
                held.map_or_else(|| "more than 2^64".to_owned(), |held| held.to_string())
            )));
        }
        Ok(CuckooFilter::from_parts(
            &layout.config,
            layout.sized_for,
            layout.max_memory,
            tables,
            overflow,
        ))
    }
}

filterlab_core::serde_via_format!(CuckooFilter);
