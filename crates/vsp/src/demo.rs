//! `vsp demo`: the README's main job. On one machine and with no other step it plays both sides of
//! the Virtual Secure Platform: Alice generates keys and encrypts a benchmark program with its
//! arguments, Bob runs the processor on the encrypted request with only the evaluation key, Alice
//! decrypts — and the result is checked against the plain gate-level run (`vsp emu`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use vsp_platform::keys::{self, ClientKey, ServerKeys};
use vsp_platform::processor::program::{self, PlainRequest};
use vsp_platform::{Envelope, Kind, Machine, MemSize, Memory, Request, Snapshots};

use crate::progress::{fmt_bytes, fmt_secs, Bar};

pub struct DemoOptions {
    pub core: String,
    pub program: String,
    pub threads: Option<usize>,
    pub dir: Option<PathBuf>,
    pub max_cycles: Option<u64>,
    /// ROM and RAM sizes of the core (512 B to 8 KiB each).
    pub size: MemSize,
    pub quiet: bool,
}

pub fn run(o: &DemoOptions) -> Result<()> {
    let core = program::parse_core(&o.core)?;
    let Some(prog) = vsp_cahp::programs::by_name(&o.program) else {
        bail!(
            "unknown demo program {:?}: choose fib, hamming or bf",
            o.program
        )
    };
    let image = vsp_cahp::assemble(prog.source, prog.name)?;
    let args: Vec<String> = prog.args.iter().map(|s| s.to_string()).collect();
    let total = Instant::now();
    println!(
        "VSP demo: {} {} on the {core} core with {}, encrypted with the default (>=128-bit) parameters",
        prog.name,
        args.join(" "),
        o.size
    );

    // The plain oracle: how many cycles the program needs and what it computes.
    let plain = PlainRequest::new_sized(&image, &args, Memory::Cmux, o.size)?;
    let emu = vsp_platform::emulate(
        &image,
        &args,
        core,
        Memory::Cmux,
        o.size,
        program::DEFAULT_MAX_CYCLES,
    )?;
    if !emu.finished || emu.result != prog.expected {
        bail!(
            "plain run of {} gave {} (finished: {}), expected {}",
            prog.name,
            emu.result,
            emu.finished,
            prog.expected
        );
    }
    let cycles = o.max_cycles.map_or(emu.cycles, |m| m.clamp(1, emu.cycles));
    println!(
        "plain gate-level run: {} cycles, a0 = {}",
        emu.cycles, emu.result
    );
    if cycles < emu.cycles {
        println!("running only the first {cycles} cycles encrypted (--max-cycles)");
    }

    let tmp;
    let dir = match &o.dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            d.clone()
        }
        None => {
            tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
            tmp.path().to_path_buf()
        }
    };
    let (sk_path, ek_path) = (dir.join("secret.key"), dir.join("eval.key"));
    let (req_path, res_path, snap_path) = (
        dir.join("request.enc"),
        dir.join("result.enc"),
        dir.join("run.snapshot"),
    );

    // Alice: keys and the encrypted request.
    let t = Instant::now();
    let params = keys::params_by_name("default", false)?;
    let client = keys::generate_secret("default", &params)?;
    client.save(&sk_path)?;
    let bar = Bar::spinner(o.quiet, "generating the evaluation key");
    let ek_size = client.save_eval_key(&ek_path)?;
    bar.finish();
    let keygen = t.elapsed().as_secs_f64();
    println!(
        "[alice] keys: evaluation key {} on disk (compressed), {}",
        fmt_bytes(ek_size),
        fmt_secs(keygen)
    );
    let t = Instant::now();
    let req_size = plain
        .encrypt(&client)?
        .to_envelope(client.sk.params())
        .write(&req_path)?;
    println!(
        "[alice] encrypted request: {} in {}",
        fmt_bytes(req_size),
        fmt_secs(t.elapsed().as_secs_f64())
    );

    // Bob: only the evaluation key and the request.
    let t = Instant::now();
    let server = std::sync::Arc::new(ServerKeys::load(&ek_path)?);
    println!(
        "[bob]   evaluation key loaded in {}",
        fmt_secs(t.elapsed().as_secs_f64())
    );
    let request = Request::from_envelope(
        &Envelope::read(&req_path, Kind::Request)?,
        server.ek.params(),
    )?;
    let mut machine = Machine::start(&server, &request, core, o.threads)?;
    drop(request);
    let t = Instant::now();
    let bar = Bar::cycles(o.quiet, cycles);
    let snapshots = Snapshots {
        path: snap_path,
        every: 1,
    };
    machine.run(cycles, Some(&snapshots), &mut |p| bar.cycle(p))?;
    bar.finish();
    let run_secs = t.elapsed().as_secs_f64();
    machine.result()?.write(&res_path)?;
    println!(
        "[bob]   ran {cycles} encrypted cycles with {} threads in {} ({:.2} s/cycle)",
        machine.engine().threads(),
        fmt_secs(run_secs),
        run_secs / cycles as f64
    );
    drop(machine);
    drop(server);

    // Alice: decrypt and compare with the plain run at the same cycle.
    let client = ClientKey::load(&sk_path)?;
    let d = vsp_platform::decrypt_result(&client, &Envelope::read(&res_path, Kind::Result)?)?;
    let (finished, regs, ram) = vsp_platform::plain_state_after(&plain, core, cycles)?;
    println!(
        "[alice] decrypted: finished = {}, a0 = {}",
        if d.finished { "yes" } else { "no" },
        d.result
    );
    if d.finished != finished || d.regs != regs || d.ram != ram {
        bail!(
            "the encrypted run disagrees with the plain run: registers {:?} vs {:?}",
            d.regs,
            regs
        );
    }
    println!(
        "OK: the encrypted run matches the plain run (registers, RAM, finish flag); total {}",
        fmt_secs(total.elapsed().as_secs_f64())
    );
    Ok(())
}
