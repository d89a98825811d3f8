//! `vsp demo`: the README's main job. On one machine and with no other step it plays both sides of
//! the Virtual Secure Platform: Alice generates keys and encrypts a benchmark program with its
//! arguments, Bob runs the processor on the encrypted request with only the evaluation key, Alice
//! decrypts — and the result is checked against the plain gate-level run (`vsp emu`). What it
//! reports goes to [`Watch::say`], its steps and cycles to the rest of the [`Watch`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use vsp_cahp::cores::{MemSize, Memory};
use vsp_codec::text::{fmt_bytes, fmt_secs};

use crate::error::{PlatformError, Result};
use crate::keys::{self, ClientKey, ServerKeys};
use crate::processor::emu::{emulate, plain_state_after};
use crate::processor::machine::Machine;
use crate::processor::packets::{decrypt_result, Request};
use crate::processor::program::{self, PlainRequest};
use crate::processor::run::Snapshots;
use crate::server::{watched, Watch};
use crate::wire::envelope::{Envelope, Kind};

/// What `vsp demo` runs.
pub struct DemoOptions {
    /// pearl or ruby.
    pub core: String,
    /// The benchmark program: fib, hamming or bf.
    pub program: String,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Keep the key, request and result files here (default: a temporary directory).
    pub dir: Option<PathBuf>,
    /// Stop after this many cycles (the result is then compared with the plain run stopped there).
    pub max_cycles: Option<u64>,
    /// ROM and RAM sizes of the core (512 B to 8 KiB each).
    pub size: MemSize,
}

/// Runs the demo; an error when any step fails or the encrypted run disagrees with the plain one.
pub fn run(o: &DemoOptions, watch: &mut dyn Watch) -> Result<()> {
    let core = program::parse_core(&o.core)?;
    let Some(prog) = vsp_cahp::programs::by_name(&o.program) else {
        return Err(PlatformError::usage(format!(
            "unknown demo program {:?}: choose fib, hamming or bf",
            o.program
        )));
    };
    let image = vsp_cahp::assemble(prog.source, prog.name)?;
    let args: Vec<String> = prog.args.iter().map(|s| s.to_string()).collect();
    let total = Instant::now();
    watch.say(&format!(
        "VSP demo: {} {} on the {core} core with {}, encrypted with the default (>=128-bit) parameters",
        prog.name,
        args.join(" "),
        o.size
    ));

    // The plain oracle: how many cycles the program needs and what it computes.
    let plain = PlainRequest::new_sized(&image, &args, Memory::Cmux, o.size)?;
    let max = program::DEFAULT_MAX_CYCLES;
    let emu = emulate(&image, &args, core, Memory::Cmux, o.size, max)?;
    if !emu.finished || emu.result != prog.expected {
        return Err(PlatformError::Refused(format!(
            "plain run of {} gave {} (finished: {}), expected {}",
            prog.name, emu.result, emu.finished, prog.expected
        )));
    }
    let cycles = o.max_cycles.map_or(emu.cycles, |m| m.clamp(1, emu.cycles));
    let (n, a0) = (emu.cycles, emu.result);
    watch.say(&format!("plain gate-level run: {n} cycles, a0 = {a0}"));
    if cycles < emu.cycles {
        watch.say(&format!(
            "running only the first {cycles} cycles encrypted (--max-cycles)"
        ));
    }

    let tmp;
    let dir = match &o.dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|source| PlatformError::Write {
                action: "create",
                path: d.clone(),
                source,
            })?;
            d.clone()
        }
        None => {
            tmp = tempfile::tempdir().map_err(|source| PlatformError::Write {
                action: "create a temporary directory in",
                path: std::env::temp_dir(),
                source,
            })?;
            tmp.path().to_path_buf()
        }
    };
    let (sk_path, ek_path) = (dir.join("secret.key"), dir.join("eval.key"));
    let (req_path, res_path) = (dir.join("request.enc"), dir.join("result.enc"));

    // Alice: keys and the encrypted request.
    let t = Instant::now();
    let params = keys::params_by_name("default", false)?;
    let client = keys::generate_secret("default", &params)?;
    client.save(&sk_path)?;
    watch.step("generating the evaluation key");
    let ek_size = client.save_eval_key(&ek_path)?;
    watch.step_done();
    watch.say(&format!(
        "[alice] keys: evaluation key {} on disk (compressed), {}",
        fmt_bytes(ek_size),
        secs_since(t)
    ));
    let t = Instant::now();
    let request = plain.encrypt(&client)?;
    let req_size = crate::wire::envelope::save(&request, &req_path, client.sk.params())?;
    let (size, secs) = (fmt_bytes(req_size), secs_since(t));
    watch.say(&format!("[alice] encrypted request: {size} in {secs}"));

    // Bob: only the evaluation key and the request.
    let t = Instant::now();
    let server = Arc::new(ServerKeys::load(&ek_path)?);
    watch.say(&format!(
        "[bob]   evaluation key loaded in {}",
        secs_since(t)
    ));
    let envelope = Envelope::read(&req_path, Kind::Request)?;
    let request = Request::from_envelope(&envelope, server.ek.params())?;
    let mut machine = Machine::start(&server, &request, core, o.threads)?;
    drop(request);
    let t = Instant::now();
    let snapshots = Snapshots {
        path: dir.join("run.snapshot"),
        every: 1,
    };
    watched(watch, cycles, |p| machine.run(cycles, Some(&snapshots), p))?;
    let run_secs = t.elapsed().as_secs_f64();
    machine.result()?.write(&res_path)?;
    watch.say(&format!(
        "[bob]   ran {cycles} encrypted cycles with {} threads in {} ({:.2} s/cycle)",
        machine.engine().threads(),
        fmt_secs(run_secs),
        run_secs / cycles as f64
    ));
    drop(machine);
    drop(server);

    // Alice: decrypt and compare with the plain run at the same cycle.
    let client = ClientKey::load(&sk_path)?;
    let d = decrypt_result(&client, &Envelope::read(&res_path, Kind::Result)?)?;
    let (finished, regs, ram) = plain_state_after(&plain, core, cycles)?;
    let yes = if d.finished { "yes" } else { "no" };
    let a0 = d.result;
    watch.say(&format!("[alice] decrypted: finished = {yes}, a0 = {a0}"));
    if d.finished != finished || d.regs != regs || d.ram != ram {
        return Err(PlatformError::Refused(format!(
            "the encrypted run disagrees with the plain run: registers {:?} vs {:?}",
            d.regs, regs
        )));
    }
    watch.say(&format!(
        "OK: the encrypted run matches the plain run (registers, RAM, finish flag); total {}",
        secs_since(total)
    ));
    Ok(())
}

/// The seconds since `t`, as the reports write them.
fn secs_since(t: Instant) -> String {
    fmt_secs(t.elapsed().as_secs_f64())
}
