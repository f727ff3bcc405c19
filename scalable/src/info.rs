//! What `info()` reports: RedisBloom's BF.INFO fields and a per-layer table.

use std::fmt;

use filterlab_bloom::human_bytes;

/// What a `ScalableBloomFilter` holds and how
/// accurate it is now; `Display` prints it as a report.
///
/// The first five fields are BF.INFO's (Capacity, Size, Number of filters,
/// Number of items inserted, Expansion rate).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScalableInfo {
    /// The layer type, e.g. "BlockedBloomFilter".
    pub layer_type: &'static str,
    /// Items the layers there are now hold before another is added.
    pub capacity: u64,
    /// Bytes of all layers.
    pub size: usize,
    /// Number of layers.
    pub filters: usize,
    /// Items counted as inserted (`len`).
    pub items: u64,
    /// The growth factor s.
    pub expansion: u64,
    /// Whether the filter refuses keys instead of growing.
    pub non_scaling: bool,
    /// The compound FPP target P.
    pub target_fpp: f64,
    /// The tightening ratio r.
    pub tightening: f64,
    /// The first layer's share f of the target, when set (see
    /// [`ScalableBloomBuilder::first_layer_share`](crate::ScalableBloomBuilder::first_layer_share)).
    pub first_share: Option<f64>,
    /// The compound bound of the layers there are now, 1 − Π(1 − p_i) over
    /// their targets.
    pub fpp_bound: f64,
    /// The compound FPP given each layer's fill now: exact for this filter.
    pub fpp_now: f64,
    /// One row per layer, oldest first.
    pub layers: Vec<LayerInfo>,
}

/// One layer's row in a [`ScalableInfo`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LayerInfo {
    /// Keys the layer holds when full.
    pub capacity: u64,
    /// Keys it holds.
    pub items: u64,
    /// Bits in its array.
    pub bits: u64,
    /// Probes per key.
    pub hashes: u32,
    /// Bytes of its array.
    pub bytes: usize,
    /// Its FPP target (P0·r^i in the geometric schedule), which its exact
    /// FPP at capacity meets.
    pub fpp_bound: f64,
    /// Its FPP given its fill now.
    pub fpp_now: f64,
}

impl ScalableInfo {
    /// Bits per counted item (per capacity while empty).
    pub fn bits_per_item(&self) -> f64 {
        let items = if self.items == 0 {
            self.capacity
        } else {
            self.items
        };
        self.size as f64 * 8.0 / items.max(1) as f64
    }
}

impl fmt::Display for ScalableInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "ScalableBloomFilter<{}>", self.layer_type)?;
        writeln!(f, "  Capacity                  {}", self.capacity)?;
        writeln!(
            f,
            "  Size                      {} ({:.2} bits per item)",
            human_bytes(self.size as u64),
            self.bits_per_item()
        )?;
        writeln!(f, "  Number of filters         {}", self.filters)?;
        writeln!(f, "  Number of items inserted  {}", self.items)?;
        if self.non_scaling {
            writeln!(f, "  Expansion rate            none (non-scaling)")?;
        } else {
            writeln!(f, "  Expansion rate            {}", self.expansion)?;
        }
        let first = self
            .first_share
            .map_or_else(String::new, |share| format!("first layer {share} of it, "));
        writeln!(
            f,
            "  FPP target                {:.3e} ({first}tightening {})",
            self.target_fpp, self.tightening
        )?;
        writeln!(f, "  FPP bound of the layers   {:.4e}", self.fpp_bound)?;
        writeln!(f, "  FPP given the fill        {:.4e}", self.fpp_now)?;
        write!(
            f,
            "  layer     capacity        items         bits   k    FPP bound      FPP now"
        )?;
        for (index, layer) in self.layers.iter().enumerate() {
            write!(
                f,
                "\n  {index:>5} {:>12} {:>12} {:>12} {:>3}   {:>10.3e}   {:>10.3e}",
                layer.capacity,
                layer.items,
                layer.bits,
                layer.hashes,
                layer.fpp_bound,
                layer.fpp_now
            )?;
        }
        Ok(())
    }
}
