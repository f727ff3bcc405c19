//! Integration tests of filterlab-redis against a real `redis-server`
//! (started per test on a free loopback port, or the server
//! `FILTERLAB_REDIS_URL` names): properties against a local
//! `filterlab_bloom::BloomFilter`, accuracy against the exact theory,
//! round trips per batch, concurrency across threads and processes, faults,
//! and the lifecycle of the keys.

/// The test's server, or a return from the test, which then skips (see
/// `Server::start`: it says so once, and fails under
/// `FILTERLAB_REQUIRE_REDIS=1`).
macro_rules! server_or_skip {
    () => {
        match Server::start() {
            Some(server) => server,
            None => return,
        }
    };
}

mod accuracy;
mod batches;
mod cluster;
mod concurrency;
mod faults;
mod hashers;
mod lifecycle;
mod properties;
mod sharded;

use std::fmt::Write as _;

use filterlab_core::theory::wilson_interval;
use filterlab_redis::{BloomFilter, ErrorKind, Key, RedisBloomBuilder, RedisBloomFilter};
use redis::Connection;

pub(crate) use filterlab_redis::testing::{Server, unique};

/// Runs the raw Redis command `words` (a name and its arguments), as a
/// test does to tamper with a filter's keys behind its back.
#[track_caller]
pub(crate) fn tamper(con: &mut impl redis::ConnectionLike, words: &[&str]) {
    redis::cmd(words[0]).arg(&words[1..]).exec(con).unwrap();
}

/// Every key of filter `name` on the server (SCAN over its hash tag), sorted.
pub(crate) fn keys_of(con: &mut Connection, name: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("SCAN")
        .cursor_arg(0)
        .arg("MATCH")
        .arg(format!("{{{name}}}*"))
        .clone()
        .iter(con)
        .expect("SCAN")
        .collect::<Result<_, _>>()
        .expect("SCAN");
    keys.sort();
    keys
}

/// The layout's key names of a filter: config, then `parts` parts.
pub(crate) fn layout_keys(name: &str, parts: u64) -> Vec<String> {
    let mut keys = vec![format!("{{{name}}}:config")];
    keys.extend((0..parts).map(|part| format!("{{{name}}}:bits:{part}")));
    keys.sort();
    keys
}

/// Asserts that `result` failed with `kind`.
#[track_caller]
pub(crate) fn assert_kind<T: std::fmt::Debug>(
    result: Result<T, filterlab_redis::Error>,
    kind: ErrorKind,
) {
    match result {
        Err(err) => assert_eq!(err.kind(), kind, "{err}"),
        Ok(value) => panic!("expected a {kind:?} error, got Ok({value:?})"),
    }
}

/// A fresh filter on `server` sized for `items` at `fpp` with `seed`.
pub(crate) fn create(server: &Server, items: u64, fpp: f64, seed: u64) -> RedisBloomFilter {
    let bloom = BloomFilter::with_fpp(fpp).expected_items(items).seed(seed);
    let (filter, created) = RedisBloomFilter::builder(bloom)
        .try_init(&server.client(), &unique("filter"))
        .expect("try_init");
    assert!(created);
    filter
}

/// A builder for a filter sized for `items` at 1% in parts of `part_bits` bits.
pub(crate) fn split(items: u64, part_bits: u64) -> RedisBloomBuilder {
    RedisBloomFilter::builder(BloomFilter::with_fpp(0.01).expected_items(items))
        .part_bits(part_bits)
}

/// Whether the shared filter holds every one of `keys` (no false negative).
#[track_caller]
pub(crate) fn assert_all_contained<I>(filter: &mut RedisBloomFilter, keys: I)
where
    I: IntoIterator,
    I::Item: Key,
{
    let found = filter.contains_many(keys).expect("contains_many");
    let missing = found.iter().filter(|&&hit| !hit).count();
    assert_eq!(missing, 0, "{missing} of {} keys missing", found.len());
}

/// A private server (see [`Server::start_private`]), or `None` with a note
/// when the tests run against the user's (`FILTERLAB_REDIS_URL`): `why`
/// says what needs a private one. (Without any server, `start_private`
/// has said why already.)
pub(crate) fn private_server(why: &str, persistent: bool) -> Option<Server> {
    let server = Server::start_private(persistent);
    if server.is_none() && std::env::var_os(filterlab_redis::testing::URL_VARIABLE).is_some() {
        eprintln!(
            "skipped: {why} needs a private server ({} is set)",
            filterlab_redis::testing::URL_VARIABLE
        );
    }
    server
}

