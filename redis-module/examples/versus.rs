//! Measures this module beside another module serving BF.* and CF.*
//! (RedisBloom, built from its source: `shared/tools/redisbloom/build`),
//! each loaded into a redis-server of its own, with the same client code,
//! in alternating rounds:
//!
//! - **speed**: keys per second and the server's CPU per key (INFO cpu,
//!   which a busy machine disturbs less than wall time) for batched inserts
//!   and lookups (BF.MADD / BF.MEXISTS, CF.INSERT / CF.MEXISTS, `--batch`
//!   keys a command) and one key per call (BF.ADD / BF.EXISTS, CF.ADD /
//!   CF.EXISTS), 16-byte keys. One-key calls are sent twice: each waiting
//!   for its reply (`--per-key` keys; the round trip bounds them), and
//!   `--pipeline` calls written before their replies are read
//!   (`--pipelined-keys` keys; still one key and one reply a command, but
//!   the server's work bounds them, not the client's wait);
//! - **memory**: the bytes DEL releases for a filter reserved at the same
//!   capacity and error rate and filled to it (`--memory`; at `--keys`, or
//!   at each capacity of `--memory-at 100,1000,…`);
//! - **growth**: BF and CF grown from 1,000 keys to `--growth-to` (10^6)
//!   with EXPANSION 2, the FPP measured at every doubling and at the end,
//!   and the bits per key at the end (`--growth`);
//! - **instructions**: the server's instructions per key under callgrind,
//!   each step counted alone (`--callgrind N`, N keys a step; needs
//!   valgrind).
//!
//! ```text
//! cargo build --release -p filterlab-redis-module
//! cargo run --release -p filterlab-redis-module --example versus -- \
//!     --module filterlab=target/release/libfilterlab_redis_module.so \
//!     --module redisbloom=/tmp/rb/redisbloom.so \
//!     --keys 300000 --rounds 3 [--memory] [--growth] [--callgrind 20000]
//! ```
//!
//! `--no-speed` leaves the speed rounds out (for memory, growth or
//! instruction counts alone).
//!
//! A module is `NAME=PATH` or `NAME=PATH:ARG,ARG,…` (its module arguments,
//! e.g. `filterlab-standard=…so:bf-layers,standard`). Wall-clock figures
//! on a shared machine are indicative: compare the same round's ratios.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use filterlab_core::mix64;
use filterlab_redis::testing::Server;
use redis::Connection;

/// A module under measurement.
struct Module {
    name: String,
    path: PathBuf,
    args: Vec<String>,
}

impl Module {
    fn parse(spec: &str) -> Result<Self, String> {
        let (name, rest) = spec
            .split_once('=')
            .ok_or_else(|| format!("--module NAME=PATH[:ARG,…], got {spec}"))?;
        let (path, args) = rest.split_once(':').unwrap_or((rest, ""));
        let path = std::fs::canonicalize(path).map_err(|err| format!("{path}: {err}"))?;
        Ok(Self {
            name: name.to_owned(),
            path,
            args: args
                .split(',')
                .filter(|arg| !arg.is_empty())
                .map(str::to_owned)
                .collect(),
        })
    }

    /// The server's arguments that load it.
    fn server_args(&self) -> Vec<String> {
        let mut args = vec!["--loadmodule".to_owned(), self.path.display().to_string()];
        args.extend(self.args.iter().cloned());
        args
    }

    fn start(&self, wrapper: &[&str]) -> Server {
        let args = self.server_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::private_wrapped(wrapper, false, &args)
            .unwrap_or_else(|err| panic!("{}: no server: {err}", self.name))
    }
}

/// What each round sends.
#[derive(Clone, Copy, Debug)]
struct Load {
    keys: u64,
    per_key: u64,
    /// Keys sent one a call in pipelines, and the calls a pipeline holds.
    pipelined: u64,
    pipeline: usize,
    batch: usize,
    fpp: f64,
}

struct Settings {
    modules: Vec<Module>,
    load: Load,
    rounds: usize,
    memory: bool,
    /// Capacities of the memory table (`--keys` unless given).
    memory_at: Vec<u64>,
    speed: bool,
    growth: bool,
    growth_to: u64,
    callgrind: Option<u64>,
}

