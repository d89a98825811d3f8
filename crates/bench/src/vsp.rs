//! `vsp` suite: seconds per encrypted processor cycle — the paper's headline number.
//!
//! `vsp-bench vsp [cycles] [warm-up] [gates]`: for each core (Pearl, Ruby) it encrypts fib with the
//! argument "5" at the default (≥128-bit) parameters, runs `warm-up` untimed cycles (default 5: at
//! power-up every flip-flop is a public zero, so early cycles are cheaper than steady state) and then
//! `cycles` timed ones (default 3) over TFHE with CMUX ROM/RAM on all threads, checks registers and RAM
//! against the plain gate-level run at the same cycle (and that some register was written), and prints
//! the seconds per cycle, the split between the combinational DAG and the clock edge (flip-flops + RAM
//! write), bootstraps, circuit bootstraps, CMUXes and key switches per cycle before and after
//! select-once MUXes, and scheduler efficiency. `gates` runs the old all-gate MUXes for comparison;
//! `nocells` runs without the technology mapping into multi-input cells (`vsp_circuit::techmap`).
//! `memory=SIZE` runs the cores with other ROM/RAM sizes (`vsp --memory-size` syntax: `memory=2048`,
//! `memory=rom=8192,ram=512`; default 512 bytes each; repeat it to run several sizes with the same
//! keys, one after the other; rows and keys are then labelled `pearl_rom8192_ram512`), and `pearl`
//! or `ruby` runs one core only. `batch=N` runs at most N ready gate bootstraps as one batch
//! (`TfheBackend::with_boot_batch`; default `vsp_circuit::tfhe_backend::BOOT_BATCH`, 1: one at a
//! time, as before batches), to compare the two in one build.
//! Per core it also prints the gate bootstraps by cell kind and the cycle's critical path in
//! bootstraps, without and with the cells, and it times TFHE-rs's DEFAULT NAND on one thread in the
//! same process: `<core>_cycle_tfhe_rs_nands` = seconds per cycle × threads ÷ that NAND. The NAND
//! moves by several per cent within minutes on a shared machine, so it is timed in 31-call windows
//! right before and right after each core's timed cycles, and each core is priced against the median
//! of its own two windows (`<core>_tfhe_rs_nand_ms`; `tfhe_rs_nand_ms` is the median of every window).
//! The paper: 2.3 s/cycle for Ruby on a 96-vCPU c5.metal at 80-bit parameters (≈ 221 vCPU·s per
//! cycle); our goal is ≤ 8 s/cycle on 2 vCPUs.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use vsp_cahp::cores::{self, Core, Memory};
use vsp_circuit::{client, Engine, LeveledParams, MemState, MuxPlan, RunOptions, TfheBackend};
use vsp_platform::{CoreBuild, Machine, MemSize, PlainRequest};
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
    let num = |i: usize, what: &str, default: u64| crate::common::num_arg(args, i, what, default);
    let cycles = num(0, "cycles", 3)?.max(1);
    let warmup = num(1, "warm-up cycles", 5)?;
    // `gates` evaluates every MUX as two gate bootstraps (the old engine); `nocells` keeps the
    // netlist's two-input gates (no multi-input cells).
    let (mut leveled, mut cells) = (true, true);
    let (mut sizes, mut only) = (Vec::new(), None);
    let mut boot_batch = vsp_circuit::tfhe_backend::BOOT_BATCH;
    for a in args.iter().skip(2) {
        match a.as_str() {
            "gates" => leveled = false,
            "nocells" => cells = false,
            "pearl" | "ruby" => only = Core::from_name(a),
            other => match (other.strip_prefix("memory="), other.strip_prefix("batch=")) {
                (Some(spec), _) => {
                    sizes.push(vsp_platform::processor::program::parse_memory_size(spec)?)
                }
                (_, Some(n)) => {
                    boot_batch = n
                        .parse()
                        .map_err(|_| anyhow::anyhow!("batch= takes a number, got {n:?}"))?
                }
                _ => bail!(
                    "after the counts: `gates`, `nocells`, `memory=SIZE`, `batch=N`, `pearl`, \
                     `ruby` or nothing, got {other:?}"
                ),
            },
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let prog = vsp_cahp::programs::FIB;
    let image = vsp_cahp::assemble(prog.source, prog.name)?;
    let args: Vec<String> = prog.args.iter().map(|s| s.to_string()).collect();
    if sizes.is_empty() {
        sizes.push(MemSize::B512);
    }

    let params = Params::default_128();
    let t = Instant::now();
    let sk = SecretKey::generate(&params)?;
    let ek = Arc::new(EvalKey::generate(&sk)?);
    let ck = Arc::new(CircuitKey::generate(&sk)?);
    println!(
        "keys (default parameters): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut nand = TfheRsNand::new();
    let (nand_ms, nand_cpu_ms) = medians(&nand.window()?);
    println!(
        "TFHE-rs 1.x DEFAULT_PARAMETERS NAND, one thread, this process: {nand_ms:.2} ms \
         ({nand_cpu_ms:.2} ms CPU) now; each core is priced against the NAND timed right before \
         and after its timed cycles"
    );
    println!("at most {boot_batch} ready gate bootstraps per batch (batch=N)");
    println!(
        "{warmup} warm-up cycles (untimed: at power-up every flip-flop is a public zero, so early \
         cycles are cheaper), then {cycles} timed cycles; registers and RAM checked against the plain run"
    );
    println!();
    let mut rows = Vec::new();
    let mut counts = Vec::new();
    let mut mems = Vec::new();
    let mut results = Vec::new();
    let mut kinds = Vec::new();
    let mut batch_counts = Vec::new();
    let runs = sizes.iter().flat_map(|&size| {
        Core::ALL
            .into_iter()
            .filter(move |&c| only.is_none_or(|o| o == c))
            .map(move |c| (size, c))
    });
    for (size, core) in runs {
        let plain = PlainRequest::new_sized(&image, &args, Memory::Cmux, size)?;
        let (rom_w, ram_w) = (&plain.rom, &plain.ram);
        let label = if size == MemSize::B512 {
            core.name().to_string()
        } else {
            format!("{core}_rom{}_ram{}", size.rom_bytes(), size.ram_bytes())
        };
        println!(
            "{label}: {size} (ROM {} x 32-bit words, RAM {} x 16-bit words)",
            1usize << size.rom_addr_width(),
            1usize << size.ram_addr_width()
        );
        let build = CoreBuild {
            size,
            ..CoreBuild::default()
        };
        let c = vsp_platform::core_circuit_with(core, Memory::Cmux, build)?;
        let stats = c.stats();
        let backend = TfheBackend::new(ek.clone(), Some(ck.clone()))?
            .with_leveled(leveled)
            .with_boot_batch(boot_batch);
        // The same plan without cells, for the counts (not run).
        let plain_gates = Engine::new(backend.clone().with_cells(false), c.clone());
        let backend = backend.with_cells(cells);
        let mut e = Engine::new(backend, c.clone());
        kinds.push((label.clone(), Kinds::of(&plain_gates), Kinds::of(&e)));
        e.set_threads(threads);
        e.set_rom(
            cores::ROM,
            client::encrypt_rom(&sk, size.rom_addr_width(), cores::ROM_DATA_WIDTH, rom_w)?,
        )?;
        e.set_ram(
            cores::RAM,
            client::encrypt_ram(&sk, size.ram_addr_width(), cores::RAM_DATA_WIDTH, ram_w)?,
        )?;
        let plan = e.plan_counts();
        let lp = LeveledParams::for_params(&params)
            .ok_or_else(|| anyhow::anyhow!("no CMUX plan for these parameters"))?;
        counts.push((
            label.clone(),
            MuxPlan::gates_only_under(&c, &lp).counts(),
            plan,
        ));
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
        let (mut batched, mut tasks) = (0usize, 0usize);
        let mut window = nand.window()?;
        let t = Instant::now();
        let cpu0 = process_cpu_seconds();
        for _ in 0..cycles {
            let s = e.step()?;
            dag += s.eval_seconds;
            edge += s.latch_seconds;
            eff += s.efficiency();
            lifts += s.lifts;
            batched += s.batched;
            tasks += s.tasks;
        }
        let per_cycle = t.elapsed().as_secs_f64() / cycles as f64;
        let cpu_per_cycle = (process_cpu_seconds() - cpu0) / cycles as f64;
        window.extend(nand.window()?);
        let n = cycles as f64;
        let lifts = lifts as f64 / n;
        let ram_refresh = (refreshes(&e)? - refreshed_before) as f64 / n;
        // Memory work per cycle: ROM read (CMUX tree + rotation, one bootstrap per bit), RAM read
        // (a CMUX tree and one bootstrap per bit), RAM write (two rotations per write-value bit; per
        // data bit the demultiplexer tree, words − 1 external products: δ = v − r takes r from the
        // read's tree), the round-robin refresh; one CB per address bit.
        let (words, width, abits) = (
            1usize << size.ram_addr_width(),
            cores::RAM_DATA_WIDTH,
            size.ram_addr_width(),
        );
        let mem = MemCounts {
            bootstraps: cores::ROM_DATA_WIDTH as f64 + (3 * width) as f64 + ram_refresh,
            circuit_bootstraps: size.rom_addr_width() + abits,
            cmuxes: size.rom_addr_width() + 2 * width * (words - 1),
            refresh: ram_refresh,
        };
        mems.push((label.clone(), mem, lifts));

        // The plain oracle at the same cycle.
        check_against_plain(core, &sk, &e, &plain, warmup + cycles)?;
        rows.push(format!(
            "| {label} | {warmup} + {cycles} | {threads} | {per_cycle:.1} | {:.1} | {:.1} | {} | {:.0} | {:.2} |",
            dag / n,
            edge / n,
            stats.bootstraps_per_cycle,
            (plan.gates
                + plan.cells
                + 2 * plan.gate_muxes
                + plan.refreshes
                + plan.select_refreshes) as f64
                + lifts,
            eff / n
        ));
        results.push((label.clone(), per_cycle, cpu_per_cycle, medians(&window)));
        batch_counts.push((label, batched as f64 / n, tasks as f64 / n));
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
                (k.gates + k.cells + 2 * k.gate_muxes + k.refreshes + k.select_refreshes) as f64
                    + l,
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
    Kinds::table(&kinds);
    println!();
    for (core, s, ..) in &results {
        println!("{core}_seconds_per_cycle={s:.2}");
    }
    // The unit: TFHE-rs's NAND, timed in 31-call windows before the runs and right before and after
    // each core's timed cycles; each core is priced against the median of its own two windows.
    let (all_ms, all_cpu_ms) = nand.summary();
    println!(
        "tfhe_rs_nand_ms={all_ms:.2} tfhe_rs_nand_cpu_ms={all_cpu_ms:.2} (median of {} calls in \
         {} windows)",
        nand.all.len(),
        nand.all.len() / 31
    );
    for (core, s, _, (ms, _)) in &results {
        println!(
            "{core}_tfhe_rs_nand_ms={ms:.2}\n{core}_cycle_tfhe_rs_nands={:.0}",
            s * threads as f64 / (ms / 1e3)
        );
    }
    // The same in CPU time (both sides): what a cycle's work costs, whatever else the machine runs.
    for (core, _, cpu, (_, cpu_ms)) in &results {
        println!(
            "{core}_cpu_seconds_per_cycle={cpu:.2} {core}_cycle_tfhe_rs_nands_cpu={:.0}",
            cpu / (cpu_ms / 1e3)
        );
    }
    for (core, batched, tasks) in &batch_counts {
        println!("{core}_batched_tasks_per_cycle={batched:.0} (of {tasks:.0} DAG tasks)");
    }
    for (core, b, a) in &kinds {
        println!(
            "{core}_core_gate_bootstraps={:.0}->{:.0} {core}_critical_path_bootstraps={:.1}->{:.1}",
            b.bootstraps, a.bootstraps, b.dag, a.dag
        );
    }
    Ok(())
}

/// CPU time of this process so far (all threads, user + system; /proc/self/stat, 100 Hz ticks).
fn process_cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')'): utime and stime are the 12th and 13th.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

/// CPU time of this thread (schedstat, ns).
fn thread_cpu_ms() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    s.split_whitespace()
        .next()
        .and_then(|x| x.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e6
}

/// TFHE-rs's boolean NAND at DEFAULT_PARAMETERS on one thread, timed in windows: the unit of
/// `<core>_cycle_tfhe_rs_nands`. It moves by several per cent within minutes on a shared machine, so
/// each core is priced against the NAND timed right before and right after its own timed cycles, and
/// every window's samples are kept for the run's summary.
struct TfheRsNand {
    cks: tfhe::boolean::client_key::ClientKey,
    sks: tfhe::boolean::server_key::ServerKey,
    /// Every timed call's (wall ms, CPU ms), over all windows.
    all: Vec<(f64, f64)>,
}

impl TfheRsNand {
    fn new() -> Self {
        let (cks, sks) = tfhe::boolean::prelude::gen_keys();
        TfheRsNand {
            cks,
            sks,
            all: Vec::new(),
        }
    }

    /// One window: 31 timed calls after 3 untimed ones on this thread, every result decrypted.
    /// Returns the window's samples (wall ms, CPU ms) and keeps them for [`TfheRsNand::summary`].
    fn window(&mut self) -> Result<Vec<(f64, f64)>> {
        use tfhe::boolean::prelude::BinaryBooleanGates;
        let ins = [self.cks.encrypt(false), self.cks.encrypt(true)];
        let mut out = Vec::new();
        for r in 0..34usize {
            let (a, b) = (r & 1 == 1, r & 2 == 2);
            let t = Instant::now();
            let c0 = thread_cpu_ms();
            let nand = self.sks.nand(&ins[usize::from(a)], &ins[usize::from(b)]);
            let dc = thread_cpu_ms() - c0;
            let dt = t.elapsed().as_secs_f64() * 1e3;
            if self.cks.decrypt(&nand) == (a && b) {
                bail!("TFHE-rs NAND gave a wrong result");
            }
            if r >= 3 {
                out.push((dt, dc));
            }
        }
        self.all.extend_from_slice(&out);
        Ok(out)
    }

    /// Medians (wall ms, CPU ms) of all windows so far.
    fn summary(&self) -> (f64, f64) {
        medians(&self.all)
    }
}

/// The medians of a set of (wall, CPU) samples.
fn medians(s: &[(f64, f64)]) -> (f64, f64) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    (
        median(s.iter().map(|x| x.0).collect()),
        median(s.iter().map(|x| x.1).collect()),
    )
}

/// One core's bootstraps by kind under a plan, and its depth.
pub(crate) struct Kinds {
    /// Bootstraps per node kind (`AND`…, cell classes; MUXes left as gates count two each).
    pub(crate) by_kind: std::collections::BTreeMap<String, f64>,
    /// Gate bootstraps per cycle (plan: gates, cells, gate MUXes, refreshes, select refreshes,
    /// lifts predicted).
    pub(crate) bootstraps: f64,
    /// Logic depth in bootstraps (gates, cells, gate MUXes, memory reads; CMUXes none).
    pub(crate) depth: u32,
    /// The task DAG's critical path as 64 MPI ranks would run it (one select per circuit-bootstrap
    /// task), in gate-bootstrap units (a circuit bootstrap ≈ 5, a ROM bit ≈ 1): the floor on a cycle
    /// however many machines run it.
    pub(crate) dag: f64,
}

impl Kinds {
    pub(crate) fn of(e: &Engine<TfheBackend>) -> Kinds {
        let k = e.plan_counts();
        let mut by_kind: std::collections::BTreeMap<String, f64> = e
            .bootstrap_kind_counts()
            .into_iter()
            .filter(|(name, _)| name != "MUX")
            .map(|(name, n)| (name, n as f64))
            .collect();
        by_kind.insert("gate MUX".into(), 2.0 * k.gate_muxes as f64);
        by_kind.insert("lift".into(), k.lifts as f64 + k.carried_lifts);
        by_kind.insert("refresh".into(), k.refreshes as f64);
        // Selects refreshed by a gate bootstrap before their circuit bootstrap (a column only where
        // a plan has them).
        if k.select_refreshes > 0 {
            by_kind.insert("select refresh".into(), k.select_refreshes as f64);
        }
        Kinds {
            by_kind,
            bootstraps: k.bootstraps(),
            depth: e.bootstrap_depth(),
            dag: e.plan_partition(64).critical_path_units / 10.0,
        }
    }

    fn table(rows: &[(String, Kinds, Kinds)]) {
        let mut cols: Vec<String> = Vec::new();
        for (_, b, a) in rows {
            for k in b.by_kind.keys().chain(a.by_kind.keys()) {
                if !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
        let order = |k: &str| {
            let gates = ["AND", "NAND", "OR", "NOR", "XOR", "XNOR", "ANDNOT", "ORNOT"];
            let tail = ["gate MUX", "lift", "refresh", "select refresh"];
            if let Some(i) = gates.iter().position(|g| *g == k) {
                (0, i, String::new())
            } else if let Some(i) = tail.iter().position(|g| *g == k) {
                (2, i, String::new())
            } else {
                (1, 0, k.to_string())
            }
        };
        cols.sort_by_key(|k| order(k));
        println!(
            "Core gate bootstraps per cycle by kind (plan counts; lifts predicted), without and with \
             multi-input cells; depth = bootstraps on the longest path (CMUXes count none); critical \
             path = the cycle's task DAG as 64 MPI ranks run it (one select per circuit-bootstrap \
             task), in gate-bootstrap units (the TFHE backend's measured task costs: a one-bit \
             circuit bootstrap 3.8, 4.6 with the RAM's gadget; a ROM bit 1 after its address):"
        );
        println!();
        println!(
            "| core | cells | {} | total | depth | critical path |",
            cols.join(" | ")
        );
        println!("|---|---|{}---|---|---|", "---|".repeat(cols.len()));
        for (core, b, a) in rows {
            for (name, k) in [("no", b), ("yes", a)] {
                let cells: Vec<String> = cols
                    .iter()
                    .map(|c| format!("{:.0}", k.by_kind.get(c).copied().unwrap_or(0.0)))
                    .collect();
                println!(
                    "| {core} | {name} | {} | {:.0} | {} | {:.1} |",
                    cells.join(" | "),
                    k.bootstraps,
                    k.depth,
                    k.dag
                );
            }
        }
    }
}

/// Checks the encrypted engine `e` of `core` after `cycles` cycles against the plain gate-level run
/// of the same request: every register and the RAM decrypted, and some register written (else the
/// check would compare power-up zeros).
pub(crate) fn check_against_plain(
    core: Core,
    sk: &SecretKey,
    e: &Engine<TfheBackend>,
    plain: &PlainRequest,
    cycles: u64,
) -> Result<()> {
    let mut machine = Machine::plain(core, plain)?;
    let p = machine.engine_mut();
    p.run(
        &RunOptions {
            max_cycles: cycles,
            ..Default::default()
        },
        &mut |_| {},
    )?;
    let mut written = 0;
    for r in cores::REGS {
        let enc = client::decrypt_value(sk, &e.output(r)?)?;
        let want = p.output_value(r, 0)?;
        if enc != want {
            bail!("{core}: encrypted {r} = {enc} disagrees with the plain run ({want})");
        }
        written += usize::from(want != 0);
    }
    let MemState::Ram(ram) = e.memory(cores::RAM)? else {
        bail!("{core}: RAM is not a CMUX RAM");
    };
    if client::decrypt_ram(sk, ram)? != p.memory_words(cores::RAM, 0)? {
        bail!("{core}: encrypted RAM disagrees with the plain run");
    }
    if written == 0 {
        bail!("{core}: no register was written after {cycles} cycles; the check compares zeros");
    }
    Ok(())
}