/// Runs `step(i)` on `clients` threads released together (a barrier), and
/// returns what each returned, in order: for races on one name.
pub(crate) fn race<T: Send>(clients: usize, step: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let barrier = std::sync::Barrier::new(clients);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let (barrier, step) = (&barrier, &step);
                scope.spawn(move || {
                    barrier.wait();
                    step(i)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    })
}

/// `rounds` rounds of `clients` clients racing to create the filter
/// `race-{round}` (a unique name) with `init`, which returns a handle and
/// whether this client created it; each client then inserts its number
/// with `insert`. Exactly one client creates the filter each round;
/// `check(name)` then inspects the round's filter.
pub(crate) fn init_race<H>(
    clients: usize,
    rounds: usize,
    init: impl Fn(&str) -> (H, bool) + Sync,
    insert: impl Fn(&mut H, u64) -> Result<bool, filterlab_redis::Error> + Sync,
    mut check: impl FnMut(&str),
) {
    for round in 0..rounds {
        let name = unique(&format!("race-{round}"));
        let created = race(clients, |i| {
            let (mut handle, created) = init(&name);
            insert(&mut handle, i as u64).unwrap();
            created
        });
        assert_eq!(
            created.iter().filter(|&&created| created).count(),
            1,
            "round {round}"
        );
        check(&name);
    }
}

/// The environment through which a parent test tells a writer child (see
/// [`writer_child`]) a server's URL, the filter's name and its number.
const CHILD_URL: &str = "FILTERLAB_REDIS_CHILD_URL";
const CHILD_NAME: &str = "FILTERLAB_REDIS_CHILD_NAME";
const CHILD_WRITER: &str = "FILTERLAB_REDIS_CHILD_WRITER";

/// The environment of writer child `writer` on the filter `name` at `url`,
/// for [`Children::spawn`].
pub(crate) fn writer_env(url: String, name: &str, writer: u64) -> Vec<(&'static str, String)> {
    vec![
        (CHILD_URL, url),
        (CHILD_NAME, name.to_owned()),
        (CHILD_WRITER, writer.to_string()),
    ]
}

/// The `each` keys (under `seed`) of writer `writer`: disjoint from every
/// other writer's.
pub(crate) fn disjoint_keys(seed: u64, each: u64, writer: u64) -> Vec<u64> {
    (writer * each..(writer + 1) * each)
        .map(|i| filterlab_core::keys::insert_key(seed, i))
        .collect()
}

/// A writer child's side of [`Children`]: opens the filter with
/// `open(url, name)` from the [`writer_env`] its parent set, then follows
/// [`child_protocol`] with `work(filter, writer)`. Run on its own (no such
/// environment), it says so and does nothing.
pub(crate) fn writer_child<T>(
    open: impl FnOnce(&str, &str) -> T,
    work: impl FnOnce(T, u64) -> u64,
) {
    let (Ok(url), Ok(name), Ok(writer)) = (
        std::env::var(CHILD_URL),
        std::env::var(CHILD_NAME),
        std::env::var(CHILD_WRITER),
    ) else {
        eprintln!("a writer child runs only as a child process of its test (see its #[ignore])");
        return;
    };
    let writer = writer.parse().unwrap();
    child_protocol(|| open(&url, &name), |filter| work(filter, writer));
}

/// Retries `call` every `pause` while it fails with a connection error,
/// for up to `within`; panics with `what` and the error after that, or at
/// any other error.
pub(crate) fn until_reconnected<T>(
    within: std::time::Duration,
    pause: std::time::Duration,
    what: &str,
    mut call: impl FnMut() -> Result<T, filterlab_redis::Error>,
) -> T {
    let deadline = std::time::Instant::now() + within;
    loop {
        match call() {
            Ok(value) => return value,
            Err(err) if std::time::Instant::now() < deadline => {
                assert_eq!(err.kind(), ErrorKind::Connection, "{err}");
                std::thread::sleep(pause);
            }
            Err(err) => panic!("{what}: {err}"),
        }
    }
}