fn settings() -> Result<Settings, String> {
    let mut settings = Settings {
        modules: Vec::new(),
        load: Load {
            keys: 300_000,
            per_key: 20_000,
            pipelined: 200_000,
            pipeline: 100,
            batch: 1000,
            fpp: 0.01,
        },
        rounds: 3,
        memory: false,
        memory_at: Vec::new(),
        speed: true,
        growth: false,
        growth_to: 1_000_000,
        callgrind: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| text.parse::<f64>().map_err(|err| format!("{flag}: {err}"));
        match flag.as_str() {
            "--module" => settings.modules.push(Module::parse(&value()?)?),
            "--keys" => settings.load.keys = number(value()?)? as u64,
            "--per-key" => settings.load.per_key = number(value()?)? as u64,
            "--pipelined-keys" => settings.load.pipelined = number(value()?)? as u64,
            "--pipeline" => settings.load.pipeline = (number(value()?)? as usize).max(1),
            "--batch" => settings.load.batch = number(value()?)? as usize,
            "--rounds" => settings.rounds = number(value()?)? as usize,
            "--fpp" => settings.load.fpp = number(value()?)?,
            "--memory" => settings.memory = true,
            "--memory-at" => {
                settings.memory = true;
                for capacity in value()?.split(',') {
                    settings.memory_at.push(number(capacity.to_owned())? as u64);
                }
            }
            "--no-speed" => settings.speed = false,
            "--growth" => settings.growth = true,
            "--growth-to" => settings.growth_to = number(value()?)? as u64,
            "--callgrind" => settings.callgrind = Some(number(value()?)? as u64),
            "--help" | "-h" => {
                return Err("see the header of redis-module/examples/versus.rs".to_owned());
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if settings.modules.is_empty() {
        return Err("give at least one --module NAME=PATH".to_owned());
    }
    Ok(settings)
}

/// A run of keys `start..start + count` of stream `stream`, made as
/// they are sent (10^7 keys would not fit in memory as vectors).
#[derive(Clone, Copy, Debug)]
struct Keys {
    stream: u64,
    start: u64,
    count: u64,
}

impl Keys {
    fn new(stream: u64, start: u64, end: u64) -> Self {
        Self {
            stream,
            start,
            count: end.saturating_sub(start),
        }
    }

    fn len(self) -> u64 {
        self.count
    }

    fn prefix(self, count: u64) -> Self {
        Self {
            count: count.min(self.count),
            ..self
        }
    }

    /// Key `index`: 16 hex characters (16 bytes).
    fn key(self, index: u64) -> [u8; 16] {
        let value = mix64(self.stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index);
        let mut key = [0u8; 16];
        key.copy_from_slice(format!("{value:016x}").as_bytes());
        key
    }

    /// Hands the keys to `send` in chunks of `size`.
    fn chunks(self, size: usize, mut send: impl FnMut(&[&[u8]])) {
        let mut buffer: Vec<[u8; 16]> = Vec::with_capacity(size);
        let mut at = self.start;
        let end = self.start + self.count;
        while at < end {
            let next = (at + size as u64).min(end);
            buffer.clear();
            buffer.extend((at..next).map(|index| self.key(index)));
            let slices: Vec<&[u8]> = buffer.iter().map(<[u8; 16]>::as_slice).collect();
            send(&slices);
            at = next;
        }
    }
}

/// The streams keys are drawn from: inserted, never inserted.
const INSERTED: u64 = 1;
const ABSENT: u64 = 2;

/// One measured step: a family's commands over some keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    BatchedInsert,
    BatchedPresent,
    BatchedAbsent,
    OneKeyInsert,
    OneKeyPresent,
    PipelinedInsert,
    PipelinedPresent,
}

impl Step {
    const ALL: [Self; 7] = [
        Self::BatchedInsert,
        Self::BatchedPresent,
        Self::BatchedAbsent,
        Self::OneKeyInsert,
        Self::OneKeyPresent,
        Self::PipelinedInsert,
        Self::PipelinedPresent,
    ];

    fn describe(self, family: Family) -> String {
        let (add, madd, exists, mexists) = match family {
            Family::Bloom => ("BF.ADD", "BF.MADD", "BF.EXISTS", "BF.MEXISTS"),
            Family::Cuckoo => ("CF.ADD", "CF.INSERT", "CF.EXISTS", "CF.MEXISTS"),
        };
        match self {
            Self::BatchedInsert => format!("{madd}, batched"),
            Self::BatchedPresent => format!("{mexists}, present keys"),
            Self::BatchedAbsent => format!("{mexists}, absent keys"),
            Self::OneKeyInsert => format!("{add}, one key a call"),
            Self::OneKeyPresent => format!("{exists}, one key a call"),
            Self::PipelinedInsert => format!("{add}, one key a call, pipelined"),
            Self::PipelinedPresent => format!("{exists}, one key a call, pipelined"),
        }
    }

    fn pipelined(self) -> bool {
        matches!(self, Self::PipelinedInsert | Self::PipelinedPresent)
    }

    fn batched(self) -> bool {
        matches!(
            self,
            Self::BatchedInsert | Self::BatchedPresent | Self::BatchedAbsent
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Bloom,
    Cuckoo,
}

impl Family {
    fn reserve(self, key: &str, fpp: f64, capacity: u64) -> redis::Cmd {
        match self {
            Self::Bloom => redis::cmd("BF.RESERVE")
                .arg(key)
                .arg(fpp)
                .arg(capacity)
                .clone(),
            Self::Cuckoo => redis::cmd("CF.RESERVE").arg(key).arg(capacity).clone(),
        }
    }

    /// Sends `step`'s commands for `keys` to filter `name`; how many
    /// answers were 1 (new, or present).
    fn run(self, con: &mut Connection, step: Step, name: &str, keys: Keys, load: Load) -> u64 {
        let ones = |answers: Vec<i64>| answers.iter().filter(|&&answer| answer == 1).count() as u64;
        let mut total = 0;
        if step.batched() {
            keys.chunks(load.batch, |chunk| {
                let mut cmd = match (self, step) {
                    (Self::Bloom, Step::BatchedInsert) => redis::cmd("BF.MADD").arg(name).clone(),
                    (Self::Cuckoo, Step::BatchedInsert) => {
                        redis::cmd("CF.INSERT").arg(name).arg("ITEMS").clone()
                    }
                    (Self::Bloom, _) => redis::cmd("BF.MEXISTS").arg(name).clone(),
                    (Self::Cuckoo, _) => redis::cmd("CF.MEXISTS").arg(name).clone(),
                };
                total += ones(cmd.arg(chunk).query(con).expect("a batched command"));
            });
        } else {
            let insert = matches!(step, Step::OneKeyInsert | Step::PipelinedInsert);
            let command = match (self, insert) {
                (Self::Bloom, true) => "BF.ADD",
                (Self::Cuckoo, true) => "CF.ADD",
                (Self::Bloom, false) => "BF.EXISTS",
                (Self::Cuckoo, false) => "CF.EXISTS",
            };
            let calls = if step.pipelined() { load.pipeline } else { 1 };
            keys.chunks(calls, |chunk| {
                let mut pipe = redis::pipe();
                for key in chunk {
                    pipe.cmd(command).arg(name).arg(*key);
                }
                total += ones(pipe.query(con).expect("one-key commands"));
            });
        }
        total
    }
}

/// What one step took on one server.
#[derive(Clone, Copy, Debug)]
struct Taken {
    keys: u64,
    seconds: f64,
    cpu_seconds: f64,
}

impl Taken {
    fn keys_per_second(self) -> f64 {
        self.keys as f64 / self.seconds
    }

    fn cpu_micros_per_key(self) -> f64 {
        self.cpu_seconds * 1e6 / self.keys as f64
    }
}

/// The keys `step` sends, and the filter it sends them to.
fn workload(step: Step, load: Load) -> (Keys, &'static str) {
    let inserted = Keys::new(INSERTED, 0, load.keys);
    match step {
        Step::BatchedInsert | Step::BatchedPresent => (inserted, "batched"),
        Step::BatchedAbsent => (Keys::new(ABSENT, 0, load.keys), "batched"),
        Step::OneKeyInsert | Step::OneKeyPresent => (inserted.prefix(load.per_key), "one-key"),
        Step::PipelinedInsert | Step::PipelinedPresent => {
            (inserted.prefix(load.pipelined), "pipelined")
        }
    }
}

/// Runs every step of `family` once on `server`, measuring each with `measure`.
fn run_steps(
    con: &mut Connection,
    family: Family,
    load: Load,
    mut measure: impl FnMut(Step, &mut dyn FnMut() -> u64),
) {
    let _: () = redis::cmd("FLUSHALL").query(con).expect("FLUSHALL");
    for name in ["batched", "one-key", "pipelined"] {
        let _: () = family
            .reserve(name, load.fpp, load.keys)
            .query(con)
            .expect("RESERVE");
    }
    for step in Step::ALL {
        let (keys, name) = workload(step, load);
        let mut body = || family.run(con, step, name, keys, load);
        measure(step, &mut body);
    }
}

fn cpu_seconds(server: &Server) -> f64 {
    server.cpu_seconds().expect("INFO cpu")
}

/// Low–high of a series, in a cell.
fn range(values: &[f64], digits: usize) -> String {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{low:.digits$}–{high:.digits$}")
}

fn speed(settings: &Settings) -> String {
    let servers: Vec<Server> = settings
        .modules
        .iter()
        .map(|module| module.start(&[]))
        .collect();
    let mut taken: BTreeMap<(Family, Step, usize), Vec<Taken>> = BTreeMap::new();
    for round in 0..settings.rounds {
        for family in [Family::Bloom, Family::Cuckoo] {
            for (index, server) in servers.iter().enumerate() {
                let mut con = server.connection();
                run_steps(&mut con, family, settings.load, |step, body| {
                    let keys = workload(step, settings.load).0.len();
                    let cpu = cpu_seconds(server);
                    let start = Instant::now();
                    let ones = body();
                    let seconds = start.elapsed().as_secs_f64();
                    let cpu_seconds = cpu_seconds(server) - cpu;
                    if matches!(
                        step,
                        Step::BatchedPresent | Step::OneKeyPresent | Step::PipelinedPresent
                    ) {
                        assert_eq!(
                            ones, keys,
                            "{}: a false negative",
                            settings.modules[index].name
                        );
                    }
                    taken.entry((family, step, index)).or_default().push(Taken {
                        keys,
                        seconds,
                        cpu_seconds,
                    });
                });
            }
        }
        eprintln!("round {} of {} done", round + 1, settings.rounds);
    }
    let mut out = String::new();
    let names: Vec<&str> = settings
        .modules
        .iter()
        .map(|module| module.name.as_str())
        .collect();
    let load = settings.load;
    let _ = writeln!(
        out,
        "### Speed: {} keys batched ({} a command), {} one key a call, {} one key a call pipelined ({} calls a pipeline), p = {}, {} rounds\n",
        load.keys,
        load.batch,
        load.per_key.min(load.keys),
        load.pipelined.min(load.keys),
        load.pipeline,
        load.fpp,
        settings.rounds
    );
    let mut header = "| step |".to_owned();
    for name in &names {
        let _ = write!(header, " {name} keys/s | {name} CPU µs/key |");
    }
    if names.len() > 1 {
        let _ = write!(
            header,
            " keys/s ratio {0}/{1} | CPU ratio {0}/{1} |",
            names[0], names[1]
        );
    }
    let _ = writeln!(out, "{header}");
    let _ = writeln!(
        out,
        "|{}",
        "---|".repeat(1 + names.len() * 2 + if names.len() > 1 { 2 } else { 0 })
    );
    for family in [Family::Bloom, Family::Cuckoo] {
        for step in Step::ALL {
            let _ = write!(out, "| {} |", step.describe(family));
            for index in 0..names.len() {
                let rows = &taken[&(family, step, index)];
                let speed: Vec<f64> = rows.iter().map(|row| row.keys_per_second()).collect();
                let cpu: Vec<f64> = rows.iter().map(|row| row.cpu_micros_per_key()).collect();
                let _ = write!(out, " {} | {} |", range(&speed, 0), range(&cpu, 3));
            }
            if names.len() > 1 {
                let (ours, theirs) = (&taken[&(family, step, 0)], &taken[&(family, step, 1)]);
                let speed: Vec<f64> = ours
                    .iter()
                    .zip(theirs)
                    .map(|(a, b)| a.keys_per_second() / b.keys_per_second())
                    .collect();
                let cpu: Vec<f64> = ours
                    .iter()
                    .zip(theirs)
                    .map(|(a, b)| a.cpu_micros_per_key() / b.cpu_micros_per_key())
                    .collect();
                let _ = write!(out, " {} | {} |", range(&speed, 2), range(&cpu, 2));
            }
            let _ = writeln!(out);
        }
    }
    out
}

/// The server's instructions per key for each step, under callgrind
/// (each step's count dumped alone with `callgrind_control --dump`).
fn instructions(settings: &Settings, count: u64) -> String {
    let load = Load {
        keys: count,
        per_key: (count / 10).max(1),
        pipelined: (count / 10).max(1),
        ..settings.load
    };
    let mut out = format!(
        "### Server instructions per key under callgrind: {count} keys batched, {} one key a call (waiting, and {} a pipeline)\n\n| step |",
        load.per_key, load.pipeline
    );
    let mut counts: BTreeMap<(Family, Step), Vec<f64>> = BTreeMap::new();
    let modules = &settings.modules;
    for module in modules {
        let _ = write!(out, " {} |", module.name);
        let dir = std::env::temp_dir().join(format!(
            "versus-callgrind-{}-{}",
            module.name,
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for callgrind");
        let file = dir.join("callgrind.out");
        let out_file = format!("--callgrind-out-file={}", file.display());
        let server = module.start(&["valgrind", "--tool=callgrind", &out_file]);
        let pid = server.pid().expect("a private server").to_string();
        let mut dumps = 0;
        let mut dump = || -> f64 {
            let status = std::process::Command::new("callgrind_control")
                .args(["--dump", &pid])
                .stdout(std::process::Stdio::null())
                .status()
                .expect("callgrind_control");
            assert!(status.success(), "callgrind_control --dump failed");
            dumps += 1;
            let text =
                std::fs::read_to_string(format!("{}.{dumps}", file.display())).unwrap_or_default();
            text.lines()
                .find_map(|line| line.strip_prefix("totals: "))
                .and_then(|total| total.split_whitespace().next()?.parse().ok())
                .unwrap_or(f64::NAN)
        };
        for family in [Family::Bloom, Family::Cuckoo] {
            let mut con = server.connection();
            run_steps(&mut con, family, load, |step, body| {
                let keys = workload(step, load).0.len() as f64;
                dump();
                body();
                counts
                    .entry((family, step))
                    .or_default()
                    .push(dump() / keys);
            });
        }
        drop(server);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = writeln!(out, "\n|{}", "---|".repeat(1 + modules.len()));
    for ((family, step), per_key) in counts {
        let _ = write!(out, "| {} |", step.describe(family));
        for value in per_key {
            let _ = write!(out, " {value:.0} |");
        }
        let _ = writeln!(out);
    }
    out
}

/// `used_memory` from an INFO memory reply.
fn used_memory(info: &str) -> i64 {
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|value| value.trim().parse().ok())
        .expect("used_memory")
}

/// The bytes DEL releases for `key`, measured in one transaction.
fn released(con: &mut Connection, key: &str) -> i64 {
    let (before, _, after): (String, i64, String) = redis::pipe()
        .atomic()
        .cmd("INFO")
        .arg("memory")
        .cmd("DEL")
        .arg(key)
        .cmd("INFO")
        .arg("memory")
        .query(con)
        .expect("INFO, DEL, INFO");
    used_memory(&before) - used_memory(&after)
}

fn memory(settings: &Settings) -> String {
    let capacities = if settings.memory_at.is_empty() {
        vec![settings.load.keys]
    } else {
        settings.memory_at.clone()
    };
    let mut out = format!(
        "### Memory released by DEL: reserved at p = {} and filled to the capacity\n\n| capacity | filter |",
        settings.load.fpp
    );
    let mut rows: BTreeMap<(u64, &str), Vec<i64>> = BTreeMap::new();
    for module in &settings.modules {
        let _ = write!(out, " {} bytes | bits/key |", module.name);
        let server = module.start(&[]);
        let mut con = server.connection();
        // The server's first transaction allocates for itself once.
        let _: () = Family::Bloom
            .reserve("warm", 0.01, 100)
            .query(&mut con)
            .expect("RESERVE");
        released(&mut con, "warm");
        for &capacity in &capacities {
            let inserted = Keys::new(INSERTED, 0, capacity);
            for (label, family, extra) in [
                ("BF.RESERVE (scaling)", Family::Bloom, None),
                ("BF.RESERVE … NONSCALING", Family::Bloom, Some("NONSCALING")),
                ("CF.RESERVE", Family::Cuckoo, None),
            ] {
                let mut reserve = family.reserve("m", settings.load.fpp, capacity);
                if let Some(extra) = extra {
                    reserve.arg(extra);
                }
                let _: () = reserve.query(&mut con).expect("RESERVE");
                family.run(&mut con, Step::BatchedInsert, "m", inserted, settings.load);
                let bytes = released(&mut con, "m");
                rows.entry((capacity, label)).or_default().push(bytes);
            }
        }
    }
    let two = settings.modules.len() > 1;
    if two {
        let _ = write!(
            out,
            " ratio {}/{} |",
            settings.modules[0].name, settings.modules[1].name
        );
    }
    let columns = 2 + 2 * settings.modules.len() + usize::from(two);
    let _ = writeln!(out, "\n|{}", "---|".repeat(columns));
    for ((capacity, label), bytes) in rows {
        let _ = write!(out, "| {capacity} | {label} |");
        for &value in &bytes {
            let _ = write!(
                out,
                " {value} | {:.2} |",
                value as f64 * 8.0 / capacity as f64
            );
        }
        if two {
            let _ = write!(out, " {:.3} |", bytes[0] as f64 / bytes[1] as f64);
        }
        let _ = writeln!(out);
    }
    out
}

fn growth(settings: &Settings) -> String {
    let start = 1000u64;
    let queries = Keys::new(ABSENT, 0, 100_000);
    let mut out = format!(
        "### Grown from {start} keys with EXPANSION 2, p = 0.01: FPP on {} never-inserted keys at each doubling\n\n| keys |",
        queries.len()
    );
    let mut table: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut bits = Vec::new();
    for module in &settings.modules {
        let server = module.start(&[]);
        let mut con = server.connection();
        for family in [Family::Bloom, Family::Cuckoo] {
            let _ = write!(
                out,
                " {} {} |",
                module.name,
                if family == Family::Bloom { "BF" } else { "CF" }
            );
            let mut reserve = family.reserve("g", 0.01, start);
            reserve.arg("EXPANSION").arg(2);
            let _: () = reserve.query(&mut con).expect("RESERVE");
            let mut count = 0;
            let mut target = start;
            while count < settings.growth_to {
                let fresh = Keys::new(INSERTED, count, target);
                family.run(&mut con, Step::BatchedInsert, "g", fresh, settings.load);
                count = target;
                let positives =
                    family.run(&mut con, Step::BatchedAbsent, "g", queries, settings.load);
                table
                    .entry(count)
                    .or_default()
                    .push(format!("{:.3e}", positives as f64 / queries.len() as f64));
                // Every doubling, then the end.
                target = (target * 2).min(settings.growth_to);
            }
            let bytes = released(&mut con, "g");
            bits.push(format!(
                "{} {}: {:.2} bits per key at {count} keys",
                module.name,
                if family == Family::Bloom { "BF" } else { "CF" },
                bytes as f64 * 8.0 / count as f64
            ));
        }
    }
    let _ = writeln!(out, "\n|{}", "---|".repeat(1 + 2 * settings.modules.len()));
    for (count, cells) in table {
        let _ = writeln!(out, "| {count} | {} |", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nMemory released by DEL at the end: {}.",
        bits.join("; ")
    );
    out
}

fn main() {
    let settings = match settings() {
        Ok(settings) => settings,
        Err(err) => {
            eprintln!("versus: {err}");
            std::process::exit(2);
        }
    };
    let mut report = Vec::new();
    if settings.speed {
        report.push(speed(&settings));
    }
    if settings.memory {
        report.push(memory(&settings));
    }
    if settings.growth {
        report.push(growth(&settings));
    }
    if let Some(count) = settings.callgrind {
        report.push(instructions(&settings, count));
    }
    let version = Server::private_with(false, &[])
        .ok()
        .and_then(|server| server.version().ok())
        .unwrap_or_default();
    println!(
        "redis-server {version}; modules: {}\n",
        settings
            .modules
            .iter()
            .map(|module| format!(
                "{} = {} {}",
                module.name,
                module.path.display(),
                module.args.join(" ")
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("{}", report.join("\n"));
}
