//! The server's module API, wrapped in safe types: the one module with
//! `unsafe` (each block says why it is sound). Everything the server calls
//! enters here (`RedisModule_OnLoad`, the command handlers, the data type
//! callbacks), and no panic leaves: each entry catches it, logs it, and
//! answers with an error (a command), a null value (a load) or nothing.
//!
//! Built on the `redis-module` crate's bindings (`redis_module::raw`),
//! not on its wrappers: a command here reads its arguments in place,
//! replies item by item and allocates nothing per item.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_int, c_long, c_longlong, c_void};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use filterlab_core::{Error, ErrorKind};
use redis_module::raw;

use crate::grammar::{Argv, Parsed, Refusal};
use crate::payload::{Sink, Source};

/// Calls the server's API function `RedisModule_<name>`: the caller's
/// `// SAFETY:` comment says why the arguments are valid. The function
/// pointer was set by `RedisModule_Init` before any entry of this module
/// runs and is never written again; a server without it (one older than
/// 7.0) panics here, which the entry catches.
macro_rules! server {
    ($name:ident($($arg:expr),* $(,)?)) => {
        unsafe {
            let function = raw::$name.expect(concat!(
                "the server has no ",
                stringify!($name)
            ));
            function($($arg),*)
        }
    };
}

// ---------------------------------------------------------------------------
// Memory: every Rust allocation of the module goes through the server's
// allocator, so that `maxmemory`, INFO memory and MEMORY USAGE see it.

/// The module's global allocator: the server's (`RedisModule_TryAlloc`
/// where the server has it, so that a refused allocation is an error and
/// not an abort; else `RedisModule_Alloc`), and the system's in a process
/// that is not a Redis server (the tests, which link this crate).
///
/// Unlike `redis_module::alloc::RedisAlloc`, it honours alignments above
/// the 16 bytes every `malloc` gives: RedisAlloc relies on jemalloc's size
/// classes for those, and a server built with the libc allocator would
/// hand out misaligned blocks.
pub(crate) struct ServerAllocator;

/// The alignment every allocator of the server gives.
const MIN_ALIGN: usize = 16;

/// Whether the server's allocator is there: set by `RedisModule_Init`
/// before the module allocates anything, never unset.
fn in_server() -> bool {
    // SAFETY: a read of a function pointer that `RedisModule_Init` writes
    // once, on the server's main thread, before any other code of the
    // module runs.
    let alloc = unsafe { raw::RedisModule_Alloc };
    alloc.is_some()
}

thread_local! {
    /// Bytes this thread holds in the server's allocator through the
    /// module, allocator rounding included: what a command allocated for
    /// its key is the change across it (`dispatch`). Per thread, so that
    /// the server's background frees (lazyfree) do not count against a
    /// command.
    static HELD: Cell<isize> = const { Cell::new(0) };
}

/// The bytes this thread holds in the server's allocator.
fn held() -> isize {
    HELD.try_with(Cell::get).unwrap_or(0)
}

/// Counts the usable size of a block of the server's, allocated (`sign`
/// 1) or about to be freed (-1).
fn count(block: *mut u8, sign: isize) {
    if block.is_null() {
        return;
    }
    // SAFETY: a read of a function pointer set by `RedisModule_Init` (see
    // `in_server`); `block` is a live block of the server's allocator.
    let size = unsafe {
        match raw::RedisModule_MallocSize {
            Some(size) => size(block.cast()),
            None => 0,
        }
    };
    let _ = HELD.try_with(|held| held.set(held.get().wrapping_add(sign * size as isize)));
}

/// The server's allocation, `size` bytes (zeroed when asked): `null` when
/// refused.
fn server_alloc(size: usize, zeroed: bool) -> *mut u8 {
    // SAFETY: reads of function pointers set by `RedisModule_Init` (see
    // `in_server`); the functions take any size and return null or a block
    // of it.
    unsafe {
        let block = if zeroed {
            match raw::RedisModule_TryCalloc.or(raw::RedisModule_Calloc) {
                Some(calloc) => calloc(1, size),
                None => ptr::null_mut(),
            }
        } else {
            match raw::RedisModule_TryAlloc.or(raw::RedisModule_Alloc) {
                Some(alloc) => alloc(size),
                None => ptr::null_mut(),
            }
        };
        let block: *mut u8 = block.cast();
        count(block, 1);
        block
    }
}

