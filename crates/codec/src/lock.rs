//! An exclusive claim on an output path while a command produces it, so that two processes never
//! write one file at once (the last rename would win without a word).
//!
//! The output itself cannot carry the lock: [`crate::write_atomic`] replaces it by a rename, so its
//! inode changes. The lock is an advisory `flock` on a lock file `.NAME.vsp-lock` beside it,
//! created 0600 with `O_NOFOLLOW` and taken without waiting: a second writer is refused at once.
//! The holder removes the lock file when done, while still holding the lock; a process that locked
//! the file just before it was removed sees that the path no longer names the file it locked and
//! tries again, so two processes never both hold the claim. A lock file left by a killed process
//! holds no lock (the kernel releases `flock`s on exit) and is simply taken over.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::Error;

/// Suffix of lock file names: `.NAME.vsp-lock`.
pub const LOCK_SUFFIX: &str = ".vsp-lock";

/// An exclusive claim on an output path; released (and its lock file removed) on drop.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
    file: File,
}

impl OutputLock {
    /// The lock file.
    pub fn lock_path(&self) -> &Path {
        &self.path
    }
}

/// The lock file of `output`.
pub fn lock_path(output: &Path) -> Option<PathBuf> {
    let name = output.file_name()?;
    let mut lock = OsString::from(".");
    lock.push(name);
    lock.push(LOCK_SUFFIX);
    Some(output.with_file_name(lock))
}

/// Claims `output` for this process (see the module documentation).
pub fn lock_output(output: &Path) -> Result<OutputLock, Error> {
    let path = lock_path(output).ok_or_else(|| {
        Error::io(
            "cannot write",
            output,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
        )
    })?;
    // A few rounds at most: each retry means another holder released it meanwhile.
    for _ in 0..16 {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io("cannot create lock file", &path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    path: output.display().to_string(),
                    lock: path.display().to_string(),
                })
            }
            Err(TryLockError::Error(e)) => return Err(Error::io("cannot lock", &path, e)),
        }
        let held = file
            .metadata()
            .map_err(|e| Error::io("cannot lock", &path, e))?;
        match fs::symlink_metadata(&path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                return Ok(OutputLock { path, file });
            }
            // Removed (or replaced) by the previous holder after we opened it: try again.
            _ => continue,
        }
    }
    Err(Error::Locked {
        path: output.display().to_string(),
        lock: path.display().to_string(),
    })
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still locked, then unlocked by closing (see the module documentation).
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.enc");
        let a = lock_output(&out).unwrap();
        assert!(a.lock_path().ends_with(".out.enc.vsp-lock"));
        let e = lock_output(&out).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "refusing to write {}: another process is writing it (it holds {})",
                out.display(),
                a.lock_path().display()
            )
        );
        drop(a);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        let b = lock_output(&out).unwrap();
        drop(b);
        // A lock file left by a killed process holds no lock.
        fs::write(dir.path().join(".out.enc.vsp-lock"), b"").unwrap();
        drop(lock_output(&out).unwrap());
    }

    #[test]
    fn a_symlink_as_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(".o.vsp-lock")).unwrap();
        let e = lock_output(&dir.path().join("o")).unwrap_err().to_string();
        assert!(e.starts_with("cannot create lock file"), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
    }
}
