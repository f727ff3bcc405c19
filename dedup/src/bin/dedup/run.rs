//! The main loop: blocks of lines in, a verdict per line, the chosen lines
//! out; checkpoints, alarm events and signals between blocks.

use std::io::{BufWriter, StdoutLock, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use filterlab_core::KeyHasher;
use filterlab_dedup::{Deduplicator, Metrics, PartitionKey, Verdict};
use memchr::memchr_iter;
use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};

use crate::cli::{Args, Emit, Faults};
use crate::input::{Block, Message};
use crate::report::{Progress, alarm_json, shared_status_json, status_json, summary};
use crate::shared::Shared;

/// How often the main loop looks at the signal flags while the input is idle.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Why a run stopped before the end of its input.
pub(crate) enum Stop {
    /// SIGINT or SIGTERM: the signal's number.
    Signal(i32),
    /// An error (a strict fault, unreadable input, failed output), with its message.
    Error(String),
    /// The reader of the output went away (EPIPE): the end of the run, as
    /// for `sort` or `uniq`, not an error.
    OutputClosed,
}

/// A failed write to the output: a closed pipe ends the run quietly, any
/// other failure is an error.
fn output_failed(err: &std::io::Error) -> Stop {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        Stop::OutputClosed
    } else {
        Stop::Error(format!("cannot write the output: {err}"))
    }
}

/// The signals the run reacts to, as flags the handlers set.
pub(crate) struct Signals {
    terminate: Arc<AtomicUsize>,
    status: Arc<AtomicBool>,
}

impl Signals {
    /// Registers the handlers: SIGINT/SIGTERM ask for a checkpoint and an
    /// exit (a second one exits at once), SIGUSR1 for a status line.
    pub(crate) fn register() -> std::io::Result<Self> {
        let terminate = Arc::new(AtomicUsize::new(0));
        let again = Arc::new(AtomicBool::new(false));
        let status = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            // Registered first, so it sees `again` as the previous signal left it.
            signal_hook::flag::register_conditional_shutdown(
                signal,
                128 + signal,
                Arc::clone(&again),
            )?;
            signal_hook::flag::register(signal, Arc::clone(&again))?;
            signal_hook::flag::register_usize(signal, Arc::clone(&terminate), signal as usize)?;
        }
        signal_hook::flag::register(SIGUSR1, Arc::clone(&status))?;
        Ok(Self { terminate, status })
    }
}

/// The state of one run of the command.
pub(crate) struct Run<'a> {
    args: &'a Args,
    pub(crate) dedup: Deduplicator,
    /// With --redis, the shared filter that gives the verdicts (the local
    /// de-duplicator then only decodes hashes and counts faults).
    shared: Option<Shared>,
    /// The de-duplicator's key hasher, kept at hand for every line.
    hasher: KeyHasher,
    names: Vec<String>,
    out: BufWriter<StdoutLock<'static>>,
    pub(crate) progress: Progress,
    signals: Signals,
    /// Metrics when the run started (from the restored state, or zero).
    pub(crate) start: Metrics,
    /// Lines read by this run, all sources.
    pub(crate) lines: u64,
    /// The next line count at which to checkpoint.
    next_checkpoint: u64,
    /// The source being read and its current line number.
    source: usize,
    line_in_source: u64,
    /// The current run of lines sharing a partition field: its bytes and key.
    partition_bytes: Vec<u8>,
    partition: Option<PartitionKey>,
    /// Per block: hashes waiting for a check, verdicts, and each line's place.
    hashes: Vec<u64>,
    verdicts: Vec<Verdict>,
    outcomes: Vec<Outcome>,
}

/// Why a line could not be checked.
enum LineError {
    /// The line is bad: the --faults policy decides.
    Fault(String),
    /// The run cannot go on.
    Fatal(String),
}

impl From<String> for LineError {
    fn from(fault: String) -> Self {
        Self::Fault(fault)
    }
}

/// One input line of a block: where it is, and whether it was checked.
struct Outcome {
    start: usize,
    end: usize,
    checked: bool,
}

