//! The report's one style table: every filter's family (the panel of the
//! small multiples it is drawn in) and its colour and marker, the same in
//! every chart. Within a family no two filters share a colour; across the
//! report no two share a colour and marker. A filter the table does not
//! know (a new registry entry) gets its family from its capabilities and
//! the first colour and marker left free.

use crate::registry::{Capability, Entry};

/// An RGB colour, 0xRRGGBB.
pub type Colour = u32;

/// Colour-blind-safe colours (Okabe and Ito's eight, less yellow, and
/// four more dark ones).
pub const PALETTE: [Colour; 10] = [
    0x00_72b2, 0xd5_5e00, 0x00_9e73, 0xcc_79a7, 0xe6_9f00, 0x56_b4e9, 0x22_2222, 0x8c_510a,
    0x76_2a83, 0x80_8000,
];

const BLUE: Colour = PALETTE[0];
const VERMILLION: Colour = PALETTE[1];
const GREEN: Colour = PALETTE[2];
const PINK: Colour = PALETTE[3];
const ORANGE: Colour = PALETTE[4];
const SKY: Colour = PALETTE[5];
const BLACK: Colour = PALETTE[6];
const BROWN: Colour = PALETTE[7];
const PURPLE: Colour = PALETTE[8];
const OLIVE: Colour = PALETTE[9];

/// The colour of reference lines (targets, bounds, the Pareto frontier).
pub const REFERENCE: Colour = 0x00_0000;

/// A point marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Marker {
    /// ●
    Circle,
    /// ■
    Square,
    /// ▲
    TriangleUp,
    /// ▼
    TriangleDown,
    /// ◆
    Diamond,
    /// ×
    Cross,
    /// +
    Plus,
    /// ○ drawn around another marker: a static filter's point on the
    /// Pareto charts (not a filter's own marker).
    Ring,
}

impl Marker {
    /// Every marker, in the order fallbacks take them.
    pub const ALL: [Self; 7] = [
        Self::Circle,
        Self::Square,
        Self::TriangleUp,
        Self::TriangleDown,
        Self::Diamond,
        Self::Cross,
        Self::Plus,
    ];
}

/// A family of filters: one panel of the small multiples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Standard Bloom filters: k probes anywhere in the array.
    Bloom,
    /// Blocked and split-block Bloom filters: all probes in one block.
    BlockedBloom,
    /// Counting Bloom filters: deletes with counters.
    CountingDeletes,
    /// Cuckoo and quotient filters: deletes with fingerprints.
    FingerprintDeletes,
    /// Filters that grow past their capacity.
    Growth,
    /// Filters built once from a fixed key set.
    Static,
}

impl Family {
    /// Every family, in panel order.
    pub const ALL: [Self; 6] = [
        Self::Bloom,
        Self::BlockedBloom,
        Self::CountingDeletes,
        Self::FingerprintDeletes,
        Self::Growth,
        Self::Static,
    ];

    /// The panel's title.
    pub fn title(self) -> &'static str {
        match self {
            Self::Bloom => "Bloom (k probes over the array)",
            Self::BlockedBloom => "Blocked Bloom (one block per key)",
            Self::CountingDeletes => "Deletes: counting Bloom",
            Self::FingerprintDeletes => "Deletes: cuckoo and quotient",
            Self::Growth => "Growth (unknown size)",
            Self::Static => "Static (built once)",
        }
    }
}

/// How one filter is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Look {
    /// Its colour.
    pub colour: Colour,
    /// Its marker.
    pub marker: Marker,
}

/// The table: registry name, family, colour, marker.
const TABLE: [(&str, Family, Colour, Marker); 27] = [
    ("BloomFilter", Family::Bloom, BLUE, Marker::Circle),
    ("BloomFilter-pow2", Family::Bloom, SKY, Marker::Square),
    ("AtomicBloomFilter", Family::Bloom, PURPLE, Marker::Diamond),
    ("fastbloom", Family::Bloom, VERMILLION, Marker::TriangleUp),
    ("bloomfilter", Family::Bloom, ORANGE, Marker::TriangleDown),
    (
        "BlockedBloomFilter",
        Family::BlockedBloom,
        GREEN,
        Marker::Circle,
    ),
    (
        "SplitBlockBloomFilter",
        Family::BlockedBloom,
        BLACK,
        Marker::Square,
    ),
    (
        "ScalableBloomFilter-nonscaling",
        Family::BlockedBloom,
        OLIVE,
        Marker::Diamond,
    ),
    (
        "sbbf-rs-safe",
        Family::BlockedBloom,
        PINK,
        Marker::TriangleUp,
    ),
    (
        "CountingBloomFilter",
        Family::CountingDeletes,
        BROWN,
        Marker::Circle,
    ),
    (
        "BlockedCountingBloomFilter",
        Family::CountingDeletes,
        GREEN,
        Marker::Square,
    ),
    (
        "fastbloom-rs",
        Family::CountingDeletes,
        ORANGE,
        Marker::Cross,
    ),
    (
        "CuckooFilter",
        Family::FingerprintDeletes,
        BLUE,
        Marker::Square,
    ),
    ("qfilter", Family::FingerprintDeletes, PINK, Marker::Circle),
    (
        "cuckoofilter",
        Family::FingerprintDeletes,
        VERMILLION,
        Marker::Diamond,
    ),
    ("ScalableBloomFilter", Family::Growth, OLIVE, Marker::Circle),
    (
        "CuckooFilter-grow",
        Family::Growth,
        BLUE,
        Marker::TriangleDown,
    ),
    (
        "growable-bloom-filter",
        Family::Growth,
        ORANGE,
        Marker::Diamond,
    ),
    ("qfilter-resizeable", Family::Growth, PINK, Marker::Square),
    (
        "scalable_cuckoo_filter",
        Family::Growth,
        VERMILLION,
        Marker::Cross,
    ),
    ("RibbonFilter", Family::Static, BLUE, Marker::Diamond),
    (
        "BinaryFuseFilter",
        Family::Static,
        GREEN,
        Marker::TriangleUp,
    ),
    (
        "BinaryFuseFilter-4wise",
        Family::Static,
        SKY,
        Marker::TriangleDown,
    ),
    (
        "BinaryFuseFilter-u16",
        Family::Static,
        BLACK,
        Marker::Circle,
    ),
    ("xorf-BinaryFuse8", Family::Static, PURPLE, Marker::Plus),
    ("xorf-BinaryFuse16", Family::Static, BROWN, Marker::Cross),
    ("xorf-Xor8", Family::Static, ORANGE, Marker::Square),
];

