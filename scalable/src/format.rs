//! The binary format: the shared framing with the filter's parameters in
//! the header and each layer, a complete filterlab file of its own kind,
//! nested in the payload. Documented in the crate README. Layout 1 (nine
//! parameters) is written for the geometric schedule, as before there was
//! another; layout 2 (eleven: a layout number and the first layer's share)
//! for a filter with a first-layer share. Both are read.

use std::io::{self, Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::{Error, ErrorKind, FilterKind, Persist};

use crate::config::{MAX_GROWTH, MAX_LAYERS, MAX_MEMORY_CAP, ScalableConfig};
use crate::filter::ScalableBloomFilter;
use crate::layer::Layer;

/// Header parameters, in order (layout 1 has the first nine).
const PARAM_NAMES: [&str; 11] = [
    "initial_capacity",
    "target_fpp",
    "growth",
    "tightening",
    "flags",
    "layer_kind",
    "max_layers",
    "max_memory",
    "layers",
    "layout",
    "first_share",
];

/// Parameters of layout 1: the geometric schedule, no layout number.
const LAYOUT_1_PARAMS: usize = 9;

/// The layout written for a filter with a first-layer share.
const LAYOUT_2: u64 = 2;

/// Flag bit: the filter is non-scaling.
const NON_SCALING: u64 = 1;

/// A layer's sizing must meet its target; this much relative slack absorbs
/// rounding differences between builds of the exact formula.
const TARGET_SLACK: f64 = 1e-9;

/// Bytes a writer receives, counted.
#[derive(Default)]
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The length of a layer written as a complete file: its header (counted
/// by writing it), payload and trailing checksum.
fn frame_len<L: Layer>(layer: &L) -> u64 {
    let header = layer.header();
    let mut counter = Counter::default();
    // Writing a valid header to a counter cannot fail; the layer's own
    // header is valid.
    let _ = FrameWriter::new(&mut counter, &header);
    counter.0 + header.payload_len + 8
}

fn invalid(detail: String) -> Error {
    Error::new(ErrorKind::InvalidHeader, detail)
}

impl<L: Layer> Persist for ScalableBloomFilter<L> {
    type Config = ScalableConfig;
    const KIND: FilterKind = FilterKind::ScalableBloom;

    fn config(&self) -> ScalableConfig {
        self.config
    }

    fn header(&self) -> Header {
        let config = &self.config;
        let mut params = vec![
            config.initial_capacity,
            config.target_fpp.to_bits(),
            config.growth,
            config.tightening.to_bits(),
            if config.non_scaling { NON_SCALING } else { 0 },
            u64::from(config.layer_kind.id()),
            u64::from(config.max_layers),
            config.max_memory,
            self.layers.len() as u64,
        ];
        // Layout 1 stays the geometric schedule's, byte for byte, so files
        // without a share still load in builds that predate layout 2.
        if let Some(share) = config.first_share {
            params.extend([LAYOUT_2, share.to_bits()]);
        }
        Header {
            kind: FilterKind::ScalableBloom,
            hasher: config.hasher,
            items: self.items(),
            params,
            payload_len: self.layers.iter().map(frame_len).sum(),
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        for layer in &self.layers {
            out.write_nested(|payload| layer.write_to(payload))?;
        }
        Ok(())
    }

    fn config_from_header(header: &Header) -> Result<ScalableConfig, Error> {
        let param = |index: usize| header.param(index, PARAM_NAMES[index]);
        let first_share = if header.params.len() == LAYOUT_1_PARAMS {
            None
        } else {
            header.expect_params(PARAM_NAMES.len())?;
            let layout = param(9)?;
            if layout != LAYOUT_2 {
                return Err(Error::new(
                    ErrorKind::UnsupportedVersion,
                    format!("scalable layout {layout}, this build reads 1 and {LAYOUT_2}"),
                ));
            }
            Some(f64::from_bits(param(10)?))
        };
        let kind_id = param(5)?;
        if kind_id != u64::from(L::KIND.id()) {
            return Err(Error::new(
                ErrorKind::WrongKind,
                format!(
                    "the layers are of kind {kind_id}, expected {} ({})",
                    L::KIND.id(),
                    L::KIND
                ),
            ));
        }
        let flags = param(4)?;
        if flags & !NON_SCALING != 0 {
            return Err(invalid(format!("unknown flags {flags:#x}")));
        }
        let max_layers = param(6)?;
        let config = ScalableConfig {
            initial_capacity: param(0)?,
            target_fpp: f64::from_bits(param(1)?),
            growth: param(2)?,
            tightening: f64::from_bits(param(3)?),
            first_share,
            non_scaling: flags & NON_SCALING != 0,
            max_layers: u32::try_from(max_layers).unwrap_or(u32::MAX),
            max_memory: param(7)?,
            layer_kind: L::KIND,
            hasher: header.hasher,
        };
        config
            .validate()
            .map_err(|err| invalid(err.detail().to_owned()))?;
        debug_assert!(config.growth <= MAX_GROWTH && config.max_memory <= MAX_MEMORY_CAP);
        // Layers fill by count, so the counter alone decides how many there are.
        let layers = param(8)?;
        let needed = config.loads(header.items).map(|loads| loads.len() as u64);
        if needed != Some(layers) || layers > u64::from(MAX_LAYERS.min(config.max_layers)) {
            let needed = needed.map_or("more layers than allowed".into(), |n| n.to_string());
            return Err(invalid(format!(
                "{layers} layers for {} items, which fill {needed} (at most {} allowed)",
                header.items, config.max_layers
            )));
        }
        Ok(config)
    }

    fn read_payload<R: Read>(
        config: ScalableConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let loads = config
            .loads(header.items)
            .ok_or_else(|| invalid(format!("{} items need too many layers", header.items)))?;
        let mut layers = Vec::with_capacity(loads.len());
        let mut memory = 0u64;
        for (index, &load) in (0u32..).zip(&loads) {
            let layer = input.read_nested(|payload| {
                let limit = payload.remaining();
                L::read_from_with_limit(payload, limit)
            })?;
            check_layer(&config, index, &layer, load)?;
            memory = memory.saturating_add(layer.memory_usage() as u64);
            layers.push(layer);
        }
        if input.remaining() != 0 {
            return Err(Error::new(
                ErrorKind::LengthMismatch,
                format!("{} payload bytes follow the last layer", input.remaining()),
            ));
        }
        if memory > config.max_memory {
            return Err(invalid(format!(
                "the layers take {memory} bytes, over the filter's memory cap of {}",
                config.max_memory
            )));
        }
        Ok(Self {
            config,
            layers: layers.into_boxed_slice(),
        })
    }
}

/// Checks that layer `index`, read from a file, is the layer the
/// configuration builds and holds exactly the `load` the counter implies.
fn check_layer<L: Layer>(
    config: &ScalableConfig,
    index: u32,
    layer: &L,
    load: u64,
) -> Result<(), Error> {
    let context = |what: String| invalid(format!("layer {index}: {what}"));
    if layer.hasher() != &config.hasher {
        return Err(context(format!(
            "hasher {:?}, the filter's is {:?}",
            layer.hasher(),
            config.hasher
        )));
    }
    let capacity = config.layer_capacity(index).unwrap_or(u64::MAX);
    let target = config.layer_fpp(index);
    let stored_capacity = layer.capacity().map(|c| c as u64);
    if stored_capacity != Some(capacity)
        || layer.target_fpp().map(f64::to_bits) != Some(target.to_bits())
    {
        return Err(context(format!(
            "sized for {stored_capacity:?} items at {:?}, the configuration says {capacity} at {target:e}",
            layer.target_fpp()
        )));
    }
    let at_capacity = layer.theoretical_fpp(capacity).unwrap_or(1.0);
    if at_capacity > target * (1.0 + TARGET_SLACK) {
        return Err(context(format!(
            "{} bits and {} hashes give FPP {at_capacity:e} at capacity, over its target {target:e}",
            layer.num_bits(),
            layer.num_hashes()
        )));
    }
    // Layers fill by count: every layer but the newest is full, and the
    // newest holds the rest (at least one key, or it would not exist).
    let count = layer.len() as u64;
    if count != load {
        return Err(context(format!(
            "holds {count} items where the counter implies {load}"
        )));
    }
    // Each counted key set at most k bits, and at least one.
    let set = layer.set_bits();
    let most = count.saturating_mul(u64::from(layer.num_hashes()));
    if set > most || (count > 0 && set == 0) {
        return Err(context(format!(
            "{set} bits set for {count} items of {} hashes",
            layer.num_hashes()
        )));
    }
    Ok(())
}

filterlab_core::serde_via_format!(impl[L: Layer] ScalableBloomFilter<L>);