/// Asserts that the 99.9% Wilson interval of `false_positives` out of
/// `queries` holds each prediction; `what` describes the filter. Prints the
/// line it judged.
#[track_caller]
pub(crate) fn assert_fpp_within(
    false_positives: u64,
    queries: u64,
    what: &str,
    predictions: &[(&str, f64)],
) {
    let (low, high) = wilson_interval(false_positives, queries, 0.999);
    let mut context = format!("{what}: {false_positives}/{queries} in [{low:.4e}, {high:.4e}]");
    for (name, predicted) in predictions {
        write!(context, ", {name} {predicted:.4e}").unwrap();
    }
    println!("{context}");
    for (name, predicted) in predictions {
        assert!(
            (low..=high).contains(predicted),
            "{name} outside the interval: {context}"
        );
    }
}

/// Inserts `items` keys of `seed` into `filter` with `insert`, checks with
/// `contains` that every one is found, and returns how many of `queries`
/// never-inserted keys `contains` reports present.
#[track_caller]
pub(crate) fn false_positives<F>(
    filter: &mut F,
    (items, queries, seed): (u64, u64, u64),
    insert: fn(&mut F, &[u64]) -> usize,
    contains: fn(&mut F, &[u64]) -> Vec<bool>,
) -> u64 {
    use filterlab_core::keys::{insert_key, query_key};
    let inserted: Vec<u64> = (0..items).map(|i| insert_key(seed, i)).collect();
    insert(filter, &inserted);
    let missing = contains(filter, &inserted)
        .iter()
        .filter(|&&hit| !hit)
        .count();
    assert_eq!(missing, 0, "{missing} false negatives");
    let absent: Vec<u64> = (0..queries).map(|i| query_key(seed, i)).collect();
    contains(filter, &absent).iter().filter(|&&hit| hit).count() as u64
}

/// Child processes of this test binary, each running one ignored test
/// (`--exact --ignored`) that follows [`child_protocol`]: for writers that
/// must be other processes.
pub(crate) struct Children {
    children: Vec<std::process::Child>,
    outputs: Vec<std::io::Lines<std::io::BufReader<std::process::ChildStdout>>>,
}

/// What a child prints when it is ready, and before its result (libtest may
/// print on the same line: the parent looks for these inside lines).
const CHILD_READY: &str = "filterlab-child-ready";
const CHILD_RESULT: &str = "filterlab-child-result=";

impl Children {
    /// Starts one child per environment in `envs`, each running `test`, and
    /// waits until every one is ready.
    pub(crate) fn spawn(test: &str, envs: &[Vec<(&str, String)>]) -> Self {
        use std::io::BufRead;
        let binary = std::env::current_exe().unwrap();
        let mut children: Vec<_> = envs
            .iter()
            .map(|env| {
                std::process::Command::new(&binary)
                    .args([test, "--exact", "--ignored", "--nocapture"])
                    .args(["--test-threads", "1"])
                    .envs(env.iter().map(|(name, value)| (name, value)))
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut outputs: Vec<_> = children
            .iter_mut()
            .map(|child| std::io::BufReader::new(child.stdout.take().unwrap()).lines())
            .collect();
        for output in &mut outputs {
            let ready =
                output.find(|line| line.as_deref().is_ok_and(|line| line.contains(CHILD_READY)));
            assert!(ready.is_some(), "a child did not get ready");
        }
        Self { children, outputs }
    }

    /// Lets every child start its work.
    pub(crate) fn go(&mut self) {
        use std::io::Write;
        for child in &mut self.children {
            child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        }
    }

    /// The result each child printed, once all have exited successfully.
    pub(crate) fn results(mut self) -> Vec<u64> {
        let results = self
            .outputs
            .iter_mut()
            .map(|output| {
                output
                    .find_map(|line| {
                        line.ok()?
                            .split(CHILD_RESULT)
                            .nth(1)?
                            .trim()
                            .parse::<u64>()
                            .ok()
                    })
                    .expect("a child reports its result")
            })
            .collect();
        for child in &mut self.children {
            assert!(child.wait().unwrap().success());
        }
        results
    }
}

/// The child's side of [`Children`]: says it is ready once `prepare` has
/// run, waits for the parent's go, runs `work` and prints its result.
pub(crate) fn child_protocol<T>(prepare: impl FnOnce() -> T, work: impl FnOnce(T) -> u64) {
    use std::io::Write;
    let prepared = prepare();
    println!("{CHILD_READY}");
    std::io::stdout().flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let result = work(prepared);
    println!("{CHILD_RESULT}{result}");
}
