//! `vsp` suite: seconds per encrypted processor cycle — the paper's headline number.
//!
//! `vsp-bench vsp [cycles] [warm-up] [gates]`: for each core (Pearl, Ruby) it encrypts fib with the
//! argument "5" at the default (≥128-bit) parameters, runs `warm-up` untimed cycles (default 5: at
//! power-up every flip-flop is a public zero, so early cycles are cheaper than steady state) and then
//! `cycles` timed ones (default 3) over TFHE with CMUX ROM/RAM on all threads, checks registers and RAM
//! against the plain gate-level run at the same cycle (and that some register was written), and prints
//! the seconds per cycle, the split between the combinational DAG and the clock edge (flip-flops + RAM
//! write), bootstraps, circuit bootstraps, CMUXes and key switches per cycle before and after
//! select-once MUXes, and scheduler efficiency. `gates` runs the old all-gate MUXes for comparison.
//! The paper: 2.3 s/cycle for Ruby on a 96-vCPU c5.metal at 80-bit parameters (≈ 221 vCPU·s per
//! cycle); our goal is ≤ 8 s/cycle on 2 vCPUs.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use vsp_cahp::cores::{self, Core, Memory};
use vsp_circuit::{client, Engine, LeveledParams, MemState, MuxPlan, RunOptions, TfheBackend};
use vsp_platform::{Machine, PlainRequest};
use vsp_tfhe::{CircuitKey, EvalKey, Params, SecretKey};

/// Memory work per cycle (ROM + RAM).
struct MemCounts {
    bootstraps: f64,
    circuit_bootstraps: usize,
    cmuxes: usize,
    /// RAM cells refreshed (one bootstrap each).
    refresh: f64,
}

