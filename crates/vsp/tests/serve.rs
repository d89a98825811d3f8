//! `vsp serve` and `vsp remote` as processes: the server killed with SIGKILL mid-job and started
//! again finishes the job from its last snapshot with a result byte-identical to `vsp run`'s; a
//! finished job survives another restart untouched; every refusal is a one-line error.

mod common;
#[path = "common/serving.rs"]
mod serving;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{circuit_decrypted, enc_request, fails, fib_request, ok, resume_request, run_request};
use serving::{
    remote, resumed_at, status_json, strs, submit_until_snapshot, watch_and_fetch, Serving,
};

#[test]
fn a_job_killed_with_sigkill_resumes_and_ends_byte_identical_to_vsp_run() {
    const CYCLES: &str = "3";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("data");
    let log = d.join("server.log");
    fib_request(d);
    let token = ok(&["serve", "token", "add", "alice", "--data", "data"], d);
    assert!(token.trim().starts_with("vsp_"), "{token}");
    // -o writes it to a private file instead.
    let out = ok(
        &[
            "-q", "serve", "token", "add", "alice", "--data", "data", "-o", "token",
        ],
        d,
    );
    assert!(out.is_empty(), "{out}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(d.join("token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(std::fs::read_to_string(d.join("token"))
        .unwrap()
        .starts_with("vsp_"));

    let srv = Serving::start(&data, &log);
    let out = ok(&strs(&remote(&srv.url, &["key-upload", "ek.key"])), d);
    assert!(out.starts_with("uploaded key"), "{out}");
    let out = ok(&strs(&remote(&srv.url, &["key-upload", "ek.key"])), d);
    assert!(out.contains("has key") && out.contains("already"), "{out}");
    // Killed once the first snapshot is written, in the middle of the job.
    let (id, job) = submit_until_snapshot(&srv.url, d, &data, CYCLES, Duration::from_secs(600));
    srv.kill();
    assert!(!job.join("result.enc").exists());

    let srv = Serving::start(&data, &log);
    let st = status_json(&srv.url, &id, d);
    assert!(
        matches!(st["state"].as_str(), Some("queued" | "running")),
        "{st}"
    );
    watch_and_fetch(&srv.url, &id, CYCLES, d);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("resuming 1 unfinished job"), "{logged}");

    // The job resumed from the snapshot it had when it was killed: `vsp run` to that cycle and
    // `vsp resume` from its snapshot give the same bytes. (A resumed run's ciphertexts differ from
    // an uninterrupted run's, which decrypts the same: compared below with the plain run.)
    let at = resumed_at(&logged, &id);
    let total: u64 = CYCLES.parse().unwrap();
    assert!((1..total).contains(&at), "resumed at cycle {at}");
    let t = Instant::now();
    ok(
        &run_request(
            "req.enc",
            "pre.enc",
            &["--cycles", &at.to_string(), "--threads", "2"],
        ),
        d,
    );
    ok(
        &resume_request(
            "pre.enc.snapshot",
            "direct.enc",
            &[
                "--cycles",
                &(total - at).to_string(),
                "--threads",
                "2",
                "--no-snapshot",
            ],
        ),
        d,
    );
    eprintln!(
        "vsp run + vsp resume of {CYCLES} cycles: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert!(
        std::fs::read(d.join("service.enc")).unwrap()
            == std::fs::read(d.join("direct.enc")).unwrap(),
        "the resumed job's result differs from vsp run + vsp resume's"
    );
    let dec: serde_json::Value = serde_json::from_str(&ok(
        &["dec", "-k", "sk.key", "-i", "service.enc", "--json"],
        d,
    ))
    .unwrap();
    // `vsp emu` stopped early prints its JSON and fails: read stdout either way.
    let emu = common::vsp(
        &["emu", "--json", "--max-cycles", CYCLES, "fib.img", "5"],
        d,
    );
    let emu: serde_json::Value = serde_json::from_slice(&emu.stdout).unwrap();
    assert_eq!(dec["regs"], emu["regs"], "{dec} vs {emu}");

    // A finished job survives a restart untouched: never run again, never lost.
    let result = job.join("result.enc");
    let before = std::fs::metadata(&result).unwrap().modified().unwrap();
    srv.kill();
    let srv = Serving::start(&data, &log);
    std::thread::sleep(Duration::from_millis(700));
    let st = status_json(&srv.url, &id, d);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(
        std::fs::metadata(&result).unwrap().modified().unwrap(),
        before
    );
    ok(
        &strs(&remote(&srv.url, &["fetch", &id, "-o", "again.enc"])),
        d,
    );
    assert!(
        std::fs::read(d.join("again.enc")).unwrap() == std::fs::read(d.join("direct.enc")).unwrap()
    );

    // Until finished: the server cannot see the finish flag, so the client decrypts each result
    // and extends the job until the flag is set (this program halts in its second cycle).
    let tiny = "    .text\n    .globl _start\n_start:\n    li a0, 7\n    hlt\n";
    std::fs::write(d.join("tiny.s"), tiny).unwrap();
    ok(&["-q", "asm", "tiny.s", "-o", "tiny.img"], d);
    ok(&enc_request("tiny.enc", &["tiny.img"]), d);
    let args = ["submit", "tiny.enc", "--cycles", "1", "--step", "1"];
    let args = [
        &args[..],
        &["--until-finished", "sk.key", "-o", "tiny.result"],
    ]
    .concat();
    let out = ok(&strs(&remote(&srv.url, &args)), d);
    assert!(out.contains("finished after 2 cycles: x8 = 7"), "{out}");

    // A circuit job: `vsp circuit enc` for a netlist, submitted with it, decrypted by `circuit dec`.
    std::fs::write(d.join("en.json"), r#"{"inputs": {"en": 1}}"#).unwrap();
    let net = Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuit/testdata/counter.json");
    let net = net.to_str().unwrap();
    let enc = ["-q", "circuit", "enc", "--netlist", net, "-k", "sk.key"];
    ok(
        &[&enc[..], &["--inputs", "en.json", "-o", "c.req"]].concat(),
        d,
    );
    let args = [
        "submit",
        "c.req",
        "--netlist",
        net,
        "--cycles",
        "4",
        "--reset",
    ];
    let args = [&args[..], &["--wait", "-o", "c.res"]].concat();
    ok(&strs(&remote(&srv.url, &args)), d);
    let o = circuit_decrypted(net, "c.res", d);
    assert_eq!(
        (o["cycles"].as_u64(), o["outputs"]["count"].as_u64()),
        (Some(4), Some(3)),
        "{o}"
    );

    // Refusals are one line each.
    let none = "0123456789abcdef0123456789abcdef";
    let e = fails(&strs(&remote(&srv.url, &["status", none])), d);
    assert_eq!(
        e.trim(),
        "error: the server refused: no such job (HTTP 404)"
    );
    let e = fails(&strs(&remote(&srv.url, &["cancel", &id])), d);
    assert_eq!(
        e.trim(),
        "error: the server refused: the job is done already (HTTP 409)"
    );
    let e = fails(
        &strs(&remote(&srv.url, &["fetch", "nope", "-o", "x.enc"])),
        d,
    );
    assert!(
        e.trim().lines().count() == 1 && e.contains("not a job id"),
        "{e}"
    );
    let e = fails(
        &strs(&remote(&srv.url, &["submit", "sk.key", "--cycles", "1"])),
        d,
    );
    assert!(
        e.trim().lines().count() == 1 && e.contains("expected encrypted request"),
        "{e}"
    );
    std::fs::write(d.join("token"), "vsp_0000").unwrap();
    let e = fails(&strs(&remote(&srv.url, &["status"])), d);
    assert_eq!(
        e.trim(),
        "error: the server refused: unknown or revoked token (HTTP 401)"
    );
    drop(srv);
    let e = fails(&strs(&remote("http://127.0.0.1:1", &["status"])), d);
    assert!(
        e.trim().lines().count() == 1 && e.contains("cannot talk to http://127.0.0.1:1"),
        "{e}"
    );
}