/// Frees a block of `server_alloc`.
fn server_free(block: *mut u8) {
    count(block, -1);
    // SAFETY: `block` came from the server's allocator (the caller's
    // contract), and `RedisModule_Free` is set (see `in_server`).
    unsafe {
        if let Some(free) = raw::RedisModule_Free {
            free(block.cast());
        }
    }
}

impl ServerAllocator {
    /// An over-aligned block: `align` more bytes (and a word), the
    /// server's block's address kept in the word before the one returned.
    #[allow(clippy::cast_ptr_alignment)] // that word is 8-aligned: see below
    fn alloc_aligned(layout: Layout, zeroed: bool) -> *mut u8 {
        let Some(size) = layout
            .size()
            .checked_add(layout.align())
            .and_then(|size| size.checked_add(size_of::<usize>()))
        else {
            return ptr::null_mut();
        };
        let base = server_alloc(size, zeroed);
        if base.is_null() {
            return base;
        }
        let skip =
            (base as usize + size_of::<usize>()).next_multiple_of(layout.align()) - base as usize;
        // SAFETY: `skip` is at most `align + 8 - 1` bytes into the block of
        // `size + align + 8` bytes, so the returned block of `size` bytes
        // and the word before it lie inside it; that word is 8-aligned
        // (the block is, and `align` is a multiple of 16).
        unsafe {
            let aligned = base.add(skip);
            aligned.cast::<*mut u8>().sub(1).write(base);
            aligned
        }
    }
}

// SAFETY: every block is `layout.size()` bytes aligned to `layout.align()`
// (the server's blocks are 16-aligned, larger alignments are carved out of
// a larger block), freed by the allocator that made it: the server's once
// `RedisModule_Init` has run (before the module allocates), the system's
// in a process that never runs it.
unsafe impl GlobalAlloc for ServerAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !in_server() {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.alloc(layout) };
        }
        if layout.align() <= MIN_ALIGN {
            server_alloc(layout.size(), false)
        } else {
            Self::alloc_aligned(layout, false)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !in_server() {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.alloc_zeroed(layout) };
        }
        if layout.align() <= MIN_ALIGN {
            server_alloc(layout.size(), true)
        } else {
            Self::alloc_aligned(layout, true)
        }
    }

    #[allow(clippy::cast_ptr_alignment)] // the word before an over-aligned block
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if !in_server() {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.dealloc(block, layout) };
        }
        if layout.align() <= MIN_ALIGN {
            server_free(block);
        } else {
            // SAFETY: `alloc_aligned` kept the server's block's address in
            // the word before `block`.
            server_free(unsafe { block.cast::<*mut u8>().sub(1).read() });
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_server() {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.realloc(block, layout, new_size) };
        }
        if layout.align() <= MIN_ALIGN {
            // SAFETY: `block` is the server's, of `layout`; the reallocation
            // keeps its first bytes and its 16-byte alignment.
            count(block, -1);
            let moved: *mut u8 = unsafe {
                match raw::RedisModule_TryRealloc.or(raw::RedisModule_Realloc) {
                    Some(realloc) => realloc(block.cast(), new_size).cast(),
                    None => ptr::null_mut(),
                }
            };
            // A refused reallocation leaves the old block as it was.
            count(if moved.is_null() { block } else { moved }, 1);
            return moved;
        }
        // SAFETY: `new_size` with the old alignment is a valid layout (the
        // caller's contract); the old block holds `layout.size()` bytes.
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let moved = self.alloc(new_layout);
            if !moved.is_null() {
                ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                self.dealloc(block, layout);
            }
            moved
        }
    }
}

// ---------------------------------------------------------------------------
// Logging.

/// A log level of the server's log.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Level {
    Notice,
    Warning,
}

impl Level {
    fn name(self) -> &'static CStr {
        match self {
            Self::Notice => c"notice",
            Self::Warning => c"warning",
        }
    }
}

