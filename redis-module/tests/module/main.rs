//! Integration tests of filterlab-redis-module: real `redis-server`
//! processes (started per test on free loopback ports, by
//! filterlab-redis's testing module) with the module loaded, driven by
//! redis-rs. Without `redis-server` on the PATH every test skips, saying
//! so once; under `FILTERLAB_REQUIRE_REDIS=1` (CI) it fails instead.

/// A private server with the module loaded (and `args` given to it), or a
/// return from the test, which then skips.
macro_rules! server_or_skip {
    ($($arg:expr),* $(,)?) => {
        match crate::start(&[$($arg),*]) {
            Some(server) => server,
            None => return,
        }
    };
}

mod accuracy;
mod cluster;
mod commands;
mod persistence;
mod replication;

use std::path::PathBuf;

use filterlab_redis::testing::Server;
use redis::{Connection, Value};

/// The module under test: `FILTERLAB_REDIS_MODULE`, else the one cargo
/// built for this test run, beside this test binary (`target/<profile>/deps/`:
/// cargo copies it up to `target/<profile>/` only when it builds the crate
/// itself, not as a test's dependency).
pub(crate) fn module_path() -> PathBuf {
    if let Some(path) = std::env::var_os("FILTERLAB_REDIS_MODULE") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("target/<profile>/deps/<test>");
    deps.join(format!(
        "{}filterlab_redis_module{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}

/// The arguments that load the module with `args`, DEBUG enabled.
pub(crate) fn module_args(args: &[&str]) -> Vec<String> {
    let path = module_path();
    assert!(
        path.exists(),
        "no module at {}: build it first",
        path.display()
    );
    let mut all = vec![
        "--enable-debug-command".to_owned(),
        "yes".to_owned(),
        "--loadmodule".to_owned(),
        path.display().to_string(),
    ];
    all.extend(args.iter().map(|&arg| arg.to_owned()));
    all
}

/// A private server (not persistent) with the module loaded with `args`.
pub(crate) fn start(args: &[&str]) -> Option<Server> {
    start_with(false, &module_args(args))
}

/// A private server, `persistent` or not, started with `args`.
pub(crate) fn start_with(persistent: bool, args: &[String]) -> Option<Server> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_private_with(persistent, &args)
}

/// Runs a command written as words split on spaces: its reply as sent (an
/// error inside an array stays there), or its error.
pub(crate) fn run(con: &mut impl redis::ConnectionLike, line: &str) -> redis::RedisResult<Value> {
    let words: Vec<&str> = line.split(' ').collect();
    match con.req_command(redis::cmd(words[0]).arg(&words[1..]))? {
        Value::ServerError(err) => Err(err.into()),
        value => Ok(value),
    }
}

/// A command's integer reply.
#[track_caller]
pub(crate) fn int(con: &mut impl redis::ConnectionLike, line: &str) -> i64 {
    match run(con, line) {
        Ok(Value::Int(value)) => value,
        other => panic!("{line}: {other:?}"),
    }
}

/// A command's array reply, its elements as integers (errors as `i64::MIN`).
#[track_caller]
pub(crate) fn ints(con: &mut impl redis::ConnectionLike, line: &str) -> Vec<i64> {
    match run(con, line) {
        Ok(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::Int(value) => value,
                Value::ServerError(_) => i64::MIN,
                other => panic!("{line}: {other:?}"),
            })
            .collect(),
        other => panic!("{line}: {other:?}"),
    }
}

/// The error a command replies, as the server wrote it ("ERR bad capacity").
#[track_caller]
pub(crate) fn error(con: &mut impl redis::ConnectionLike, line: &str) -> String {
    match run(con, line) {
        Err(err) => error_text(&err),
        Ok(value) => panic!("{line}: expected an error, got {value:?}"),
    }
}

/// A server error's text: its code and detail, as sent.
pub(crate) fn error_text(err: &redis::RedisError) -> String {
    match (err.code(), err.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_owned(),
        _ => err.to_string(),
    }
}

/// "OK" replies.
#[track_caller]
pub(crate) fn ok(con: &mut impl redis::ConnectionLike, line: &str) {
    match run(con, line) {
        Ok(Value::Okay) => {}
        other => panic!("{line}: {other:?}"),
    }
}

/// A connection to `server`.
pub(crate) fn connect(server: &Server) -> Connection {
    server.connection()
}

/// Items `prefix0 … prefix{n-1}` as bytes.
pub(crate) fn items(prefix: &str, range: std::ops::Range<u64>) -> Vec<Vec<u8>> {
    range.map(|i| format!("{prefix}{i}").into_bytes()).collect()
}

/// Inserts `items` with `command` (BF.MADD, CF.INSERT …) in batches of 1,000;
/// the replies, flattened.
pub(crate) fn insert_all(
    con: &mut impl redis::ConnectionLike,
    command: &[&str],
    items: &[Vec<u8>],
) -> Vec<Value> {
    let mut replies = Vec::with_capacity(items.len());
    for batch in items.chunks(1000) {
        let mut cmd = redis::cmd(command[0]);
        cmd.arg(&command[1..]).arg(batch);
        let Value::Array(answers) = cmd.query(con).expect("an insert") else {
            panic!("{command:?}: not an array");
        };
        replies.extend(answers);
    }
    replies
}

/// The answers of `command` (BF.MEXISTS, CF.MEXISTS) for `items`, in
/// batches of 1,000.
pub(crate) fn lookup_all(
    con: &mut impl redis::ConnectionLike,
    command: &str,
    key: &str,
    items: &[Vec<u8>],
) -> Vec<bool> {
    let mut found = Vec::with_capacity(items.len());
    for batch in items.chunks(1000) {
        let answers: Vec<i64> = redis::cmd(command)
            .arg(key)
            .arg(batch)
            .query(con)
            .expect("a lookup");
        found.extend(answers.into_iter().map(|answer| answer == 1));
    }
    found
}
