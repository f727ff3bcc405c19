//! The Lua scripts: one per operation, each a single atomic step on the
//! server, and the EVALSHA call that runs them (loading a script the server
//! does not have and trying again).
//!
//! Every script but the two that create a filter starts by comparing the
//! stored configuration with the caller's (ARGV[1..7], in the order of
//! [`CHECKED_FIELDS`]) and refuses to act on any difference; each bit array
//! key it touches is first checked to be a string of its configured length.
//! KEYS[1] is the configuration hash, KEYS[2..] the parts in order.

use std::sync::LazyLock;

use redis::{Cmd, ConnectionLike, FromRedisValue, RedisResult, Script, ToRedisArgs};

use crate::error::{CODE_DAMAGED, CODE_DRIFT, CODE_EXISTS, CODE_NO_FILTER};
use crate::layout::{CHECKED_FIELDS, ITEMS_FIELD, SIZING_FIELDS};

/// What every script starts with: the field lists, the sizes of the parts,
/// the configuration check, and the location of a bit offset.
const PROLOGUE: &str = r"
local NFIELDS = #FIELDS
local function fail(code, message)
  error({err = code .. ' ' .. message})
end

local num_bits = tonumber(ARGV[2])
local part_bits = tonumber(ARGV[6])
local parts = tonumber(ARGV[7])
local part_bytes = part_bits / 8
local total_bytes = math.ceil(num_bits / 64) * 8

-- Bytes of part p (counted from 0).
local function part_len(p)
  if p < parts - 1 then return part_bytes end
  return total_bytes - (parts - 1) * part_bytes
end

-- Fails unless fields names[i] of the configuration equal ARGV[i].
local function compare(names)
  local stored = redis.call('HMGET', KEYS[1], unpack(names))
  if not stored[1] and redis.call('EXISTS', KEYS[1]) == 0 then
    fail(NO_FILTER, 'no filter: ' .. KEYS[1] .. ' does not exist')
  end
  for i = 1, #names do
    if stored[i] ~= ARGV[i] then
      fail(DRIFT, KEYS[1] .. ' holds ' .. names[i] .. ' = ' .. (stored[i] or 'nothing')
        .. ', this client expects ' .. ARGV[i])
    end
  end
end

-- The key of part p, checked once per call to be a string of its length.
local checked = {}
local function part(p)
  local key = KEYS[p + 2]
  if not checked[p] then
    local len = redis.call('STRLEN', key)
    if len ~= part_len(p) then
      fail(DAMAGED, key .. ' is ' .. len .. ' bytes, the configuration says ' .. part_len(p))
    end
    checked[p] = true
  end
  return key
end

local function check_parts()
  for p = 0, parts - 1 do part(p) end
end

-- The key and the offset in it of a bit offset over the concatenated parts.
local function locate(offset)
  if parts == 1 then return part(0), offset end
  local global = tonumber(offset)
  local p = math.floor(global / part_bits)
  return part(p), global - p * part_bits
end

