//! `mpirun -np P vsp circuit run …` (built with `--features mpi`): the same outputs and bit-identical
//! final states as the single-process run, plain and encrypted, on 2 and 3 ranks; a rank that dies or
//! ranks that disagree stop the whole job with an error and no result file. The tests need `mpirun`
//! (openmpi-bin); `.ci/run` installs it and runs them with `--include-ignored`.
#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{enc_request, ok, resume_request, run_request};

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

/// A scratch folder with the memuser inputs (`in.json`).
fn memuser() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    memuser_inputs(d.path());
    d
}

/// The memuser blueprint's path.
fn memuser_bp() -> &'static str {
    static BP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BP.get_or_init(|| {
        testdata()
            .join("memuser.toml")
            .to_str()
            .unwrap()
            .to_string()
    })
}

/// `vsp circuit run` of the memuser blueprint on its inputs for `cycles` cycles after a reset,
/// and `rest`.
fn memuser_run<'a>(cycles: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let bp = memuser_bp();
    let head = [
        "circuit",
        "run",
        "--blueprint",
        bp,
        "--inputs",
        "in.json",
        "--reset",
        "--cycles",
        cycles,
    ];
    [&head[..], rest].concat()
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
    let d = memuser();
    let dir = d.path();
    let run =
        |out: &'static str, trace: &'static str| memuser_run("37", &["-o", out, "--trace", trace]);
    ok(&run("one.json", "one.trace"), dir);
    let one: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("one.json")).unwrap()).unwrap();
    assert_ne!(one["outputs"]["acc"], 0, "the check would compare zeros");
    ok_mpi(2, &run("np2.json", "np2.trace"), dir);
    same_file(dir, "one.json", "np2.json");
    same_file(dir, "one.trace", "np2.trace");
    ok_mpi(3, &run("np3.json", "np3.trace"), dir);
    same_file(dir, "one.json", "np3.json");
    same_file(dir, "one.trace", "np3.trace");
}

#[test]
#[ignore = "needs mpirun (openmpi-bin)"]
fn encrypted_runs_on_two_and_three_ranks_bit_identical() {
    let d = memuser();
    let dir = d.path();
    let bp = memuser_bp();
    ok(&["-q", "genkey", "-o", "sk.key"], dir);
    ok(&["-q", "genbkey", "-k", "sk.key", "-o", "ek.key"], dir);
    // One encrypted request; the server's result and snapshot are ciphertexts, compared bit for bit.
    let enc = ["-q", "circuit", "enc", "--blueprint", bp, "--key", "sk.key"];
    let mut enc = enc.to_vec();
    enc.extend(["--inputs", "in.json", "-o", "req.enc"]);
    ok(&enc, dir);
    let exec = |out: &'static str| {
        vec![
            "-q",
            "circuit",
            "exec",
            "--blueprint",
            bp,
            "-e",
            "ek.key",
            "-i",
            "req.enc",
            "--reset",
            "--cycles",
            "5",
            "-t",
            "1",
            "-o",
            out,
        ]
    };
    ok(&exec("one.res"), dir);
    ok_mpi(2, &exec("np2.res"), dir);
    same_file(dir, "one.res", "np2.res");
    same_file(dir, "one.res.snapshot", "np2.res.snapshot");
    // Resuming the 2-rank snapshot on 3 ranks continues exactly like the single process.
    let resume = |snap: &'static str, out: &'static str| {
        vec![
            "-q",
            "circuit",
            "resume",
            snap,
            "--blueprint",
            bp,
            "-e",
            "ek.key",
            "--cycles",
            "2",
            "-o",
            out,
        ]
    };
    ok(&resume("one.res.snapshot", "one2.res"), dir);
    ok_mpi(3, &resume("np2.res.snapshot", "np3.res"), dir);
    same_file(dir, "one2.res", "np3.res");
    // And the decrypted result is the plain run's.
    let dec = [
        "circuit",
        "dec",
        "--blueprint",
        bp,
        "--key",
        "sk.key",
        "-i",
        "np3.res",
    ];
    let enc_out: serde_json::Value = serde_json::from_str(&ok(&dec, dir)).unwrap();
    let plain = memuser_run("7", &[]);
    let plain_out: serde_json::Value = serde_json::from_str(&ok(&plain, dir)).unwrap();
    // After reset and 6 cycles memuser has read back a written word into @acc and written three
    // RAM words: registers and RAM are compared, and neither is the power-up zero.
    assert_ne!(
        plain_out["outputs"]["acc"], 0,
        "the check would compare zeros"
    );
    let ram = plain_out["memories"]["ram"]
        .as_array()
        .expect("the plain run's RAM");
    assert!(ram.iter().filter(|w| **w != 0).count() >= 3, "{ram:?}");
    assert_eq!(enc_out["outputs"], plain_out["outputs"]);
    assert_eq!(enc_out["memories"], plain_out["memories"]);
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
    let err = common::stderr_text(&mut child);
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
    let err = common::stderr_text(&mut child);
    assert!(err.contains("different command lines"), "{err}");
    assert!(!dir.join("out.json").exists());
    // Commands that do not run on ranks are refused.
    let out = vsp_mpi(2, &["genkey", "-o", "k.key"], dir);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("run on several MPI ranks"));
    assert!(!dir.join("k.key").exists());
}

