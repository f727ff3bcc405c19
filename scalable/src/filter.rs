//! The scalable Bloom filter: layers of growing capacity and tightening FPP.

use std::fmt;

use filterlab_core::theory::scalable_bloom_fpp;
use filterlab_core::{
    BATCH, Error, ErrorKind, Filter, Key, KeyHasher, Membership, insert_in_batches,
};

use crate::config::{ScalableBloomBuilder, ScalableConfig, ScalableSizing, plan};
use crate::info::{LayerInfo, ScalableInfo};
use crate::layer::{DefaultLayer, Layer};

/// A scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison 2007):
/// a stack of Bloom filter layers that grows while keys arrive, keeping its
/// compound FPP below the target P without being told the final size.
///
/// Layer i holds n0·s^i keys at FPP target P·(1 − r)·r^i, so the compound
/// FPP 1 − Π(1 − p_i) stays below P·(1 − r)/(1 − r) = P at every size.
/// Inserts follow RedisBloom's BF.ADD: a key any layer already reports is
/// not added again and not counted; a new key goes into the newest layer,
/// which is full when it holds its capacity (a new layer is then added).
/// Lookups hash the key once and probe the newest (largest) layer first.
/// Nothing inserted is ever reported absent.
///
/// `L` is the layer type: [`DefaultLayer`] unless chosen with
/// [`ScalableBloomBuilder::layers`].
///
/// # Examples
///
/// ```
/// use filterlab_scalable::{Membership, ScalableBloomFilter};
///
/// let mut seen = ScalableBloomFilter::with_fpp(0.01).initial_capacity(1000).seed(7).build()?;
/// for id in 0..100_000u64 {
///     seen.insert(&id)?;                  // grows as needed
/// }
/// assert!((0..100_000u64).all(|id| seen.contains(&id)));
/// assert!(seen.info().filters > 1);
/// assert!(seen.expected_fpp() < 0.01);
/// # Ok::<(), filterlab_scalable::Error>(())
/// ```
#[derive(Clone)]
pub struct ScalableBloomFilter<L: Layer = DefaultLayer> {
    pub(crate) config: ScalableConfig,
    /// Oldest first; never empty. Their counts are the filter's count
    /// (layers fill by count), so it is not kept a second time. A boxed
    /// slice, not a `Vec`: a filter adds a layer rarely, and then holds
    /// exactly its layers (a `Vec` would keep room for up to twice as
    /// many records), and its handle is 8 bytes smaller, which a Redis
    /// key holding a small filter sees (its value fits the allocator's
    /// 128-byte class, not 160).
    pub(crate) layers: Box<[L]>,
}

impl ScalableBloomFilter {
    /// A builder for a compound FPP target `fpp` with [`DefaultLayer`]
    /// layers; give it
    /// [`initial_capacity`](ScalableBloomBuilder::initial_capacity).
    pub fn with_fpp(fpp: f64) -> ScalableBloomBuilder {
        ScalableBloomBuilder::new(fpp)
    }

    /// The sizing of the first layer for `initial_capacity` keys at
    /// compound target `fpp`, with the default growth and tightening,
    /// without allocating; [`ScalableBloomBuilder::sizing_for`] plans for
    /// more items.
    ///
    /// # Errors
    ///
    /// As [`ScalableBloomBuilder::sizing`].
    pub fn params(initial_capacity: u64, fpp: f64) -> Result<ScalableSizing, Error> {
        Self::with_fpp(fpp)
            .initial_capacity(initial_capacity)
            .sizing()
    }
}

impl<L: Layer> ScalableBloomBuilder<L> {
    /// Allocates the filter with its first layer.
    ///
    /// # Errors
    ///
    /// As [`config`](Self::config); [`ErrorKind::TooLarge`] when the first
    /// layer exceeds the memory cap or the allocator refuses it.
    pub fn build(&self) -> Result<ScalableBloomFilter<L>, Error> {
        ScalableBloomFilter::from_config(self.config()?)
    }
}

impl<L: Layer> ScalableBloomFilter<L> {
    /// An empty filter with its first layer.
    pub(crate) fn from_config(config: ScalableConfig) -> Result<Self, Error> {
        let first = L::build(
            config.initial_capacity,
            config.layer_fpp(0),
            config.hasher,
            config.max_memory,
        )?;
        Ok(Self {
            config,
            layers: Box::new([first]),
        })
    }

