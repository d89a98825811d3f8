//! The one way an input file is read: only a regular file, never more than a bound for its kind.
//!
//! [`read_bounded`] looks at what the path names before opening it (a FIFO, device, directory or
//! socket is refused without being opened), opens it with `O_NONBLOCK` (so a FIFO swapped in
//! meanwhile cannot block the open) and checks the opened file again with `fstat` (the check that
//! counts: it is about the file actually read). A regular file larger than the bound is refused
//! from its size before anything is allocated, and the read itself stops one byte past the bound,
//! so a file that grows while it is read cannot make the reader allocate without limit.
//! [`check_input`] does the same checks without reading (for files another program reads).

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::Error;

/// What a file type is called in messages, or `None` for a regular file.
fn not_regular(t: fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        None
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
    }
}

/// `1.5 GiB`-style sizes for messages.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Opens `path` for reading after the checks of the module documentation; returns the file and
/// its size.
fn open_regular(path: &Path, max: u64, what: &str) -> Result<(File, u64), Error> {
    let refuse = |kind: &'static str| Error::NotRegularInput {
        path: path.display().to_string(),
        what: kind,
    };
    let m = fs::metadata(path).map_err(|e| Error::io("cannot read", path, e))?;
    if let Some(kind) = not_regular(m.file_type()) {
        return Err(refuse(kind));
    }
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io("cannot read", path, e))?;
    let m = f
        .metadata()
        .map_err(|e| Error::io("cannot read", path, e))?;
    if let Some(kind) = not_regular(m.file_type()) {
        return Err(refuse(kind));
    }
    if m.len() > max {
        return Err(too_large(path, Some(m.len()), max, what));
    }
    Ok((f, m.len()))
}

fn too_large(path: &Path, size: Option<u64>, max: u64, what: &str) -> Error {
    Error::TooLarge {
        path: path.display().to_string(),
        size: size.map_or_else(|| "more".to_string(), human_bytes),
        what: what.to_string(),
        max: human_bytes(max),
    }
}

/// Checks that `path` is a regular file of at most `max` bytes, as [`read_bounded`] would, without
/// reading it (for a file another program reads: a C source given to clang).
pub fn check_input(path: &Path, max: u64, what: &str) -> Result<(), Error> {
    open_regular(path, max, what).map(|_| ())
}

/// Reads the regular file `path`, refusing anything else and any file over `max` bytes (`what`
/// names the kind of file in the message: `a secret key`, `an assembly source`, …).
pub fn read_bounded(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, Error> {
    let (f, len) = open_regular(path, max, what)?;
    // The size was checked, but the file may grow: never read past max + 1 bytes.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("cannot read", path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(path, None, max, what));
    }
    Ok(bytes)
}

/// [`read_bounded`] for a text file: refuses bytes that are not UTF-8, naming the first bad
/// offset.
pub fn read_text_bounded(path: &Path, max: u64, what: &str) -> Result<String, Error> {
    let bytes = read_bounded(path, max, what)?;
    String::from_utf8(bytes).map_err(|e| Error::NotText {
        path: path.display().to_string(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// The first `prefix` bytes of the regular file `path` (fewer when it is shorter), after the same
/// checks as [`read_bounded`] (for reading a header before the whole file).
pub fn read_prefix(path: &Path, prefix: u64, max: u64, what: &str) -> Result<Vec<u8>, Error> {
    let (f, len) = open_regular(path, max, what)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(prefix)).unwrap_or(0));
    f.take(prefix)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("cannot read", path, e))?;
    Ok(bytes)
}

/// Bounds on what one input file of each kind may hold: the largest real file of the kind with a
/// wide margin, far below what would exhaust memory.
pub mod limits {
    const MIB: u64 = 1 << 20;
    /// A text source (assembly, C, a blueprint, an inputs file).
    pub const SOURCE: u64 = 64 * MIB;
    /// A Yosys JSON netlist (Pearl's is 3 MiB; large third-party designs are tens of MiB).
    pub const NETLIST: u64 = 1024 * MIB;
    /// A program image (64 KiB of address space, plus symbols).
    pub const IMAGE: u64 = 64 * MIB;
    /// A secret key (a seed and its parameter set: about a hundred bytes).
    pub const SECRET_KEY: u64 = MIB;
    /// Anything else (evaluation keys: 216 MiB at the default parameters; requests, results and
    /// snapshots of large circuits).
    pub const ANY: u64 = 16 * 1024 * MIB;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn regular_files_are_read_and_others_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        fs::write(&p, b"hello").unwrap();
        assert_eq!(read_bounded(&p, 5, "a test file").unwrap(), b"hello");
        let e = read_bounded(&p, 4, "a test file").unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "cannot read {}: it holds 5 B, more than a test file can (at most 4 B)",
                p.display()
            )
        );
        let e = read_bounded(dir.path(), 4, "x").unwrap_err().to_string();
        assert!(e.ends_with("it is a directory, not a regular file"), "{e}");
        let e = read_bounded(Path::new("/dev/zero"), 1 << 30, "x")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "cannot read /dev/zero: it is a device, not a regular file"
        );
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let e = read_bounded(&fifo, 1 << 30, "x").unwrap_err().to_string();
        assert!(e.ends_with("it is a FIFO, not a regular file"), "{e}");
        let e = check_input(&fifo, 1 << 30, "x").unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let sock = dir.path().join("sock");
        let _l = UnixListener::bind(&sock).unwrap();
        let e = read_bounded(&sock, 1 << 30, "x").unwrap_err().to_string();
        assert!(e.contains("a socket"), "{e}");
        let e = read_bounded(&dir.path().join("none"), 1, "x")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("No such file or directory (os error 2)"), "{e}");
    }

    #[test]
    fn text_must_be_utf8_and_prefixes_are_short() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        fs::write(&p, b"ab\xffcd").unwrap();
        let e = read_text_bounded(&p, 100, "x").unwrap_err().to_string();
        assert!(
            e.ends_with("is not UTF-8 text (bad byte at offset 2)"),
            "{e}"
        );
        assert_eq!(read_prefix(&p, 2, 100, "x").unwrap(), b"ab");
        assert_eq!(human_bytes(3 << 20), "3 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }

    /// mkfifo(3) without `unsafe` in this crate: the `mkfifo` program.
    fn mkfifo(path: &Path) {
        let st = std::process::Command::new("mkfifo").arg(path).status();
        assert!(st.unwrap().success(), "mkfifo {}", path.display());
    }
}