#[allow(dead_code)]
#[path = "common/serving.rs"]
mod serving;

/// `vsp serve --mpi-ranks 2`: a job runs under `mpirun` (every rank a process of its own); the server
/// killed with SIGKILL mid-job leaves the launcher running; the next start stops it, resumes the job
/// from its newest snapshot on 2 ranks again, and the result is byte-identical to `vsp run` to that
/// cycle then `vsp resume` in one process, and decrypts to the emulator's registers.
#[test]
#[ignore = "needs mpirun (openmpi-bin)"]
fn a_served_job_runs_under_mpirun_and_resumes_after_the_server_is_killed() {
    use serving::{remote, resumed_at, strs, submit_until_snapshot, watch_and_fetch, Serving};
    const CYCLES: u64 = 3;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let data = d.join("data");
    let log = d.join("server.log");
    let fib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cahp/asm/programs/fib.s");
    ok(&["-q", "asm", fib.to_str().unwrap(), "-o", "fib.img"], d);
    ok(&["-q", "genkey", "-o", "sk.key"], d);
    ok(&["-q", "genbkey", "-k", "sk.key", "-o", "ek.key"], d);
    ok(&enc_request("req.enc", &["fib.img", "5"]), d);
    ok(
        &[
            "-q", "serve", "token", "add", "alice", "--data", "data", "-o", "token",
        ],
        d,
    );
    let mpi = [
        "--mpi-ranks",
        "2",
        "--mpi-arg=--oversubscribe",
        "--mpi-snapshot-every",
        "1",
    ];
    let envs = [
        ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
        ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
    ];
    let srv = Serving::start_with(&data, &log, &mpi, &envs);
    ok(&strs(&remote(&srv.url, &["key-upload", "ek.key"])), d);
    // Killed once the launched job wrote its first snapshot; its launcher lives on.
    let cycles = CYCLES.to_string();
    let (id, job) = submit_until_snapshot(&srv.url, d, &data, &cycles, Duration::from_secs(900));
    let pid: u32 = std::fs::read_to_string(job.join("launcher.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(children(pid).len(), 2, "mpirun runs 2 ranks");
    srv.kill();

    let srv = Serving::start_with(&data, &log, &mpi, &envs);
    watch_and_fetch(&srv.url, &id, &CYCLES.to_string(), d);
    drop(srv);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the first launcher still runs"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("every job runs under mpirun on 2 ranks"),
        "{logged}"
    );
    let at = resumed_at(&logged, &id);
    assert!((1..CYCLES).contains(&at), "resumed at cycle {at}");
    let threads = ["--threads", "2"];
    ok(
        &[
            &run_request("req.enc", "pre.enc", &[])[..],
            &["--cycles", &at.to_string()],
            &threads,
        ]
        .concat(),
        d,
    );
    ok(
        &[
            &resume_request("pre.enc.snapshot", "direct.enc", &[])[..],
            &["--cycles", &(CYCLES - at).to_string(), "--no-snapshot"],
            &threads,
        ]
        .concat(),
        d,
    );
    same_file(d, "service.enc", "direct.enc");
    let dec: serde_json::Value = serde_json::from_str(&ok(
        &["dec", "-k", "sk.key", "-i", "service.enc", "--json"],
        d,
    ))
    .unwrap();
    let cycles = CYCLES.to_string();
    let emu = common::vsp(
        &["emu", "--json", "--max-cycles", &cycles, "fib.img", "5"],
        d,
    );
    let emu: serde_json::Value = serde_json::from_slice(&emu.stdout).unwrap();
    assert_eq!(dec["regs"], emu["regs"], "{dec} vs {emu}");
}