/// `text` as a C string (any NUL in it replaced).
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

/// Writes `text` to the server's log (with no context: from a callback).
pub(crate) fn log(level: Level, text: &str) {
    let text = c_string(text);
    // SAFETY: `RedisModule_Log` takes a null context, and a format of one
    // `%s` with a NUL-terminated string.
    server!(RedisModule_Log(
        ptr::null_mut(),
        level.name().as_ptr(),
        c"%s".as_ptr(),
        text.as_ptr()
    ));
}

// ---------------------------------------------------------------------------
// A command's context: replies, replication, keys.

/// The context of one command call.
pub(crate) struct Ctx {
    raw: *mut raw::RedisModuleCtx,
}

impl Ctx {
    fn new(raw: *mut raw::RedisModuleCtx) -> Self {
        Self { raw }
    }

    /// Whether the client speaks RESP3. Asked only where a reply's shape
    /// differs beyond what the reply calls adapt themselves (booleans are
    /// 1 and 0 in RESP2, maps flat arrays): the flags cost about 130
    /// instructions, a tenth of a one-key command's own work.
    pub(crate) fn resp3(&self) -> bool {
        // SAFETY: the context the server passed to this call.
        let flags = server!(RedisModule_GetContextFlags(self.raw));
        flags & raw::REDISMODULE_CTX_FLAGS_RESP3 as c_int != 0
    }

    /// An error reply.
    pub(crate) fn reply_error(&self, text: &str) {
        let text = c_string(text);
        // SAFETY: a valid context and a NUL-terminated string, which the
        // server copies.
        server!(RedisModule_ReplyWithError(self.raw, text.as_ptr()));
    }

    /// The server's "wrong number of arguments" error.
    pub(crate) fn reply_wrong_arity(&self) {
        // SAFETY: a valid context.
        server!(RedisModule_WrongArity(self.raw));
    }

    /// A simple-string reply ("OK").
    pub(crate) fn reply_simple(&self, text: &CStr) {
        // SAFETY: a valid context and a NUL-terminated string.
        server!(RedisModule_ReplyWithSimpleString(self.raw, text.as_ptr()));
    }

    /// A simple-string reply of a label (BF.INFO's and CF.INFO's field names).
    pub(crate) fn reply_label(&self, label: &str) {
        self.reply_simple(&c_string(label));
    }

