//! The interleaved solution: for each group of 64 slots, one 64-bit word
//! per fingerprint column (bit i of word j is column j at slot 64·group + i),
//! the groups of the wide partitions first, each with one column more.

use filterlab_core::Error;

/// The word of `column` in `group`: groups below `wide_groups` have
/// `columns + 1` words, the others `columns`.
#[inline]
pub(crate) fn word_index(group: u64, column: u64, columns: u64, wide_groups: u64) -> u64 {
    if group < wide_groups {
        group * (columns + 1) + column
    } else {
        group * columns + wide_groups + column
    }
}

/// Words of a filter of `slots` slots: every group that holds a slot, one
/// group more (a lookup reads the three groups from its start's, the
/// third unused when the band starts on a group boundary), and one word
/// more per column (a narrow partition's lookup reads one column more than
/// it keeps, and ignores it).
pub(crate) fn word_count(slots: u64, columns: u64, wide_groups: u64) -> u64 {
    let groups = slots.div_ceil(64) + 1;
    word_index(groups, 0, columns, wide_groups) + columns + 1
}

/// The words being written by a build, little-endian bytes at `start` of
/// the payload, growing with the partitions solved.
pub(crate) struct Words<'a> {
    pub(crate) payload: &'a mut Vec<u8>,
    pub(crate) start: usize,
    pub(crate) columns: u64,
    /// The groups of the wide partitions; everything until they are done.
    pub(crate) wide_groups: u64,
}

impl Words<'_> {
    /// Makes room for every word of the groups up to `last_group`.
    pub(crate) fn reserve_through(&mut self, last_group: u64) -> Result<(), Error> {
        let words = word_index(last_group + 1, 0, self.columns, self.wide_groups);
        self.resize(words)
    }

    /// Sets the word count to `words` (zeros for the new ones).
    pub(crate) fn resize(&mut self, words: u64) -> Result<(), Error> {
        let len = usize::try_from(words)
            .ok()
            .and_then(|words| words.checked_mul(8))
            .and_then(|bytes| bytes.checked_add(self.start))
            .ok_or_else(|| Error::new(filterlab_core::ErrorKind::TooLarge, "too many words"))?;
        if len > self.payload.len() {
            self.payload
                .try_reserve(len - self.payload.len())
                .map_err(|_| {
                    Error::new(
                        filterlab_core::ErrorKind::TooLarge,
                        "no memory for the words",
                    )
                })?;
            self.payload.resize(len, 0);
        }
        Ok(())
    }

    /// ORs `bits` into the word of `column` in `group`.
    #[inline]
    pub(crate) fn or(&mut self, group: u64, column: usize, bits: u64) {
        let index = word_index(group, column as u64, self.columns, self.wide_groups) as usize;
        let at = self.start + 8 * index;
        let word = &mut self.payload[at..at + 8];
        let value = u64::from_le_bytes(word.try_into().unwrap_or([0; 8])) | bits;
        word.copy_from_slice(&value.to_le_bytes());
    }
}
