//! Select-once MUXes on the real cores: the CMUX plan gives the same registers, RAM and outputs as the
//! all-gates plan, cycle by cycle (plain backend, 64 lanes), and it is much cheaper.

use std::sync::Arc;

use vsp_cahp::cores::{self, Core, Memory};
use vsp_circuit::{
    Blueprint, Circuit, CircuitError, Engine, LeveledParams, PlainBackend, RunOptions,
};

fn circuit(core: Core) -> Arc<Circuit> {
    let bp = Blueprint::from_str_with_resolver(core.blueprint(Memory::Cmux), |p| {
        cores::resolve(p)
            .map(str::to_string)
            .ok_or_else(|| CircuitError::Blueprint(p.into()))
    })
    .unwrap();
    Arc::new(Circuit::compile(&bp).unwrap())
}

#[test]
fn cmux_plan_matches_gate_plan_on_both_cores() {
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    check_plan(lp, |_| {});
}

#[test]
fn pessimistic_noise_model_plan_matches_gate_plan() {
    // Three times the CMUX noise (both gadgets): shorter chains, refreshes (CMUX and gate-MUX
    // rings alike; at twice, low-noise selects and select refreshes still avoid every refresh).
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    let p = LeveledParams {
        v_ext: 3.0 * lp.v_ext,
        v_ext_low: 3.0 * lp.v_ext_low,
        ..lp
    };
    let base = vsp_circuit::MuxPlan::new(&circuit(Core::Pearl), &lp).counts();
    check_plan(p, |counts| assert!(counts.refreshes > 0, "{counts:?}"));
    let more = vsp_circuit::MuxPlan::new(&circuit(Core::Pearl), &p).counts();
    // More noise per CMUX can only make a cycle dearer.
    assert!(more.cost > base.cost, "{more:?} vs {base:?}");
}

fn check_plan(lp: LeveledParams, extra: impl Fn(&vsp_circuit::PlanCounts)) {
    for core in [Core::Pearl, Core::Ruby] {
        let c = circuit(core);
        for prog in [vsp_cahp::programs::FIB, vsp_cahp::programs::HAMMING] {
            let image = vsp_cahp::assemble(prog.source, prog.name).unwrap();
            let ram = vsp_cahp::load_args(&image.ram, prog.args, cores::RAM_BYTES).unwrap();
            let rom_w = cores::rom_words(&image.rom).unwrap();
            let ram_w = cores::ram_words(&ram).unwrap();
            let mut engines: Vec<Engine<PlainBackend>> = (0..2)
                .map(|k| {
                    let mut e = Engine::new(PlainBackend, c.clone());
                    if k == 1 {
                        e.set_leveled(Some(lp));
                    }
                    e.load_memory_words(cores::ROM, &rom_w).unwrap();
                    e.load_memory_words(cores::RAM, &ram_w).unwrap();
                    e
                })
                .collect();
            let counts = engines[1].plan_counts();
            extra(&counts);
            assert!(
                counts.cmuxes > 0,
                "{core}: no MUX became a CMUX: {counts:?}"
            );
            assert!(
                counts.log2_failure <= -40.0,
                "{core}: cycle failure bound {counts:?}"
            );
            let one = RunOptions {
                max_cycles: 1,
                ..Default::default()
            };
            let mut finished = false;
            let mut lifts = Vec::new();
            for cycle in 0..2000 {
                for e in engines.iter_mut() {
                    e.run(&one, &mut |_| {}).unwrap();
                }
                lifts.push(engines[1].last_cycle_stats().lifts);
                for r in cores::REGS.iter().chain([&cores::FINISH]) {
                    let (g, l) = (
                        engines[0].output_value(r, 0).unwrap(),
                        engines[1].output_value(r, 0).unwrap(),
                    );
                    assert_eq!(g, l, "{core} {}: {r} differs at cycle {cycle}", prog.name);
                }
                if engines[0].output_value(cores::FINISH, 0).unwrap() == 1 {
                    finished = true;
                    break;
                }
            }
            assert!(finished, "{core} {} did not finish", prog.name);
            assert_eq!(
                engines[0].memory_words(cores::RAM, 0).unwrap(),
                engines[1].memory_words(cores::RAM, 0).unwrap()
            );
            // Carried rings are lifted only when over budget: fewer lifts than flip-flop rings,
            // but never fewer than the ones lifted every cycle.
            let steady = &lifts[lifts.len().min(8)..];
            let mean = steady.iter().sum::<usize>() as f64 / steady.len().max(1) as f64;
            eprintln!(
                "{core} {}: lifts per cycle {mean:.1} (of {} carried + {} always)",
                prog.name, counts.carried, counts.lifts
            );
            assert!(steady
                .iter()
                .all(|&l| l >= counts.lifts && l <= counts.lifts + counts.carried));
            let gates = engines[0].plan_counts();
            eprintln!("{core}: gates-only {gates:?}\n{core}: leveled    {counts:?}");
            assert!(
                counts.cost < 0.75 * gates.cost,
                "{core}: {counts:?} vs {gates:?}"
            );
        }
    }
}

