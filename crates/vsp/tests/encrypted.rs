//! The encrypted flow through the binary, at the default (≥128-bit) parameters: genkey → genbkey →
//! enc → run (with a snapshot) → resume → dec, on Pearl and Ruby, compared with the plain gate-level
//! run stopped at the same cycle. Each encrypted cycle costs seconds on 2 cores, so this runs eight
//! CMUX-memory cycles in all (Ruby long enough that registers were written) and one MUX-memory cycle
//! (`--memory mux`, about eight times a CMUX cycle), plus two cycles of the 1 KiB Pearl
//! (`--memory-size 1024`, whose RAM costs about twice the 512-byte one's); the full programs run in
//! `vsp demo` and in vsp-bench.

mod common;

use std::path::Path;

use common::{
    circuit_decrypted, enc_request, fails, fib_request, ok, resume_request, run_request, vsp,
};

/// The plain run's registers after exactly `cycles` cycles (`vsp emu --max-cycles`).
fn plain_regs(core: &str, cycles: u64, dir: &Path) -> serde_json::Value {
    plain_regs_with(core, "cmux", cycles, dir)
}

/// [`plain_regs`] with the given memory.
fn plain_regs_with(core: &str, memory: &str, cycles: u64, dir: &Path) -> serde_json::Value {
    let out = vsp(
        &[
            "emu",
            "--json",
            "--core",
            core,
            "--memory",
            memory,
            "--max-cycles",
            &cycles.to_string(),
            "fib.img",
            "5",
        ],
        dir,
    );
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("emu prints JSON even when it stops early");
    json["regs"].clone()
}

