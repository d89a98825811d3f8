//! A `vsp serve` process for the tests, and `vsp remote` command lines against it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::common::ok;

/// A `vsp serve` process on 127.0.0.1 with an OS-assigned port; killed (SIGKILL) when dropped.
pub struct Serving {
    child: Child,
    pub url: String,
}

impl Serving {
    pub fn start(data: &Path, log: &Path) -> Serving {
        Serving::start_with(data, log, &[], &[])
    }

    /// With more `vsp serve` arguments and environment variables.
    pub fn start_with(data: &Path, log: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Serving {
        let err = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_vsp"))
            .args(["serve", "--listen", "127.0.0.1:0", "--snapshot-secs", "0"])
            .args(["--threads", "2"])
            .args(extra)
            .envs(envs.iter().copied())
            .arg("--data")
            .arg(data)
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .expect("vsp serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Serving { child, url }
    }

    /// SIGKILL, as a crash would.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `vsp remote --server url --token-file token args…`.
pub fn remote(url: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec!["remote".to_string(), "--server".into(), url.into()];
    v.extend(["--token-file".into(), "token".into()]);
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `vsp remote status ID --json`'s job.
pub fn status_json(url: &str, id: &str, d: &Path) -> serde_json::Value {
    let out = ok(&strs(&remote(url, &["status", id, "--json"])), d);
    serde_json::from_str::<serde_json::Value>(&out).unwrap()[0].clone()
}
