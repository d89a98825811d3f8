//! `mpirun -np P vsp circuit run …` (built with `--features mpi`): the same outputs and bit-identical
//! final states as the single-process run, plain and encrypted, on 2 and 3 ranks; a rank that dies or
//! ranks that disagree stop the whole job with an error and no result file. The tests need `mpirun`
//! (openmpi-bin); `.ci/run` installs it and runs them with `--include-ignored`.
#![cfg(feature = "mpi")]

#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::ok;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuit/testdata")
}

fn mpirun(np: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    c
}

/// `mpirun -np np vsp args…` in `dir`.
fn vsp_mpi(np: usize, args: &[&str], dir: &Path) -> Output {
    mpirun(np)
        .arg(env!("CARGO_BIN_EXE_vsp"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("mpirun runs (install openmpi-bin)")
}

fn ok_mpi(np: usize, args: &[&str], dir: &Path) {
    let out = vsp_mpi(np, args, dir);
    assert!(
        out.status.success(),
        "mpirun -np {np} vsp {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The memuser ROM program: even words write `data ^ acc` to RAM word `(i/2) % 4`, odd words read it
/// back, so `@acc` and the RAM depend on every cycle.
fn memuser_inputs(dir: &Path) {
    let rom: Vec<u64> = (0..16u64)
        .map(|i| {
            let addr = ((i / 2) % 4) << 11;
            if i % 2 == 0 {
                0x8000 | addr | ((i * 37) & 0xff)
            } else {
                addr
            }
        })
        .collect();
    let json = serde_json::json!({ "inputs": {}, "memories": { "rom": rom } });
    std::fs::write(dir.join("in.json"), json.to_string()).unwrap();
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn same_file(dir: &Path, a: &str, b: &str) {
    let (x, y) = (
        std::fs::read(dir.join(a)).unwrap(),
        std::fs::read(dir.join(b)).unwrap(),
    );
    assert!(x == y, "{a} and {b} differ");
}

#[test]
#[ignore = "needs mpirun (openmpi-bin)"]
fn plain_runs_on_two_and_three_ranks_like_one_process() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    memuser_inputs(dir);
    let bp = testdata().join("memuser.toml");
    let bp = bp.to_str().unwrap();
    let run = |out: &str, state: &str| {
        vec![
            "circuit".to_string(),
            "run".into(),
            "--blueprint".into(),
            bp.into(),
            "--inputs".into(),
            "in.json".into(),
            "--reset".into(),
            "--cycles".into(),
            "37".into(),
            "-o".into(),
            out.into(),
            "--state".into(),
            state.into(),
        ]
    };
    ok(&strs(&run("one.json", "one.snap")), dir);
    let one: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("one.json")).unwrap()).unwrap();
    assert_ne!(one["outputs"]["acc"], 0, "the check would compare zeros");
    for np in [2, 3] {
        let (o, s) = (format!("np{np}.json"), format!("np{np}.snap"));
        ok_mpi(np, &strs(&run(&o, &s)), dir);
        same_file(dir, "one.json", &o);
        same_file(dir, "one.snap", &s);
    }
}

#[test]
#[ignore = "needs mpirun (openmpi-bin)"]
fn encrypted_runs_on_two_and_three_ranks_bit_identical() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    memuser_inputs(dir);
    let bp = testdata().join("memuser.toml");
    let bp = bp.to_str().unwrap();
    ok(&["-q", "genkey", "-o", "sk.key"], dir);
    ok(&["-q", "genbkey", "-k", "sk.key", "-o", "ek.key"], dir);
    let keys = ["--key", "sk.key", "--eval-key", "ek.key"];
    // Encrypted inputs are fresh each run: every run resumes from one encrypted state.
    let mut first = vec![
        "-q",
        "circuit",
        "run",
        "--blueprint",
        bp,
        "--inputs",
        "in.json",
    ];
    first.extend([
        "--reset", "--cycles", "2", "-o", "s0.json", "--state", "s0.snap",
    ]);
    first.extend(keys);
    ok(&first, dir);
    let run = |out: &'static str, state: &'static str| {
        let mut v = vec![
            "-q",
            "circuit",
            "run",
            "--blueprint",
            bp,
            "--resume",
            "s0.snap",
        ];
        v.extend(["--cycles", "2", "-t", "1", "-o", out, "--state", state]);
        v.extend(keys);
        v
    };
    ok(&run("one.json", "one.snap"), dir);
    ok_mpi(2, &run("np2.json", "np2.snap"), dir);
    same_file(dir, "one.json", "np2.json");
    same_file(dir, "one.snap", "np2.snap");
    ok_mpi(3, &run("np3.json", "np3.snap"), dir);
    same_file(dir, "one.json", "np3.json");
    same_file(dir, "one.snap", "np3.snap");
    let one: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("one.json")).unwrap()).unwrap();
    assert_eq!(one["outputs"]["pc"], 3, "pc after reset, 2 + 2 cycles");
}

/// Waits for `child` at most `limit`; kills it and fails the test if it hangs.
fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("the MPI job hangs");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The direct children of process `pid` (Open MPI's mpirun starts local ranks itself).
fn children(pid: u32) -> Vec<u32> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in rd.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                v.extend(s.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
            }
        }
    }
    v
}

#[test]
#[ignore = "needs mpirun (openmpi-bin)"]
fn a_dying_rank_stops_the_job_without_a_result() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let bp = testdata().join("counter.toml");
    let mut child = mpirun(2)
        .arg(env!("CARGO_BIN_EXE_vsp"))
        .args(["circuit", "run", "--blueprint", bp.to_str().unwrap()])
        .args(["--cycles", "1000000000", "-o", "out.json"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun runs (install openmpi-bin)");
    // Wait until both ranks run, then kill the last one.
    let t = Instant::now();
    let victim = loop {
        let ranks: Vec<u32> = children(child.id())
            .into_iter()
            .filter(|&p| {
                std::fs::read_link(format!("/proc/{p}/exe"))
                    .is_ok_and(|e| e.file_name().is_some_and(|n| n == "vsp"))
            })
            .collect();
        if ranks.len() == 2 {
            break ranks[1];
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the ranks did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-KILL", &victim.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    assert!(!status.success(), "the job must fail when a rank dies");
    assert!(!dir.join("out.json").exists(), "no partial result");
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        err.contains("signal 9") || err.contains("Killed") || err.contains("exited"),
        "mpirun names the dead rank: {err}"
    );
}

#[test]
#[ignore = "needs mpirun (openmpi-bin)"]
fn ranks_with_different_commands_stop_with_an_error() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let bp = testdata().join("counter.toml");
    let bp = bp.to_str().unwrap();
    let vsp = env!("CARGO_BIN_EXE_vsp");
    let mut c = mpirun(1);
    c.args([vsp, "circuit", "run", "--blueprint", bp, "--cycles", "5"])
        .args(["-o", "out.json", ":", "-np", "1", vsp, "circuit", "run"])
        .args(["--blueprint", bp, "--cycles", "6", "-o", "out.json"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("mpirun runs");
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    assert!(!status.success());
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("different command lines"), "{err}");
    assert!(!dir.join("out.json").exists());
    // Commands that do not run on ranks are refused.
    let out = vsp_mpi(2, &["genkey", "-o", "k.key"], dir);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("only `run`, `resume` and `circuit run`"));
    assert!(!dir.join("k.key").exists());
}
