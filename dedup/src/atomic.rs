//! Files written in full or not at all, and the removal of the temporary
//! files that writers killed mid-write leave behind.
//!
//! A writer holds an exclusive lock (`flock` on Unix) on its temporary file
//! from before its first byte until after the rename. The lock, not the pid
//! in the name, tells a live writer from a dead one: the kernel releases it
//! when its holder dies, however it dies, and a pid may have been reused by
//! another process, or be the same number in another pid namespace.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// How often [`AtomicFile::create`] opens its temporary file again when it
/// was removed or replaced between the open and the lock.
const CREATE_ATTEMPTS: usize = 16;

/// A file written in full or not at all: bytes go to a temporary file in
/// the destination's directory, which [`commit`](Self::commit) syncs and
/// renames over the destination (then syncs the directory). Dropped without
/// a commit, it removes the temporary file; a crash leaves at worst that
/// temporary file, never a damaged destination, and
/// [`remove_stale`](Self::remove_stale) removes such leftovers.
///
/// The temporary file is `.NAME.tmp-PID`, locked while it is written (see
/// [`remove_stale`](Self::remove_stale)). Two `AtomicFile`s for the same
/// destination in one process wait for each other: the second `create`
/// returns once the first is committed or dropped.
///
/// # Examples
///
/// ```
/// use std::io::Write;
/// use filterlab_dedup::AtomicFile;
///
/// let dir = std::env::temp_dir().join(format!("atomic-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("state");
/// let mut file = AtomicFile::create(&path)?;
/// file.write_all(b"complete")?;
/// file.commit()?;
/// assert_eq!(std::fs::read(&path)?, b"complete");
///
/// let mut file = AtomicFile::create(&path)?;
/// file.write_all(b"half")?;
/// drop(file); // no commit: the old content stays
/// assert_eq!(std::fs::read(&path)?, b"complete");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    destination: PathBuf,
    temporary: PathBuf,
    /// Open, and locked, until the value is dropped.
    file: File,
    /// Renamed over the destination: nothing to remove on drop.
    committed: bool,
}

impl AtomicFile {
    /// Opens and locks a temporary file beside `destination`
    /// (`.NAME.tmp-PID`), emptied: a stale one of the same name (left by a
    /// process with this pid) is reused.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Filter`](crate::ErrorKind::Filter)`(Io)` naming the file
    /// when it cannot be created, locked or emptied.
    pub fn create(destination: impl AsRef<Path>) -> Result<Self, Error> {
        let destination = destination.as_ref().to_path_buf();
        let mut name = temporary_prefix(&destination)?;
        name.push(std::process::id().to_string());
        let temporary = destination.with_file_name(name);
        let named = |err: io::Error| Error::from(err).context(temporary.display());
        for _ in 0..CREATE_ATTEMPTS {
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&temporary)
                .map_err(named)?;
            match file.lock() {
                Ok(()) => {}
                // Without locks the file is used as before, unguarded.
                Err(err) if err.kind() == io::ErrorKind::Unsupported => {}
                Err(err) => return Err(named(err)),
            }
            // Between the open and the lock, a cleaner may have removed the
            // file as stale (or a writer of the same name renamed it): the
            // lock then guards a file no longer at this path.
            if still_named(&file, &temporary).map_err(named)? {
                file.set_len(0).map_err(named)?;
                return Ok(Self {
                    destination,
                    temporary,
                    file,
                    committed: false,
                });
            }
        }
        Err(named(io::Error::other(
            "the temporary file was replaced on every attempt to lock it",
        )))
    }

    /// The temporary file's path.
    pub fn temporary_path(&self) -> &Path {
        &self.temporary
    }

    /// Syncs the temporary file, renames it over the destination and syncs
    /// the directory. The lock is held until the rename is done.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Filter`](crate::ErrorKind::Filter)`(Io)` naming the
    /// file; the temporary file is then removed and the destination left as
    /// it was.
    pub fn commit(mut self) -> Result<(), Error> {
        let named = |err: io::Error, path: &Path| Error::from(err).context(path.display());
        self.file
            .sync_all()
            .map_err(|err| named(err, &self.temporary))?;
        fs::rename(&self.temporary, &self.destination)
            .map_err(|err| named(err, &self.destination))?;
        self.committed = true;
        sync_directory(&self.destination).map_err(|err| named(err, &self.destination))?;
        Ok(())
    }

    /// Removes the temporary files that writers of `destination` left when
    /// they died mid-write, and returns their paths.
    ///
    /// Only regular files named exactly as [`create`](Self::create) names
    /// them (`.NAME.tmp-` and digits) beside `destination` are looked at,
    /// and one is removed only when no process holds its lock: a writer
    /// that is alive holds it from before its first byte to its rename, so
    /// a file found unlocked is no longer being written, whatever process
    /// now has the pid in its name. Files of other destinations, files in
    /// use and anything not a regular file are left alone. Where the
    /// platform has no file locks, nothing is removed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Filter`](crate::ErrorKind::Filter)`(Io)` naming the
    /// directory or the file, when the directory cannot be listed or a
    /// stale file cannot be opened or removed.
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_dedup::AtomicFile;
    ///
    /// let dir = std::env::temp_dir().join(format!("atomic-stale-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("state");
    /// // What a writer killed mid-write leaves (pid 4321), and another file's.
    /// std::fs::write(dir.join(".state.tmp-4321"), b"half")?;
    /// std::fs::write(dir.join(".other.tmp-4321"), b"half")?;
    /// assert_eq!(AtomicFile::remove_stale(&path)?, [dir.join(".state.tmp-4321")]);
    /// assert!(dir.join(".other.tmp-4321").exists());
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_stale(destination: impl AsRef<Path>) -> Result<Vec<PathBuf>, Error> {
        let destination = destination.as_ref();
        let prefix = temporary_prefix(destination)?;
        let directory = directory_of(destination);
        let listed = |err: io::Error| Error::from(err).context(directory.display());
        let mut removed = Vec::new();
        for entry in fs::read_dir(directory).map_err(listed)? {
            let name = entry.map_err(listed)?.file_name();
            let is_temporary = name
                .as_encoded_bytes()
                .strip_prefix(prefix.as_encoded_bytes())
                .is_some_and(|pid| !pid.is_empty() && pid.iter().all(u8::is_ascii_digit));
            let path = directory.join(&name);
            if is_temporary
                && remove_if_stale(&path).map_err(|err| Error::from(err).context(path.display()))?
            {
                removed.push(path);
            }
        }
        removed.sort();
        Ok(removed)
    }
}

