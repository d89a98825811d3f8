//! `mpi` suite (build with `--features mpi`): the circuit engine over MPI (docs/mpi.md).
//!
//! `vsp-bench mpi [cycles] [warm-up]`: encrypts fib on Pearl at the default parameters, runs `warm-up`
//! cycles (default 2) in this process and snapshots the state; then, from that snapshot, `cycles`
//! timed cycles (default 2) in this process on 2 threads and — launching `mpirun --oversubscribe -np
//! P` on this binary — on 2 and on 3 ranks of 1 thread each (each rank loads the evaluation key from
//! a file; 3 ranks oversubscribe a 2-core machine). The final states must be bit-identical, and the
//! single process's registers and RAM decrypt to the plain gate-level run's. It prints
//! the seconds per cycle of each and the efficiency `t(1 process × 2 threads) / t(2 ranks × 1
//! thread)`; then the cost model ([`vsp_circuit::costmodel`]) calibrated on the measured cycle: its
//! error against each measured run (told this machine's cores and shared-memory transport), and its
//! predictions for 1–256 ranks (1 thread each) at 1, 10 and 100 Gb/s (20 µs) for Pearl and Ruby.
//! It also prints Pearl on 64 ranks with a circuit bootstrap split over idle threads
//! ([`vsp_circuit::costmodel::CbSplit`]: what the executors do on a rank of several threads; its
//! latency a parameter, by default 2 threads at [`CB_SPLIT`]'s measured latency).
//! Ends with `mpi_efficiency_2_ranks=`, `predicted_pearl_speedup_64_ranks=` (one rank's predicted
//! cycle over 64 ranks', both in the model's units at 10 Gb/s),
//! `predicted_pearl_seconds_per_cycle_64_ranks=` and
//! `predicted_pearl_seconds_per_cycle_64_ranks_cb_split_2_threads=` (64 ranks × 2 threads, split).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use vsp_cahp::cores::{self, Core, Memory};
use vsp_circuit::costmodel::{predict, predict_with, CbSplit, Measured, Network};
use vsp_circuit::partition::Placement;
use vsp_circuit::{
    client, Backend, Blueprint, Circuit, CircuitError, Engine, TaskKind, TfheBackend,
};
use vsp_tfhe::{CompressedCircuitKey, CompressedEvalKey, Params, SecretKey};

fn circuit(core: Core) -> Result<Arc<Circuit>> {
    let bp = Blueprint::from_str_with_resolver(core.blueprint(Memory::Cmux), |p| {
        cores::resolve(p)
            .map(str::to_string)
            .ok_or_else(|| CircuitError::Blueprint(p.into()))
    })?;
    Ok(Arc::new(Circuit::compile(&bp)?))
}

fn load_backend(dir: &Path) -> Result<TfheBackend> {
    let ek = CompressedEvalKey::load(&dir.join("eval.key"))?.decompress()?;
    let ck = CompressedCircuitKey::load(&dir.join("circuit.key"))?.decompress()?;
    Ok(TfheBackend::new(Arc::new(ek), Some(Arc::new(ck)))?)
}

/// One rank of the MPI measurement: `mpi-worker DIR CYCLES`.
pub fn worker(args: &[String]) -> Result<()> {
    let (Some(dir), Some(cycles)) = (args.first(), args.get(1)) else {
        bail!("usage: mpi-worker DIR CYCLES");
    };
    let dir = PathBuf::from(dir);
    let cycles: u64 = cycles.parse().context("CYCLES must be a number")?;
    let session = vsp_circuit::mpi::MpiSession::init()?;
    let world = session.world();
    let res = (|| -> Result<()> {
        let mut e = Engine::new(load_backend(&dir)?, circuit(Core::Pearl)?);
        e.set_threads(1);
        if world.rank() == 0 {
            e.load_snapshot(&dir.join("start.snap"))?;
        }
        e.join_mpi(world)?;
        let t = Instant::now();
        let (mut eval, mut latch, mut busy) = (0.0, 0.0, 0.0);
        for _ in 0..cycles {
            let s = e.step()?;
            eval += s.eval_seconds;
            latch += s.latch_seconds;
            busy += s.busy_seconds;
        }
        let secs = t.elapsed().as_secs_f64();
        e.gather_state()?;
        let n = cycles.max(1) as f64;
        // busy: seconds its thread spent in tasks during the DAG (eval − busy: waiting for operands).
        println!(
            "mpi-worker rank={} seconds_per_cycle={:.4} eval={:.4} busy={:.4} latch={:.4}",
            world.rank(),
            secs / n,
            eval / n,
            busy / n,
            latch / n
        );
        if world.rank() == 0 {
            e.save_snapshot(&dir.join("mpi.snap"))?;
        }
        Ok(())
    })();
    if let Err(err) = res {
        world.abort(&format!("{err:#}"), 1);
    }
    drop(session);
    Ok(())
}