#[test]
fn encrypted_runs_match_the_plain_run_and_resume_continues_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fib_request(d);

    // Files made for another key, of the wrong kind, or damaged are refused before any work.
    ok(&["-q", "genkey", "-o", "other.key"], d);
    ok(
        &[
            "-q",
            "enc",
            "-k",
            "other.key",
            "fib.img",
            "5",
            "-o",
            "other.enc",
        ],
        d,
    );
    let err = fails(&run_request("other.enc", "x.enc", &["--cycles", "1"]), d);
    assert!(err.contains("another key"), "{err}");
    let err = fails(&run_request("sk.key", "x.enc", &["--cycles", "1"]), d);
    assert!(
        err.contains("found secret key, expected encrypted request"),
        "{err}"
    );
    let req = std::fs::read(d.join("req.enc")).unwrap();
    std::fs::write(d.join("cut.enc"), &req[..req.len() - 1000]).unwrap();
    let err = fails(&run_request("cut.enc", "x.enc", &["--cycles", "1"]), d);
    assert!(err.contains("truncated"), "{err}");
    assert!(!d.join("x.enc").exists(), "nothing written on error");

    // Pearl: one cycle with a snapshot, then resume one more; must equal the plain state at cycle 2.
    ok(
        &run_request(
            "req.enc",
            "r1.enc",
            &["--cycles", "1", "--core", "pearl", "--snapshot", "s.snap"],
        ),
        d,
    );
    let r1 = decrypted("r1.enc", d);
    assert_eq!(r1["cycles"], 1);
    assert_eq!(r1["regs"], plain_regs("pearl", 1, d), "pearl after 1 cycle");
    assert!(
        !d.join("r1.enc.snapshot").exists(),
        "--snapshot replaces the default path"
    );
    let snap = std::fs::read(d.join("s.snap")).unwrap();
    ok(&resume_request("s.snap", "r2.enc", &["--cycles", "1"]), d);
    // The resumed run wrote a new snapshot next to its output; the one it resumed from is intact.
    assert_eq!(std::fs::read(d.join("s.snap")).unwrap(), snap);
    assert!(d.join("r2.enc.snapshot").exists());
    let r2 = decrypted("r2.enc", d);
    assert_eq!(r2["cycles"], 2);
    assert_eq!(r2["regs"], plain_regs("pearl", 2, d), "pearl after resume");
    assert_ne!(
        r1["regs"], r2["regs"],
        "the resumed cycle changed the state"
    );
    // Another key cannot decrypt the result.
    let err = fails(&["dec", "-k", "other.key", "-i", "r2.enc"], d);
    assert!(err.contains("another key"), "{err}");

    // Ruby: its first register write lands at the end of cycle 4, so run 6 cycles and make sure the
    // compared state is not the power-up zeros. Not quiet, with stderr a pipe: one line per cycle.
    let out = vsp(
        &[
            "run", "-e", "ek.key", "-i", "req.enc", "-o", "ruby.enc", "--cycles", "6", "--core",
            "ruby",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for k in 1..=6 {
        assert!(err.contains(&format!("cycle {k}/6 done in ")), "{err}");
    }
    assert!(err.contains("ETA"), "{err}");
    assert!(
        d.join("ruby.enc.snapshot").exists(),
        "snapshots are on by default"
    );
    let r = decrypted("ruby.enc", d);
    let want = plain_regs("ruby", 6, d);
    assert_eq!(r["regs"], want, "ruby after 6 cycles");
    assert!(
        nonzero(&want),
        "no register written after 6 Ruby cycles: the check would compare zeros ({want})"
    );

    // `vsp circuit run` encrypted on a bare netlist: with no input encrypted it warns (the run would
    // compute on trivial ciphertexts); with `en` encrypted it counts.
    let net = Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuit/testdata/counter.json");
    let net = net.to_str().unwrap();
    let circuit = |extra: &[&str]| {
        let mut a = vec![
            "circuit",
            "run",
            "--netlist",
            net,
            "--cycles",
            "2",
            "--reset",
            "--key",
            "sk.key",
            "--eval-key",
            "ek.key",
        ];
        a.extend_from_slice(extra);
        vsp(&a, d)
    };
    let out = circuit(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: no input or memory is encrypted"),
        "{err}"
    );
    std::fs::write(d.join("en.json"), r#"{"inputs": {"en": 1}}"#).unwrap();
    let out = circuit(&["--inputs", "en.json", "--trace", "c.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let o: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(o["outputs"]["count"], 1, "{o}");
    let trace = std::fs::read_to_string(d.join("c.jsonl")).unwrap();
    assert!(
        trace.ends_with("{\"cycle\":1,\"outputs\":{\"count\":1}}\n"),
        "{trace}"
    );

    // The client/server split for any circuit: enc (client) → exec with a snapshot → resume (server,
    // evaluation key only) → dec (client); a request runs only on its own circuit.
    ok(
        &[
            "-q",
            "circuit",
            "enc",
            "--netlist",
            net,
            "-k",
            "sk.key",
            "--inputs",
            "en.json",
            "-o",
            "c.req",
        ],
        d,
    );
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuit/testdata/lfsr.json");
    let err = fails(
        &[
            "-q",
            "circuit",
            "exec",
            "--netlist",
            other.to_str().unwrap(),
            "-e",
            "ek.key",
            "-i",
            "c.req",
            "-o",
            "x.res",
            "--cycles",
            "1",
        ],
        d,
    );
    assert!(err.contains("another circuit"), "{err}");
    ok(
        &[
            "-q",
            "circuit",
            "exec",
            "--netlist",
            net,
            "-e",
            "ek.key",
            "-i",
            "c.req",
            "-o",
            "c1.res",
            "--cycles",
            "3",
            "--reset",
        ],
        d,
    );
    ok(
        &[
            "-q",
            "circuit",
            "resume",
            "c1.res.snapshot",
            "--netlist",
            net,
            "-e",
            "ek.key",
            "-o",
            "c2.res",
            "--cycles",
            "2",
        ],
        d,
    );
    let o = circuit_decrypted(net, "c2.res", d);
    assert_eq!(
        (o["cycles"].as_u64(), o["outputs"]["count"].as_u64()),
        (Some(5), Some(4)),
        "{o}"
    );
    let err = fails(
        &[
            "circuit",
            "dec",
            "--netlist",
            net,
            "-k",
            "other.key",
            "-i",
            "c2.res",
        ],
        d,
    );
    assert!(err.contains("another key"), "{err}");

    // MUX memory (Iyokan's flip-flops + MUX trees): the request records it, a run for the other
    // memory is refused before any work, and one cycle matches the plain MUX-memory run.
    ok(
        &enc_request("mux.enc", &["fib.img", "5", "--memory", "mux"]),
        d,
    );
    let err = fails(
        &run_request("mux.enc", "x.enc", &["--cycles", "1", "--memory", "cmux"]),
        d,
    );
    assert!(err.contains("encrypted for mux memory, not cmux"), "{err}");
    ok(
        &run_request("mux.enc", "mux-r.enc", &["--cycles", "1", "--no-snapshot"]),
        d,
    );
    assert!(!d.join("mux-r.enc.snapshot").exists());
    let r = decrypted("mux-r.enc", d);
    assert_eq!(r["regs"], plain_regs_with("pearl", "mux", 1, d));
    assert_eq!(r["regs"], r1["regs"], "MUX and CMUX memory agree");
}

/// The 1 KiB cores encrypted (seed 000, appendix C): `vsp enc --memory-size 1024` records the size,
/// `vsp run` and `vsp resume` build the 1 KiB Pearl from the request and from the snapshot (no flag),
/// and the decrypted registers and 1 KiB RAM equal the plain 1 KiB run's. The program stores the
/// initial SP (past 512 on this RAM) just below itself in its second cycle; two encrypted cycles, the
/// second one resumed, are the smallest run that writes RAM past 512. Then, with the same keys, four
/// cycles of a 4 KiB ROM with a 512-byte RAM (`--memory-size rom=4096,ram=512`) whose fourth
/// instruction lies past 3 KiB.
#[test]
fn a_1k_request_runs_encrypted_on_the_1k_core() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let k1 = ["--memory-size", "1024"];
    assemble_sized("high-store.s", "hs.img", k1[1], d);
    ok(&["-q", "genkey", "-o", "sk.key"], d);
    ok(&["-q", "genbkey", "-k", "sk.key", "-o", "ek.key"], d);
    ok(&[&enc_request("req.enc", &["hs.img"])[..], &k1].concat(), d);
    ok(
        &run_request(
            "req.enc",
            "r1.enc",
            &["--cycles", "1", "--snapshot", "s.snap"],
        ),
        d,
    );
    let out = vsp(
        &[
            "resume", "s.snap", "--cycles", "1", "-e", "ek.key", "-o", "r2.enc",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("resuming pearl (cmux memory, 1 KiB ROM and RAM) at cycle 1"),
        "{err}"
    );
    let r = decrypted("r2.enc", d);
    assert_eq!(r["cycles"], 2);
    let (regs, ram) = assert_plain_state(&r, "hs.img", vsp_platform::MemSize::K1, 2, d);
    assert_eq!(ram.len(), 1024);
    // The compared state is the store past 512, not the power-up zeros.
    let sp = usize::from(regs[1]);
    assert!(sp > 512, "sp = {sp}");
    assert_eq!(
        usize::from(u16::from_le_bytes([ram[sp - 2], ram[sp - 1]])),
        sp
    );

    // A 4 KiB ROM with the 512-byte RAM (the sizes apart), with the same keys: code past 3 KiB.
    assemble_sized("far-4k.s", "far.img", "rom=4096,ram=512", d);
    ok(&enc_request("far.enc", &["far.img"]), d);
    let out = vsp(
        &[
            "run",
            "-e",
            "ek.key",
            "-i",
            "far.enc",
            "-o",
            "far.res",
            "--cycles",
            "5",
            "--no-snapshot",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("4 KiB ROM and 512 B RAM"), "{err}");
    let r = decrypted("far.res", d);
    let image = vsp_cahp::Image::read(&d.join("far.img")).unwrap();
    assert!(image.rom.len() > 3072, "{}", image.rom.len());
    let size = vsp_platform::MemSize::new(4096, 512).unwrap();
    let (regs, _) = assert_plain_state(&r, "far.img", size, 5, d);
    // The compared state holds the instruction past 3 KiB's result.
    assert_eq!(regs[8], 77, "a0 after 5 plain cycles: {regs:?}");
}

/// Assembles vsp-platform's test program `src` into `img` for the memory size `size`
/// (`--memory-size`).
fn assemble_sized(src: &str, img: &str, size: &str, d: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../platform/tests/data")
        .join(src);
    let src = src.to_str().unwrap();
    ok(&["-q", "asm", src, "-o", img, "--memory-size", size], d);
}

/// Checks the decrypted result `r` against Pearl's plain run of `img` (CMUX memory of `size`)
/// stopped after `cycles` cycles: the finish flag, the registers and the RAM; returns the plain
/// registers and RAM.
fn assert_plain_state(
    r: &serde_json::Value,
    img: &str,
    size: vsp_platform::MemSize,
    cycles: u64,
    d: &Path,
) -> (Vec<u16>, Vec<u8>) {
    let image = vsp_cahp::Image::read(&d.join(img)).unwrap();
    let req = vsp_platform::PlainRequest::new_sized(&image, &[], vsp_platform::Memory::Cmux, size)
        .unwrap();
    let (finished, regs, ram) =
        vsp_platform::plain_state_after(&req, vsp_platform::Core::Pearl, cycles).unwrap();
    assert_eq!(r["finished"], finished);
    let after = format!("after {cycles} cycles");
    assert_eq!(r["regs"], serde_json::json!(regs), "registers {after}");
    assert_eq!(r["ram"], serde_json::json!(ram), "RAM {after}");
    (regs, ram)
}

/// True when some number in a JSON value is not zero.
fn nonzero(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => n.as_f64() != Some(0.0),
        serde_json::Value::String(s) => s.trim_start_matches("0x").chars().any(|c| c != '0'),
        serde_json::Value::Array(a) => a.iter().any(nonzero),
        serde_json::Value::Object(o) => o.values().any(nonzero),
        _ => false,
    }
}

/// The JSON result `vsp dec --json -k sk.key` prints for the encrypted result `file`.
fn decrypted(file: &str, d: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["dec", "--json", "-k", "sk.key", "-i", file], d)).unwrap()
}