impl<'a> Run<'a> {
    pub(crate) fn new(
        args: &'a Args,
        dedup: Deduplicator,
        shared: Option<Shared>,
        names: Vec<String>,
        signals: Signals,
    ) -> Self {
        let start = dedup.metrics();
        Self {
            args,
            hasher: dedup.hasher(),
            dedup,
            shared,
            names,
            out: BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
            progress: Progress::new(!args.no_progress && !args.quiet),
            signals,
            start,
            lines: 0,
            next_checkpoint: args.checkpoint_every.unwrap_or(u64::MAX),
            source: usize::MAX,
            line_in_source: 0,
            partition_bytes: Vec::new(),
            partition: None,
            hashes: Vec::new(),
            verdicts: Vec::new(),
            outcomes: Vec::new(),
        }
    }

    /// Checks every block the reader sends, until its end or a stop.
    pub(crate) fn process(&mut self, blocks: &Receiver<Message>) -> Result<(), Stop> {
        loop {
            self.answer_signals()?;
            match blocks.recv_timeout(SIGNAL_POLL) {
                Ok(Ok(block)) => {
                    let checked = self.check_block(&block);
                    self.write_block(&block)?;
                    self.report_events();
                    checked?;
                    let fill = match &self.shared {
                        Some(shared) => shared.own_fill_level(),
                        None => self.dedup.fill_level(),
                    };
                    self.progress.update(self.lines, fill);
                    if self.lines >= self.next_checkpoint {
                        self.checkpoint()?;
                        let every = self.args.checkpoint_every.unwrap_or(u64::MAX);
                        self.next_checkpoint = (self.lines / every + 1).saturating_mul(every);
                    }
                }
                Ok(Err(message)) => return Err(Stop::Error(message)),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
    }

    /// A status line for SIGUSR1; a stop for SIGINT or SIGTERM.
    fn answer_signals(&mut self) -> Result<(), Stop> {
        if self.signals.status.swap(false, Ordering::Relaxed) {
            let elapsed = self.progress.elapsed();
            let line = match &mut self.shared {
                Some(shared) => {
                    shared_status_json(&shared.metrics(&self.dedup.metrics()), self.lines, elapsed)
                }
                None => status_json(&self.dedup.status(), self.lines, elapsed),
            };
            self.progress.println(&line);
        }
        match self.signals.terminate.load(Ordering::Relaxed) {
            0 => Ok(()),
            signal => Err(Stop::Signal(signal as i32)),
        }
    }

    /// Checks the block's lines, in order; stops at a strict fault, after
    /// checking the lines before it.
    fn check_block(&mut self, block: &Block) -> Result<(), Stop> {
        if block.source != self.source {
            self.source = block.source;
            self.line_in_source = 0;
        }
        self.hashes.clear();
        self.verdicts.clear();
        self.outcomes.clear();
        let bytes = &block.bytes;
        let mut start = 0;
        for end in memchr_iter(b'\n', bytes) {
            let line = &bytes[start..end];
            self.line_in_source += 1;
            self.lines += 1;
            let checked = match self.key_of(line) {
                Ok(hash) => {
                    self.hashes.push(hash);
                    true
                }
                Err(LineError::Fault(fault)) => self.fault(&fault)?,
                Err(LineError::Fatal(message)) => return Err(Stop::Error(message)),
            };
            self.outcomes.push(Outcome {
                start,
                end,
                checked,
            });
            start = end + 1;
        }
        self.check_pending().map_err(Stop::Error)
    }

    /// Handles a bad line: strict, a stop (after checking the lines before
    /// it); permissive, a count and a log line.
    fn fault(&mut self, fault: &str) -> Result<bool, Stop> {
        let place = format!(
            "{}:{}",
            self.names.get(self.source).map_or("?", String::as_str),
            self.line_in_source
        );
        match self.args.faults {
            Faults::Strict => {
                self.lines -= 1;
                self.check_pending().map_err(Stop::Error)?;
                Err(Stop::Error(format!("{place}: {fault}")))
            }
            Faults::Permissive => {
                self.dedup.record_fault();
                self.progress
                    .println(&format!("dedup: {place}: {fault} (line skipped)"));
                Ok(false)
            }
        }
    }

    /// The line's key hash, after moving to its partition; a fault's
    /// message when the line has no usable key.
    fn key_of(&mut self, line: &[u8]) -> Result<u64, LineError> {
        let args = self.args;
        let key = match args.key_field {
            Some(index) => field(line, index, args.delimiter)
                .ok_or_else(|| missing_field("key", index, line, args.delimiter))?,
            None => line,
        };
        if let Some(index) = args.partition_field {
            let partition = field(line, index, args.delimiter)
                .ok_or_else(|| missing_field("partition", index, line, args.delimiter))?;
            if self.partition.is_none() || partition != self.partition_bytes.as_slice() {
                self.check_pending().map_err(LineError::Fatal)?;
                self.partition_bytes.clear();
                self.partition_bytes.extend_from_slice(partition);
                self.partition = Some(PartitionKey::parse(partition));
            }
        }
        if key.is_empty() && !args.allow_empty_keys {
            return Err(LineError::Fault(
                "empty key (use --allow-empty-keys to count it as a key)".to_owned(),
            ));
        }
        if args.hex_hashes {
            self.dedup
                .decode_hex(key)
                .map_err(|err| LineError::Fault(err.to_string()))
        } else {
            Ok(self.hasher.hash_bytes(key))
        }
    }

    /// Checks the hashes collected so far in the current partition.
    fn check_pending(&mut self) -> Result<(), String> {
        if self.hashes.is_empty() {
            return Ok(());
        }
        let result = match &mut self.shared {
            Some(shared) => shared.check(&self.hashes, &mut self.verdicts),
            None => self
                .dedup
                .check_hashes(&self.hashes, self.partition.as_ref(), &mut self.verdicts)
                .map_err(|err| format!("cannot check: {err}")),
        };
        self.hashes.clear();
        result
    }

    /// Writes the block's lines the --emit choice wants.
    fn write_block(&mut self, block: &Block) -> Result<(), Stop> {
        let mut verdicts = self.verdicts.iter();
        let delimiter = [self.args.delimiter];
        for outcome in &self.outcomes {
            let verdict = if outcome.checked {
                match verdicts.next() {
                    Some(verdict) => Some(*verdict),
                    // A strict fault stopped the block before this line.
                    None => break,
                }
            } else {
                None
            };
            let line = &block.bytes[outcome.start..outcome.end];
            let written = match (self.args.emit, verdict) {
                (Emit::All, _) => {
                    let column = verdict.map_or("fault", Verdict::as_str);
                    self.out
                        .write_all(line)
                        .and_then(|()| self.out.write_all(&delimiter))
                        .and_then(|()| self.out.write_all(column.as_bytes()))
                        .and_then(|()| self.out.write_all(b"\n"))
                }
                (Emit::Unique, Some(Verdict::Unique))
                | (Emit::Duplicate, Some(Verdict::Duplicate)) => self
                    .out
                    .write_all(line)
                    .and_then(|()| self.out.write_all(b"\n")),
                _ => Ok(()),
            };
            written.map_err(|err| output_failed(&err))?;
        }
        Ok(())
    }

    /// Prints the alarm events raised so far.
    fn report_events(&mut self) {
        for event in self.dedup.take_events() {
            self.progress.println(&alarm_json(&event, self.lines));
        }
    }

    /// Flushes the output, then writes the state (if --state): every line
    /// the state counts has been written out, unless the output itself
    /// failed (a closed pipe), when the state is still written so that no
    /// key checked is forgotten.
    pub(crate) fn checkpoint(&mut self) -> Result<(), Stop> {
        let flushed = self.out.flush().map_err(|err| output_failed(&err));
        if let Some(path) = &self.args.state {
            self.dedup
                .write_checkpoint(path)
                .map_err(|err| Stop::Error(format!("cannot write the state: {err}")))?;
        }
        flushed
    }

    /// The summary for stderr.
    pub(crate) fn summary(&mut self) -> String {
        let metrics = match &mut self.shared {
            Some(shared) => shared.metrics(&self.dedup.metrics()),
            None => self.dedup.metrics(),
        };
        summary(&self.start, &metrics, self.lines, self.progress.elapsed())
    }

    /// The state file, if any.
    pub(crate) fn state(&self) -> Option<&PathBuf> {
        self.args.state.as_ref()
    }
}

/// Field `index` (from 1) of `line`.
fn field(line: &[u8], index: u64, delimiter: u8) -> Option<&[u8]> {
    let mut start = 0;
    let mut before = index - 1;
    for at in memchr_iter(delimiter, line) {
        if before == 0 {
            return Some(&line[start..at]);
        }
        before -= 1;
        start = at + 1;
    }
    (before == 0).then(|| &line[start..])
}

fn missing_field(what: &str, index: u64, line: &[u8], delimiter: u8) -> String {
    let fields = memchr_iter(delimiter, line).count() + 1;
    format!(
        "no {what} field {index}: the line has {fields} field{} separated by {:?}",
        if fields == 1 { "" } else { "s" },
        char::from(delimiter)
    )
}