    /// An integer reply.
    pub(crate) fn reply_integer(&self, value: i64) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplyWithLongLong(self.raw, value as c_longlong));
    }

    /// A boolean: RESP3's boolean, RESP2's 0 or 1 (the server's reply call
    /// writes each protocol's).
    pub(crate) fn reply_bool(&self, value: bool) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplyWithBool(self.raw, c_int::from(value)));
    }

    /// A nil reply.
    pub(crate) fn reply_null(&self) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplyWithNull(self.raw));
    }

    /// A bulk-string reply of `bytes`.
    pub(crate) fn reply_bulk(&self, bytes: &[u8]) {
        // SAFETY: a valid context and `bytes.len()` readable bytes, which
        // the server copies.
        server!(RedisModule_ReplyWithStringBuffer(
            self.raw,
            bytes.as_ptr().cast::<c_char>(),
            bytes.len()
        ));
    }

    /// Starts an array reply of `len` elements.
    pub(crate) fn reply_array(&self, len: usize) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplyWithArray(self.raw, len as c_long));
    }

    /// Starts an array reply whose length [`set_array_len`](Self::set_array_len) gives.
    pub(crate) fn reply_array_postponed(&self) {
        self.reply_array_raw(c_long::from(raw::REDISMODULE_POSTPONED_ARRAY_LEN));
    }

    fn reply_array_raw(&self, len: c_long) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplyWithArray(self.raw, len));
    }

    /// Sets the length of the postponed array.
    pub(crate) fn set_array_len(&self, len: usize) {
        // SAFETY: a valid context with a postponed array open.
        server!(RedisModule_ReplySetArrayLength(self.raw, len as c_long));
    }

    /// Starts a map of `pairs` pairs: a RESP3 map, or a flat array of
    /// 2 × `pairs` elements in RESP2 (the server's reply call writes each
    /// protocol's, as RedisBloom's replies are).
    pub(crate) fn reply_map(&self, pairs: usize) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplyWithMap(self.raw, pairs as c_long));
    }

    /// Replicates the command as the client sent it (and to the AOF).
    pub(crate) fn replicate_verbatim(&self) {
        // SAFETY: a valid context.
        server!(RedisModule_ReplicateVerbatim(self.raw));
    }

    /// Opens the key named by argument `index`, for writing or not.
    pub(crate) fn open_key(&self, args: &Args<'_>, index: usize, write: bool) -> Key {
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        // SAFETY: a valid context and an argument of this call, which
        // outlives the key (closed when `Key` drops, within the call).
        let key = server!(RedisModule_OpenKey(
            self.raw,
            args.string(index),
            mode as c_int
        ));
        Key { raw: key.cast() }
    }

    /// Bytes the server may still allocate under `maxmemory`; `None`
    /// without a limit.
    pub(crate) fn memory_headroom(&self) -> Option<u64> {
        // SAFETY: a valid context; the info object is freed below.
        let info = server!(RedisModule_GetServerInfo(self.raw, c"memory".as_ptr()));
        if info.is_null() {
            return None;
        }
        let field = |name: &CStr| {
            let mut err: c_int = 0;
            // SAFETY: a live info object and a NUL-terminated field name.
            let value = server!(RedisModule_ServerInfoGetFieldUnsigned(
                info,
                name.as_ptr(),
                &raw mut err
            ));
            (err == 0).then_some(value)
        };
        let (limit, used) = (field(c"maxmemory"), field(c"used_memory"));
        // SAFETY: the info object made above, freed once.
        server!(RedisModule_FreeServerInfo(self.raw, info));
        match (limit, used) {
            (Some(limit), Some(used)) if limit > 0 => Some(limit.saturating_sub(used)),
            _ => None,
        }
    }
}

/// A command's arguments, the command name first, read in place.
pub(crate) struct Args<'a> {
    argv: &'a [*mut raw::RedisModuleString],
}

impl Args<'_> {
    fn string(&self, index: usize) -> *mut raw::RedisModuleString {
        self.argv[index]
    }
}

impl Argv for Args<'_> {
    fn count(&self) -> usize {
        self.argv.len()
    }

    fn bytes(&self, index: usize) -> &[u8] {
        let Some(&string) = self.argv.get(index) else {
            return &[];
        };
        let mut len = 0usize;
        // SAFETY: an argument of this call and a place for its length.
        let bytes = server!(RedisModule_StringPtrLen(string, &raw mut len));
        if bytes.is_null() {
            return &[];
        }
        // SAFETY: the server keeps the argument, and the bytes it points
        // to, alive and unchanged until the call returns, which the
        // returned slice's lifetime (the arguments') does not outlive.
        unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), len) }
    }

    fn integer(&self, index: usize) -> Option<i64> {
        let &string = self.argv.get(index)?;
        let mut value: c_longlong = 0;
        // SAFETY: an argument of this call and a place for the number.
        let status = server!(RedisModule_StringToLongLong(string, &raw mut value));
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    fn float(&self, index: usize) -> Option<f64> {
        let &string = self.argv.get(index)?;
        let mut value = 0.0f64;
        // SAFETY: an argument of this call and a place for the number.
        let status = server!(RedisModule_StringToDouble(string, &raw mut value));
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }
}

/// An open key, closed when dropped.
pub(crate) struct Key {
    raw: *mut raw::RedisModuleKey,
}

/// What a key holds, as one data type sees it.
pub(crate) enum Held<'k, T> {
    /// Nothing.
    Empty,
    /// A value of this data type.
    Value(&'k mut T),
    /// A value of another type.
    Other,
}

