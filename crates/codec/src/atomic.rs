//! The one way a file reaches the disk, and the checks on output paths.
//!
//! [`write_atomic`] writes to a fresh temporary file in the target's directory, created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` (a planted file or symlink under the temporary name is never followed
//! or reused) and with its final permissions set at creation (0600 for secret keys, so a key is
//! never readable by others, not even for a moment; a file replaced keeps its group and other
//! permissions if they were stricter, so a mode is never loosened). The name is unique (pid, a
//! counter and random bits). The data is written and fsynced, the file renamed over the target, and
//! the directory fsynced so the rename survives a crash. On any failure the temporary file is
//! removed (a drop guard, so an early return or a panic cannot leave it behind).
//!
//! The target itself must be absent or a regular file: a symlink, FIFO, device or directory at an
//! output path is refused rather than replaced. [`check_output`] also refuses an output path that
//! names one of the command's own inputs (the same file under any name: device and inode when it
//! exists, otherwise the canonical path).

use std::collections::hash_map::RandomState;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;

/// Who may read a written file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Secret key material: 0600 from creation on.
    Private,
    /// Everything else: 0644 (less under a stricter umask, or where the replaced file was stricter).
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
pub const TMP_MARKER: &str = ".vsp-tmp-";

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

/// What is at `path`: `None` when absent, the metadata of a regular file, or an error naming the
/// non-regular thing there.
fn regular_or_absent(path: &Path) -> Result<Option<fs::Metadata>, Error> {
    let m = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("cannot inspect", path, e)),
    };
    let t = m.file_type();
    let what = if t.is_file() {
        return Ok(Some(m));
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(Error::NotRegular {
        path: path.display().to_string(),
        what,
    })
}

fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.load(Ordering::Relaxed));
    h.finish()
}

/// Writes `bytes` to `path` atomically (see the module documentation).
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> Result<(), Error> {
    let file_name = path.file_name().ok_or_else(|| {
        Error::io(
            "cannot write",
            path,
            std::io::Error::new(ErrorKind::InvalidInput, "not a file path"),
        )
    })?;
    let mut mode = access.mode();
    if let Some(old) = regular_or_absent(path)? {
        // Never loosen: group and other bits only where both the old file and `access` allow them.
        mode &= 0o700 | (old.permissions().mode() & 0o077);
    }
    let dir = parent_dir(path);
    let mut tmp_name = OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(
        "{TMP_MARKER}{}-{}-{:016x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        random_u64()
    ));
    let tmp = dir.join(tmp_name);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(mode)
        .open(&tmp)
        .map_err(|e| Error::io("cannot create", &tmp, e))?;
    let mut guard = TempGuard {
        path: tmp.clone(),
        armed: true,
    };
    f.write_all(bytes)
        .map_err(|e| Error::io("cannot write", &tmp, e))?;
    f.sync_all()
        .map_err(|e| Error::io("cannot sync", &tmp, e))?;
    drop(f);
    // Checked again just before the rename: something may have appeared meanwhile.
    regular_or_absent(path)?;
    fs::rename(&tmp, path).map_err(|e| Error::io("cannot move into place", path, e))?;
    guard.armed = false;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("cannot sync directory", dir, e))?;
    Ok(())
}

/// Reads a whole regular file of at most [`crate::limits::ANY`] bytes (a FIFO, device or directory
/// is refused, see [`crate::read_bounded`], which callers use with the bound of their kind); the
/// error names the path.
pub fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    crate::read_bounded(path, crate::limits::ANY, "any vsp file")
}

/// Temporary files of `path` left by writes that were killed (their process is gone).
pub fn stale_temps(path: &Path) -> Vec<PathBuf> {
    let (dir, Some(file_name)) = (parent_dir(path), path.file_name()) else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let prefix = format!(".{}{TMP_MARKER}", file_name.to_string_lossy());
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let rest = name.to_string_lossy().strip_prefix(&prefix)?.to_string();
            let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
            let alive = pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
            (!alive).then(|| dir.join(&name))
        })
        .collect()
}

/// Whether `a` and `b` name the same file: same device and inode when both exist, otherwise the
/// same canonical directory and file name.
pub fn same_file(a: &Path, b: &Path) -> bool {
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
pub fn check_output(output: &Path, inputs: &[(&str, &Path)]) -> Result<(), Error> {
    regular_or_absent(output)?;
    for (what, input) in inputs {
        if same_file(output, input) {
            return Err(Error::SameFile {
                path: output.display().to_string(),
                what: (*what).to_string(),
                input: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// The permission bits of a secret key file when group or others may access it.
pub fn exposed_mode(path: &Path) -> Option<u32> {
    let mode = fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

/// Whether a file name is one of [`write_atomic`]'s temporary names.
pub fn is_temp_name(name: &OsStr) -> bool {
    name.to_string_lossy().contains(TMP_MARKER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn replaces_leaves_no_temp_and_sets_modes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        write_atomic(&p, b"one", Access::Public).unwrap();
        write_atomic(&p, b"two", Access::Private).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(mode(&p), 0o600);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_private_file_is_never_loosened() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("key");
        write_atomic(&p, b"secret", Access::Private).unwrap();
        write_atomic(&p, b"public now?", Access::Public).unwrap();
        assert_eq!(mode(&p), 0o600);
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
    fn refused_targets_leave_no_temp_and_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let e = write_atomic(&sub, b"x", Access::Public).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let victim = dir.path().join("victim");
        fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("link");
        symlink(&victim, &link).unwrap();
        let e = write_atomic(&link, b"x", Access::Public).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        let e = write_atomic(Path::new("/dev/null"), b"x", Access::Public).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_missing_directory_is_an_io_error_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/f");
        let e = write_atomic(&p, b"x", Access::Public).unwrap_err();
        assert!(e.to_string().starts_with("cannot create"), "{e}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn stale_temps_are_found_and_live_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        let dead = dir.path().join(".out.vsp-tmp-4294967295-0-0");
        let live = dir
            .path()
            .join(format!(".out.vsp-tmp-{}-0-0", std::process::id()));
        fs::write(&dead, b"").unwrap();
        fs::write(&live, b"").unwrap();
        assert_eq!(stale_temps(&p), vec![dead.clone()]);
        assert!(is_temp_name(dead.file_name().unwrap()));
    }

    #[test]
    fn same_file_sees_through_names_and_check_output_refuses_inputs() {
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
        let e = check_output(&dir.path().join("b"), &[("snapshot", &a)]).unwrap_err();
        assert!(e.to_string().contains("over the snapshot"), "{e}");
        check_output(&dir.path().join("new"), &[("snapshot", &a)]).unwrap();
    }
}
