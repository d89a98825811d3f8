//! Helpers the suites share: numeric suite arguments and the output of a reference script.

use std::process::Command;

/// Suite argument `i` as a number (`what` names it in the error), `default` when it is absent.
pub fn num_arg(args: &[String], i: usize, what: &str, default: u64) -> anyhow::Result<u64> {
    match args.get(i) {
        Some(a) => a
            .parse()
            .map_err(|_| anyhow::anyhow!("{what} must be a number, got {a:?}")),
        None => Ok(default),
    }
}

/// Runs a reference script (`program` names it in the error) and returns its standard output; when
/// it fails, the last line of its standard error.
pub fn script_output(cmd: &mut Command, program: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{program}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("no output")
            .to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
