//! The module arguments (`--loadmodule ….so NAME VALUE …`): the defaults
//! of the BF.* and CF.* commands under RedisBloom's names and ranges, the
//! command prefixes, and filterlab's own settings.

use std::fmt;

/// Error rates above this are lowered to it, with a warning in the log, as
/// RedisBloom does (its `BF_ERROR_RATE_CAP`).
pub const ERROR_RATE_CAP: f64 = 0.25;

/// The largest capacity a filter is reserved with: RedisBloom's limit of
/// 2^30 items for BF.RESERVE and CF.RESERVE.
pub const MAX_CAPACITY: i64 = 1 << 30;

/// The largest expansion factor, BF and CF (RedisBloom's).
pub const MAX_EXPANSION: i64 = 32_768;

/// The largest CF bucket size accepted (RedisBloom's; filterlab's cuckoo
/// filter always uses buckets of four slots, see the README).
pub const MAX_BUCKET_SIZE: i64 = 255;

/// The most cuckoo kicks an insert may be configured to try.
pub const MAX_ITERATIONS: i64 = 65_535;

/// The most sub-filters a growing cuckoo filter may have: filterlab's
/// `MAX_TABLES` (RedisBloom allows 65,536, which its FPP could not survive).
pub const MAX_CF_EXPANSIONS: i64 = filterlab_cuckoo::MAX_TABLES as i64;

/// The first layer's share of a scaling BF filter's error rate unless
/// `bf-first-share` says otherwise: layer 0 is sized for 0.65·P, layer i ≥ 1
/// for 0.35·P·(1 − r)·r^(i−1) (filterlab-scalable's `first_layer_share`).
/// The smallest share, in steps of 0.05, whose blocked first layer takes no
/// more bits than RedisBloom's at its default error rate (0.989× at 0.01;
/// 0.6 gives 1.006×, 0.5 1.046×: `cargo run --release -p filterlab-peers
/// --example first_share`), so the allocator's size classes never put a
/// reserved filter in a larger block than RedisBloom's (measured: 1.00–1.02×
/// the bytes DEL releases from 10^4 items on). Grown 1000× its arrays take
/// 21.01 bits per key where RedisBloom's sizing takes 23.10 (23.72 and
/// 24.15 measured with the allocator's rounding), under P at every doubling.
pub const DEFAULT_FIRST_SHARE: f64 = 0.65;

/// The layer type of the scalable Bloom filters BF.* creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `BlockedBloomFilter` layers: one cache line per key and layer.
    Blocked,
    /// `BloomFilter` layers: the fewest bits, k cache lines per key.
    Standard,
}

impl Layout {
    /// The module argument's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Blocked => "blocked",
            Self::Standard => "standard",
        }
    }
}

/// The module's configuration, fixed when it loads.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The BF commands' prefix: `BF` serves `BF.ADD`, `BF.EXISTS`, ….
    pub bf_prefix: String,
    /// The CF commands' prefix.
    pub cf_prefix: String,
    /// Error rate of a filter BF.ADD, BF.MADD or BF.INSERT creates.
    pub bf_error_rate: f64,
    /// Capacity of a filter BF.ADD or BF.INSERT creates.
    pub bf_initial_size: i64,
    /// Expansion of a filter created without EXPANSION.
    pub bf_expansion_factor: i64,
    /// The layers of every scalable Bloom filter created.
    pub bf_layout: Layout,
    /// The tightening ratio r of every scaling Bloom filter created: layer
    /// i ≥ 1 is sized for (1 − f)·P·(1 − r)·r^(i−1) with the first-layer
    /// share f, or P·(1 − r)·r^i without one (filterlab-scalable's default
    /// 0.85).
    pub bf_tightening: f64,
    /// The first layer's share f of every scaling Bloom filter created:
    /// layer 0 is sized for f·P ([`DEFAULT_FIRST_SHARE`]); `None`
    /// (`bf-first-share none`) is filterlab-scalable's geometric schedule,
    /// whose first layer takes P·(1 − r).
    pub bf_first_share: Option<f64>,
    /// The target FPP of every cuckoo filter created (filterlab's own:
    /// RedisBloom's cuckoo filter has 8-bit fingerprints and no target).
    pub cf_error_rate: f64,
    /// Bucket size of a filter created without BUCKETSIZE (recorded and
    /// reported; the filter's buckets have four slots).
    pub cf_bucket_size: i64,
    /// Capacity of a filter CF.ADD or CF.INSERT creates.
    pub cf_initial_size: i64,
    /// Kicks of a filter created without MAXITERATIONS: 500, not
    /// RedisBloom's 20. filterlab's sizing fills a table to 95% of its
    /// slots, which inserts trying 20 kicks reach only to 89–93% (measured:
    /// the first refusal came at 0.94–0.98 of the capacity), so a filter
    /// filled to its capacity would add a sub-filter and double its memory.
    pub cf_max_iterations: i64,
    /// Expansion of a filter created without EXPANSION (0: it does not grow).
    pub cf_expansion_factor: i64,
    /// The most sub-filters a cuckoo filter may have.
    pub cf_max_expansions: i64,
}