/// `.NAME.tmp-`: the name of `destination`'s temporary files before the pid.
fn temporary_prefix(destination: &Path) -> Result<OsString, Error> {
    let name = destination
        .file_name()
        .ok_or_else(|| crate::error::invalid(format!("{} names no file", destination.display())))?;
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".tmp-");
    Ok(prefix)
}

/// The directory `path` is in.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Removes the temporary file at `path` if it is a regular file no writer
/// holds; whether it did.
fn remove_if_stale(path: &Path) -> io::Result<bool> {
    let vanished = |err: io::Error| {
        if err.kind() == io::ErrorKind::NotFound {
            Ok(false)
        } else {
            Err(err)
        }
    };
    // Never follow a link, nor open a FIFO (the open would wait for a writer).
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_file() => {}
        Ok(_) => return Ok(false),
        Err(err) => return vanished(err),
    }
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) => return vanished(err),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(false),
        Err(TryLockError::Error(err)) if err.kind() == io::ErrorKind::Unsupported => {
            return Ok(false);
        }
        Err(TryLockError::Error(err)) => return Err(err),
    }
    // Locked by us: no writer can take the file now, and one that opened it
    // before will find it gone and make a new one. It must still be the
    // file at `path`, and a regular one (not swapped since the check above).
    if !file.metadata()?.is_file() || !still_named(&file, path)? {
        return Ok(false);
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(err) => vanished(err),
    }
}

/// Whether `path` still names the open `file`.
#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;

    let open = file.metadata()?;
    match fs::metadata(path) {
        Ok(named) => Ok(named.dev() == open.dev() && named.ino() == open.ino()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// Whether `path` still names the open `file` (elsewhere than Unix, an
/// open file cannot be removed or renamed over, so it does).
#[cfg(not(unix))]
fn still_named(_file: &File, path: &Path) -> io::Result<bool> {
    Ok(path.exists())
}

/// Makes a rename in the directory of `path` durable (Unix; elsewhere the
/// rename itself is all there is).
fn sync_directory(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(directory_of(path))?.sync_all()?;
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

impl Write for AtomicFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.file.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    /// Removes the temporary file unless it was renamed (while the lock is
    /// still held, so no other writer has taken the name yet).
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}
