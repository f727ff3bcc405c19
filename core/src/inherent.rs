//! The common operations as inherent methods of each filter type, written
//! once: [`inherent_methods!`](crate::inherent_methods).

/// Gives a filter type the common operations of the traits as inherent
/// methods, each delegating to the trait method of the same name, so that
/// `filter.contains(&key)` or `Filter::from_bytes(&bytes)` needs no
/// trait import. The traits stay for generic code.
///
/// `inherent_methods!(Type: parts)`, or
/// `inherent_methods!([generics] Type<...>: parts)` for a generic type;
/// the parts are any of
///
/// - `filter` ([`Membership`](crate::Membership), the query side of every
///   filter): `contains`, `contains_many`, `len`, `is_empty`, `memory_usage`;
/// - `remove` ([`RemovableFilter`](crate::RemovableFilter)): `remove`;
/// - `write` ([`Persist`](crate::Persist)): `to_bytes`, `write_to`;
/// - `read` ([`Persist`](crate::Persist)): `from_bytes`, `read_from`,
///   `read_from_expecting` (apart from `write`, so that a type with a
///   defaulted parameter can have them for that default only, and
///   `Type::from_bytes(..)` then needs no annotation).
///
/// # Examples
///
/// ```
/// # mod toy {
/// use filterlab_core::{KeyHasher, Membership};
///
/// /// A filter that holds nothing.
/// pub struct Empty(pub KeyHasher);
///
/// impl Membership for Empty {
///     fn hasher(&self) -> &KeyHasher { &self.0 }
///     fn contains_hash(&self, _: u64) -> bool { false }
///     fn len(&self) -> usize { 0 }
///     fn memory_usage(&self) -> usize { 0 }
///     fn capacity(&self) -> Option<usize> { None }
///     fn expected_fpp(&self) -> f64 { 0.0 }
///     fn theoretical_fpp(&self, _: u64) -> Option<f64> { Some(0.0) }
/// }
///
/// filterlab_core::inherent_methods!(Empty: filter);
/// # }
/// # fn main() {
/// // No `use filterlab_core::Membership` here.
/// let empty = toy::Empty(filterlab_core::KeyHasher::new(1));
/// assert!(!empty.contains("key") && empty.is_empty());
/// # }
/// ```
#[macro_export]
macro_rules! inherent_methods {
    ([$($generics:tt)*] $filter:ty: $($part:ident),+ $(,)?) => {
        $crate::inherent_methods!(@parts [$($generics)*] $filter: $($part),+);
    };
    (@parts $generics:tt $filter:ty: $($part:ident),+) => {
        $($crate::inherent_methods!(@$part $generics $filter);)+
    };
    ($filter:ty: $($part:ident),+ $(,)?) => {
        $crate::inherent_methods!([] $filter: $($part),+);
    };
    (@filter [$($generics:tt)*] $filter:ty) => {
        impl<$($generics)*> $filter {
            /// Whether `key` may be present: never `false` for a key the
            /// filter holds (inserted and not removed, or in the set it was
            /// built from), `true` for any other key with the filter's FPP.
            /// ([`Membership::contains`](filterlab_core::Membership::contains).)
            #[inline]
            pub fn contains<K: $crate::Key + ?Sized>(&self, key: &K) -> bool {
                <Self as $crate::Membership>::contains(self, key)
            }

            /// Looks up many keys at once, one answer per key in order,
            /// with the memory accesses of the keys ahead overlapped.
            /// ([`Membership::contains_many`](filterlab_core::Membership::contains_many).)
            pub fn contains_many<I>(&self, keys: I) -> Vec<bool>
            where
                I: IntoIterator,
                I::Item: $crate::Key,
            {
                <Self as $crate::Membership>::contains_many(self, keys)
            }

            /// The number of items held, exactly as counted by inserts
            /// (and removals), or the distinct keys of the set a static
            /// filter was built from. ([`Membership::len`](filterlab_core::Membership::len).)
            #[inline]
            pub fn len(&self) -> usize {
                <Self as $crate::Membership>::len(self)
            }

            /// Whether nothing is held. ([`Membership::is_empty`](filterlab_core::Membership::is_empty).)
            #[inline]
            pub fn is_empty(&self) -> bool {
                <Self as $crate::Membership>::is_empty(self)
            }

            /// Bytes of the filter's own storage: what it costs in memory.
            /// ([`Membership::memory_usage`](filterlab_core::Membership::memory_usage).)
            pub fn memory_usage(&self) -> usize {
                <Self as $crate::Membership>::memory_usage(self)
            }
        }
    };
    (@remove [$($generics:tt)*] $filter:ty) => {
        impl<$($generics)*> $filter {
            /// Removes one copy of `key`; `Ok(false)` when it is not
            /// present. Remove only keys that were inserted: removing a
            /// false positive can take another key's trace.
            /// ([`RemovableFilter::remove`](filterlab_core::RemovableFilter::remove).)
            ///
            /// # Errors
            ///
            /// As [`RemovableFilter::remove_hash`](filterlab_core::RemovableFilter::remove_hash);
            /// the filter is then unchanged.
            #[inline]
            pub fn remove<K: $crate::Key + ?Sized>(&mut self, key: &K) -> Result<bool, $crate::Error> {
                <Self as $crate::RemovableFilter>::remove(self, key)
            }
        }
    };
    (@write [$($generics:tt)*] $filter:ty) => {
        impl<$($generics)*> $filter {
            /// The filter in its binary format (header, payload, checksum).
            /// ([`Persist::to_bytes`](filterlab_core::Persist::to_bytes).)
            pub fn to_bytes(&self) -> Vec<u8> {
                <Self as $crate::Persist>::to_bytes(self)
            }

            /// Writes the filter in its binary format, streaming: memory
            /// stays flat for any size. ([`Persist::write_to`](filterlab_core::Persist::write_to).)
            ///
            /// # Errors
            ///
            /// [`ErrorKind::Io`](filterlab_core::ErrorKind::Io) when the writer fails.
            pub fn write_to<W: ::std::io::Write>(&self, writer: W) -> Result<(), $crate::Error> {
                <Self as $crate::Persist>::write_to(self, writer)
            }
        }
    };
    (@read [$($generics:tt)*] $filter:ty) => {
        impl<$($generics)*> $filter {
            /// Reads a filter from bytes holding exactly one, validating
            /// all of it. ([`Persist::from_bytes`](filterlab_core::Persist::from_bytes).)
            ///
            /// # Errors
            ///
            /// A typed error for every way the bytes can be wrong (see
            /// [`ErrorKind`](filterlab_core::ErrorKind)); never a panic.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, $crate::Error> {
                <Self as $crate::Persist>::from_bytes(bytes)
            }

            /// Reads a filter, streaming, validating all of it.
            /// ([`Persist::read_from`](filterlab_core::Persist::read_from).)
            ///
            /// # Errors
            ///
            /// As [`from_bytes`](Self::from_bytes).
            pub fn read_from<R: ::std::io::Read>(reader: R) -> Result<Self, $crate::Error> {
                <Self as $crate::Persist>::read_from(reader)
            }

            /// Reads a filter and refuses it, before its payload, unless
            /// its configuration is `expected`: drift is an error, never a
            /// wrong answer.
            /// ([`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting).)
            ///
            /// # Errors
            ///
            /// As [`from_bytes`](Self::from_bytes);
            /// [`ErrorKind::ConfigMismatch`](filterlab_core::ErrorKind::ConfigMismatch)
            /// for another configuration.
            pub fn read_from_expecting<R: ::std::io::Read>(
                reader: R,
                expected: &<Self as $crate::Persist>::Config,
            ) -> Result<Self, $crate::Error> {
                <Self as $crate::Persist>::read_from_expecting(reader, expected)
            }
        }
    };
}