    /// Adds `key`; `Ok(true)` when no layer reported it present (it is then
    /// counted in `len`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Full`] when the key needs a new layer and the filter is
    /// non-scaling or at its layer or memory cap; the filter is unchanged.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
        let hash = self.config.hasher.hash(key);
        self.insert_hash(hash)
    }

    /// Adds every key, hashing them in batches; returns how many were new.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert), at the first key refused: the keys
    /// before it stay inserted, it and the keys after it are not.
    pub fn insert_many<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        insert_in_batches(self, keys)
    }

    /// Adds a layer, or refuses with `Full` leaving the filter unchanged.
    fn grow(&mut self) -> Result<(), Error> {
        let full = |detail: String| Error::new(ErrorKind::Full, detail);
        let config = &self.config;
        if config.non_scaling {
            return Err(full(format!(
                "the non-scaling filter holds its capacity of {} items",
                config.initial_capacity
            )));
        }
        let index = self.layers.len() as u32;
        if index >= config.max_layers {
            return Err(full(format!(
                "all {} layers allowed are full ({} items)",
                config.max_layers,
                self.items()
            )));
        }
        let capacity = config.layer_capacity(index).ok_or_else(|| {
            full(format!(
                "layer {index} would hold more than 2^64 items (n0 = {}, s = {})",
                config.initial_capacity, config.growth
            ))
        })?;
        let used = self.memory_usage() as u64;
        let budget = config.max_memory.saturating_sub(used);
        let layer = L::build(capacity, config.layer_fpp(index), config.hasher, budget)
            .map_err(|err| full(format!("cannot add layer {index}: {err}")))?;
        if used.saturating_add(layer.memory_usage() as u64) > config.max_memory {
            return Err(full(format!(
                "layer {index} would exceed the memory cap of {} bytes",
                config.max_memory
            )));
        }
        let mut layers = std::mem::take(&mut self.layers).into_vec();
        let reserved = layers.try_reserve_exact(1);
        if reserved.is_ok() {
            layers.push(layer);
        }
        self.layers = layers.into_boxed_slice();
        reserved.map_err(|err| full(format!("cannot add layer {index}: {err}")))
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[L] {
        &self.layers
    }

    /// The configuration.
    pub fn config(&self) -> ScalableConfig {
        self.config
    }

    /// The compound FPP target P.
    pub fn target_fpp(&self) -> f64 {
        self.config.target_fpp
    }

    /// The compound bound of the layers there are now: 1 − Π(1 − p_i) over
    /// their targets (P for a non-scaling filter); never above the target.
    pub fn fpp_bound(&self) -> f64 {
        self.config.fpp_bound(self.layers.len() as u32)
    }

    /// The capacity of the layers there are now (BF.INFO's Capacity): the
    /// items the filter holds before it adds another layer.
    pub fn current_capacity(&self) -> u64 {
        self.layers
            .iter()
            .map(|layer| layer.capacity().map_or(u64::MAX, |c| c as u64))
            .fold(0, u64::saturating_add)
    }

    /// What the filter holds and how it is doing: BF.INFO's fields, the
    /// compound FPP bound and FPP given the fill, and a per-layer table.
    pub fn info(&self) -> ScalableInfo {
        ScalableInfo {
            layer_type: L::NAME,
            capacity: self.current_capacity(),
            size: self.memory_usage(),
            filters: self.layers.len(),
            items: self.items(),
            expansion: self.config.growth,
            non_scaling: self.config.non_scaling,
            target_fpp: self.config.target_fpp,
            tightening: self.config.tightening,
            first_share: self.config.first_share,
            fpp_bound: self.fpp_bound(),
            fpp_now: self.expected_fpp(),
            layers: (0u32..)
                .zip(&self.layers)
                .map(|(index, layer)| LayerInfo {
                    capacity: layer.capacity().map_or(u64::MAX, |c| c as u64),
                    items: layer.len() as u64,
                    bits: layer.num_bits(),
                    hashes: layer.num_hashes(),
                    bytes: layer.memory_usage(),
                    fpp_bound: self.config.layer_fpp(index),
                    fpp_now: layer.expected_fpp(),
                })
                .collect(),
        }
    }

    /// The sizing of the layers the filter would have at `items` counted
    /// keys (the existing layers as they are); `None` when the caps stop it
    /// first.
    ///
    /// # Errors
    ///
    /// Those of the layers' sizing and exact formulas.
    pub fn sizing_at(&self, items: u64) -> Result<Option<ScalableSizing>, Error> {
        plan(&self.config, items, &self.layers)
    }

    /// Looks up one batch of at most [`BATCH`] hashes. Layers of at least
    /// [`BATCHED_LAYER_BYTES`] (the newest ones), newest first, each answer
    /// with their own batched lookup, which prefetches ahead, the keys no
    /// newer layer has claimed; the smaller, cache-resident layers then
    /// answer the keys still undecided one key at a time, newest first.
    fn contains_batch(&self, hashes: &[u64], found: &mut [bool]) {
        let mut pending = [0u64; BATCH];
        let mut position = [0u16; BATCH];
        let mut answers = [false; BATCH];
        let mut count = hashes.len();
        pending[..count].copy_from_slice(hashes);
        for (slot, index) in position[..count].iter_mut().zip(0u16..) {
            *slot = index;
        }
        found[..count].fill(false);
        let small = self
            .layers
            .iter()
            .take_while(|layer| layer.memory_usage() < BATCHED_LAYER_BYTES)
            .count();
        let (small, large) = self.layers.split_at(small);
        for layer in large.iter().rev() {
            layer.contains_hashes(&pending[..count], &mut answers[..count]);
            if !answers[..count].contains(&true) {
                // No key claimed (the usual case for never-inserted keys).
                continue;
            }
            let mut kept = 0;
            for i in 0..count {
                if answers[i] {
                    found[usize::from(position[i])] = true;
                } else {
                    pending[kept] = pending[i];
                    position[kept] = position[i];
                    kept += 1;
                }
            }
            count = kept;
            if count == 0 {
                return;
            }
        }
        if small.is_empty() {
            // The keys left stay `false`: no layer claimed them.
            return;
        }
        for (&hash, &at) in pending[..count].iter().zip(&position[..count]) {
            found[usize::from(at)] = small.iter().rev().any(|layer| layer.contains_hash(hash));
        }
    }
}

