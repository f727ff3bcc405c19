//! End-to-end tests of the `dedup` binary: answers against an exact set,
//! SIGKILL and restart from the state file, SIGTERM and SIGUSR1, bad input
//! (each a clear error naming the line or the flag, nothing lost from the
//! state), damaged states, stale temporary state files, and the command as
//! a Unix filter (a reader that leaves, a closed stderr, --quiet).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use filterlab_core::mix64;
use filterlab_core::theory::{bloom_fpp_exact, wilson_interval};
use filterlab_dedup::{Deduplicator, SizingMode};

use crate::checkpoint::damaged_versions;
use crate::{key, other_key, scratch_state};

/// The binary with the progress line off.
fn dedup(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dedup"));
    command.arg("--no-progress").args(args);
    command
}

/// Runs the binary on `input` and waits for it.
fn run(args: &[&str], input: &[u8]) -> Output {
    let (child, writer) = start(args, input.to_vec());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

/// Starts the binary with every stream piped, and a thread writing `input`
/// to it (so a large input cannot block on a full output pipe).
pub(crate) fn start<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    input: Vec<u8>,
) -> (Child, thread::JoinHandle<()>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dedup"))
        .arg("--no-progress")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start dedup");
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    (child, writer)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `key\tverdict` lines of `--emit all`, as (line, verdict).
fn verdicts(output: &Output) -> Vec<(Vec<u8>, String)> {
    output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let tab = line.iter().rposition(|&b| b == b'\t').unwrap();
            (
                line[..tab].to_vec(),
                String::from_utf8_lossy(&line[tab + 1..]).into_owned(),
            )
        })
        .collect()
}

fn lines(keys: impl IntoIterator<Item = String>) -> Vec<u8> {
    keys.into_iter()
        .flat_map(|k| format!("{k}\n").into_bytes())
        .collect()
}