impl Default for Options {
    /// RedisBloom's defaults, but 500 cuckoo kicks; blocked layers, the
    /// first layer at 0.65·P, tightening 0.85; a 1% cuckoo target.
    fn default() -> Self {
        Self {
            bf_prefix: "BF".to_owned(),
            cf_prefix: "CF".to_owned(),
            bf_error_rate: 0.01,
            bf_initial_size: 100,
            bf_expansion_factor: 2,
            bf_layout: Layout::Blocked,
            bf_tightening: filterlab_scalable::DEFAULT_TIGHTENING,
            bf_first_share: Some(DEFAULT_FIRST_SHARE),
            cf_error_rate: 0.01,
            cf_bucket_size: 2,
            cf_initial_size: 1024,
            cf_max_iterations: 500,
            cf_expansion_factor: 1,
            cf_max_expansions: 32,
        }
    }
}

/// Why the module refuses to load: said in the server's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadArgument(pub String);

impl fmt::Display for BadArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Options {
    /// The options given as `NAME VALUE` pairs, names case-insensitive:
    /// RedisBloom's (`bf-error-rate`, `bf-initial-size`,
    /// `bf-expansion-factor`, `cf-bucket-size`, `cf-initial-size`,
    /// `cf-max-iterations`, `cf-expansion-factor`, `cf-max-expansions`, and
    /// the legacy `ERROR_RATE`, `INITIAL_SIZE`, `CF_MAX_EXPANSIONS`) and
    /// filterlab's (`bf-prefix`, `cf-prefix`, `bf-layers`, `bf-tightening`,
    /// `bf-first-share`, `cf-error-rate`).
    ///
    /// # Errors
    ///
    /// An odd number of arguments, an unknown name, a value that does not
    /// parse or is out of its range, or two equal prefixes.
    pub fn parse(args: &[&[u8]]) -> Result<Self, BadArgument> {
        let bad = |text: String| Err(BadArgument(text));
        if !args.len().is_multiple_of(2) {
            return bad(format!(
                "module arguments come in NAME VALUE pairs, got {} arguments",
                args.len()
            ));
        }
        let mut options = Self::default();
        for pair in args.chunks(2) {
            let name = String::from_utf8_lossy(pair[0]).to_ascii_lowercase();
            let value = String::from_utf8_lossy(pair[1]).into_owned();
            options.set(&name, &value)?;
        }
        if options.bf_prefix.eq_ignore_ascii_case(&options.cf_prefix) {
            return bad(format!(
                "bf-prefix and cf-prefix must differ, both are {}",
                options.bf_prefix
            ));
        }
        if options.bf_error_rate > ERROR_RATE_CAP {
            options.bf_error_rate = ERROR_RATE_CAP;
        }
        Ok(options)
    }

    fn set(&mut self, name: &str, value: &str) -> Result<(), BadArgument> {
        match name {
            "bf-prefix" => self.bf_prefix = prefix(value)?,
            "cf-prefix" => self.cf_prefix = prefix(value)?,
            "bf-error-rate" | "error_rate" => self.bf_error_rate = rate(name, value)?,
            "bf-tightening" => self.bf_tightening = rate(name, value)?,
            "bf-first-share" => {
                self.bf_first_share = if value.eq_ignore_ascii_case("none") {
                    None
                } else {
                    Some(rate(name, value)?)
                };
            }
            "cf-error-rate" => {
                self.cf_error_rate = rate(name, value)?.min(ERROR_RATE_CAP);
            }
            "bf-initial-size" | "initial_size" => {
                self.bf_initial_size = integer(name, value, 1, MAX_CAPACITY)?;
            }
            "bf-expansion-factor" => {
                self.bf_expansion_factor = integer(name, value, 1, MAX_EXPANSION)?;
            }
            "bf-layers" => {
                self.bf_layout = match value.to_ascii_lowercase().as_str() {
                    "blocked" => Layout::Blocked,
                    "standard" => Layout::Standard,
                    _ => {
                        return Err(BadArgument(format!(
                            "bf-layers must be blocked or standard, got {value}"
                        )));
                    }
                };
            }
            "cf-bucket-size" => {
                self.cf_bucket_size = integer(name, value, 1, MAX_BUCKET_SIZE)?;
            }
            "cf-initial-size" => {
                self.cf_initial_size = integer(name, value, 4, MAX_CAPACITY)?;
            }
            "cf-max-iterations" => {
                self.cf_max_iterations = integer(name, value, 1, MAX_ITERATIONS)?;
            }
            "cf-expansion-factor" => {
                self.cf_expansion_factor = integer(name, value, 0, MAX_EXPANSION)?;
            }
            "cf-max-expansions" | "cf_max_expansions" => {
                self.cf_max_expansions = integer(name, value, 1, MAX_CF_EXPANSIONS)?;
            }
            _ => return Err(BadArgument(format!("unknown module argument {name}"))),
        }
        Ok(())
    }