/// Layers at least this large (1 MiB, a core's L2 cache here) answer
/// batched lookups with their own batched lookup, which prefetches the
/// keys ahead; smaller ones are probed key by key. Measured with
/// `examples/scalable_speed.rs` (blocked layers grown from 1e4, batched positive /
/// negative ns, positives then looked up in insertion order): at 1e6 keys (2.6 MB) 8.4 / 18.4 with every layer batched,
/// 8.1 / 15.8 with this threshold, 7.9 / 15.7 with 8 MiB; at 1e7 keys
/// (26 MB) 12.0 / 32.9, 11.8 / 31.3 and 20.8 / 79.0, and 36.7 / 107.9 with
/// no layer batched.
const BATCHED_LAYER_BYTES: usize = 1 << 20;

filterlab_core::inherent_methods!([L: Layer] ScalableBloomFilter<L>: filter, write);
// Reading for the default layer only, so that `ScalableBloomFilter::from_bytes`
// infers it; other layers read through `Persist`.
filterlab_core::inherent_methods!(ScalableBloomFilter: read);

impl<L: Layer> Membership for ScalableBloomFilter<L> {
    fn hasher(&self) -> &KeyHasher {
        &self.config.hasher
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.layers
            .iter()
            .rev()
            .any(|layer| layer.contains_hash(hash))
    }

