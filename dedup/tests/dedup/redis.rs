//! `dedup --redis`: the filter kept in Redis and shared by several `dedup`
//! processes. Two processes read the two halves of one stream through a
//! real Redis Cluster (3 masters, 3 replicas on loopback, started by
//! `filterlab_redis::testing`): no key is emitted by both, every key is
//! emitted once unless it was a false positive, and the number of those
//! lies in the interval of the exact sharded theory.

use std::collections::HashMap;
use std::process::Output;

use filterlab_core::mix64;
use filterlab_core::theory::{sharded_bloom_fpp, wilson_interval};
use filterlab_redis::testing::{Cluster, Server, unique};

use crate::cli::start;
use crate::key;

/// Runs `dedup` with `args` on `input`; the processes of one call run at once.
fn run_all(runs: Vec<(Vec<String>, Vec<u8>)>) -> Vec<Output> {
    let children: Vec<_> = runs
        .into_iter()
        .map(|(args, input)| start(&args, input))
        .collect();
    children
        .into_iter()
        .map(|(child, writer)| {
            let output = child.wait_with_output().unwrap();
            writer.join().unwrap();
            output
        })
        .collect()
}

/// A stream of `distinct` keys, key i appearing 1 + (i mod 3) times, in a
/// shuffled order (a seeded permutation): the lines and their keys' indexes.
fn stream(distinct: u64) -> Vec<u64> {
    let mut lines: Vec<u64> = (0..distinct)
        .flat_map(|i| std::iter::repeat_n(i, 1 + (i % 3) as usize))
        .collect();
    // Fisher–Yates with SplitMix64 draws.
    for at in (1..lines.len()).rev() {
        let pick = (mix64(at as u64 ^ 0x5eed) % (at as u64 + 1)) as usize;
        lines.swap(at, pick);
    }
    lines
}

/// The lines of `stream` positions `pick` keeps, as input bytes.
fn input(lines: &[u64], pick: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (at, &i) in lines.iter().enumerate() {
        if pick(at) {
            bytes.extend_from_slice(key(i).as_bytes());
            bytes.push(b'\n');
        }
    }
    bytes
}

#[test]
fn two_processes_on_a_cluster_emit_each_key_once() {
    let Some(cluster) = Cluster::start_or_skip(3, 1) else {
        return;
    };
    let urls = cluster.urls();
    let distinct = 30_000u64;
    let (expected, fpp, shards) = (distinct, 0.02, 16u64);
    let lines = stream(distinct);
    let name = unique("dedup");
    let args = |url: &str| -> Vec<String> {
        [
            "-n",
            &expected.to_string(),
            "-p",
            &fpp.to_string(),
            "--redis",
            url,
            "--redis-name",
            &name,
            "--redis-shards",
            &shards.to_string(),
        ]
        .map(str::to_owned)
        .to_vec()
    };
    // Even lines to one process, odd lines to the other, through two nodes;
    // the second in durable mode (each master's replica acknowledges every
    // block before its verdicts are written).
    let mut durable = args(&urls[1]);
    durable.extend(["--redis-replicas".to_owned(), "1".to_owned()]);
    let outputs = run_all(vec![
        (args(&urls[0]), input(&lines, |at| at % 2 == 0)),
        (durable, input(&lines, |at| at % 2 == 1)),
    ]);
    let mut emitted: HashMap<Vec<u8>, usize> = HashMap::new();
    for output in &outputs {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("shared filter"), "{stderr}");
        assert!(stderr.contains("Redis cluster"), "{stderr}");
        for line in output
            .stdout
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
        {
            *emitted.entry(line.to_vec()).or_default() += 1;
        }
    }
    let twice = emitted.values().filter(|&&count| count > 1).count();
    assert_eq!(twice, 0, "keys emitted by both processes");
    let keys: HashMap<Vec<u8>, u64> = (0..distinct).map(|i| (key(i).into_bytes(), i)).collect();
    assert!(
        emitted.keys().all(|line| keys.contains_key(line)),
        "a line not in the input"
    );
    // A distinct key neither emitted found all its bits set at its first
    // insert: a false positive. The expected number is the sum over the
    // inserts of the exact sharded FPP at that load (sampled every 500).
    let missed = distinct - emitted.len() as u64;
    let sharded = |load: u64| {
        let (_, shard_bits) = shard_layout(&outputs[0]);
        sharded_bloom_fpp(shards, shard_bits, hashes(&outputs[0]), load).unwrap()
    };
    let step = 500;
    let expected_missed: f64 = (0..distinct / step)
        .map(|block| sharded(block * step + step / 2) * step as f64)
        .sum();
    let (low, high) = wilson_interval(missed, distinct, 0.999);
    let rate = expected_missed / distinct as f64;
    println!(
        "{} keys emitted once of {distinct}; {missed} missed in [{:.1}, {:.1}], expected {expected_missed:.1}",
        emitted.len(),
        low * distinct as f64,
        high * distinct as f64
    );
    assert!(
        (low..=high).contains(&rate),
        "missed keys outside the interval of the theory"
    );
}

