//! The module's loading: its arguments, its data types, its commands under
//! their prefixes.

use crate::ffi::{Level, LoadCtx, log};
use crate::keys::install;
use crate::options::Options;
use crate::{bloom, cuckoo};

/// `MODULE LIST`'s version: major·10000 + minor·100 + patch of the crate.
pub(crate) const MODULE_VERSION: i32 = {
    const fn number(text: &str) -> i32 {
        let bytes = text.as_bytes();
        let mut value = 0;
        let mut at = 0;
        while at < bytes.len() {
            value = value * 10 + (bytes[at] - b'0') as i32;
            at += 1;
        }
        value
    }
    number(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
        + number(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + number(env!("CARGO_PKG_VERSION_PATCH"))
};

/// Reads the module arguments, registers the data types and the commands.
pub(crate) fn on_load(ctx: &LoadCtx, args: &[&[u8]]) -> Result<(), String> {
    let options = Options::parse(args).map_err(|err| err.to_string())?;
    log(
        Level::Notice,
        &format!(
            "filterlab {}: {}.* and {}.*, {} layers, CF target FPP {}",
            env!("CARGO_PKG_VERSION"),
            options.bf_prefix,
            options.cf_prefix,
            options.bf_layout.name(),
            options.cf_error_rate
        ),
    );
    let options = install(ctx, options)?;
    for (suffix, entry, flags) in bloom::commands::TABLE {
        ctx.create_command(&options.bf_command(suffix), *entry, flags)?;
    }
    for (suffix, entry, flags) in cuckoo::commands::TABLE {
        ctx.create_command(&options.cf_command(suffix), *entry, flags)?;
    }
    Ok(())
}
