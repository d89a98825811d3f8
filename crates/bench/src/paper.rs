//! `paper` suite: the VSP paper's evaluation tables on this platform (seed 000; issue 16).
//!
//! `vsp-bench paper [cycles] [warm-up]`, default parameters (≥ 128-bit), all threads:
//! 1. Seconds per encrypted cycle for Pearl and Ruby with CMUX memory (ROM by vertical packing, RAM by
//!    CMUX trees with the noise-budget refresh) and with MUX memory (Iyokan's ROM/RAM as flip-flops
//!    and MUX trees, whose MUXes the engine plans like any other), fib with argument `5`: `warm-up`
//!    untimed cycles (default 3: power-up zeros are public and cheap), then `cycles` timed ones
//!    (default 2), then every register and the RAM decrypted and compared with the plain run.
//! 2. The three benchmarks' encrypted run time with CMUX memory: fib measured end to end on both cores
//!    (every cycle until the plain run's finish cycle, then checked); hamming and bf *projected* from
//!    the measured steady-state seconds per cycle × their exact cycle counts (plain gate-level run).
//!
//! Ends with `cmux_vs_mux_speedup_pearl=` (MUX-memory seconds per cycle ÷ CMUX-memory's).

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use vsp_cahp::cores::{self, Core, Memory};
use vsp_circuit::{client, Circuit, Engine, MemState, PlainBackend, RunOptions, TfheBackend};
use vsp_tfhe::{CircuitKey, EvalKey, Params, SecretKey};

fn circuit(core: Core, memory: Memory) -> Result<Arc<Circuit>> {
    Ok(vsp_platform::core_circuit(core, memory)?)
}

/// ROM and RAM words of a benchmark program with its paper arguments.
fn program_words(p: &vsp_cahp::programs::Program) -> Result<(Vec<u64>, Vec<u64>)> {
    let image = vsp_cahp::assemble(p.source, p.name)?;
    let args: Vec<String> = p.args.iter().map(|s| s.to_string()).collect();
    let r = vsp_platform::PlainRequest::new(&image, &args, Memory::Cmux)?;
    Ok((r.rom, r.ram))
}

/// The plain gate-level run of `c` for `cycles` cycles (or until the finish flag with `None`).
fn plain_run(
    c: &Arc<Circuit>,
    rom_w: &[u64],
    ram_w: &[u64],
    cycles: Option<u64>,
) -> Result<(Engine<PlainBackend>, u64)> {
    let mut p = Engine::new(PlainBackend, c.clone());
    p.load_memory_words(cores::ROM, rom_w)?;
    p.load_memory_words(cores::RAM, ram_w)?;
    let report = p.run(
        &RunOptions {
            max_cycles: cycles.unwrap_or(1_000_000),
            stop_when: cycles.is_none().then(|| cores::FINISH.to_string()),
            ..Default::default()
        },
        &mut |_| {},
    )?;
    if cycles.is_none() && !report.stopped {
        bail!("the plain run never raised the finish flag");
    }
    Ok((p, report.cycles))
}

struct Encrypted {
    engine: Engine<TfheBackend>,
    memory: Memory,
}

impl Encrypted {
    fn new(
        c: &Arc<Circuit>,
        memory: Memory,
        keys: &(SecretKey, Arc<EvalKey>, Arc<CircuitKey>),
        words: &(Vec<u64>, Vec<u64>),
        threads: usize,
    ) -> Result<Self> {
        let (sk, ek, ck) = keys;
        let mut e = Engine::new(TfheBackend::new(ek.clone(), Some(ck.clone()))?, c.clone());
        e.set_threads(threads);
        let (rom_w, ram_w) = words;
        let (ra, rw) = (cores::ROM_ADDR_WIDTH, cores::ROM_DATA_WIDTH);
        let (wa, ww) = (cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH);
        match memory {
            Memory::Cmux => {
                e.set_rom(cores::ROM, client::encrypt_rom(sk, ra, rw, rom_w)?)?;
                e.set_ram(cores::RAM, client::encrypt_ram(sk, wa, ww, ram_w)?)?;
            }
            Memory::Mux => {
                e.set_memory_cells(cores::ROM, client::encrypt_mux_memory(sk, ra, rw, rom_w)?)?;
                e.set_memory_cells(cores::RAM, client::encrypt_mux_memory(sk, wa, ww, ram_w)?)?;
            }
        }
        Ok(Encrypted { engine: e, memory })
    }