/// The shards and bits per shard the startup line reports.
fn shard_layout(output: &Output) -> (u64, u64) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find(|line| line.contains("shared filter"))
        .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|&word| word == "shards").unwrap();
    (
        words[at - 1].parse().unwrap(),
        words[at + 2].parse().unwrap(),
    )
}

/// The probes per key the startup line reports.
fn hashes(output: &Output) -> u32 {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let k = stderr.split("k = ").nth(1).unwrap();
    k.split(',').next().unwrap().parse().unwrap()
}

/// One process on a plain server, every line's verdict with `--emit all`:
/// a key's first line is unique (unless a false positive), every later one
/// a duplicate; a second run on the same filter finds every key seen.
#[test]
fn verdicts_on_a_server_match_an_exact_set() {
    let Some(server) = Server::start() else {
        return; // no Redis server: skipped, as Server::start said on stderr
    };
    let name = unique("dedup-server");
    let lines = stream(2_000);
    let bytes = input(&lines, |_| true);
    let args: Vec<String> = ["-n", "2000", "-p", "0.001", "--emit", "all", "--redis"]
        .map(str::to_owned)
        .into_iter()
        .chain([server.url().to_owned(), "--redis-name".into(), name])
        .collect();
    let first = run_all(vec![(args.clone(), bytes.clone())]).remove(0);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let mut seen = std::collections::HashSet::new();
    let (mut false_positives, mut answered) = (0, 0);
    for (line, &i) in first
        .stdout
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .zip(&lines)
    {
        let text = String::from_utf8_lossy(line);
        let (shown, verdict) = text.rsplit_once('\t').unwrap();
        assert_eq!(shown, key(i));
        answered += 1;
        match (seen.insert(i), verdict) {
            (true, "unique") | (false, "duplicate") => {}
            (true, "duplicate") => false_positives += 1,
            other => panic!("line {shown}: {other:?}"),
        }
    }
    assert_eq!(answered, lines.len());
    assert!(
        false_positives <= 5,
        "{false_positives} false positives at P = 0.001"
    );
    let again = run_all(vec![(args, bytes)]).remove(0);
    let verdicts = String::from_utf8_lossy(&again.stdout).into_owned();
    assert_eq!(verdicts.lines().count(), lines.len());
    assert!(verdicts.lines().all(|line| line.ends_with("\tduplicate")));
}

/// Durable mode on a server without replicas: the WAIT fails, so the run
/// stops with an error and writes no verdict it could not make durable.
#[test]
fn durable_mode_without_replicas_writes_no_verdict() {
    let Some(server) = Server::start() else {
        return; // no Redis server: skipped, as Server::start said on stderr
    };
    let args: Vec<String> = [
        "-n",
        "100",
        "--emit",
        "all",
        "--redis-replicas",
        "1",
        "--redis",
    ]
    .map(str::to_owned)
    .into_iter()
    .chain([
        server.url().to_owned(),
        "--redis-name".into(),
        unique("dedup-durable"),
    ])
    .collect();
    let output = run_all(vec![(args, input(&stream(10), |_| true))]).remove(0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("replicas acknowledged"), "{stderr}");
    assert!(output.stdout.is_empty());
}

/// --redis refuses the flags it cannot honour, before reading any input.
#[test]
fn redis_refuses_state_partitions_and_alarms() {
    for extra in [
        &["--state", "x.state"][..],
        &["--partition-field", "1", "--partitions", "2"],
        &["--alarms", "50"],
    ] {
        let mut args: Vec<String> = ["-n", "10", "--redis", "redis://127.0.0.1:1/"]
            .map(str::to_owned)
            .to_vec();
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let output = run_all(vec![(args, Vec::new())]).remove(0);
        assert_eq!(output.status.code(), Some(2), "{extra:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("cannot be used with"));
    }
}
