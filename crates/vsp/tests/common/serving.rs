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

/// Submits the request `req.enc` of `d` for `cycles` cycles to the server at `url` and waits (at most
/// `limit`) until the job's first snapshot is written under `data`; the job's id and folder.
pub fn submit_until_snapshot(
    url: &str,
    d: &Path,
    data: &Path,
    cycles: &str,
    limit: std::time::Duration,
) -> (String, std::path::PathBuf) {
    let id = ok(
        &strs(&remote(url, &["submit", "req.enc", "--cycles", cycles])),
        d,
    );
    let id = id.trim().to_string();
    let job = data.join("jobs").join(&id);
    let t = std::time::Instant::now();
    while !job.join("snapshot").exists() {
        assert!(t.elapsed() < limit, "no snapshot");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (id, job)
}

/// Watches job `id` on the server at `url` until it is done after all its `cycles` cycles, then
/// fetches its result to `service.enc` in `d`.
pub fn watch_and_fetch(url: &str, id: &str, cycles: &str, d: &Path) {
    let out = ok(&strs(&remote(url, &["watch", id])), d);
    assert!(
        out.contains("done") && out.contains(&format!("cycle {cycles}/{cycles}")),
        "{out}"
    );
    ok(&strs(&remote(url, &["fetch", id, "-o", "service.enc"])), d);
}

/// The cycle the server's log says job `id` resumed from its snapshot at.
pub fn resumed_at(logged: &str, id: &str) -> u64 {
    logged
        .lines()
        .find_map(|l| l.strip_prefix(&format!("job {id}: resuming from its snapshot at cycle ")))
        .unwrap_or_else(|| panic!("no resume line in {logged}"))
        .trim()
        .parse()
        .unwrap()
}