    /// The name of a BF command, lower case as RedisBloom registers its
    /// own (the server's arity error quotes it): `bf.add` for `ADD`.
    pub fn bf_command(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.bf_prefix).to_ascii_lowercase()
    }

    /// The name of a CF command, lower case.
    pub fn cf_command(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.cf_prefix).to_ascii_lowercase()
    }
}

/// A command prefix: 1 to 32 letters, digits, `_` or `-`.
fn prefix(value: &str) -> Result<String, BadArgument> {
    let valid = (1..=32).contains(&value.len())
        && value
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if valid {
        Ok(value.to_owned())
    } else {
        Err(BadArgument(format!(
            "a command prefix is 1 to 32 letters, digits, '_' or '-', got {value:?}"
        )))
    }
}

fn rate(name: &str, value: &str) -> Result<f64, BadArgument> {
    match value.parse::<f64>() {
        Ok(rate) if rate > 0.0 && rate < 1.0 => Ok(rate),
        _ => Err(BadArgument(format!(
            "'{name}' must be in the range (0, 1), got {value}"
        ))),
    }
}

fn integer(name: &str, value: &str, least: i64, most: i64) -> Result<i64, BadArgument> {
    match value.parse::<i64>() {
        Ok(number) if (least..=most).contains(&number) => Ok(number),
        _ => Err(BadArgument(format!(
            "'{name}' must be in the range [{least}, {most}], got {value}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, BadArgument> {
        let bytes: Vec<&[u8]> = args.iter().map(|arg| arg.as_bytes()).collect();
        Options::parse(&bytes)
    }

    #[test]
    fn defaults_are_redisbloom_s() {
        let options = parse(&[]).unwrap();
        assert_eq!(options, Options::default());
        assert_eq!(options.bf_command("MADD"), "bf.madd");
        assert_eq!(
            (
                options.bf_error_rate,
                options.bf_initial_size,
                options.bf_expansion_factor
            ),
            (0.01, 100, 2)
        );
        assert_eq!(
            (
                options.cf_initial_size,
                options.cf_bucket_size,
                options.cf_max_iterations
            ),
            (1024, 2, 500)
        );
    }

    #[test]
    fn arguments_set_defaults_and_prefixes() {
        let options = parse(&[
            "bf-prefix",
            "FLBF",
            "CF-PREFIX",
            "flcf",
            "ERROR_RATE",
            "0.5",
            "bf-layers",
            "Standard",
            "cf-expansion-factor",
            "0",
            "INITIAL_SIZE",
            "1000",
            "bf-tightening",
            "0.5",
            "bf-first-share",
            "0.5",
        ])
        .unwrap();
        assert_eq!(options.bf_tightening, 0.5);
        assert_eq!(options.bf_first_share, Some(0.5));
        let geometric = parse(&["bf-first-share", "NONE"]).unwrap();
        assert_eq!(geometric.bf_first_share, None);
        assert_eq!(Options::default().bf_first_share, Some(DEFAULT_FIRST_SHARE));
        assert_eq!(options.cf_command("ADD"), "flcf.add");
        assert_eq!(options.bf_error_rate, ERROR_RATE_CAP);
        assert_eq!(options.bf_layout, Layout::Standard);
        assert_eq!(
            (options.cf_expansion_factor, options.bf_initial_size),
            (0, 1000)
        );
    }

    #[test]
    fn bad_arguments_are_named() {
        for (args, says) in [
            (&["bf-error-rate"][..], "pairs"),
            (&["bf-error-rate", "1"], "(0, 1)"),
            (&["bf-error-rate", "0"], "(0, 1)"),
            (&["bf-initial-size", "1073741825"], "[1, 1073741824]"),
            (&["bf-expansion-factor", "0"], "[1, 32768]"),
            (&["cf-max-expansions", "257"], "[1, 256]"),
            (&["bf-layers", "fast"], "blocked or standard"),
            (&["bf-tightening", "1"], "(0, 1)"),
            (&["bf-first-share", "0"], "(0, 1)"),
            (&["bf-first-share", "geometric"], "(0, 1)"),
            (&["bf-prefix", "a b"], "prefix"),
            (&["cf-prefix", "BF"], "must differ"),
            (&["nonsense", "1"], "unknown"),
        ] {
            let err = parse(args).unwrap_err();
            assert!(err.0.contains(says), "{args:?}: {err}");
        }
    }
}