impl Key {
    /// What the key holds.
    pub(crate) fn get<T>(&mut self, data_type: &DataType<T>) -> Held<'_, T> {
        if self.raw.is_null() {
            return Held::Empty;
        }
        // SAFETY: an open key.
        let kind = server!(RedisModule_KeyType(self.raw));
        if kind == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
            return Held::Empty;
        }
        // SAFETY: an open key.
        let held_type = server!(RedisModule_ModuleTypeGetType(self.raw));
        if kind != raw::REDISMODULE_KEYTYPE_MODULE as c_int || held_type != data_type.handle() {
            return Held::Other;
        }
        // SAFETY: an open key of a module type.
        let value = server!(RedisModule_ModuleTypeGetValue(self.raw));
        // SAFETY: a key of this data type holds a `Box<T>` made by `set` or
        // `rdb_load`/`copy` below; the server runs one command at a time,
        // so the reference is the only one while the key is borrowed.
        match unsafe { value.cast::<T>().as_mut() } {
            Some(value) => Held::Value(value),
            None => Held::Other,
        }
    }

    /// Stores `value` under the key (freeing what it held).
    pub(crate) fn set<T>(&mut self, data_type: &DataType<T>, value: T) {
        let value = Box::into_raw(Box::new(value));
        // SAFETY: a key opened for writing; the server owns the box from
        // now on and frees it with the data type's `free`.
        server!(RedisModule_ModuleTypeSetValue(
            self.raw,
            data_type.handle(),
            value.cast()
        ));
    }

    /// Deletes the key.
    pub(crate) fn delete(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: a key opened for writing.
            server!(RedisModule_DeleteKey(self.raw));
        }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: a key opened in this call, closed once.
            server!(RedisModule_CloseKey(self.raw));
        }
    }
}

// ---------------------------------------------------------------------------
// Data types.

/// What a data type's values do for the server (RDB, AOF, memory, digest,
/// COPY). Every callback's panic is caught at the boundary.
pub(crate) trait TypeCallbacks: Sized {
    /// Loads a value saved with `save` at encoding version `version`.
    ///
    /// # Errors
    ///
    /// Any damage: the value is refused and the error logged.
    fn load(source: &mut RdbSource, version: i32) -> Result<Self, Error>;
    /// Saves the value.
    ///
    /// # Errors
    ///
    /// Logged (the server's RDB writer reports its own failures).
    fn save(&self, sink: &mut RdbSink) -> Result<(), Error>;
    /// Writes the commands that rebuild the value under `key`.
    ///
    /// # Errors
    ///
    /// Logged.
    fn rewrite(&self, aof: &mut Aof) -> Result<(), Error>;
    /// Bytes held in the server's allocator.
    fn allocated(&self) -> usize;
    /// Adds bytes the value came to hold (or, negative, gave back).
    fn account(&mut self, delta: isize);
    /// Feeds the value's content to DEBUG DIGEST.
    fn digest(&self, digest: &mut Digest);
    /// A copy (COPY).
    fn duplicate(&self) -> Self;
}

/// A data type registered with the server, for values of type `T`.
pub(crate) struct DataType<T> {
    raw: AtomicPtr<raw::RedisModuleType>,
    values: PhantomData<fn() -> T>,
}

impl<T> DataType<T> {
    /// The server's handle (null before registration).
    fn handle(&self) -> *mut raw::RedisModuleType {
        self.raw.load(Ordering::Relaxed)
    }
}

impl<T: TypeCallbacks> DataType<T> {
    /// Not registered yet.
    pub(crate) const fn new() -> Self {
        Self {
            raw: AtomicPtr::new(ptr::null_mut()),
            values: PhantomData,
        }
    }

