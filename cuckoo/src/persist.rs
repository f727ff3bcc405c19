//! The binary format of a cuckoo filter (kind 5): every parameter in the
//! header, the packed tables as the payload, everything validated on the
//! way in. The layout is documented in the crate README.

use std::io::{Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::sizing::SizedFor;
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};

use crate::config::{
    CuckooConfig, Growth, check_capacity, check_fingerprint_bits, check_growth, check_max_kicks,
    check_memory_limit, in_header, slots_in,
};
use crate::filter::CuckooFilter;
use crate::table::{Lanes, SLOTS, Table, data_bytes, table_bytes};

/// Header parameters, in order.
const PARAM_NAMES: [&str; 10] = [
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
];

/// Payload bytes read per step: memory grows with the bytes received.
const CHUNK_BYTES: u64 = 1 << 16;

/// Everything a header says, validated.
struct Layout {
    config: CuckooConfig,
    sized_for: SizedFor,
    max_memory: u64,
    /// Buckets of each table, oldest first.
    table_buckets: Vec<u64>,
}

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidHeader, detail)
}

impl Layout {
    fn from_header(header: &Header) -> Result<Self, Error> {
        header.expect_params(PARAM_NAMES.len())?;
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
        let growth = if expansion == 0 {
            if max_tables != 1 {
                return Err(invalid(format!(
                    "a filter that does not grow has 1 table, not at most {max_tables}"
                )));
            }
            None
        } else {
            let growth = Growth {
                expansion,
                max_tables,
            };
            check_growth(growth).map_err(in_header)?;
            Some(growth)
        };
        let tables = param(6)?;
        if tables == 0 || tables > u64::from(max_tables) {
            return Err(invalid(format!(
                "{tables} tables, at most {max_tables} allowed"
            )));
        }
        let max_memory = param(7)?;
        check_memory_limit(max_memory).map_err(in_header)?;
        let mut table_buckets = vec![buckets];
        let mut memory = table_bytes(buckets, fingerprint_bits);
        for _ in 1..tables {
            let next = table_buckets
                .last()
                .and_then(|&last| last.checked_mul(u64::from(expansion)));
            memory = memory
                .zip(next.and_then(|next| table_bytes(next, fingerprint_bits)))
                .and_then(|(total, bytes)| total.checked_add(bytes));
            table_buckets.push(next.unwrap_or(u64::MAX));
        }
        if memory.is_none_or(|memory| memory > max_memory) {
            return Err(invalid(format!(
                "{tables} tables from {buckets} buckets exceed the memory limit of {max_memory} bytes"
            )));
        }
        let sized_for = SizedFor::from_header(header, 8)?;
        check_capacity(sized_for.items, buckets).map_err(in_header)?;
        let payload: u64 = table_buckets
            .iter()
            .map(|&buckets| data_bytes(buckets, fingerprint_bits).unwrap_or(u64::MAX))
            .fold(0, u64::saturating_add);
        header.expect_payload_len(payload)?;
        let slots: u64 = table_buckets
            .iter()
            .map(|&buckets| slots_in(buckets))
            .fold(0, u64::saturating_add);
        if header.items > slots {
            return Err(invalid(format!("{} items in {slots} slots", header.items)));
        }
        Ok(Self {
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
        })
    }
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
        let (expansion, max_tables) = config
            .growth
            .map_or((0, 1), |growth| (growth.expansion, growth.max_tables));
        let tables = self.table_list();
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
            ],
            payload_len: tables.iter().map(|table| table.data().len() as u64).sum(),
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        for table in self.table_list() {
            out.write_bytes(table.data())?;
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
        let lanes = Lanes::new(layout.config.fingerprint_bits);
        let mut tables = Vec::with_capacity(layout.table_buckets.len());
        let mut occupied = 0u64;
        for &buckets in &layout.table_buckets {
            let len = data_bytes(buckets, lanes.bits()).unwrap_or(u64::MAX);
            let table = Table::from_data(buckets, read_data(input, len)?);
            if table.has_stray_bits(lanes) {
                return Err(invalid("bits set beyond the last bucket".to_owned()));
            }
            occupied += table
                .occupancy(lanes)
                .iter()
                .enumerate()
                .map(|(k, &count)| k as u64 * count)
                .sum::<u64>();
            tables.push(table);
        }
        if occupied != header.items {
            return Err(invalid(format!(
                "the item counter says {}, the tables hold {occupied} fingerprints",
                header.items
            )));
        }
        Ok(CuckooFilter::from_parts(
            &layout.config,
            layout.sized_for,
            layout.max_memory,
            tables,
            header.items,
        ))
    }
}

filterlab_core::serde_via_format!(CuckooFilter);
