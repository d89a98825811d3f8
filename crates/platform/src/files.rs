//! The one way the platform writes a file, and the checks on output paths.
//!
//! [`write_atomic`] writes to a fresh temporary file in the target's directory, created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` (a planted file or symlink under the temporary name is never followed
//! or reused) and with its final permissions set at creation (0600 for secret keys, so a key is never
//! readable by others, not even for a moment). The name is unique (pid, a counter and random bits).
//! The data is written and fsynced, the file renamed over the target, and the directory fsynced so
//! the rename survives a crash. On any failure the temporary file is removed (a drop guard, so an
//! early return or a panic cannot leave it behind).
//!
//! The target itself must be absent or a regular file: a symlink, FIFO, device or directory at an
//! output path is refused rather than replaced. [`check_output`] also refuses an output path that
//! names one of the command's own inputs (the same file under any name: canonical path, or device
//! and inode when it exists).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{PlatformError, Result};

/// Who may read a written file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Secret key material: 0600 from creation on.
    Private,
    /// Everything else: 0644 (less under a stricter umask).
    Public,
}

impl Access {
    fn mode(self) -> u32 {
        match self {
            Access::Private => 0o600,
            Access::Public => 0o644,
        }
    }
}

/// Marker in temporary file names: `.NAME.vsp-tmp-PID-COUNTER-RANDOM`.
const TMP_MARKER: &str = ".vsp-tmp-";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes the temporary file unless disarmed (after the rename succeeded).
struct TempGuard {
    path: PathBuf,
    armed: bool,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// What kind of non-regular file is at `path`, if any (`None`: absent or a regular file).
fn non_regular(path: &Path) -> Result<Option<&'static str>> {
    match fs::symlink_metadata(path) {
        Ok(m) => {
            let t = m.file_type();
            Ok(if t.is_file() {
                None
            } else if t.is_symlink() {
                Some("a symbolic link")
            } else if t.is_dir() {
                Some("a directory")
            } else if t.is_fifo() {
                Some("a FIFO")
            } else if t.is_char_device() || t.is_block_device() {
                Some("a device")
            } else if t.is_socket() {
                Some("a socket")
            } else {
                Some("not a regular file")
            })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PlatformError::Write {
            action: "inspect",
            path: path.into(),
            source,
        }),
    }
}

fn refuse_non_regular(path: &Path) -> Result<()> {
    if let Some(what) = non_regular(path)? {
        return Err(PlatformError::Refused(format!(
            "refusing to write {}: it is {what}, not a regular file (remove it or choose another path)",
            path.display()
        )));
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (see the module documentation).
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> Result<()> {
    let file_name = path
        .file_name()
        .ok_or_else(|| PlatformError::Refused(format!("{} is not a file path", path.display())))?;
    refuse_non_regular(path)?;
    let dir = parent_dir(path);
    let mut tmp_name = OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(
        "{TMP_MARKER}{}-{}-{:016x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        rand::random::<u64>()
    ));
    let tmp = dir.join(tmp_name);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(access.mode())
        .open(&tmp)
        .map_err(io("create", &tmp))?;
    let mut guard = TempGuard {
        path: tmp.clone(),
        armed: true,
    };
    f.write_all(bytes).map_err(io("write", &tmp))?;
    f.sync_all().map_err(io("sync", &tmp))?;
    drop(f);
    // Checked again just before the rename: something may have appeared meanwhile.
    refuse_non_regular(path)?;
    fs::rename(&tmp, path).map_err(io("move into place", path))?;
    guard.armed = false;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("sync directory", dir))?;
    report_stale_temps(dir, file_name);
    Ok(())
}

/// An I/O error of `action` on `path`.
fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> PlatformError + 'a {
    move |source| PlatformError::Write {
        action,
        path: path.into(),
        source,
    }
}

/// Warns about temporary files of `file_name` left by runs that were killed (their pid is gone).
fn report_stale_temps(dir: &Path, file_name: &std::ffi::OsStr) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{}{TMP_MARKER}", file_name.to_string_lossy());
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            eprintln!(
                "warning: {} is a temporary file left by an interrupted vsp run; delete it",
                dir.join(&*name).display()
            );
        }
    }
}

/// Whether `a` and `b` name the same file: same device and inode when both exist, otherwise the
/// same canonical directory and file name.
fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    let canonical = |p: &Path| -> Option<PathBuf> {
        if let Ok(c) = fs::canonicalize(p) {
            return Some(c);
        }
        Some(fs::canonicalize(parent_dir(p)).ok()?.join(p.file_name()?))
    };
    match (canonical(a), canonical(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Refuses an output path that is not a regular file or that names one of `inputs` (what the
/// command reads or keeps: keys, requests, snapshots, sources), before any work is done.
pub fn check_output(output: &Path, inputs: &[(&str, &Path)]) -> Result<()> {
    refuse_non_regular(output)?;
    for (what, input) in inputs {
        if same_file(output, input) {
            return Err(PlatformError::Refused(format!(
                "refusing to write {} over the {what} {} (the same file): choose another output",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// The warning to give when a secret key file is readable or writable by group or others.
pub fn exposure_warning(path: &Path) -> Option<String> {
    let mode = fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "warning: secret key {} is accessible by others (mode {mode:04o}); run `chmod 600 {}`",
            path.display(),
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_leaves_no_temp_and_sets_modes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        write_atomic(&p, b"one", Access::Public).unwrap();
        write_atomic(&p, b"two", Access::Private).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_guard_removes_the_temp_file_unless_disarmed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".x.vsp-tmp-1-0-0");
        fs::write(&p, b"partial").unwrap();
        drop(TempGuard {
            path: p.clone(),
            armed: true,
        });
        assert!(!p.exists());
        fs::write(&p, b"done").unwrap();
        drop(TempGuard {
            path: p.clone(),
            armed: false,
        });
        assert!(p.exists());
    }

    #[test]
    fn a_refused_write_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub");
        fs::create_dir(&p).unwrap();
        assert!(write_atomic(&p, b"x", Access::Public).is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn same_file_sees_through_names() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, b"x").unwrap();
        fs::hard_link(&a, dir.path().join("b")).unwrap();
        assert!(same_file(&a, &dir.path().join("b")));
        assert!(same_file(&a, &dir.path().join(".").join("a")));
        assert!(same_file(
            &dir.path().join("new"),
            &dir.path().join("./new")
        ));
        assert!(!same_file(&a, &dir.path().join("new")));
    }
}