    /// Registers the type under `name` (nine characters) with encoding
    /// version `version`.
    pub(crate) fn register(&self, ctx: &LoadCtx, name: &str, version: i32) -> Result<(), String> {
        let mut methods = raw::RedisModuleTypeMethods {
            // The methods Redis 7.0 knows.
            version: 4,
            rdb_load: Some(rdb_load::<T>),
            rdb_save: Some(rdb_save::<T>),
            aof_rewrite: Some(aof_rewrite::<T>),
            mem_usage: Some(mem_usage::<T>),
            digest: Some(digest::<T>),
            free: Some(free::<T>),
            aux_load: None,
            aux_save: None,
            aux_save_triggers: 0,
            free_effort: None,
            unlink: None,
            copy: Some(copy::<T>),
            defrag: None,
            mem_usage2: None,
            free_effort2: None,
            unlink2: None,
            copy2: None,
            aux_save2: None,
        };
        let c_name = c_string(name);
        // SAFETY: the load context, a NUL-terminated name and a methods
        // table the server copies.
        let created = server!(RedisModule_CreateDataType(
            ctx.raw,
            c_name.as_ptr(),
            version,
            &raw mut methods
        ));
        if created.is_null() {
            return Err(format!("the server refused the data type {name}"));
        }
        self.raw.store(created, Ordering::Relaxed);
        Ok(())
    }
}

/// Runs a callback body, catching a panic: `fallback` then, logged.
fn guarded<R>(what: &str, fallback: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(panic) => {
            log(
                Level::Warning,
                &format!("filterlab: {what} panicked: {}", panic_text(&*panic)),
            );
            fallback
        }
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// The value the server passes to a callback.
///
/// # Safety
///
/// `value` must be a `Box<T>` this module gave the server.
unsafe fn value_of<'a, T>(value: *const c_void) -> &'a T {
    // SAFETY: the caller's contract; the server keeps the value alive for
    // the callback.
    unsafe { &*value.cast::<T>() }
}

extern "C" fn rdb_load<T: TypeCallbacks>(
    io: *mut raw::RedisModuleIO,
    version: c_int,
) -> *mut c_void {
    guarded("an RDB load", ptr::null_mut(), || {
        let mut source = RdbSource { io };
        let before = held();
        match T::load(&mut source, version) {
            Ok(value) => {
                let mut value = Box::new(value);
                value.account(held() - before);
                Box::into_raw(value).cast()
            }
            Err(err) => {
                let text = c_string(&format!("filterlab: refused a damaged value: {err}"));
                // SAFETY: the callback's I/O handle and a `%s` format.
                server!(RedisModule_LogIOError(
                    io,
                    Level::Warning.name().as_ptr(),
                    c"%s".as_ptr(),
                    text.as_ptr()
                ));
                ptr::null_mut()
            }
        }
    })
}

extern "C" fn rdb_save<T: TypeCallbacks>(io: *mut raw::RedisModuleIO, value: *mut c_void) {
    guarded("an RDB save", (), || {
        // SAFETY: the server passes a value of this type.
        let value = unsafe { value_of::<T>(value) };
        if let Err(err) = value.save(&mut RdbSink { io }) {
            log(
                Level::Warning,
                &format!("filterlab: saving a value failed: {err}"),
            );
        }
    });
}

extern "C" fn aof_rewrite<T: TypeCallbacks>(
    io: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    guarded("an AOF rewrite", (), || {
        // SAFETY: the server passes a value of this type.
        let value = unsafe { value_of::<T>(value) };
        if let Err(err) = value.rewrite(&mut Aof { io, key }) {
            log(
                Level::Warning,
                &format!("filterlab: rewriting a value failed: {err}"),
            );
        }
    });
}

extern "C" fn mem_usage<T: TypeCallbacks>(value: *const c_void) -> usize {
    // SAFETY: the server passes a value of this type.
    guarded("MEMORY USAGE", 0, || {
        unsafe { value_of::<T>(value) }.allocated()
    })
}

extern "C" fn digest<T: TypeCallbacks>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guarded("DEBUG DIGEST", (), || {
        // SAFETY: the server passes a value of this type.
        let value = unsafe { value_of::<T>(value) };
        let mut digest = Digest { md };
        value.digest(&mut digest);
        // SAFETY: the callback's digest handle.
        server!(RedisModule_DigestEndSequence(md));
    });
}

extern "C" fn free<T: TypeCallbacks>(value: *mut c_void) {
    guarded("freeing a value", (), || {
        // SAFETY: the server gives back, once, a `Box<T>` this module made.
        drop(unsafe { Box::from_raw(value.cast::<T>()) });
    });
}