#[test]
fn low_noise_selects_cut_the_register_files_lifts() {
    // Giving the register file's write and read selects the RAM's low-noise gadget lets its carried
    // rings take ~3.6× more cycles before a lift; the planner chooses it by cost, so the cycle can only
    // get cheaper than with the circuit's gadget alone, and the failure bounds still hold.
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    let one_gadget = LeveledParams {
        v_ext_low: lp.v_ext,
        v_ms_cb_low: lp.v_ms_cb,
        cost_cb_low: lp.cost_cb,
        cost_cmux_low: lp.cost_cmux,
        ..lp
    };
    for core in [Core::Pearl, Core::Ruby] {
        let c = circuit(core);
        let two = vsp_circuit::MuxPlan::new(&c, &lp).counts();
        let one = vsp_circuit::MuxPlan::new(&c, &one_gadget).counts();
        eprintln!("{core}: one gadget {one:?}\n{core}: two gadgets {two:?}");
        assert_eq!(one.low_noise_selects, 0, "{core}: {one:?}");
        assert!(two.low_noise_selects > 0, "{core}: {two:?}");
        assert!(two.low_noise_cmuxes > 0, "{core}: {two:?}");
        assert!(two.cost < one.cost, "{core}: {two:?} vs {one:?}");
        assert!(
            two.carried_lifts + (two.refreshes as f64) < one.carried_lifts + (one.refreshes as f64),
            "{core}: {two:?} vs {one:?}"
        );
        assert!(
            two.log2_failure <= -40.0 && two.log2_worst_decision <= -64.0 + 1e-9,
            "{core}: {two:?}"
        );
    }
}

#[test]
fn plan_predicts_the_engines_lifts_cycle_by_cycle() {
    // The engine lifts a carried flip-flop ring only when it is over budget; the plan runs the same
    // rule on its noise model. From a first cycle that lifts every carried ring (`set_leveled` drops
    // them) both give the same lifts in every cycle (register bits share one worst-case noise, so
    // they come in bursts), and the plan's steady-state mean is the mean of the engine's lifts over a
    // whole number of periods.
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    for core in [Core::Pearl, Core::Ruby] {
        let c = circuit(core);
        let prog = vsp_cahp::programs::FIB;
        let image = vsp_cahp::assemble(prog.source, prog.name).unwrap();
        let ram = vsp_cahp::load_args(&image.ram, prog.args, cores::RAM_BYTES).unwrap();
        let mut e = Engine::new(PlainBackend, c.clone());
        e.set_leveled(Some(lp));
        e.load_memory_words(cores::ROM, &cores::rom_words(&image.rom).unwrap())
            .unwrap();
        e.load_memory_words(cores::RAM, &cores::ram_words(&ram).unwrap())
            .unwrap();
        let plan = vsp_circuit::MuxPlan::new(e.circuit(), &lp);
        let counts = plan.counts();
        assert_eq!(
            counts,
            e.plan_counts(),
            "{core}: the engine runs another plan"
        );
        // The plan carries rings through CMUXes with low-noise selects, which the model charges
        // their own (smaller) variance: the engine's carry rule must follow that too.
        assert!(counts.low_noise_selects > 0, "{core}: {counts:?}");
        // Ruby's registers fall into groups with different noise, so its period is longer.
        let cycles = 16 + 3 * 64;
        let expected: Vec<usize> = plan
            .carried_lift_schedule(e.circuit(), cycles, false)
            .iter()
            .map(|l| l + counts.lifts)
            .collect();
        let one = RunOptions {
            max_cycles: 1,
            ..Default::default()
        };
        let mut measured = Vec::new();
        for _ in 0..cycles {
            e.run(&one, &mut |_| {}).unwrap();
            measured.push(e.last_cycle_stats().lifts);
        }
        assert_eq!(measured, expected, "{core}: lifts per cycle");
        assert!(
            measured.iter().any(|&l| l > counts.lifts),
            "{core}: {measured:?}"
        );
        // The steady-state mean: over one period from cycle 16 (Pearl: the registers are lifted
        // every twelfth cycle, their write and read selects having the low-noise gadget), or over cycles 16-79 where the bursts do not repeat within 64 cycles
        // (Ruby: its register groups drift apart).
        let tail = &measured[16..];
        let window = (1..=64)
            .find(|&p| tail.iter().skip(p).zip(tail).all(|(a, b)| a == b))
            .unwrap_or(64);
        let mean = tail[..window].iter().sum::<usize>() as f64 / window as f64;
        eprintln!("{core}: {mean:.2} lifts per cycle (window {window})");
        assert!(
            (mean - (counts.lifts as f64 + counts.carried_lifts)).abs() < 1e-9,
            "{core}: measured {mean} per cycle (window {window}) vs planned {counts:?}"
        );
    }
}
