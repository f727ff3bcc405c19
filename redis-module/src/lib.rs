#![doc = include_str!("../README.md")]
// `unsafe` only in `ffi`: the calls into the server's module API, each with
// its SAFETY comment. Everything else is safe Rust over the filter crates.
#![deny(unsafe_code)]

pub mod bloom;
pub mod cuckoo;
pub mod grammar;
pub mod options;
pub mod payload;
pub mod stored;

#[cfg(feature = "server")]
#[allow(unsafe_code)]
mod ffi;
#[cfg(feature = "server")]
mod keys;
#[cfg(feature = "server")]
mod module;

/// Every allocation of the module goes through the server's allocator
/// (the system's in a process that is not a Redis server).
#[cfg(feature = "server")]
#[global_allocator]
static ALLOCATOR: ffi::ServerAllocator = ffi::ServerAllocator;

/// The module's entry point, which the server calls once:
/// `redis-server --loadmodule libfilterlab_redis_module.so [NAME VALUE …]`.
/// Exporting a symbol by name is what `unsafe` allows here; the body is
/// safe (see `ffi::load`).
#[cfg(feature = "server")]
#[allow(unsafe_code, unreachable_pub)]
#[unsafe(no_mangle)]
pub extern "C" fn RedisModule_OnLoad(
    ctx: *mut redis_module::raw::RedisModuleCtx,
    argv: *mut *mut redis_module::raw::RedisModuleString,
    argc: std::ffi::c_int,
) -> std::ffi::c_int {
    ffi::load(ctx, argv, argc, module::MODULE_VERSION, module::on_load)
}