-- Writes the configuration (ARGV[1..#ALL_FIELDS]) and the counter.
local function write_config(items)
  local args = {}
  for i = 1, #ALL_FIELDS do
    args[#args + 1] = ALL_FIELDS[i]
    args[#args + 1] = ARGV[i]
  end
  args[#args + 1] = ITEMS
  args[#args + 1] = items
  redis.call('HSET', KEYS[1], unpack(args))
end

-- Fails when a key of the filter's layout exists.
local function refuse_existing()
  for i = 1, parts + 1 do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      fail(EXISTS, KEYS[i] .. ' exists')
    end
  end
end
";

/// Creates the filter (zeroed parts, then the configuration) unless it
/// exists; an existing one must have exactly this configuration and intact
/// parts. ARGV[8..9]: the sizing fields. Returns 1 when it created the filter.
const INIT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  compare(ALL_FIELDS)
  check_parts()
  return 0
end
refuse_existing()
for p = 0, parts - 1 do
  redis.call('SETRANGE', KEYS[p + 2], part_len(p) - 1, '\0')
end
write_config(0)
return 1
";

/// Publishes an import: KEYS[parts + 2 ..] are the uploaded parts, renamed
/// into place with the configuration written in the same step, so a filter
/// is never seen half imported. ARGV[8..9]: the sizing fields; ARGV[10]: the counter.
const IMPORT: &str = r"
refuse_existing()
for p = 0, parts - 1 do
  local upload = KEYS[parts + 2 + p]
  local len = redis.call('STRLEN', upload)
  if len ~= part_len(p) then
    fail(DAMAGED, 'import: ' .. upload .. ' is ' .. len .. ' bytes of ' .. part_len(p) .. ' (expired?)')
  end
end
for p = 0, parts - 1 do
  redis.call('RENAME', KEYS[parts + 2 + p], KEYS[p + 2])
  redis.call('PERSIST', KEYS[p + 2])
end
write_config(ARGV[#ALL_FIELDS + 1])
return 1
";

/// Sets the bits of keys given as k Redis bit offsets each (ARGV[8..]);
/// returns how many keys had a clear bit (were new), and adds that to the
/// counter. Every part the call touches is located, and so checked, before
/// the first bit is set: a refused call writes nothing (Redis does not roll
/// a failed script back).
const INSERT: &str = r"
compare(FIELDS)
local k = tonumber(ARGV[3])
local keys, offsets = {}, {}
for j = NFIELDS + 1, #ARGV do
  keys[j], offsets[j] = locate(ARGV[j])
end
local new = 0
for i = NFIELDS + 1, #ARGV, k do
  local fresh = 0
  for j = i, i + k - 1 do
    if redis.call('SETBIT', keys[j], offsets[j], 1) == 0 then fresh = 1 end
  end
  new = new + fresh
end
if new > 0 then redis.call('HINCRBY', KEYS[1], ITEMS, new) end
return new
";

/// Tests keys given as k Redis bit offsets each (ARGV[8..]), stopping at a
/// key's first clear bit; returns one byte per key, '1' or '0'.
const CONTAINS: &str = r"
compare(FIELDS)
local k = tonumber(ARGV[3])
local answers = {}
for i = NFIELDS + 1, #ARGV, k do
  local hit = '1'
  for j = i, i + k - 1 do
    local key, offset = locate(ARGV[j])
    if redis.call('GETBIT', key, offset) == 0 then
      hit = '0'
      break
    end
  end
  answers[#answers + 1] = hit
end
return table.concat(answers)
";

/// The counter, the bits set (counted when ARGV[8] is 'bits', else -1) and
/// the configuration's time to live in ms (PTTL).
const READ: &str = r"
compare(FIELDS)
check_parts()
local set_bits = -1
if ARGV[NFIELDS + 1] == 'bits' then
  set_bits = 0
  for p = 0, parts - 1 do
    set_bits = set_bits + redis.call('BITCOUNT', KEYS[p + 2])
  end
end
return {redis.call('HGET', KEYS[1], ITEMS), set_bits, redis.call('PTTL', KEYS[1])}
";

/// Bytes ARGV[9]..=ARGV[10] of part ARGV[8].
const RANGE: &str = r"
compare(FIELDS)
return redis.call('GETRANGE', part(tonumber(ARGV[NFIELDS + 1])), ARGV[NFIELDS + 2], ARGV[NFIELDS + 3])
";

/// Deletes the configuration and every part: those of this configuration,
/// or, when the configuration is gone, whatever parts remain. Returns the
/// number of keys deleted.
const DELETE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then compare(FIELDS) end
return redis.call('DEL', unpack(KEYS))
";

/// Renames the configuration and every part to the keys KEYS[parts + 2 ..]
/// (the new name's, config first), refusing when any of them exists.
const RENAME: &str = r"
compare(FIELDS)
check_parts()
local n = parts + 1
for i = 1, n do
  if redis.call('EXISTS', KEYS[n + i]) == 1 then
    fail(EXISTS, KEYS[n + i] .. ' exists')
  end
end
for i = 1, n do
  redis.call('RENAME', KEYS[i], KEYS[n + i])
end
return 1
";

/// Sets the time to live of the configuration and every part to ARGV[8]
/// ms, or removes it when ARGV[8] is 'persist'. The deadline is computed
/// once from the server clock and set with PEXPIREAT, so every key gets
/// the same one (a relative PEXPIRE per key may land a millisecond apart).
const EXPIRE: &str = r"
compare(FIELDS)
check_parts()
local ttl = ARGV[NFIELDS + 1]
local deadline
if ttl ~= 'persist' then
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  deadline = string.format('%.0f', now_ms + tonumber(ttl))
end
for i = 1, #KEYS do
  if deadline then
    redis.call('PEXPIREAT', KEYS[i], deadline)
  else
    redis.call('PERSIST', KEYS[i])
  end
end
return 1
";

/// A script's full source: the constants it shares with the Rust side
/// (field names, error codes), the prologue, then its body.
fn source(body: &str) -> String {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|name| format!("'{name}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all: Vec<&str> = CHECKED_FIELDS
        .iter()
        .chain(&SIZING_FIELDS)
        .copied()
        .collect();
    format!(
        "local FIELDS = {{{}}}\nlocal ALL_FIELDS = {{{}}}\nlocal ITEMS = '{ITEMS_FIELD}'\n\
         local DRIFT, NO_FILTER, DAMAGED, EXISTS = '{CODE_DRIFT}', '{CODE_NO_FILTER}', \
         '{CODE_DAMAGED}', '{CODE_EXISTS}'\n{PROLOGUE}{body}",
        list(&CHECKED_FIELDS),
        list(&all),
    )
}

macro_rules! scripts {
    ($($name:ident = $body:ident),* $(,)?) => {$(
        pub(crate) static $name: LazyLock<Script> = LazyLock::new(|| Script::new(&source($body)));
    )*};
}

scripts!(
    INIT_SCRIPT = INIT,
    IMPORT_SCRIPT = IMPORT,
    INSERT_SCRIPT = INSERT,
    CONTAINS_SCRIPT = CONTAINS,
    READ_SCRIPT = READ,
    RANGE_SCRIPT = RANGE,
    DELETE_SCRIPT = DELETE,
    RENAME_SCRIPT = RENAME,
    EXPIRE_SCRIPT = EXPIRE,
);

/// One script call: EVALSHA with its keys and arguments, built into one
/// command buffer (no allocation per argument, which matters for batches
/// of 65,536 bit offsets).
pub(crate) struct Call {
    script: &'static Script,
    cmd: Cmd,
}

impl Call {
    /// A call of `script` on `keys`.
    pub(crate) fn new(script: &'static LazyLock<Script>, keys: &[String]) -> Self {
        let script: &'static Script = script;
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script.get_hash()).arg(keys.len()).arg(keys);
        Self { script, cmd }
    }

    /// Appends an argument (ARGV).
    pub(crate) fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    /// Runs the call; when the server does not have the script (a restart,
    /// SCRIPT FLUSH), loads it and runs the call again.
    pub(crate) fn invoke<T: FromRedisValue>(&self, con: &mut dyn ConnectionLike) -> RedisResult<T> {
        match self.cmd.query(con) {
            Err(err)
                if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
            {
                self.script.load(con)?;
                self.cmd.query(con)
            }
            result => result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_every_field_and_code() {
        let source = source(INSERT);
        assert!(source.starts_with(
            "local FIELDS = {'version', 'num_bits', 'num_hashes', 'hasher', 'seed', 'part_bits', 'parts'}\n"
        ));
        assert!(source.contains("'capacity', 'target_fpp'}"));
        assert!(source.contains("'FLDRIFT', 'FLNOFILTER', 'FLDAMAGED', 'FLEXISTS'"));
        // ARGV[2], ARGV[3], ARGV[6], ARGV[7] in the scripts are these fields.
        assert_eq!(
            [
                CHECKED_FIELDS[1],
                CHECKED_FIELDS[2],
                CHECKED_FIELDS[5],
                CHECKED_FIELDS[6]
            ],
            ["num_bits", "num_hashes", "part_bits", "parts"]
        );
    }

    #[test]
    fn scripts_differ() {
        let hashes: std::collections::HashSet<&str> = [
            &INIT_SCRIPT,
            &IMPORT_SCRIPT,
            &INSERT_SCRIPT,
            &CONTAINS_SCRIPT,
            &READ_SCRIPT,
            &RANGE_SCRIPT,
            &DELETE_SCRIPT,
            &RENAME_SCRIPT,
            &EXPIRE_SCRIPT,
        ]
        .iter()
        .map(|script| script.get_hash())
        .collect();
        assert_eq!(hashes.len(), 9);
    }
}