pub fn run(args: &[String]) -> Result<()> {
    let num = |i: usize, what: &str, default: u64| -> Result<u64> {
        match args.get(i) {
            Some(a) => a
                .parse()
                .map_err(|_| anyhow::anyhow!("{what} must be a number, got {a:?}")),
            None => Ok(default),
        }
    };
    let cycles = num(0, "cycles", 3)?.max(1);
    let warmup = num(1, "warm-up cycles", 5)?;
    // `gates` as the third argument evaluates every MUX as two gate bootstraps (the old engine).
    let leveled = match args.get(2).map(String::as_str) {
        None => true,
        Some("gates") => false,
        Some(other) => bail!("third argument: `gates` or nothing, got {other:?}"),
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let prog = vsp_cahp::programs::FIB;
    let image = vsp_cahp::assemble(prog.source, prog.name)?;
    let args: Vec<String> = prog.args.iter().map(|s| s.to_string()).collect();
    let plain = PlainRequest::new(&image, &args, Memory::Cmux)?;
    let (rom_w, ram_w) = (&plain.rom, &plain.ram);

    let params = Params::default_128();
    let t = Instant::now();
    let sk = SecretKey::generate(&params)?;
    let ek = Arc::new(EvalKey::generate(&sk)?);
    let ck = Arc::new(CircuitKey::generate(&sk)?);
    println!(
        "keys (default parameters): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    println!(
        "{warmup} warm-up cycles (untimed: at power-up every flip-flop is a public zero, so early \
         cycles are cheaper), then {cycles} timed cycles; registers and RAM checked against the plain run"
    );
    println!();
    let mut rows = Vec::new();
    let mut counts = Vec::new();
    let mut mems = Vec::new();
    let mut results = Vec::new();
    for core in [Core::Pearl, Core::Ruby] {
        let c = vsp_platform::core_circuit(core, Memory::Cmux)?;
        let stats = c.stats();
        let backend = TfheBackend::new(ek.clone(), Some(ck.clone()))?.with_leveled(leveled);
        let mut e = Engine::new(backend, c.clone());
        e.set_threads(threads);
        e.set_rom(
            cores::ROM,
            client::encrypt_rom(&sk, cores::ROM_ADDR_WIDTH, cores::ROM_DATA_WIDTH, rom_w)?,
        )?;
        e.set_ram(
            cores::RAM,
            client::encrypt_ram(&sk, cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH, ram_w)?,
        )?;
        let plan = e.plan_counts();
        let lp = LeveledParams::for_params(&params)
            .ok_or_else(|| anyhow::anyhow!("no CMUX plan for these parameters"))?;
        counts.push((core, MuxPlan::gates_only_under(&c, &lp).counts(), plan));
        for _ in 0..warmup {
            e.step()?;
        }
        let refreshes = |e: &Engine<TfheBackend>| -> Result<u64> {
            match e.memory(cores::RAM)? {
                MemState::Ram(r) => Ok(r.refresh_count()),
                _ => bail!("{core}: RAM is not a CMUX RAM"),
            }
        };
        let refreshed_before = refreshes(&e)?;
        let (mut dag, mut edge, mut eff, mut lifts) = (0.0, 0.0, 0.0, 0usize);
        let t = Instant::now();
        for _ in 0..cycles {
            let s = e.step()?;
            dag += s.eval_seconds;
            edge += s.latch_seconds;
            eff += s.efficiency();
            lifts += s.lifts;
        }
        let per_cycle = t.elapsed().as_secs_f64() / cycles as f64;
        let n = cycles as f64;
        let lifts = lifts as f64 / n;
        let ram_refresh = (refreshes(&e)? - refreshed_before) as f64 / n;
        // Memory work per cycle: ROM read (CMUX tree + rotation, one bootstrap per bit), RAM read
        // (a CMUX tree and one bootstrap per bit), RAM write (two rotations per write-value bit; per
        // data bit the read tree again and the demultiplexer tree, 2·(words − 1) external products),
        // the round-robin refresh; one CB per address bit.
        let (words, width, abits) = (
            1usize << cores::RAM_ADDR_WIDTH,
            cores::RAM_DATA_WIDTH,
            cores::RAM_ADDR_WIDTH,
        );
        let mem = MemCounts {
            bootstraps: cores::ROM_DATA_WIDTH as f64 + (3 * width) as f64 + ram_refresh,
            circuit_bootstraps: cores::ROM_ADDR_WIDTH + abits,
            cmuxes: cores::ROM_ADDR_WIDTH + 3 * width * (words - 1),
            refresh: ram_refresh,
        };
        mems.push((core, mem, lifts));

        // The plain oracle at the same cycle.
        let mut machine = Machine::plain(core, &plain)?;
        let p = machine.engine_mut();
        p.run(
            &RunOptions {
                max_cycles: warmup + cycles,
                ..Default::default()
            },
            &mut |_| {},
        )?;
        let mut written = 0;
        for r in cores::REGS {
            let enc = client::decrypt_value(&sk, &e.output(r)?)?;
            let want = p.output_value(r, 0)?;
            if enc != want {
                bail!("{core}: encrypted {r} = {enc} disagrees with the plain run ({want})");
            }
            written += usize::from(want != 0);
        }
        let MemState::Ram(ram) = e.memory(cores::RAM)? else {
            bail!("{core}: RAM is not a CMUX RAM");
        };
        if client::decrypt_ram(&sk, ram)? != p.memory_words(cores::RAM, 0)? {
            bail!("{core}: encrypted RAM disagrees with the plain run");
        }
        if written == 0 {
            bail!(
                "{core}: no register was written after {} cycles; the check compares zeros",
                warmup + cycles
            );
        }
        rows.push(format!(
            "| {core} | {warmup} + {cycles} | {threads} | {per_cycle:.1} | {:.1} | {:.1} | {} | {:.0} | {:.2} |",
            dag / n,
            edge / n,
            stats.bootstraps_per_cycle,
            (plan.gates + 2 * plan.gate_muxes + plan.refreshes) as f64 + lifts,
            eff / n
        ));
        results.push((core, per_cycle));
    }
    println!(
        "Per cycle, before (every MUX two gate bootstraps) and after (select-once CMUXes); core"
    );
    println!(
        "counts from the plan, lifts measured over the timed cycles (carried flip-flop rings are"
    );
    println!("lifted only when over their noise budget), memories from their shapes and the measured refresh:");
    println!();
    println!("| core | part | gate bootstraps | of which lifts | circuit bootstraps | CMUXes | key switches | log2 failure/cycle |");
    println!("|---|---|---|---|---|---|---|---|");
    for ((core, b, a), (_, m, lifts)) in counts.iter().zip(&mems) {
        for (name, k, l) in [("core before", b, 0.0), ("core after", a, *lifts)] {
            println!(
                "| {core} | {name} | {:.0} | {l:.0} | {} | {} | {} | {:.1} |",
                (k.gates + 2 * k.gate_muxes + k.refreshes) as f64 + l,
                k.circuit_bootstraps,
                k.cmuxes,
                k.key_switches,
                k.log2_failure
            );
        }
        println!(
            "| {core} | ROM + RAM (refresh {:.0}) | {:.0} | 0 | {} | {} | {:.0} | ≤ -40 |",
            m.refresh, m.bootstraps, m.circuit_bootstraps, m.cmuxes, m.bootstraps
        );
    }
    println!();
    println!("| core | cycles (warm-up + timed) | threads | s/cycle | DAG s | clock edge s | bootstraps/cycle before | after | efficiency |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!();
    for (core, s) in results {
        println!("{core}_seconds_per_cycle={s:.2}");
    }
    Ok(())
}