#[test]
fn a_stream_with_known_duplicates_matches_an_exact_set_but_for_false_positives() {
    let (uniques, fpp) = (40_000u64, 0.01);
    // Each key appears 1 to 3 times, in a seeded shuffled order.
    let mut stream: Vec<u64> = (0..uniques)
        .flat_map(|i| (0..=i % 3).map(move |_| i))
        .collect();
    stream.sort_by_key(|&i| mix64(i ^ mix64(stream_len_salt(i))));
    let input = lines(stream.iter().map(|&i| key(i)));
    let output = run(
        &[
            "-n", "40000", "-p", "0.01", "--sizing", "exact", "--emit", "all",
        ],
        &input,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let answers = verdicts(&output);
    assert_eq!(answers.len(), stream.len());
    let mut seen = HashSet::new();
    let (mut false_positives, mut exact_uniques) = (0u64, 0u64);
    for (&i, (line, verdict)) in stream.iter().zip(&answers) {
        assert_eq!(line, key(i).as_bytes(), "output in input order");
        if seen.insert(i) {
            exact_uniques += 1;
            match verdict.as_str() {
                "unique" => {}
                "duplicate" => false_positives += 1,
                other => panic!("{other}"),
            }
        } else {
            assert_eq!(verdict, "duplicate", "a repeated key is never unique");
        }
    }
    assert_eq!(exact_uniques, uniques);
    // Theory: the i-th new key meets a filter holding the i keys before it
    // (sampled every 100 keys), averaged over the stream.
    let sizing = Deduplicator::with_fpp(fpp)
        .expected_items(uniques)
        .sizing_mode(SizingMode::Exact)
        .sizing()
        .unwrap();
    let (bits, k) = (sizing.config.num_bits, sizing.config.num_hashes);
    let samples: Vec<f64> = (0..uniques)
        .step_by(100)
        .map(|i| bloom_fpp_exact(bits, k, i + 50).unwrap())
        .collect();
    let expected = samples.iter().sum::<f64>() / samples.len() as f64;
    let (low, high) = wilson_interval(false_positives, exact_uniques, 0.999);
    assert!(
        low <= expected && expected <= high,
        "{false_positives} false positives in {exact_uniques}: [{low:.2e}, {high:.2e}] excludes theory {expected:.2e}"
    );
    assert!(low <= fpp, "the false-positive rate exceeds P");
    assert!(false_positives > 0, "too few keys to see the rate");

    // --emit unique and --emit duplicate print exactly those lines.
    for (emit, wanted) in [("unique", "unique"), ("duplicate", "duplicate")] {
        let output = run(
            &[
                "-n", "40000", "-p", "0.01", "--sizing", "exact", "--emit", emit,
            ],
            &input,
        );
        let expected: Vec<u8> = answers
            .iter()
            .filter(|(_, verdict)| verdict == wanted)
            .flat_map(|(line, _)| [line.as_slice(), b"\n"].concat())
            .collect();
        assert!(output.stdout == expected, "--emit {emit}");
    }
}

/// A per-key salt for the shuffle.
fn stream_len_salt(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The state at `path` as the given flags' de-duplicator reads it, if it loads.
fn load_state(path: &Path, expected: u64) -> Option<Deduplicator> {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(expected)
        .build()
        .unwrap();
    dedup.read_checkpoint(path).ok().map(|()| dedup)
}

/// Waits until `done` holds, for at most 30 s.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// The binary with `--state` and `args`, reading from a pipe, its output discarded.
fn spawn_with_state(state: &Path, args: &[&str]) -> Child {
    dedup(&[&["--state", state.to_str().unwrap()], args].concat())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn killed_with_sigkill_and_restarted_it_remembers_every_key_before_its_last_checkpoint() {
    let (dir, state) = scratch_state("sigkill");
    let mut child = spawn_with_state(&state, &["-n", "100000", "--checkpoint-every", "1000"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&lines((0..5000).map(key))).unwrap();
    stdin.flush().unwrap();
    wait_for("a checkpoint of 5000 lines", || {
        load_state(&state, 100_000).is_some_and(|d| d.metrics().checks >= 5000)
    });
    stdin.write_all(&lines((5000..5500).map(key))).unwrap();
    stdin.flush().unwrap();
    thread::sleep(Duration::from_millis(50));
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let checkpointed = load_state(&state, 100_000).expect("the state survives SIGKILL");
    let before = checkpointed.metrics().checks;
    assert!(before >= 5000);

    // Restarted from the state: every key before the checkpoint is a duplicate.
    let mut input = lines((0..before).map(key));
    input.extend(lines((0..2000).map(other_key)));
    let state_arg = state.to_str().unwrap();
    let output = run(
        &["-n", "100000", "--state", state_arg, "--emit", "all"],
        &input,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("state restored"));
    let answers = verdicts(&output);
    assert_eq!(answers.len() as u64, before + 2000);
    let (old, new) = answers.split_at(before as usize);
    assert!(
        old.iter().all(|(_, v)| v == "duplicate"),
        "a key seen before the checkpoint was forgotten"
    );
    let unique = new.iter().filter(|(_, v)| v == "unique").count();
    assert!(unique >= 1995, "{unique} of 2000 new keys unique");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sigkill_during_checkpoints_never_leaves_a_damaged_state() {
    let (dir, state) = scratch_state("sigkill-loop");
    let mut confirmed = 0u64;
    for round in 0..6u64 {
        // 2e6 keys at 1e-6: an 8 MiB filter, written after every block of input.
        let mut child = spawn_with_state(&state, &["-n", "2000000", "--checkpoint-every", "1"]);
        let mut stdin = child.stdin.take().unwrap();
        let feeder = thread::spawn(move || {
            for chunk in 0..40u64 {
                let keys = (chunk * 1000..chunk * 1000 + 1000).map(|i| key(round * 1_000_000 + i));
                if stdin.write_all(&lines(keys)).is_err() {
                    return;
                }
                thread::sleep(Duration::from_millis(5));
            }
        });
        thread::sleep(Duration::from_millis(60 + 37 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        feeder.join().unwrap();
        let mut loaded = Deduplicator::with_fpp(1e-6)
            .expected_items(2_000_000)
            .build()
            .unwrap();
        match loaded.read_checkpoint(&state) {
            Ok(()) => {
                let checks = loaded.metrics().checks;
                assert!(checks >= confirmed, "round {round}: the state went back");
                confirmed = checks;
            }
            Err(err) => assert!(
                confirmed == 0 && err.kind() == filterlab_dedup::ErrorKind::CheckpointMissing,
                "round {round}: {err}"
            ),
        }
    }
    // Wherever the kills landed, the next run leaves the state alone in
    // its directory: each round removed the temporaries of the one before.
    let output = run(&["-n", "2000000", "--state", state.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(entries(&dir), ["state"]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Sends `signal` to the child with kill(1).
fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn sigusr1_prints_status_and_sigterm_checkpoints_before_exiting() {
    let (dir, state) = scratch_state("sigterm");
    let state_arg = state.to_str().unwrap();
    let mut child = dedup(&["-n", "1000", "--state", state_arg, "--emit", "all"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&lines((0..300).map(key))).unwrap();
    stdin.flush().unwrap();
    let mut child_stderr = child.stderr.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel::<String>();
    let reader = thread::spawn(move || {
        let mut text = String::new();
        let mut buffer = [0u8; 4096];
        while let Ok(read) = child_stderr.read(&mut buffer) {
            if read == 0 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&buffer[..read]));
            let _ = sender.send(text.clone());
        }
        text
    });
    // SIGUSR1 until a status line shows all 300 lines checked (once the
    // sizing is printed: the handlers are in place).
    let mut latest = String::new();
    wait_for("the startup report", || {
        while let Ok(text) = receiver.try_recv() {
            latest = text;
        }
        latest.contains("dedup sizing")
    });
    wait_for("a status line with 300 lines", || {
        signal(&child, "USR1");
        thread::sleep(Duration::from_millis(20));
        while let Ok(text) = receiver.try_recv() {
            latest = text;
        }
        latest.contains(r#""lines":300"#)
    });
    let status_line = latest
        .lines()
        .find(|line| line.contains(r#""event":"status""#))
        .unwrap();
    for field in [
        "uniques_stored",
        "fill_level",
        "memory_bytes",
        "dropped",
        "partitions",
    ] {
        assert!(status_line.contains(field), "{field} in {status_line}");
    }
    // The input stays open: SIGTERM still stops the run, with a checkpoint.
    signal(&child, "TERM");
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(128 + 15));
    let text = reader.join().unwrap();
    assert!(text.contains("stopped by signal 15"), "{text}");
    assert!(text.contains("dedup summary"), "{text}");
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(
        stdout.lines().count(),
        300,
        "every checked line was written out"
    );
    let restored = load_state(&state, 1000).expect("SIGTERM wrote the state");
    assert_eq!(restored.metrics().checks, 300);
    drop(stdin);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A scratch directory for `test` with the state of a run of `-n 100` over
/// ten keys: (the directory, the state file, its bytes).
fn state_of_ten_keys(test: &str) -> (PathBuf, PathBuf, Vec<u8>) {
    let (dir, state) = scratch_state(test);
    let first = run(
        &["-n", "100", "--state", state.to_str().unwrap()],
        &lines((0..10).map(key)),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let saved = std::fs::read(&state).unwrap();
    (dir, state, saved)
}

#[test]
fn unreadable_inputs_are_named_and_leave_the_state_alone() {
    let (dir, state, saved) = state_of_ten_keys("unreadable");
    let state_arg = state.to_str().unwrap();
    let missing = dir.join("no-such-file");
    let dir_arg = dir.to_str().unwrap();
    for bad in [missing.to_str().unwrap(), dir_arg] {
        let output = run(&["-n", "100", "--state", state_arg, bad], b"");
        assert_eq!(output.status.code(), Some(1));
        let message = stderr(&output);
        assert!(message.contains(&format!("cannot read {bad}")), "{message}");
        assert_eq!(std::fs::read(&state).unwrap(), saved, "state untouched");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_flags_name_the_flag() {
    for (args, flag) in [
        (&["-n", "0"][..], "--expected"),
        (&["--fpp", "0.01"][..], "--expected"),
        (&["-n", "10", "--fpp", "0"][..], "--fpp"),
        (&["-n", "10", "--fpp", "1"][..], "--fpp"),
        (&["-n", "10", "--fpp", "1.5"][..], "--fpp"),
        (&["-n", "10", "--fpp", "-0.1"][..], "--fpp"),
        (&["-n", "10", "--fpp", "NaN"][..], "--fpp"),
        (&["-n", "10", "--fpp", "often"][..], "--fpp"),
        (&["-n", "10", "-k", "0"][..], "--key-field"),
        (&["-n", "10", "--partitions", "3"][..], "--partition-field"),
        (
            &["-n", "10", "--partition-field", "1", "--partitions", "0"][..],
            "--partitions",
        ),
        (&["-n", "10", "--search-all"][..], "--partitions"),
        (&["-n", "10", "--alarms", "50,-1"][..], "--alarms"),
        (&["-n", "10", "--checkpoint-every", "5"][..], "--state"),
        (&["-n", "10", "--delimiter", "ab"][..], "--delimiter"),
    ] {
        let output = run(args, b"");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(flag),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// Faults logged and skipped, every line printed with its verdict.
const PERMISSIVE_ALL: &[&str] = &["--faults", "permissive", "--emit", "all"];

#[test]
fn a_missing_field_is_a_fault_strict_or_permissive() {
    let (dir, state) = scratch_state("field");
    let state_arg = state.to_str().unwrap();
    let input = b"a,1\nb,2\nc\nd,4\n";
    // Strict: stops at line 3, naming it, after saving lines 1 and 2.
    let output = run(
        &["-n", "100", "-d", ",", "-k", "2", "--state", state_arg],
        input,
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("<stdin>:3: no key field 2: the line has 1 field"),
        "{message}"
    );
    assert_eq!(output.stdout, b"a,1\nb,2\n");
    let saved = load_state(&state, 100).unwrap();
    assert_eq!(
        saved.metrics().checks,
        2,
        "nothing lost: lines 1 and 2 are in the state"
    );
    let again = run(
        &[
            "-n", "100", "-d", ",", "-k", "2", "--state", state_arg, "--emit", "all",
        ],
        b"x,1\n",
    );
    assert_eq!(again.stdout, b"x,1,duplicate\n");
    // Permissive: logs, counts and goes on.
    let output = run(
        &[&["-n", "100", "-d", ",", "-k", "2"], PERMISSIVE_ALL].concat(),
        input,
    );
    assert!(output.status.success());
    assert_eq!(
        output.stdout,
        b"a,1,unique\nb,2,unique\nc,fault\nd,4,unique\n"
    );
    let message = stderr(&output);
    assert!(message.contains("<stdin>:3: no key field 2"), "{message}");
    assert!(message.contains("faults                1"), "{message}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn empty_lines_are_faults_unless_allowed() {
    let output = run(&["-n", "100"], b"a\n\nb\n");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("<stdin>:2: empty key"),
        "{}",
        stderr(&output)
    );
    assert_eq!(output.stdout, b"a\n");
    let output = run(
        &["-n", "100", "--allow-empty-keys", "--emit", "all"],
        b"a\n\nb\n\n",
    );
    assert!(output.status.success());
    assert_eq!(
        output.stdout,
        b"a\tunique\n\tunique\nb\tunique\n\tduplicate\n"
    );
}

#[test]
fn invalid_utf8_lines_are_keys_as_bytes() {
    let input = b"caf\xe9\n\xff\xfe\ncaf\xe9\nlast line without newline";
    let output = run(&["-n", "100", "--emit", "all"], input);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        output.stdout,
        b"caf\xe9\tunique\n\xff\xfe\tunique\ncaf\xe9\tduplicate\nlast line without newline\tunique\n"
    );
}

#[test]
fn hex_hashes_strict_and_permissive() {
    // N = 1000 at 1e-6: log2(1e9) = 29.9 bits, so 8 hex digits.
    let input = b"0123abcd\n0123ABCD\n12345\nzzzzzzzz\nffffffff00\n";
    let output = run(&["-n", "1000", "--hex-hashes", "--emit", "all"], input);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("need at least 8 digits"), "{message}");
    assert!(message.contains("<stdin>:3: hash too short"), "{message}");
    let output = run(
        &[&["-n", "1000", "--hex-hashes"], PERMISSIVE_ALL].concat(),
        input,
    );
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "0123abcd\tunique\n0123ABCD\tduplicate\n12345\tfault\nzzzzzzzz\tfault\nffffffff00\tunique\n"
    );
    assert!(stderr(&output).contains("<stdin>:4: malformed hash"));
}

/// Key = field 2, partition = field 1 of space-separated lines, 2 partitions.
const PARTITIONED: [&str; 12] = [
    "-n",
    "100",
    "-d",
    "space",
    "-k",
    "2",
    "--partition-field",
    "1",
    "--partitions",
    "2",
    "--emit",
    "all",
];

#[test]
fn partitions_evict_and_drop_from_the_command_line() {
    let input = b"1 a\n2 a\n3 b\n1 a\n3 a\n10 c\n2 c\n";
    let output = run(&[&PARTITIONED[..], &["--alarms", "1"]].concat(), input);
    assert!(output.status.success(), "{}", stderr(&output));
    let verdicts: Vec<String> = verdicts_by(&output.stdout, b' ');
    let expected = [
        "unique", "unique", "unique", "unknown", "unique", "unique", "unknown",
    ];
    assert_eq!(verdicts, expected);
    let message = stderr(&output);
    assert!(
        message.contains(r#""event":"alarm""#) && message.contains(r#""threshold":1.0"#),
        "{message}"
    );
    assert!(message.contains("dropped (unknown)     2"), "{message}");
    // With search-all, "a" of partition 3 is found in partition 2.
    let output = run(
        &[&PARTITIONED[..], &["--search-all"]].concat(),
        b"2 a\n3 a\n3 a\n",
    );
    assert_eq!(
        verdicts_by(&output.stdout, b' '),
        ["unique", "duplicate", "duplicate"]
    );
}

fn verdicts_by(stdout: &[u8], delimiter: u8) -> Vec<String> {
    stdout
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let at = line.iter().rposition(|&b| b == delimiter).unwrap();
            String::from_utf8_lossy(&line[at + 1..]).into_owned()
        })
        .collect()
}

#[test]
fn a_state_of_another_configuration_or_damaged_is_refused_and_kept() {
    let (dir, state, saved) = state_of_ten_keys("state-mismatch");
    let state_arg = state.to_str().unwrap();
    for args in [
        &["-n", "200", "--state", state_arg][..],
        &["-n", "100", "-p", "0.001", "--state", state_arg][..],
        &["-n", "100", "--seed", "1", "--state", state_arg][..],
        &["-n", "100", "--sizing", "exact", "--state", state_arg][..],
    ] {
        let output = run(args, &lines((10..20).map(key)));
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&output).contains("configuration mismatch"),
            "{}",
            stderr(&output)
        );
        assert_eq!(
            std::fs::read(&state).unwrap(),
            saved,
            "{args:?}: state kept"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_damaged_state_stops_the_command_before_any_input_and_is_kept() {
    let (dir, state, saved) = state_of_ten_keys("state-damaged");
    let state_arg = state.to_str().unwrap();
    for (what, damaged) in damaged_versions(&saved) {
        std::fs::write(&state, &damaged).unwrap();
        // Standard input stays open and empty: a run that read it would
        // wait for ever, so exiting at all shows none was read.
        let mut child = dedup(&["-n", "100", "--state", state_arg])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        wait_for(&format!("the refusal of a state {what}"), || {
            child.try_wait().unwrap().is_some()
        });
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{what}: {message}");
        assert!(
            message.contains("--state:") && message.contains("left as it is"),
            "{what}: {message}"
        );
        assert!(!message.contains("summary"), "{what}: {message}");
        assert!(output.stdout.is_empty(), "{what}");
        assert_eq!(std::fs::read(&state).unwrap(), damaged, "{what}: file kept");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Starts `command` with its stderr captured and `chunks` written to its
/// stdin from a thread, `pause` apart, then closed. A failed write ends the
/// feeding (the child stopped reading: its exit status says why).
fn spawn_fed(
    command: &mut Command,
    chunks: Vec<Vec<u8>>,
    pause: Duration,
) -> (Child, thread::JoinHandle<()>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = thread::spawn(move || {
        for chunk in chunks {
            if stdin.write_all(&chunk).is_err() {
                return;
            }
            thread::sleep(pause);
        }
    });
    (child, feeder)
}

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_run_killed_while_writing_its_state_leaves_a_temporary_the_next_run_removes() {
    use std::os::unix::process::ExitStatusExt;

    let (dir, state) = scratch_state("killed-mid-write");
    let state_arg = state.to_str().unwrap();
    // N = 100,000 at 1e-6: a 512 KiB filter.
    let flags = ["--no-progress", "-n", "100000", "--state", state_arg];
    let first = run(&flags[1..], &lines((0..10).map(key)));
    assert!(first.status.success(), "{}", stderr(&first));
    let saved = std::fs::read(&state).unwrap();
    // The kernel ends the next run in the middle of writing its state: a
    // file-size limit of 64 blocks (32 or 64 KiB) raises SIGXFSZ, whose
    // default action kills the process with no handler or destructor run,
    // as SIGKILL would, but at a known point.
    let mut child = Command::new("sh")
        .args(["-c", r#"ulimit -c 0; ulimit -f 64; exec "$0" "$@""#])
        .arg(env!("CARGO_BIN_EXE_dedup"))
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&lines((10..20).map(key)))
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(signal_hook::consts::SIGXFSZ));
    let temporary = format!(".state.tmp-{}", child.id());
    assert_eq!(entries(&dir), [temporary.as_str(), "state"]);
    let partial = std::fs::metadata(dir.join(&temporary)).unwrap().len();
    assert!(partial > 0 && partial < saved.len() as u64, "{partial}");
    assert_eq!(std::fs::read(&state).unwrap(), saved, "the state is intact");

    // The next run on the same state removes it and says so.
    let next = run(&flags[1..], &lines((0..20).map(key)));
    assert!(next.status.success(), "{}", stderr(&next));
    let message = stderr(&next);
    assert!(
        message.contains(&format!("removed {}", dir.join(&temporary).display())),
        "{message}"
    );
    assert_eq!(entries(&dir), ["state"]);
    // The state restored was the one before the killed run: keys 10..20 are new again.
    assert_eq!(next.stdout, lines((10..20).map(key)));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn only_stale_temporaries_of_the_same_state_are_removed() {
    let (dir, state, _) = state_of_ten_keys("stale-planted");
    let plant = |name: &str| {
        let path = dir.join(name);
        std::fs::write(&path, name).unwrap();
        path
    };
    // Stale: a pid no process can have (above pid_max), and this test's
    // own pid (a live process, as after pid reuse, but not writing).
    let stale = [
        plant(".state.tmp-999999999"),
        plant(&format!(".state.tmp-{}", std::process::id())),
    ];
    // Kept: another state's temporaries, names that only look alike, and
    // a temporary a live writer holds (its lock).
    let others = [
        ".other.tmp-1",
        ".state.tmp-",
        ".state.tmp-12x",
        ".state.tmp-5.bak",
        "state.tmp-5",
        ".state.old.tmp-5",
        ".state.tmp-5.tmp-6",
    ]
    .map(plant);
    let in_use = plant(".state.tmp-7");
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&in_use)
        .unwrap();
    writer.lock().unwrap();
    std::fs::create_dir(dir.join(".state.tmp-8")).unwrap();
    std::os::unix::fs::symlink(&others[0], dir.join(".state.tmp-9")).unwrap();

    let output = run(
        &["-n", "100", "--state", state.to_str().unwrap()],
        &lines((0..20).map(key)),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let message = stderr(&output);
    for path in &stale {
        assert!(!path.exists(), "{} left", path.display());
        assert!(
            message.contains(&format!("removed {}", path.display())),
            "{message}"
        );
    }
    assert_eq!(message.matches("removed").count(), stale.len(), "{message}");
    for path in others.iter().chain([&in_use]) {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), name, "{name} kept");
    }
    assert!(dir.join(".state.tmp-8").is_dir());
    assert!(dir.join(".state.tmp-9").is_symlink());
    assert_eq!(
        output.stdout,
        lines((10..20).map(key)),
        "the state was used"
    );
    drop(writer);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn runs_starting_beside_a_checkpointing_run_never_take_its_temporary() {
    let (dir, state) = scratch_state("stale-concurrent");
    // A long run checkpointing after every block of input: its temporary
    // exists most of the time.
    let state_arg = state.to_str().unwrap();
    let chunks = (0..400u64).map(|chunk| lines((chunk * 100..chunk * 100 + 100).map(key)));
    let (long, feeder) = spawn_fed(
        dedup(&[
            "-n",
            "200000",
            "--state",
            state_arg,
            "--checkpoint-every",
            "1",
        ])
        .stdout(Stdio::null()),
        chunks.collect(),
        Duration::from_millis(2),
    );
    wait_for("the first checkpoint", || state.exists());
    // Each of these runs on the same state looks for stale temporaries at
    // its start: the long run's, being written, is never one of them.
    for _ in 0..15 {
        let output = run(&["-n", "200000", "--state", state.to_str().unwrap()], b"");
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(!stderr(&output).contains("removed"), "{}", stderr(&output));
    }
    feeder.join().unwrap();
    let output = long.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(entries(&dir), ["state"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly_after_writing_the_state() {
    use std::io::{BufRead, BufReader};

    let (dir, state) = scratch_state("epipe");
    // 100,000 distinct lines: far more output than the pipe holds, so the
    // run is still writing when the reader goes.
    let (mut child, feeder) = spawn_fed(
        dedup(&["-n", "100000", "--state", state.to_str().unwrap()]).stdout(Stdio::piped()),
        vec![lines((0..100_000).map(key))],
        Duration::ZERO,
    );
    // As `dedup ... | head -1`: one line read, then the pipe closed.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, format!("{}\n", key(0)));
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    assert!(
        !message.contains("cannot") && !message.contains("Broken pipe"),
        "{message}"
    );
    // The state holds every line checked, as at any other end of a run.
    let checks = load_state(&state, 100_000)
        .expect("the state was written")
        .metrics()
        .checks;
    assert!((1..100_000).contains(&checks), "{checks}");
    assert!(
        message.contains(&format!("lines                 {checks}\n")),
        "{message}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs the binary on `input` with a standard error that fails every
/// write: a pipe whose reader is gone (EPIPE), or closed by the shell
/// (`2>&-`).
fn run_with_stderr_closed(args: &[&str], input: &[u8], shell: bool) -> Output {
    let mut command = if shell {
        let mut command = Command::new("sh");
        command
            .args(["-c", r#"exec "$0" "$@" 2>&-"#])
            .arg(env!("CARGO_BIN_EXE_dedup"))
            .arg("--no-progress")
            .args(args);
        command
    } else {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut command = dedup(args);
        command.stderr(writer);
        command
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // A run that stops before reading (a damaged state, a bad flag) may
    // have closed its end already.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stderr_is_no_reason_to_fail_and_errors_still_set_the_exit_code() {
    let (dir, state) = scratch_state("stderr-closed");
    let with_state = [
        "-n",
        "100",
        "--alarms",
        "1",
        "--state",
        state.to_str().unwrap(),
    ];
    for shell in [false, true] {
        // Every kind of line on stderr: sizing, state, alarms, summary.
        let output = run_with_stderr_closed(&with_state, b"a\nb\na\n", shell);
        assert_eq!(output.status.code(), Some(0), "shell {shell}");
        assert_eq!(output.stdout, b"a\nb\n", "shell {shell}");
        std::fs::write(&state, lines(["a".to_owned()])).unwrap();
        // A damaged state, a strict fault: errors, whether or not they can be read.
        let output = run_with_stderr_closed(&with_state, b"a\n", shell);
        assert_eq!(output.status.code(), Some(1), "shell {shell}");
        std::fs::remove_file(&state).unwrap();
        let output = run_with_stderr_closed(&["-n", "100"], b"a\n\nb\n", shell);
        assert_eq!(output.status.code(), Some(1), "shell {shell}");
        assert_eq!(output.stdout, b"a\n", "shell {shell}");
        let output = run_with_stderr_closed(&["-n", "100", "--fpp", "2"], b"", shell);
        assert_eq!(output.status.code(), Some(2), "shell {shell}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn quiet_leaves_stderr_to_errors_faults_and_events() {
    let (dir, state) = scratch_state("quiet");
    let state_arg = state.to_str().unwrap();
    for _ in 0..2 {
        // No sizing, no state lines, no summary: nothing at all.
        let output = run(
            &["-n", "100", "--quiet", "--state", state_arg],
            b"a\nb\na\n",
        );
        assert!(output.status.success());
        assert_eq!(stderr(&output), "");
    }
    // Errors still print, and only they do.
    let output = run(&["-n", "100", "--quiet"], b"a\n\nb\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "dedup: <stdin>:2: empty key (use --allow-empty-keys to count it as a key)\n"
    );
    // Skipped faults, alarm events and stale temporaries removed are the
    // run's events, not chatter: they print.
    std::fs::write(dir.join(".state.tmp-999999999"), b"stale").unwrap();
    let output = run(
        &[
            "-n",
            "100",
            "--quiet",
            "--faults",
            "permissive",
            "--alarms",
            "1",
            "--state",
            state_arg,
        ],
        b"c\n\nd\n",
    );
    assert!(output.status.success());
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 3, "{message}");
    assert!(message.contains("<stdin>:2: empty key"), "{message}");
    assert!(message.contains(r#""event":"alarm""#), "{message}");
    assert!(message.contains("removed"), "{message}");
    let help = Command::new(env!("CARGO_BIN_EXE_dedup"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("--quiet"));
    std::fs::remove_dir_all(dir).unwrap();
}
