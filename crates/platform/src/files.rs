//! The one way the platform writes a file, and the checks on output paths: thin wrappers over
//! [`vsp_codec`]'s atomic write (see `vsp_codec::atomic` for the guarantees: an exclusively created
//! temporary file in the target's directory, 0600 for secret keys and never loosened, fsync,
//! rename, fsync of the directory, the temporary file removed on any failure, never through a
//! symlink or over a device) that add the platform's error type and its warnings on stderr.

use std::path::Path;

use crate::error::Result;

mod written;
pub use written::{What, Written, WrittenImage};

pub use vsp_codec::text;
pub use vsp_codec::{
    check_input, limits, lock_output, read_bounded, read_text_bounded, Access, OutputLock,
};

/// Writes `bytes` to `path` atomically, then warns about temporary files of `path` left by runs
/// that were killed.
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> Result<()> {
    vsp_codec::write_atomic(path, bytes, access)?;
    warn_stale_temps(path);
    Ok(())
}

/// Warns about temporary files of `path` left by runs that were killed (after a file written by
/// another writer, such as the engine's snapshots).
pub fn warn_stale_temps(path: &Path) {
    for stale in vsp_codec::stale_temps(path) {
        eprintln!(
            "warning: {} is a temporary file left by an interrupted vsp run; delete it",
            stale.display()
        );
    }
}

/// Refuses an output path that is not a regular file or that names one of `inputs` (what the
/// command reads or keeps: keys, requests, snapshots, sources), before any work is done.
pub fn check_output(output: &Path, inputs: &[(&str, &Path)]) -> Result<()> {
    Ok(vsp_codec::check_output(output, inputs)?)
}

/// Longest error line [`error_line`] gives, in characters (a message quoting a huge input is cut).
pub const MAX_ERROR_CHARS: usize = 1000;

/// `e` and its causes on one line, as the commands print an error: each cause once (a message that
/// already quotes its cause, as `cannot read F: No such file or directory (os error 2)` does, is
/// not followed by it again), control characters escaped, cut to [`MAX_ERROR_CHARS`].
pub fn error_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let s = c.to_string();
        if !s.is_empty() && !msg.contains(&s) {
            if !msg.is_empty() {
                msg.push_str(": ");
            }
            msg.push_str(&s);
        }
        cause = c.source();
    }
    text::cut(&msg, MAX_ERROR_CHARS)
}

/// The warning to give when a secret key file is readable or writable by group or others.
pub fn exposure_warning(path: &Path) -> Option<String> {
    vsp_codec::exposed_mode(path).map(|mode| {
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

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Layer(String, #[source] Option<Box<Layer>>);

    fn layers(msgs: &[&str]) -> Layer {
        msgs.iter()
            .rev()
            .fold(None, |inner, m| {
                Some(Layer(m.to_string(), inner.map(Box::new)))
            })
            .unwrap_or(Layer(String::new(), None))
    }

    #[test]
    fn error_line_says_each_cause_once_escaped_and_cut() {
        let e = layers(&["cannot read f: gone", "gone", "", "bad\nbyte"]);
        assert_eq!(error_line(&e), "cannot read f: gone: bad\\nbyte");
        let long = "x".repeat(MAX_ERROR_CHARS + 5);
        let line = error_line(&layers(&[&long]));
        assert!(line.ends_with("… (5 more characters)"), "{line}");
    }
}