/// The suite.
pub fn run(args: &[String]) -> Result<()> {
    let num = |i: usize, what: &str, default: u64| crate::common::num_arg(args, i, what, default);
    let cycles = num(0, "cycles", 2)?.max(1);
    let warmup = num(1, "warm-up cycles", 2)?;
    let dir = std::env::temp_dir().join(format!("vsp-bench-mpi-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let res = measure(&dir, cycles, warmup);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn measure(dir: &Path, cycles: u64, warmup: u64) -> Result<()> {
    let prog = vsp_cahp::programs::FIB;
    let image = vsp_cahp::assemble(prog.source, prog.name)?;
    let ram = vsp_cahp::load_args(&image.ram, prog.args, cores::RAM_BYTES)?;
    let rom_w = cores::rom_words(&image.rom).ok_or_else(|| anyhow::anyhow!("ROM too large"))?;
    let ram_w = cores::ram_words(&ram).ok_or_else(|| anyhow::anyhow!("RAM too large"))?;
    let t = Instant::now();
    let sk = SecretKey::generate(&Params::default_128())?;
    CompressedEvalKey::generate(&sk).save(&dir.join("eval.key"))?;
    CompressedCircuitKey::generate(&sk).save(&dir.join("circuit.key"))?;
    let backend = load_backend(dir)?;
    println!(
        "keys (default parameters), written and loaded back: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let pearl = circuit(Core::Pearl)?;
    let mut e = Engine::new(backend.clone(), pearl.clone());
    e.set_threads(2);
    e.set_rom(
        cores::ROM,
        client::encrypt_rom(&sk, cores::ROM_ADDR_WIDTH, cores::ROM_DATA_WIDTH, &rom_w)?,
    )?;
    e.set_ram(
        cores::RAM,
        client::encrypt_ram(&sk, cores::RAM_ADDR_WIDTH, cores::RAM_DATA_WIDTH, &ram_w)?,
    )?;
    for _ in 0..warmup {
        e.step()?;
    }
    e.save_snapshot(&dir.join("start.snap"))?;
    // The same start for both: a reloaded snapshot (flip-flop rings lifted in the first cycle).
    e.load_snapshot(&dir.join("start.snap"))?;
    let (mut busy, mut latch1) = (0.0, 0.0);
    let t = Instant::now();
    for _ in 0..cycles {
        let s = e.step()?;
        busy += s.busy_seconds;
        latch1 += s.latch_seconds;
    }
    let n = cycles as f64;
    let single = t.elapsed().as_secs_f64() / n;
    let single_state = e.snapshot_bytes();
    // The single process against the plain run (the ranks' states must then equal its bytes).
    let args: Vec<String> = prog.args.iter().map(|s| s.to_string()).collect();
    let plain = vsp_platform::PlainRequest::new(&image, &args, Memory::Cmux)?;
    crate::vsp::check_against_plain(Core::Pearl, &sk, &e, &plain, warmup + cycles)?;
    println!(
        "Pearl, fib, {warmup} warm-up cycles, then {cycles} timed cycles from the same snapshot:"
    );
    println!(
        "1 process x 2 threads: {single:.2} s/cycle (clock edge {:.2} s)",
        latch1 / n
    );

    // The same cycles on 2 and on 3 ranks of 1 thread (3 oversubscribe this 2-core machine).
    let two = launch(dir, 2, cycles, &single_state)?;
    let three = launch(dir, 3, cycles, &single_state)?;
    let efficiency = single / two.seconds;

    // The model, calibrated on the measured cycle.
    let one = e.plan_partition(1);
    let units: f64 = one.work().iter().sum();
    let spu = busy / n / units;
    let m = measured(&backend, spu)?;
    let p1 = predict(&one, &m, &Network::TEN_GBE, 1);
    println!();
    println!(
        "Cost model: {:.2} ms per cost unit (busy time of the 2-thread cycle / {units:.0} units), {} B per \
         bit, {} B per ring, {} / {} B per selector (RAM / ROM); clock edge (RAM write and refresh) {:.2} s on one thread by the model, \
         measured {:.2} s on 2 threads",
        spu * 1e3,
        m.bit_bytes,
        m.ring_bytes,
        m.sel_bytes,
        m.small_sel_bytes,
        p1.edge_seconds_one_thread,
        latch1 / n
    );
    // This machine: shared memory between ranks, and its cores shared by the ranks' threads.
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let here = Network::SHARED_MEMORY;
    println!(
        "Measured against the model on this machine ({cores} cores; ranks talk through shared memory, modelled as \
         {:.0} Gb/s and {:.0} µs). \"own units\": the model calibrated on the run's own busy time (its \
         scheduling and messages judged, not the machine's speed, which moves with the load of a shared machine); \
         \"1x2 units\": calibrated on the 1 x 2-thread run, more threads than cores running proportionally slower:",
        here.bandwidth_bits / 1e9,
        here.latency * 1e6
    );
    println!("| run | measured s/cycle | clock edge s | ms per unit (own busy) | predicted, own units | error | predicted, 1x2 units | error |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut errors = Vec::new();
    for (ranks, threads, secs, edge, busy) in [
        (1, 2, single, latch1 / n, busy / n),
        (2, 1, two.seconds, two.latch, two.busy),
        (3, 1, three.seconds, three.latch, three.busy),
    ] {
        let part = e.plan_partition(ranks);
        let own = Measured {
            seconds_per_unit: busy / part.work().iter().sum::<f64>(),
            ..m
        };
        let p_own = predict(&part, &own, &here, threads).seconds;
        let p_1x2 = predict(&part, &m.on_cores(ranks * threads, cores), &here, threads).seconds;
        let (e_own, e_1x2) = (p_own / secs - 1.0, p_1x2 / secs - 1.0);
        errors.push(e_own);
        println!(
            "| {ranks} rank(s) x {threads} thread(s) | {secs:.2} | {edge:.2} | {:.2} | {p_own:.2} | {:+.1} % | {p_1x2:.2} | {:+.1} % |",
            own.seconds_per_unit * 1e3,
            e_own * 100.0,
            e_1x2 * 100.0
        );
    }
    let (pearl1, pearl64, split) = predictions(&backend, &m, CB_SPLIT)?;
    println!();
    println!("pearl_seconds_per_cycle_1x2_threads={single:.2}");
    println!("pearl_seconds_per_cycle_2x1_ranks={:.2}", two.seconds);
    println!("pearl_seconds_per_cycle_3x1_ranks={:.2}", three.seconds);
    println!("model_error_1x2_threads={:+.3}", errors[0]);
    println!("model_error_2_ranks={:+.3}", errors[1]);
    println!("model_error_3_ranks={:+.3}", errors[2]);
    println!("mpi_efficiency_2_ranks={efficiency:.3}");
    // Both in the model's calibrated units (10 Gb/s, 20 µs), so the ratio is the machine's own.
    println!("predicted_pearl_speedup_64_ranks={:.2}", pearl1 / pearl64);
    println!("predicted_pearl_seconds_per_cycle_64_ranks={pearl64:.3}");
    println!(
        "predicted_pearl_seconds_per_cycle_64_ranks_cb_split_{}_threads={split:.3}",
        CB_SPLIT.threads
    );
    Ok(())
}

/// The model's predictions for 1–256 ranks (1 thread each) at 1, 10 and 100 Gb/s for Pearl and
/// Ruby, what lies on Pearl's critical path, and Pearl on 64 ranks with circuit bootstraps split
/// over `cb.threads` threads at `cb.latency` of their one-thread time; returns Pearl's predicted
/// seconds per cycle on 1 and on 64 ranks at 10 Gb/s (as built: 1 thread per rank, no split) and
/// on 64 ranks of `cb.threads` threads with the split.
fn predictions(backend: &TfheBackend, m: &Measured, cb: CbSplit) -> Result<(f64, f64, f64)> {
    let nets = [Network::ONE_GBE, Network::TEN_GBE, Network::HUNDRED_GBE];
    println!();
    println!(
        "Predicted seconds per cycle, 1 thread per rank (one core each), at {} (the issue's cluster: 10 Gb/s, 20 µs):",
        nets.iter()
            .map(|x| format!("{:.0} Gb/s and {:.0} µs", x.bandwidth_bits / 1e9, x.latency * 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("| core | ranks | placement | selects per batch | s/cycle 1 Gb/s | s/cycle 10 Gb/s | s/cycle 100 Gb/s | critical path s | busiest rank s | bits crossing | rings crossing | selectors crossing | messages | MB/cycle |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut pearl1, mut pearl64) = (f64::NAN, f64::NAN);
    for core in [Core::Pearl, Core::Ruby] {
        let ce = Engine::new(backend.clone(), circuit(core)?);
        for p in [1usize, 2, 3, 4, 8, 16, 32, 64, 128, 256] {
            let part = ce.plan_partition(p);
            let pr: Vec<_> = nets.iter().map(|x| predict(&part, m, x, 1)).collect();
            let ten = &pr[1];
            if core == Core::Pearl && p == 1 {
                pearl1 = ten.seconds;
            }
            if core == Core::Pearl && p == 64 {
                pearl64 = ten.seconds;
            }
            println!(
                "| {core} | {p} | {:?} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} | {:.1} |",
                part.placement,
                part.select_batch,
                pr[0].seconds,
                ten.seconds,
                pr[2].seconds,
                ten.critical_path_seconds,
                ten.max_work_seconds,
                ten.crossing_bits,
                ten.crossing_rings,
                ten.crossing_sels,
                ten.messages,
                ten.bytes as f64 / 1e6
            );
        }
    }
    println!();
    println!("Pearl on 64 ranks at 10 Gb/s by placement (the partition takes the faster):");
    let pe = Engine::new(backend.clone(), circuit(Core::Pearl)?);
    for how in [
        Placement::Balanced,
        Placement::Critical,
        Placement::Earliest,
    ] {
        let part = pe.plan_partition_with(64, how);
        println!(
            "  {how:?}: {:.3} s/cycle",
            predict(&part, m, &Network::TEN_GBE, 1).seconds
        );
    }
    let chosen = pe.plan_partition(64);
    println!("  chosen: {:?}", chosen.placement);
    // How many parts the RAM is spread over (the executor cuts it as `chosen`).
    println!();
    println!(
        "Pearl on 64 ranks at 10 Gb/s by the RAM's parts (the model's what-if; the executor cuts it in {}):",
        chosen.ram_edges.first().map_or(1, |e| e.holders.len())
    );
    println!("| RAM parts | s/cycle | critical path s | busiest rank s | MB/cycle |");
    println!("|---|---|---|---|---|");
    for parts in [1usize, 2, 4, 8, 16, 32, 64, 256] {
        let part = pe.plan_partition_cut(64, Placement::Best, Some(parts));
        let pr = predict(&part, m, &Network::TEN_GBE, 1);
        println!(
            "| {parts} | {:.3} | {:.3} | {:.3} | {:.1} |",
            pr.seconds,
            pr.critical_path_seconds,
            pr.max_work_seconds,
            pr.bytes as f64 / 1e6
        );
    }
    // What would move the 64-rank cycle: the model with one change at a time (same placement).
    println!();
    println!("What-ifs for Pearl on 64 ranks at 10 Gb/s (the model, same placement):");
    println!("| change | s/cycle | critical path s |");
    println!("|---|---|---|");
    let cb4 = chosen.with_kind_scaled(TaskKind::Select, 0.25);
    let gate2 = chosen.with_kind_scaled(TaskKind::Gate, 0.5);
    for (what, part) in [
        ("as built", chosen.clone()),
        (
            "circuit bootstraps (Select) at 1/4 of their latency",
            cb4.clone(),
        ),
        ("gate bootstraps at 1/2 of their latency", gate2),
        ("both", cb4.with_kind_scaled(TaskKind::Gate, 0.5)),
    ] {
        let pr = predict(&part, m, &Network::TEN_GBE, 1);
        println!(
            "| {what} | {:.3} | {:.3} |",
            pr.seconds, pr.critical_path_seconds
        );
    }
    println!();
    println!("Pearl's critical path (the DAG's longest chain of tasks, cost units; the clock edge's floor comes on top):");
    println!("| ranks | units | by kind: tasks x kind = units |");
    println!("|---|---|---|");
    for p in [1usize, 16, 64] {
        let part = pe.plan_partition(p);
        let kinds = part
            .critical_kinds()
            .iter()
            .map(|(k, n, u)| format!("{n} x {k:?} = {u:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        println!("| {p} | {:.0} | {kinds} |", part.critical_path_units);
    }
    // The circuit bootstrap split over idle threads (its latency a parameter: built and measured
    // elsewhere), beside the same ranks without it.
    println!();
    println!(
        "Pearl on 64 ranks at 10 Gb/s with a circuit bootstrap split over up to {} idle threads of its rank, \
         taking {:.2} of its one-thread latency on {} threads (`mpi-model MS THREADS LATENCY`; the default measured by `cargo run --release -p vsp-circuit --example task_costs`), at most one thread per bit:",
        cb.threads, cb.latency, cb.threads
    );
    println!("| ranks x threads | circuit bootstraps | s/cycle | critical path s | speedup over 1 rank x 1 thread |");
    println!("|---|---|---|---|---|");
    let mut split64 = f64::NAN;
    for (threads, split) in [(1, None), (cb.threads, None), (cb.threads, Some(cb))] {
        let pr = predict_with(&chosen, m, &Network::TEN_GBE, threads, split);
        if split.is_some() {
            split64 = pr.seconds;
        }
        println!(
            "| 64 x {threads} | {} | {:.3} | {:.3} | {:.2} |",
            if split.is_some() {
                "split"
            } else {
                "one thread each"
            },
            pr.seconds,
            pr.critical_path_seconds,
            pearl1 / pr.seconds
        );
    }
    Ok((pearl1, pearl64, split64))
}

/// The circuit-bootstrap split the model shows by default: over 2 threads (a rank on a 2-vCPU
/// machine), at the latency measured by `cargo run --release -p vsp-circuit --example task_costs --
/// 5 2`: the calling thread's share of the split's CPU time, i.e. its latency on cores of its own,
/// 0.43–0.61 for batches of 2–8 bits over three runs (AMD EPYC Zen 4, 2026-12-04 22:4x–22:57 UTC;
/// `mpi-model MS THREADS LATENCY` for others). A batch is split at most one thread per bit.
pub const CB_SPLIT: CbSplit = CbSplit {
    threads: 2,
    latency: 0.55,
};

/// `vsp-bench mpi-model [ms-per-unit [cb-threads cb-latency]]`: the cost model alone (no
/// measurement, no MPI run): Pearl's and Ruby's predictions and Pearl's critical path at
/// `ms-per-unit` milliseconds per cost unit (default 1.66, the calibration of BENCHMARKS.md's run),
/// and Pearl on 64 ranks with circuit bootstraps split over `cb-threads` threads at `cb-latency` of
/// their one-thread time (default [`CB_SPLIT`]).
pub fn model(args: &[String]) -> Result<()> {
    let ms: f64 = match args.first() {
        Some(a) => a.parse().context("ms-per-unit must be a number")?,
        None => 1.66,
    };
    let cb = match (args.get(1), args.get(2)) {
        (Some(t), Some(l)) => CbSplit {
            threads: t.parse().context("cb-threads must be a number")?,
            latency: l.parse().context("cb-latency must be a number")?,
        },
        (None, None) => CB_SPLIT,
        _ => bail!("usage: mpi-model [ms-per-unit [cb-threads cb-latency]]"),
    };
    if !(ms.is_finite() && ms > 0.0) || cb.threads == 0 || !(cb.latency > 0.0 && cb.latency <= 1.0)
    {
        bail!("ms-per-unit must be positive, cb-threads at least 1 and cb-latency in (0, 1]");
    }
    let sk = SecretKey::generate(&Params::default_128())?;
    let ek = CompressedEvalKey::generate(&sk).decompress()?;
    let ck = CompressedCircuitKey::generate(&sk).decompress()?;
    let backend = TfheBackend::new(Arc::new(ek), Some(Arc::new(ck)))?;
    let m = measured(&backend, ms * 1e-3)?;
    let (one, sixty_four, split) = predictions(&backend, &m, cb)?;
    println!("predicted_pearl_speedup_64_ranks={:.2}", one / sixty_four);
    println!("predicted_pearl_seconds_per_cycle_64_ranks={sixty_four:.3}");
    println!(
        "predicted_pearl_seconds_per_cycle_64_ranks_cb_split_{}_threads={split:.3}",
        cb.threads
    );
    Ok(())
}

/// The model's inputs: `seconds_per_unit` and the backend's ciphertext sizes.
fn measured(backend: &TfheBackend, seconds_per_unit: f64) -> Result<Measured> {
    let mut bit = Vec::new();
    backend.encode_bit(&backend.constant(false), &mut bit);
    let mut ring = Vec::new();
    backend.encode_ring(&backend.ring_constant(false), &mut ring);
    // A RAM's selector (its gadget has more levels than a ROM's): the larger of the two.
    let mut sel = Vec::new();
    let zero = backend.constant(false);
    for s in backend.ram_select_batch(&[&zero])? {
        backend.encode_sel(&s, &mut sel);
    }
    // A ROM's or an ordinary MUX select's (the circuit's gadget).
    let mut small = Vec::new();
    for s in backend.select_batch(&[&zero])? {
        backend.encode_sel(&s, &mut small);
    }
    Ok(Measured {
        seconds_per_unit,
        bit_bytes: bit.len(),
        ring_bytes: ring.len(),
        sel_bytes: sel.len(),
        small_sel_bytes: small.len(),
    })
}

/// A measured MPI run: seconds per cycle and clock-edge seconds (the slowest rank's).
struct Measure {
    seconds: f64,
    latch: f64,
    /// Seconds all ranks together spent inside tasks per cycle.
    busy: f64,
}

/// Runs `cycles` cycles from `dir`'s snapshot on `np` ranks of 1 thread (`mpirun --oversubscribe`
/// on this binary's `mpi-worker`) and checks the final state against `expected`.
fn launch(dir: &Path, np: usize, cycles: u64, expected: &[u8]) -> Result<Measure> {
    let exe = std::env::current_exe()?;
    let mut cmd = std::process::Command::new("mpirun");
    cmd.args(["--oversubscribe", "-np", &np.to_string()])
        .arg(&exe)
        .arg("mpi-worker")
        .arg(dir)
        .arg(cycles.to_string());
    // Containers often run as root, which Open MPI refuses unless told; a rank waiting for a message
    // yields its core instead of spinning (the machine may be shared).
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1");
    let out = cmd
        .output()
        .context("cannot start mpirun (install openmpi-bin)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "mpirun failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let field = |line: &str, key: &str| -> Option<f64> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
    };
    let mut m = Measure {
        seconds: 0.0,
        latch: 0.0,
        busy: 0.0,
    };
    for line in stdout.lines().filter(|l| l.starts_with("mpi-worker ")) {
        println!("  {line}");
        m.seconds = m
            .seconds
            .max(field(line, "seconds_per_cycle=").unwrap_or(0.0));
        m.latch = m.latch.max(field(line, "latch=").unwrap_or(0.0));
        m.busy += field(line, "busy=").unwrap_or(0.0);
    }
    if m.seconds <= 0.0 {
        bail!("the MPI workers reported no timing:\n{stdout}");
    }
    if std::fs::read(dir.join("mpi.snap"))? != expected {
        bail!("the {np}-rank state differs from the single-process state");
    }
    println!(
        "{np} ranks x 1 thread: {:.2} s/cycle; final state bit-identical to the single process",
        m.seconds
    );
    Ok(m)
}