/// Every measured filter's family and look.
#[derive(Clone, Debug)]
pub struct Styles {
    filters: Vec<(String, Family, Look)>,
}

impl Styles {
    /// The styles of `entries`: from the table, or for a filter it does not
    /// know, its family from its capabilities and the first look free
    /// (preferring a colour its family does not use yet).
    pub fn new(entries: &[Entry]) -> Self {
        let mut filters: Vec<(String, Family, Look)> = TABLE
            .iter()
            .map(|&(name, family, colour, marker)| {
                (name.to_owned(), family, Look { colour, marker })
            })
            .collect();
        for entry in entries {
            if filters.iter().any(|(name, _, _)| name == entry.name) {
                continue;
            }
            let family = family_of(entry);
            let taken = |look: &Look| filters.iter().any(|(_, _, l)| l == look);
            let family_colour = |colour: Colour| {
                filters
                    .iter()
                    .any(|(_, f, l)| *f == family && l.colour == colour)
            };
            let looks = Marker::ALL
                .iter()
                .flat_map(|&marker| PALETTE.iter().map(move |&colour| Look { colour, marker }));
            let free: Vec<Look> = looks.filter(|l| !taken(l)).collect();
            let look = free
                .iter()
                .find(|l| !family_colour(l.colour))
                .or_else(|| free.first())
                .copied()
                .unwrap_or(Look {
                    colour: PALETTE[0],
                    marker: Marker::Plus,
                });
            filters.push((entry.name.to_owned(), family, look));
        }
        Self { filters }
    }

    fn find(&self, name: &str) -> Option<&(String, Family, Look)> {
        self.filters.iter().find(|(n, _, _)| n == name)
    }

    /// The look of the filter called `name`.
    pub fn look(&self, name: &str) -> Look {
        self.find(name).map_or(
            Look {
                colour: PALETTE[6],
                marker: Marker::Plus,
            },
            |&(_, _, look)| look,
        )
    }

    /// The family of the filter called `name`.
    pub fn family(&self, name: &str) -> Family {
        self.find(name)
            .map_or(Family::Bloom, |&(_, family, _)| family)
    }
}

/// A filter's family from its capabilities (for filters the table lacks).
fn family_of(entry: &Entry) -> Family {
    if entry.has(Capability::StaticSet) {
        Family::Static
    } else if entry.has(Capability::Growth) {
        Family::Growth
    } else if entry.has(Capability::Deletes) {
        Family::CountingDeletes
    } else {
        Family::Bloom
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::registry::registry;

    #[test]
    fn the_table_covers_the_registry_with_distinct_looks() {
        let entries = registry();
        for entry in &entries {
            assert!(
                TABLE.iter().any(|(name, ..)| *name == entry.name),
                "{} has no style of its own",
                entry.name
            );
        }
        let looks: HashSet<(Colour, Marker)> = TABLE.iter().map(|&(_, _, c, m)| (c, m)).collect();
        assert_eq!(
            looks.len(),
            TABLE.len(),
            "two filters share a colour and marker"
        );
        for family in Family::ALL {
            let colours: Vec<Colour> = TABLE
                .iter()
                .filter(|(_, f, ..)| *f == family)
                .map(|&(_, _, c, _)| c)
                .collect();
            let distinct: HashSet<&Colour> = colours.iter().collect();
            assert_eq!(distinct.len(), colours.len(), "{family:?} repeats a colour");
        }
    }

    #[test]
    fn unknown_filters_get_a_free_look() {
        let mut entries = registry();
        let mut extra = entries[0].clone();
        extra.name = "Unknown-1";
        entries.push(extra.clone());
        extra.name = "Unknown-2";
        entries.push(extra);
        let styles = Styles::new(&entries);
        let (one, two) = (styles.look("Unknown-1"), styles.look("Unknown-2"));
        assert_ne!(one, two);
        assert!(TABLE.iter().all(|&(_, _, c, m)| Look {
            colour: c,
            marker: m
        } != one));
        let bloom_colours: Vec<Colour> = TABLE
            .iter()
            .filter(|(_, f, ..)| *f == Family::Bloom)
            .map(|&(_, _, c, _)| c)
            .collect();
        assert!(!bloom_colours.contains(&one.colour));
        assert_eq!(styles.family("Unknown-1"), Family::Bloom);
        assert_eq!(styles.family("CuckooFilter"), Family::FingerprintDeletes);
    }
}