    /// Decrypts registers and RAM and compares them with the plain run at the same cycle; fails
    /// unless some register was written (so the check does not compare zeros with zeros).
    fn check(&self, sk: &SecretKey, plain: &Engine<PlainBackend>, what: &str) -> Result<()> {
        let mut written = 0;
        for r in cores::REGS {
            let enc = client::decrypt_value(sk, &self.engine.output(r)?)?;
            let want = plain.output_value(r, 0)?;
            if enc != want {
                bail!("{what}: encrypted {r} = {enc} disagrees with the plain run ({want})");
            }
            written += usize::from(want != 0);
        }
        let ram = match self.memory {
            Memory::Cmux => match self.engine.memory(cores::RAM)? {
                MemState::Ram(r) => client::decrypt_ram(sk, r)?,
                _ => bail!("{what}: RAM is not a CMUX RAM"),
            },
            Memory::Mux => client::decrypt_mux_memory(
                sk,
                cores::RAM_DATA_WIDTH,
                &self.engine.memory_cells(cores::RAM)?,
            )?,
        };
        if ram != plain.memory_words(cores::RAM, 0)? {
            bail!("{what}: encrypted RAM disagrees with the plain run");
        }
        if written == 0 {
            bail!("{what}: no register was written; the check would compare zeros");
        }
        Ok(())
    }
}

/// Runs the suite.
pub fn run(args: &[String]) -> Result<()> {
    let num = |i: usize, what: &str, default: u64| crate::common::num_arg(args, i, what, default);
    let cycles = num(0, "cycles", 2)?.max(1);
    let warmup = num(1, "warm-up cycles", 3)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = Instant::now();
    let sk = SecretKey::generate(&Params::default_128())?;
    let ek = Arc::new(EvalKey::generate(&sk)?);
    let ck = Arc::new(CircuitKey::generate(&sk)?);
    let keys = (sk, ek, ck);
    println!(
        "keys (default parameters): {:.1} s; {threads} threads",
        t.elapsed().as_secs_f64()
    );
    let fib = program_words(&vsp_cahp::programs::FIB)?;

    // 1. CMUX vs MUX memory.
    println!();
    println!("Seconds per encrypted cycle (fib 5; {warmup} untimed warm-up cycles, then {cycles} timed; registers and RAM checked):");
    println!();
    println!("| core | memory | s/cycle | DAG s | clock edge s | bootstraps/cycle (plan) | circuit bootstraps (plan) |");
    println!("|---|---|---|---|---|---|---|");
    let mut per_cycle = Vec::new();
    for core in Core::ALL {
        for memory in [Memory::Cmux, Memory::Mux] {
            let c = circuit(core, memory)?;
            let mut enc = Encrypted::new(&c, memory, &keys, &fib, threads)?;
            let plan = enc.engine.plan_counts();
            for _ in 0..warmup {
                enc.engine.step()?;
            }
            let (mut dag, mut edge) = (0.0, 0.0);
            let t = Instant::now();
            for _ in 0..cycles {
                let s = enc.engine.step()?;
                dag += s.eval_seconds;
                edge += s.latch_seconds;
            }
            let secs = t.elapsed().as_secs_f64() / cycles as f64;
            let (plain, _) = plain_run(&c, &fib.0, &fib.1, Some(warmup + cycles))?;
            enc.check(&keys.0, &plain, &format!("{core} {memory:?}"))?;
            let n = cycles as f64;
            println!(
                "| {core} | {memory:?} | {secs:.2} | {:.2} | {:.2} | {:.0} | {} |",
                dag / n,
                edge / n,
                plan.bootstraps(),
                plan.circuit_bootstraps
            );
            per_cycle.push(((core, memory), secs));
        }
    }
    let secs = |core: Core, memory: Memory| {
        per_cycle
            .iter()
            .find(|(k, _)| *k == (core, memory))
            .map_or(f64::NAN, |(_, s)| *s)
    };

    // 2. The benchmarks' run time with CMUX memory.
    println!();
    println!("The paper's benchmarks over TFHE with CMUX memory (fib measured end to end and checked; hamming and bf projected = cycles × the s/cycle above):");
    println!();
    println!("| program | core | cycles | encrypted run time | how |");
    println!("|---|---|---|---|---|");
    for core in Core::ALL {
        let c = circuit(core, Memory::Cmux)?;
        for p in vsp_cahp::programs::ALL {
            let words = program_words(&p)?;
            let (plain, n) = plain_run(&c, &words.0, &words.1, None)?;
            if p.name == "fib" {
                let mut enc = Encrypted::new(&c, Memory::Cmux, &keys, &words, threads)?;
                let t = Instant::now();
                for _ in 0..n {
                    enc.engine.step()?;
                }
                let s = t.elapsed().as_secs_f64();
                enc.check(&keys.0, &plain, &format!("{core} fib"))?;
                println!("| {} | {core} | {n} | {s:.0} s | measured |", p.name);
            } else {
                println!(
                    "| {} | {core} | {n} | {:.0} s | projected |",
                    p.name,
                    n as f64 * secs(core, Memory::Cmux)
                );
            }
        }
    }
    println!();
    println!(
        "cmux_vs_mux_speedup_pearl={:.2}",
        secs(Core::Pearl, Memory::Mux) / secs(Core::Pearl, Memory::Cmux)
    );
    Ok(())
}
