//! The speed limit of a Bloom filter on plain Redis, for measurements
//! (feature `testing`): the same bit positions as a [`RedisBloomFilter`]
//! of the same configuration, written and read with pipelined BITFIELD
//! commands (one per part per batch) and no script. It checks no
//! configuration, keeps no counter and is atomic per part only: it is what
//! the scripts are measured against, not a filter to use.
//!
//! [`RedisBloomFilter`]: crate::RedisBloomFilter

use filterlab_bloom::BloomConfig;
use filterlab_core::Probes;
use redis::{Client, Connection, RedisResult};

use crate::layout::{DEFAULT_PART_BITS, Layout, keys, redis_offset};

/// A bit array in Redis driven by raw BITFIELD commands: see the module
/// documentation.
pub struct BitfieldReference {
    connection: Connection,
    layout: Layout,
    /// The parts' keys.
    parts: Vec<String>,
    bits_per_batch: usize,
}

impl BitfieldReference {
    /// Creates the zeroed array of `config` under the name `name` (the
    /// keys a [`RedisBloomFilter`](crate::RedisBloomFilter) of that name
    /// would use, without its configuration), in parts of
    /// [`DEFAULT_PART_BITS`], and sends `bits_per_batch` bit positions per
    /// pipeline.
    ///
    /// # Errors
    ///
    /// When the server refuses or cannot be reached.
    ///
    /// # Panics
    ///
    /// When the configuration needs more than [`MAX_PARTS`](crate::MAX_PARTS) parts.
    pub fn create(
        client: &Client,
        name: &str,
        config: BloomConfig,
        bits_per_batch: usize,
    ) -> RedisResult<Self> {
        let layout = Layout::new(config, DEFAULT_PART_BITS, 0, None).expect("a valid layout");
        let parts = keys(name, layout.parts()).split_off(1);
        let mut connection = client.get_connection()?;
        let mut pipe = redis::pipe();
        for (part, key) in (0..).zip(&parts) {
            pipe.cmd("SETRANGE")
                .arg(key)
                .arg(layout.part_len(part) - 1)
                .arg(&[0u8][..])
                .ignore();
        }
        pipe.exec(&mut connection)?;
        Ok(Self {
            connection,
            layout,
            parts,
            bits_per_batch: bits_per_batch.max(1),
        })
    }

    /// Sets the bits of every key, one pipeline per `bits_per_batch` bit
    /// positions; returns how many keys had a clear bit.
    ///
    /// # Errors
    ///
    /// When the server refuses or cannot be reached.
    pub fn insert_hashes(&mut self, hashes: &[u64]) -> RedisResult<usize> {
        let mut new = 0;
        self.batched(hashes, "BITFIELD", &["SET", "u1"], Some("1"), |old| {
            new += usize::from(old.contains(&0));
        })?;
        Ok(new)
    }

    /// Looks every key up, one pipeline per `bits_per_batch` bit positions
    /// (all k bits read: BITFIELD cannot stop at the first clear one).
    ///
    /// # Errors
    ///
    /// When the server refuses or cannot be reached.
    pub fn contains_hashes(&mut self, hashes: &[u64]) -> RedisResult<Vec<bool>> {
        let mut found = Vec::with_capacity(hashes.len());
        self.batched(hashes, "BITFIELD_RO", &["GET", "u1"], None, |bits| {
            found.push(!bits.contains(&0));
        })?;
        Ok(found)
    }

    /// Deletes the array.
    ///
    /// # Errors
    ///
    /// When the server refuses or cannot be reached.
    pub fn delete(&mut self) -> RedisResult<()> {
        redis::cmd("DEL")
            .arg(&self.parts)
            .exec(&mut self.connection)
    }

    /// Sends `command key <op> <type> <offset> [value] ...` per part for
    /// each batch of keys, and hands `key_bits` each key's k replies in order.
    fn batched(
        &mut self,
        hashes: &[u64],
        command: &str,
        op: &[&str],
        value: Option<&str>,
        mut key_bits: impl FnMut(&[i64]),
    ) -> RedisResult<()> {
        let BloomConfig {
            num_bits,
            num_hashes,
            ..
        } = self.layout.bloom;
        let k = num_hashes as usize;
        let part_bits = self.layout.part_bits;
        let keys_per_batch = (self.bits_per_batch / k).max(1);
        for batch in hashes.chunks(keys_per_batch) {
            // One command per part touched; where each probe's reply is.
            let mut commands: Vec<Option<redis::Cmd>> = vec![None; self.parts.len()];
            let mut counts = vec![0usize; self.parts.len()];
            let mut at = Vec::with_capacity(batch.len() * k);
            for &hash in batch {
                for index in Probes::new(hash, num_bits).take(k) {
                    let offset = redis_offset(index);
                    let part = (offset / part_bits) as usize;
                    let cmd = commands[part].get_or_insert_with(|| {
                        let mut cmd = redis::cmd(command);
                        cmd.arg(&self.parts[part]);
                        cmd
                    });
                    cmd.arg(op).arg(offset - part as u64 * part_bits);
                    if let Some(value) = value {
                        cmd.arg(value);
                    }
                    at.push((part, counts[part]));
                    counts[part] += 1;
                }
            }
            let mut pipe = redis::pipe();
            let mut reply_of = vec![usize::MAX; self.parts.len()];
            for (part, cmd) in commands.into_iter().enumerate() {
                if let Some(cmd) = cmd {
                    reply_of[part] = pipe.len();
                    pipe.add_command(cmd);
                }
            }
            let replies: Vec<Vec<i64>> = pipe.query(&mut self.connection)?;
            let mut bits = vec![0i64; k];
            for probes in at.chunks(k) {
                for (bit, &(part, i)) in bits.iter_mut().zip(probes) {
                    *bit = replies[reply_of[part]][i];
                }
                key_bits(&bits);
            }
        }
        Ok(())
    }
}