extern "C" fn copy<T: TypeCallbacks>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    guarded("COPY", ptr::null_mut(), || {
        // SAFETY: the server passes a value of this type.
        let value = unsafe { value_of::<T>(value) };
        let before = held();
        let mut copy = Box::new(value.duplicate());
        copy.account(held() - before);
        Box::into_raw(copy).cast()
    })
}

/// The RDB being loaded, as a payload [`Source`].
pub(crate) struct RdbSource {
    io: *mut raw::RedisModuleIO,
}

impl RdbSource {
    fn failed(&self) -> bool {
        // SAFETY: the callback's I/O handle.
        server!(RedisModule_IsIOError(self.io)) != 0
    }
}

/// A string buffer the server allocated for a load, freed when dropped.
pub(crate) struct ServerBuffer {
    bytes: *mut c_char,
    len: usize,
}

impl AsRef<[u8]> for ServerBuffer {
    fn as_ref(&self) -> &[u8] {
        if self.bytes.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: the server's buffer of `len` bytes, alive until dropped.
        unsafe { std::slice::from_raw_parts(self.bytes.cast::<u8>(), self.len) }
    }
}

impl Drop for ServerBuffer {
    fn drop(&mut self) {
        // SAFETY: a buffer the server allocated for the module to free
        // (not one of the module's, which the module counts).
        if !self.bytes.is_null() {
            server!(RedisModule_Free(self.bytes.cast()));
        }
    }
}

impl Source for RdbSource {
    type Buffer = ServerBuffer;

    fn unsigned(&mut self) -> Result<u64, Error> {
        // SAFETY: the callback's I/O handle.
        let value = server!(RedisModule_LoadUnsigned(self.io));
        if self.failed() {
            return Err(Error::new(ErrorKind::Truncated, "the RDB payload ended"));
        }
        Ok(value)
    }

    fn buffer(&mut self) -> Result<ServerBuffer, Error> {
        let mut len = 0usize;
        // SAFETY: the callback's I/O handle and a place for the length; the
        // buffer is the module's to free (`ServerBuffer`).
        let bytes = server!(RedisModule_LoadStringBuffer(self.io, &raw mut len));
        let buffer = ServerBuffer { bytes, len };
        if self.failed() || (bytes.is_null() && len > 0) {
            return Err(Error::new(ErrorKind::Truncated, "the RDB payload ended"));
        }
        Ok(buffer)
    }
}

/// The RDB being saved, as a payload [`Sink`].
pub(crate) struct RdbSink {
    io: *mut raw::RedisModuleIO,
}

impl Sink for RdbSink {
    fn unsigned(&mut self, value: u64) {
        // SAFETY: the callback's I/O handle.
        server!(RedisModule_SaveUnsigned(self.io, value));
    }

    fn buffer(&mut self, bytes: &[u8]) {
        // SAFETY: the callback's I/O handle and `len` readable bytes.
        server!(RedisModule_SaveStringBuffer(
            self.io,
            bytes.as_ptr().cast::<c_char>(),
            bytes.len()
        ));
    }
}

/// The AOF being rewritten, for one key.
pub(crate) struct Aof {
    io: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
}

impl Aof {
    /// Emits `command key cursor chunk` (a LOADCHUNK).
    pub(crate) fn emit_chunk(&mut self, command: &CStr, cursor: u64, chunk: &[u8]) {
        // SAFETY: the callback's I/O handle and key; the format "slb" takes
        // a key string, a long long and a (pointer, length) buffer.
        server!(RedisModule_EmitAOF(
            self.io,
            command.as_ptr(),
            c"slb".as_ptr(),
            self.key,
            cursor as c_longlong,
            chunk.as_ptr().cast::<c_char>(),
            chunk.len()
        ));
    }
}

/// DEBUG DIGEST's accumulator.
pub(crate) struct Digest {
    md: *mut raw::RedisModuleDigest,
}

impl Digest {
    /// Adds bytes.
    pub(crate) fn add(&mut self, bytes: &[u8]) {
        // SAFETY: the callback's digest handle and `len` readable bytes.
        server!(RedisModule_DigestAddStringBuffer(
            self.md,
            bytes.as_ptr().cast::<c_char>(),
            bytes.len()
        ));
    }
}

