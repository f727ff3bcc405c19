//! Copies of keys that their sub-table has no slot for, in a growing
//! filter: counted beside the tables so that `insert` never refuses below
//! the filter's caps and `remove` still takes each copy from where its
//! key's copies are counted.
//!
//! A key's copies all belong to one sub-table, the oldest whose buckets
//! hold its fingerprint (see the crate docs), and within it to the
//! fingerprint's *class*: the fingerprint and the key's pair of buckets.
//! Every key of a class matches the same slots, so their copies are
//! interchangeable; when the table cannot take one more (its two buckets
//! and kicks are full), the class's count here goes up instead. Removals
//! take from here first, so a class with copies here always keeps at
//! least one fingerprint in its table, and lookups need never look here.

use std::collections::BTreeMap;

use crate::table::Place;

/// Bytes of memory one class takes in the map, its share of the B-tree's
/// nodes included: 40.0 to 40.1 measured with a counting allocator for
/// 10^3 to 10^5 classes inserted in random order (38.4 for 100).
pub(crate) const CLASS_BYTES: u64 = 40;

/// A fingerprint's class in sub-table `table`: the fingerprint and the
/// lower of its two buckets, packed as table << 96 | bucket << 32 |
/// fingerprint (so the map iterates in that order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Class(u128);

impl Class {
    /// The class of `place` in sub-table `table`.
    pub(crate) fn of(table: usize, place: Place) -> Self {
        Self::new(
            table as u32,
            place.first.min(place.second),
            place.fingerprint,
        )
    }

    /// From its parts (a fingerprint of at most 32 bits).
    pub(crate) fn new(table: u32, bucket: u64, fingerprint: u64) -> Self {
        Self(u128::from(table) << 96 | u128::from(bucket) << 32 | u128::from(fingerprint))
    }

    /// The sub-table.
    pub(crate) fn table(self) -> u32 {
        (self.0 >> 96) as u32
    }

    /// The lower of the fingerprint's two buckets.
    pub(crate) fn bucket(self) -> u64 {
        (self.0 >> 32) as u64
    }

    /// The fingerprint.
    pub(crate) fn fingerprint(self) -> u64 {
        u64::from(self.0 as u32)
    }
}

/// The classes with copies their table has no slot for, and how many.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Overflow {
    copies: BTreeMap<Class, u64>,
    total: u64,
}

impl Overflow {
    /// One more copy of `class`.
    pub(crate) fn add(&mut self, class: Class) {
        *self.copies.entry(class).or_insert(0) += 1;
        self.total += 1;
    }

    /// Adds `copies` of a class read from a file (in increasing order; the
    /// reader checks that the total fits a `u64`).
    pub(crate) fn insert(&mut self, class: Class, copies: u64) {
        self.copies.insert(class, copies);
        self.total += copies;
    }

    /// Takes one copy of `class`, if it has any here.
    pub(crate) fn take(&mut self, class: Class) -> bool {
        let Some(copies) = self.copies.get_mut(&class) else {
            return false;
        };
        *copies -= 1;
        if *copies == 0 {
            self.copies.remove(&class);
        }
        self.total -= 1;
        true
    }

    /// Copies of `class` here.
    pub(crate) fn get(&self, class: Class) -> u64 {
        self.copies.get(&class).copied().unwrap_or(0)
    }

    /// Classes with copies here.
    pub(crate) fn classes(&self) -> usize {
        self.copies.len()
    }

    /// Copies here, over all classes.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The classes and their copies, in increasing order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Class, u64)> + '_ {
        self.copies.iter().map(|(&class, &copies)| (class, copies))
    }

    /// Bytes of memory the map takes (an estimate: [`CLASS_BYTES`] a class).
    pub(crate) fn memory(&self) -> u64 {
        self.copies.len() as u64 * CLASS_BYTES
    }

    /// Drops every copy.
    pub(crate) fn clear(&mut self) {
        self.copies.clear();
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_pack_and_order() {
        let class = Class::new(255, (1 << 56) - 1, u64::from(u32::MAX));
        assert_eq!(
            (class.table(), class.bucket(), class.fingerprint()),
            (255, (1 << 56) - 1, u64::from(u32::MAX))
        );
        assert!(Class::new(0, 9, 9) < Class::new(1, 0, 1));
        assert!(Class::new(1, 0, 9) < Class::new(1, 1, 1));
        let place = Place {
            fingerprint: 5,
            first: 9,
            second: 3,
        };
        assert_eq!(Class::of(2, place), Class::new(2, 3, 5));
    }

    #[test]
    fn copies_come_and_go() {
        let (a, b) = (Class::new(0, 1, 2), Class::new(1, 1, 2));
        let mut overflow = Overflow::default();
        assert!(!overflow.take(a));
        overflow.add(a);
        overflow.add(a);
        overflow.add(b);
        assert_eq!(
            (overflow.get(a), overflow.total(), overflow.classes()),
            (2, 3, 2)
        );
        assert!(overflow.take(a) && overflow.take(a) && !overflow.take(a));
        assert_eq!((overflow.total(), overflow.classes()), (1, 1));
        assert_eq!(overflow.memory(), CLASS_BYTES);
        overflow.clear();
        assert_eq!(overflow, Overflow::default());
    }
}