    /// Looks up in batches of [`BATCH`]: each layer of 1 MiB or more,
    /// newest first, answers with its own prefetching batched lookup the
    /// keys that no newer layer has claimed; smaller layers, which stay in
    /// cache, answer the rest key by key.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let count = hashes.len().min(found.len());
        for (hashes, found) in hashes[..count]
            .chunks(BATCH)
            .zip(found[..count].chunks_mut(BATCH))
        {
            self.contains_batch(hashes, found);
        }
    }

    fn len(&self) -> usize {
        usize::try_from(self.items()).unwrap_or(usize::MAX)
    }

    /// Bytes of all layers.
    fn memory_usage(&self) -> usize {
        self.layers.iter().map(Membership::memory_usage).sum()
    }

    /// `None` for a scaling filter, whose target holds at every size it
    /// reaches (its caps refuse keys rather than let the FPP rise); the
    /// first layer's capacity for a non-scaling one.
    fn capacity(&self) -> Option<usize> {
        if self.config.non_scaling {
            usize::try_from(self.config.initial_capacity).ok()
        } else {
            None
        }
    }

    /// 1 − Π(1 − f_i) over the layers' FPPs given their fill: exact for
    /// this instance.
    fn expected_fpp(&self) -> f64 {
        scalable_bloom_fpp(self.layers.iter().map(Membership::expected_fpp))
    }

    /// The exact compound FPP after `items` counted keys: they split over
    /// the layers by count (layer i takes n0·s^i), and the layers' exact
    /// FPPs at their loads combine as 1 − Π(1 − p_i). Keys past what the
    /// caps allow would be refused, so the FPP is then the one at the caps.
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        let at = |items| self.sizing_at(items).ok().flatten();
        match self.sizing_at(items) {
            Ok(Some(sizing)) => Some(sizing.fpp_at_items),
            // Past the caps: the FPP at the largest load they allow.
            Ok(None) => at(self.reachable_items()).map(|sizing| sizing.fpp_at_items),
            Err(_) => None,
        }
    }
}

impl<L: Layer> Filter for ScalableBloomFilter<L> {
    /// Checks every layer, newest first; a key none reports present goes
    /// into the newest layer, after adding a layer when that one is full.
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        let newest = &self.layers[self.layers.len() - 1];
        if newest
            .capacity()
            .is_some_and(|capacity| newest.len() >= capacity)
        {
            self.grow()?;
        }
        let last = self.layers.len() - 1;
        self.layers[last].insert_hash(hash)
    }

    /// Back to one empty first layer.
    fn clear(&mut self) {
        let mut layers = std::mem::take(&mut self.layers).into_vec();
        layers.truncate(1);
        self.layers = layers.into_boxed_slice();
        self.layers[0].clear();
    }
}

impl<L: Layer> ScalableBloomFilter<L> {
    /// Counted keys: the sum of the layers' counts.
    pub(crate) fn items(&self) -> u64 {
        self.layers.iter().map(|layer| layer.len() as u64).sum()
    }

    /// The most counted keys the caps allow, found by sizing layer after
    /// layer as growth would.
    fn reachable_items(&self) -> u64 {
        let mut total = 0u64;
        let mut index = 0u32;
        while let Some(capacity) = self.config.layer_capacity(index) {
            let next = total.saturating_add(capacity);
            if !matches!(self.sizing_at(next), Ok(Some(_))) {
                break;
            }
            total = next;
            index += 1;
            if index >= self.config.max_layers {
                break;
            }
        }
        total.max(self.items())
    }
}

impl<L: Layer> PartialEq for ScalableBloomFilter<L> {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config && self.layers == other.layers
    }
}

impl<L: Layer> fmt::Debug for ScalableBloomFilter<L> {
    /// A summary; the layers' arrays can be gigabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScalableBloomFilter")
            .field("config", &self.config)
            .field("len", &self.items())
            .field("layers", &self.layers)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression `build_scalable/nonscaling-p7.8e-3-fpp-bound-1ulp-above-target`:
    /// at this P, 1 − (1 − P) rounds one ulp above P.
    const P: f64 = 144_115_188_062_027_775.0 / 18_446_744_073_709_551_616.0;

    #[test]
    fn the_bound_is_never_above_the_target() {
        assert!(scalable_bloom_fpp([P]) > P);
        let non_scaling = ScalableBloomFilter::with_fpp(P)
            .initial_capacity(100)
            .non_scaling(true);
        assert_eq!(non_scaling.sizing().unwrap().fpp_bound, P);
        assert_eq!(non_scaling.build().unwrap().fpp_bound(), P);
        // A tightening ratio near 0 sizes the first layer for P itself.
        let scaling = ScalableBloomFilter::with_fpp(P)
            .initial_capacity(100)
            .tightening(1e-200);
        assert!(scaling.sizing().unwrap().fpp_bound <= P);
        assert!(scaling.build().unwrap().fpp_bound() <= P);
    }
}
