//! Reading the input on its own thread: blocks of whole lines, so the main
//! thread checks one block while the next is read, and stays free to answer
//! signals while the input is idle.

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

/// Bytes read at a time.
const BLOCK_BYTES: usize = 1 << 20;
/// Blocks read ahead of the one being checked.
const BLOCKS_AHEAD: usize = 4;

/// An input to read: a named file, opened, or standard input.
pub(crate) struct Source {
    /// The name errors and faults give: the path, or `<stdin>`.
    pub(crate) name: String,
    reader: Box<dyn Read + Send>,
}

/// Opens every input before anything is read, so an unreadable file stops
/// the run before it changes any state.
pub(crate) fn open_sources(files: &[PathBuf]) -> Result<Vec<Source>, String> {
    if files.is_empty() {
        return Ok(vec![stdin_source()]);
    }
    files
        .iter()
        .map(|path| {
            if path.as_os_str() == "-" {
                return Ok(stdin_source());
            }
            let name = path.display().to_string();
            let unreadable = |err: io::Error| format!("cannot read {name}: {err}");
            let file = File::open(path).map_err(unreadable)?;
            if file.metadata().map_err(unreadable)?.is_dir() {
                return Err(format!("cannot read {name}: it is a directory"));
            }
            Ok(Source {
                name,
                reader: Box::new(file),
            })
        })
        .collect()
}

fn stdin_source() -> Source {
    Source {
        name: "<stdin>".to_owned(),
        reader: Box::new(io::stdin()),
    }
}

/// Whole lines from one source.
pub(crate) struct Block {
    /// Index of the source in the list given to [`spawn_reader`].
    pub(crate) source: usize,
    /// Lines, each ended by `\n` (the last line of a source without one
    /// gets one here).
    pub(crate) bytes: Vec<u8>,
}

/// What the reader thread sends: a block, or an error naming the source.
pub(crate) type Message = Result<Block, String>;

/// Starts reading the sources in order; the receiver gets their blocks,
/// then hangs up after the last (or after an error).
pub(crate) fn spawn_reader(sources: Vec<Source>) -> Receiver<Message> {
    let (sender, receiver) = sync_channel(BLOCKS_AHEAD);
    thread::spawn(move || {
        for (index, source) in sources.into_iter().enumerate() {
            if read_source(index, source, &sender).is_err() {
                return;
            }
        }
    });
    receiver
}

/// Sends the source's lines in blocks; `Err` when the receiver is gone or
/// a read failed (after sending the error).
fn read_source(index: usize, mut source: Source, sender: &SyncSender<Message>) -> Result<(), ()> {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut block = Vec::with_capacity(BLOCK_BYTES + carry.len());
        block.append(&mut carry);
        let start = block.len();
        block.resize(start + BLOCK_BYTES, 0);
        let read = loop {
            match source.reader.read(&mut block[start..]) {
                Ok(read) => break read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    let message = format!("cannot read {}: {err}", source.name);
                    let _ = sender.send(Err(message));
                    return Err(());
                }
            }
        };
        block.truncate(start + read);
        if read == 0 {
            if !block.is_empty() {
                block.push(b'\n');
                sender
                    .send(Ok(Block {
                        source: index,
                        bytes: block,
                    }))
                    .map_err(|_| ())?;
            }
            return Ok(());
        }
        match memchr::memrchr(b'\n', &block) {
            Some(last) => {
                carry.extend_from_slice(&block[last + 1..]);
                block.truncate(last + 1);
                sender
                    .send(Ok(Block {
                        source: index,
                        bytes: block,
                    }))
                    .map_err(|_| ())?;
            }
            None => carry = block,
        }
    }
}