// ---------------------------------------------------------------------------
// Commands and loading.

/// A command's body: writes its reply, or says why it refuses.
pub(crate) type Handler = fn(&Ctx, &Args<'_>) -> Parsed<()>;

/// Runs `handler` for a call the server made, catching a panic (answered
/// with an error and logged).
pub(crate) fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
    account: fn(&Ctx, &Args<'_>, isize),
) -> c_int {
    let argv: &[*mut raw::RedisModuleString] = match usize::try_from(argc) {
        // SAFETY: the server passes `argc` valid argument pointers, alive
        // for the call.
        Ok(len) if !argv.is_null() => unsafe { std::slice::from_raw_parts(argv, len) },
        _ => &[],
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let ctx = Ctx::new(ctx);
        let args = Args { argv };
        let before = held();
        match handler(&ctx, &args) {
            Ok(()) => {}
            Err(Refusal::Arity) => ctx.reply_wrong_arity(),
            Err(Refusal::Text(text)) => ctx.reply_error(&text),
        }
        let delta = held() - before;
        if delta != 0 {
            account(&ctx, &args, delta);
        }
    }));
    if let Err(panic) = outcome {
        let text = panic_text(&*panic);
        log(
            Level::Warning,
            &format!("filterlab: a command panicked: {text}"),
        );
        Ctx::new(ctx).reply_error(&format!("ERR filterlab internal error: {text}"));
    }
    raw::REDISMODULE_OK as c_int
}

/// The context of `RedisModule_OnLoad`.
pub(crate) struct LoadCtx {
    raw: *mut raw::RedisModuleCtx,
}

impl LoadCtx {
    /// Registers a command (key at argument 1: the key spec the server
    /// derives from it routes the command in a cluster).
    pub(crate) fn create_command(
        &self,
        name: &str,
        entry: raw::RedisModuleCmdFunc,
        flags: &str,
    ) -> Result<(), String> {
        let (c_name, c_flags) = (c_string(name), c_string(flags));
        // SAFETY: the load context, NUL-terminated strings the server
        // copies, and an entry that lives as long as the module.
        let status = server!(RedisModule_CreateCommand(
            self.raw,
            c_name.as_ptr(),
            entry,
            c_flags.as_ptr(),
            1,
            1,
            1
        ));
        if status == raw::REDISMODULE_OK as c_int {
            Ok(())
        } else {
            Err(format!("the server refused the command {name}"))
        }
    }
}

/// What `RedisModule_OnLoad` does: initialises the server's API (before
/// anything is allocated: the allocator follows it), declares that damaged
/// values are refused rather than fatal, and hands the module arguments to
/// `on_load`.
pub(crate) fn load(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    version: c_int,
    on_load: fn(&LoadCtx, &[&[u8]]) -> Result<(), String>,
) -> c_int {
    const ERR: c_int = raw::REDISMODULE_ERR as c_int;
    // SAFETY: the server's load context and a static name.
    let status = unsafe {
        raw::Export_RedisModule_Init(
            ctx,
            c"filterlab".as_ptr(),
            version,
            raw::REDISMODULE_APIVER_1 as c_int,
        )
    };
    if status == ERR {
        return ERR;
    }
    let argv: &[*mut raw::RedisModuleString] = match usize::try_from(argc) {
        // SAFETY: the server passes `argc` valid argument pointers.
        Ok(len) if !argv.is_null() => unsafe { std::slice::from_raw_parts(argv, len) },
        _ => &[],
    };
    let loaded = guarded("loading the module", Err("a panic".to_owned()), || {
        // SAFETY: the load context.
        server!(RedisModule_SetModuleOptions(
            ctx,
            raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS as c_int
        ));
        let args = Args { argv };
        let words: Vec<&[u8]> = (0..args.count()).map(|index| args.bytes(index)).collect();
        on_load(&LoadCtx { raw: ctx }, &words)
    });
    match loaded {
        Ok(()) => raw::REDISMODULE_OK as c_int,
        Err(why) => {
            log(Level::Warning, &format!("filterlab: not loaded: {why}"));
            ERR
        }
    }
}
