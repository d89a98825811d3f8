//! Select-once MUXes over TFHE: an encrypted run with MUXes planned as CMUXes agrees with the plain
//! oracle, and the noise of the new path (gate ring → CMUX chain with circuit-bootstrapped selects →
//! extraction + key switch → gate) is what the planner's model says.

mod common;

use std::sync::Arc;

use common::{keys, ram_blueprint, ram_step, testdata};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vsp_circuit::noise::NoiseModel;
use vsp_circuit::*;
use vsp_tfhe::{Gate2, Params, Trlwe};

/// Runs a RAM built from gates (its read trees and write MUXes share their selects, so the planner
/// turns them into CMUXes; the cells are flip-flops) encrypted under `plan` (None: the backend's
/// own) against the plain oracle for six cycles of writes and read-backs; returns the plan's counts.
fn run_against_plain(plan: Option<LeveledParams>) -> PlanCounts {
    let (sk, ek, ck) = keys();
    let dir = testdata();
    let c = Arc::new(
        Circuit::compile(
            &Blueprint::from_str_with_base(&ram_blueprint("mux-ram", 4, 2), &dir).unwrap(),
        )
        .unwrap(),
    );
    let backend = TfheBackend::new(ek.clone(), Some(ck.clone())).unwrap();
    let mut e = Engine::new(backend, c.clone());
    if plan.is_some() {
        e.set_leveled(plan);
    }
    e.set_threads(2);
    let counts = e.plan_counts();
    eprintln!("{counts:?}");
    assert!(
        counts.cmuxes > 0 && counts.circuit_bootstraps > 0,
        "{counts:?}"
    );
    assert!(counts.log2_failure <= -64.0, "{counts:?}");
    let mut p = Engine::new(PlainBackend, c);
    let init: Vec<u64> = (0..16).map(|i| (i * 3 + 1) & 3).collect();
    let cells = |words: &[u64]| -> Vec<bool> {
        words
            .iter()
            .flat_map(|w| (0..2).map(move |i| (w >> i) & 1 == 1))
            .collect()
    };
    e.set_memory_cells(
        "ram",
        cells(&init).iter().map(|&b| sk.encrypt_bit(b)).collect(),
    )
    .unwrap();
    p.load_memory_words("ram", &init).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut last_write = 0;
    for cyc in 0..6 {
        // Every other cycle reads the word written just before, so written data flows back out.
        let addr = if cyc % 2 == 1 {
            last_write
        } else {
            rng.gen_range(0..16u64)
        };
        let (wren, wdata) = (u64::from(cyc % 2 == 0), rng.gen_range(0..4u64));
        last_write = addr;
        let (got, want) = ram_step(sk, &mut e, &mut p, (addr, wren, wdata), (4, 2));
        assert_eq!(got, want, "cycle {cyc}");
    }
    let want = cells(&p.memory_words("ram", 0).unwrap());
    let got: Vec<bool> = e
        .memory_cells("ram")
        .unwrap()
        .iter()
        .map(|b| sk.decrypt_bit(b).unwrap())
        .collect();
    assert_eq!(got, want);
    assert_ne!(want, cells(&init), "the run never changed the RAM");
    counts
}

#[test]
fn encrypted_cmux_plan_matches_plain() {
    run_against_plain(None);
}

#[test]
fn encrypted_plan_with_lifted_cells_matches_plain() {
    // Cheap selects make nearly every MUX a CMUX, so the flip-flop cells are lifted to rings (one
    // bootstrap each) and the read trees run on them; a model with three times the CMUX noise keeps
    // the chains short. A more pessimistic model is still a safe one.
    let lp = LeveledParams::for_params(&Params::default_128()).unwrap();
    let forced = LeveledParams {
        cost_cb: 0.1,
        cost_cb_low: 0.2,
        v_ext: 3.0 * lp.v_ext,
        v_ext_low: 3.0 * lp.v_ext_low,
        ..lp
    };
    let counts = run_against_plain(Some(forced));
    assert!(counts.lifts > 0 && counts.cmuxes >= 30, "{counts:?}");
    // Cheap low-noise selects too: the cells' carried rings go through CMUXes whose selects the
    // engine circuit-bootstraps with the RAM's gadget, and the run still matches the oracle.
    assert!(counts.low_noise_selects > 0, "{counts:?}");
}

fn torus(x: u32) -> f64 {
    x as i32 as f64 / 2f64.powi(32)
}

/// Distance to the nearest of ±1/8.
fn err(phase: f64) -> f64 {
    if phase > 0.0 {
        phase - 0.125
    } else {
        phase + 0.125
    }
}

/// Every coefficient's error of `r`'s phase under `sk`.
fn ring_errs(sk: &vsp_tfhe::SecretKey, r: &vsp_tfhe::Trlwe<u32>) -> Vec<f64> {
    sk.phase_trlwe(r)
        .unwrap()
        .iter()
        .map(|&x| err(torus(x)))
        .collect()
}

/// A sample variance and its standard error (`s² · √(2 / (n − 1))` for normal samples).
#[derive(Clone, Copy, Debug)]
struct Var {
    v: f64,
    se: f64,
}

fn var(xs: &[f64]) -> Var {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    Var {
        v,
        se: v * (2.0 / (n - 1.0)).sqrt(),
    }
}

/// The variance one CMUX adds, from the rings before and after a chain of `depth` of them. The two
/// samples come from the same rings (positively correlated), so adding their errors in quadrature
/// overstates the difference's error: the check stays conservative.
fn per_step(fresh: Var, chained: Var, depth: usize) -> Var {
    Var {
        v: (chained.v - fresh.v) / depth as f64,
        se: fresh.se.hypot(chained.se) / depth as f64,
    }
}

/// Variances of the ring errors of `trials` fresh gate rings (a NAND of random bits from an RNG seeded
/// with `seed`), of the same rings after `chain` (which must keep the ring's bit), and of level-0
/// bits extracted from every coefficient of the chained rings. The chained ring's bit also
/// feeds a gate, as in the engine.
fn chain_variances(
    seed: u64,
    trials: usize,
    mut chain: impl FnMut(&mut StdRng, Trlwe<u32>) -> Trlwe<u32>,
) -> (Var, Var, Var) {
    let (sk, ek, _) = keys();
    let n1 = Params::default_128().n1;
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut fresh, mut chained, mut extracted) = (Vec::new(), Vec::new(), Vec::new());
    for _trial in 0..trials {
        let bit = |rng: &mut StdRng| sk.encrypt_bit(rng.gen());
        // The data: gate results in ring form.
        let acc = ek
            .gate2_trlwe(Gate2::Nand, &bit(&mut rng), &bit(&mut rng))
            .unwrap();
        fresh.extend(ring_errs(sk, &acc));
        let want = sk.decrypt_bit(&ek.extract_bit(&acc, 0).unwrap()).unwrap();
        let acc = chain(&mut rng, acc);
        chained.extend(ring_errs(sk, &acc));
        assert_eq!(
            sk.decrypt_bit(&ek.extract_bit(&acc, 0).unwrap()).unwrap(),
            want
        );
        // Every coefficient carries a bit with the same noise: extract and key-switch many of them.
        for i in 0..n1 {
            let e = ek.extract_bit(&acc, i).unwrap();
            extracted.push(err(sk.phase_lvl0(&e).unwrap()));
        }
        // The extracted result feeds a gate, as in the engine.
        let g = ek
            .nand(&ek.extract_bit(&acc, 0).unwrap(), &sk.encrypt_bit(true))
            .unwrap();
        assert_eq!(sk.decrypt_bit(&g).unwrap(), !want);
    }
    (var(&fresh), var(&chained), var(&extracted))
}

/// The model is an upper bound (rounding terms charged in full, as a select of 1 incurs them) that is
/// nearly tight for the worst case the chains here run: each measured variance (name, measured, model)
/// must be below it and not so far below that a term of the model would be missing from the
/// ciphertexts (≥ 0.8×). The keys and the noise are fresh each run, so the check allows what a
/// correct model still shows: the key at hand (its weight, its key-switching key's noise) moves the
/// variance by a few per cent from the model's expectation over keys, hence 10 %, and the estimate's
/// own sampling error, four standard errors (one CI run with an eighth of today's samples measured
/// 1.13). `note` follows the name in the printed line.
fn assert_near_model(note: &str, rows: &[(&str, Var, f64)]) {
    for &(name, meas, model) in rows {
        let Var { v, se } = meas;
        println!(
            "{name}{note}: measured {v:.3e} ± {se:.1e}, model {model:.3e}, ratio {:.2}",
            v / model
        );
        assert!(
            v <= 1.1 * model + 4.0 * se && v >= 0.8 * model,
            "{name}: measured {v:.3e} ± {se:.1e} vs model {model:.3e}"
        );
    }
}

#[test]
fn cmux_chain_variance_matches_the_planner_model() {
    let (sk, ek, ck) = keys();
    let params = Params::default_128();
    let lp = LeveledParams::for_params(&params).unwrap();
    let depth = lp.max_chain();
    assert!(depth >= 2, "{lp:?}");
    let (v_fresh, v_chain, v_bit) = chain_variances(11, 3, |rng, mut acc| {
        let bit = |rng: &mut StdRng| sk.encrypt_bit(rng.gen());
        // The select always picks the chain, so the result went through all `depth` CMUXes, and it is
        // 1 (the chain on the 1 side): a CMUX's gadget-rounding term (−sel·ε(d1 − d0), 48 % of V_ext
        // with the circuit's gadget) only arises when the select is 1, so this is the worst case the
        // planner bounds. (With random selects the chain measured 0.76–0.81× V_ext per CMUX: the
        // TRGSW-noise term plus half the rounding term is 0.76× V_ext.)
        for _ in 0..depth {
            let other = ek.gate2_trlwe(Gate2::Xor, &bit(rng), &bit(rng)).unwrap();
            let sel = ck.circuit_bootstrap_one(&sk.encrypt_bit(true)).unwrap();
            acc = sel.cmux(&acc, &other).unwrap();
        }
        acc
    });
    let per_cmux = per_step(v_fresh, v_chain, depth);
    let m = NoiseModel::of(&params);
    assert_near_model(
        "",
        &[
            ("gate ring (blind rotation)", v_fresh, lp.v_br),
            ("one CMUX with a CB select", per_cmux, lp.v_ext),
            (
                "extracted bit after the chain",
                v_bit,
                lp.v_br + depth as f64 * lp.v_ext + m.v_ks,
            ),
        ],
    );
    assert!(lp.v_br + depth as f64 * lp.v_ext + m.v_ks <= lp.v_tlwe_max);
}

#[test]
fn low_noise_select_chain_variance_matches_the_planner_model() {
    // The selects the planner gives the low-noise gadget run through the backend's RAM selects
    // (`Backend::ram_select_batch`, gadget `Params::cb_ram`) and the ordinary CMUX: each CMUX must add
    // at most the model's `v_ext_low`, and the longest chain that model allows after a gate's ring must
    // still extract to a level-0 bit within `v_tlwe_max`.
    let (sk, ek, ck) = keys();
    let params = Params::default_128();
    let lp = LeveledParams::for_params(&params).unwrap();
    assert!(lp.v_ext_low < 0.5 * lp.v_ext, "{lp:?}");
    let depth = ((lp.v_ring_max() - lp.v_br) / lp.v_ext_low).floor() as usize;
    assert!(depth > 2 * lp.max_chain(), "{depth} vs {}", lp.max_chain());
    let b = TfheBackend::new(ek.clone(), Some(ck.clone())).unwrap();
    let (v_fresh, v_chain, v_bit) = chain_variances(12, 2, |rng, mut acc| {
        let bit = |rng: &mut StdRng| sk.encrypt_bit(rng.gen());
        // Every select 1, the chain on the 1 side: the worst case (the rounding term, 11 % of
        // V_ext_low, only arises when the select is 1).
        let picks: Vec<bool> = vec![true; depth];
        let bits: Vec<_> = picks.iter().map(|&s| sk.encrypt_bit(s)).collect();
        let sels = b
            .ram_select_batch(&bits.iter().collect::<Vec<_>>())
            .unwrap();
        for (sel, &s) in sels.iter().zip(&picks) {
            assert_eq!(sel.gadget(), params.cb_ram);
            let other = ek.gate2_trlwe(Gate2::Xor, &bit(rng), &bit(rng)).unwrap();
            // Backend::cmux(s, a, b) is s ? b : a; the chain is always the one picked.
            acc = if s {
                b.cmux(sel, &other, &acc).unwrap()
            } else {
                b.cmux(sel, &acc, &other).unwrap()
            };
        }
        acc
    });
    let per_cmux = per_step(v_fresh, v_chain, depth);
    let m = NoiseModel::of(&params);
    let bound = lp.v_br + depth as f64 * lp.v_ext_low + m.v_ks;
    assert_near_model(
        &format!(" ({depth} CMUXes)"),
        &[
            ("one CMUX with a low-noise select", per_cmux, lp.v_ext_low),
            ("extracted bit after the chain", v_bit, bound),
        ],
    );
    assert!(bound <= lp.v_tlwe_max);
}

/// Bootstraps run in batches ([`TfheBackend::with_boot_batch`]: gates, gate MUXes, lifts, CMUXes'
/// refreshes) leave exactly the state one at a time leaves: the same ciphertexts, bit for bit, in
/// the flip-flops and the outputs, and the same task and lift counts, on one worker and on two,
/// under a plan with gate MUXes beside CMUXes and one with CMUXes refreshed (chains longer than a
/// noisier model allows); and batches did form.
#[test]
fn batched_plans_leave_the_same_ciphertexts() {
    let (sk, ek, ck) = keys();
    let c = chain_circuit(10);
    let lp = LeveledParams::for_params(&Params::default_128()).unwrap();
    let noisier = |m: f64| LeveledParams {
        v_ext: m * lp.v_ext,
        v_ext_low: m * lp.v_ext_low,
        ..lp
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let ins: Vec<_> = (0..3)
        .map(|_| {
            (
                client::encrypt_value(sk, rng.gen_range(0..256), 8),
                client::encrypt_value(sk, rng.gen_range(0..4), 2),
            )
        })
        .collect();
    let (mut gate_muxes, mut refreshes) = (0, 0);
    // The first keeps gate MUXes: with dear low-noise selects no chain is worth turning into
    // CMUXes with them.
    let dear_low = LeveledParams {
        cost_cb_low: 1000.0,
        ..noisier(5.5)
    };
    for plan in [dear_low, noisier(7.0)] {
        let mut runs = Vec::new();
        for threads in [1, 2] {
            for batch in [1, vsp_circuit::tfhe_backend::BOOT_BATCH, 16] {
                let backend = TfheBackend::new(ek.clone(), Some(ck.clone()))
                    .unwrap()
                    .with_boot_batch(batch);
                let mut e = Engine::new(backend, c.clone());
                e.set_leveled(Some(plan));
                e.set_threads(threads);
                let counts = e.plan_counts();
                assert!(counts.cmuxes > 0 && counts.lifts > 0, "{counts:?}");
                gate_muxes += counts.gate_muxes;
                refreshes += counts.refreshes;
                let (mut stats, mut outs, mut batched) = (Vec::new(), Vec::new(), 0);
                for (x, s) in &ins {
                    e.set_input("x", x.clone()).unwrap();
                    e.set_input("s", s.clone()).unwrap();
                    let st = e.step().unwrap();
                    stats.push((st.tasks, st.lifts));
                    batched += st.batched;
                    outs.push(e.output("y").unwrap());
                }
                assert_eq!(
                    batched > 0,
                    batch > 1,
                    "batches of {batch} on {threads} threads: {batched} tasks batched"
                );
                runs.push((e.snapshot_bytes(), outs, stats));
            }
        }
        for (k, r) in runs.iter().enumerate() {
            assert!(r == &runs[0], "{plan:?}: run {k} != one at a time");
        }
    }
    assert!(gate_muxes > 0 && refreshes > 0, "{gate_muxes} {refreshes}");
}

/// Long chains of MUXes on two shared selects (longer than a ring's noise allows without a refresh),
/// gates on their results and flip-flops in the loop.
fn chain_circuit(len: usize) -> Arc<Circuit> {
    use vsp_circuit::netlist::{GateKind, NetlistBuilder};
    let mut b = NetlistBuilder::new();
    let x = b.input("x", 8);
    let s = b.input("s", 2);
    let q: Vec<_> = (0..4).map(|i| b.dff(i % 2 == 0)).collect();
    let mut outs = Vec::new();
    for (c, &start) in q.iter().enumerate() {
        let mut v = start;
        for k in 0..len {
            v = b.mux(s[(k + c) % 2], v, x[(k + 3 * c) % 8]);
            if k % 5 == 4 {
                outs.push(v);
            }
        }
        let g = b.gate(GateKind::Xor, v, x[c]);
        b.connect_dff(start, g).unwrap();
        outs.push(g);
    }
    b.output("y", &outs);
    Arc::new(Circuit::compile(&Blueprint::single("chains", b.build().unwrap())).unwrap())
}

/// Pairs of MUX chains as long as a ring takes with the circuit's gadget (8 CMUXes on two shared
/// selects), each pair joined by a MUX on a third select: the join's operands are at the ring bound,
/// so with the circuit's gadget alone every join costs two bootstraps (a gate MUX, or refreshing both
/// operands) and the drop leaves the third select's MUXes as gates. With the low-noise gadget for
/// the chains' and the join's selects the whole tree is one CMUX chain of 9, which costs less; the
/// plan says so, keeps every decision within the per-gate bound, and an encrypted cycle under it
/// gives the plain circuit's outputs.
#[test]
fn long_chains_take_low_noise_selects() {
    use vsp_circuit::netlist::NetlistBuilder;
    let lp = LeveledParams::for_params(&Params::default_128()).unwrap();
    let depth = lp.max_chain();
    let mut b = NetlistBuilder::new();
    let x = b.input("x", 8);
    let s = b.input("s", 3);
    let mut outs = Vec::new();
    for pair in 0..8 {
        let chain = |b: &mut NetlistBuilder, first: usize| {
            let mut v = x[(pair + first) % 8];
            for k in 0..depth {
                v = b.mux(s[k % 2], v, x[(pair + first + 3 * k + 1) % 8]);
            }
            v
        };
        let (l, r) = (chain(&mut b, 0), chain(&mut b, 5));
        outs.push(b.mux(s[2], l, r));
    }
    b.output("y", &outs);
    let c = Arc::new(Circuit::compile(&Blueprint::single("pairs", b.build().unwrap())).unwrap());
    let with = MuxPlan::new(&c, &lp).counts();
    let without = MuxPlan::new(
        &c,
        &LeveledParams {
            cost_cb_low: 1000.0,
            ..lp
        },
    )
    .counts();
    assert!(without.gate_muxes > 0, "{without:?}");
    assert!(
        with.gate_muxes == 0 && with.low_noise_selects > 0,
        "{with:?}"
    );
    assert!(with.cost < without.cost - 1.0, "{with:?} vs {without:?}");
    assert!(with.log2_worst_decision <= -64.0 + 1e-9, "{with:?}");
    encrypted_cycles_match_plain(c, with, 3, 21);
}

/// The pairs of chains of `long_chains_take_low_noise_selects`, joined by a select that is itself
/// the result of a CMUX chain of the longest length (on two selects of its own): that select's
/// level-0 variance is near the bound, so its circuit bootstrap with the low-noise gadget's wider
/// stride would break the per-gate bound. The planner refreshes it by a gate bootstrap first (one
/// unit, against 12 for the six joins as gate MUXes, or the select chain's selects on the dearer
/// gadget): the plan says so, costs less than without the refresh, keeps every decision within the
/// bound, and an encrypted cycle under it (the refresh run before the circuit bootstrap) gives the
/// plain circuit's outputs.
#[test]
fn noisy_selects_are_refreshed_before_their_circuit_bootstrap() {
    use vsp_circuit::netlist::NetlistBuilder;
    let lp = LeveledParams::for_params(&Params::default_128()).unwrap();
    let depth = lp.max_chain();
    let mut b = NetlistBuilder::new();
    let x = b.input("x", 8);
    let s = b.input("s", 5);
    // The join's select: a chain of `depth` CMUXes on selects s2, s3, s4 (its circuit bootstrap
    // with the low-noise gadget decides within the bound only with two of them on that gadget
    // too, or refreshed).
    let mut sel = x[7];
    for k in 0..depth {
        sel = b.mux(s[2 + k % 3], sel, x[(5 * k + 2) % 8]);
    }
    // Six MUXes on that select (as gate MUXes they would cost 12 bootstraps), each joining two
    // chains on s0, s1 so long that they fit the bound without refreshes only with their selects
    // and the join's on the low-noise gadget.
    let long = ((lp.v_ring_max() - lp.v_br) / lp.v_ext_low).floor() as usize - 1;
    assert!(lp.v_br + long as f64 * lp.v_ext_low + lp.v_ext > lp.v_ring_max());
    let mut outs = Vec::new();
    for pair in 0..6 {
        let chain = |b: &mut NetlistBuilder, first: usize| {
            let mut v = x[(pair + first) % 8];
            for k in 0..long {
                v = b.mux(s[k % 2], v, x[(pair + first + 3 * k + 1) % 8]);
            }
            v
        };
        let (l, r) = (chain(&mut b, 0), chain(&mut b, 5));
        outs.push(b.mux(sel, l, r));
    }
    b.output("y", &outs);
    let c = Arc::new(Circuit::compile(&Blueprint::single("pairs", b.build().unwrap())).unwrap());
    let plan = MuxPlan::new(&c, &lp);
    let with = plan.counts();
    let without = MuxPlan::new(
        &c,
        &LeveledParams {
            cost_select_refresh: 1000.0,
            ..lp
        },
    )
    .counts();
    assert_eq!(without.select_refreshes, 0, "{without:?}");
    assert!(
        with.select_refreshes >= 1 && with.gate_muxes == 0 && with.low_noise_selects > 0,
        "{with:?}"
    );
    // The join's select is the one refreshed, and it takes the low-noise gadget.
    let (sels, _) = plan.selects_and_lifts(&c);
    let slot = sels
        .iter()
        .position(|&x| matches!(c.nodes()[x as usize], Node::Mux { .. }))
        .unwrap() as u32;
    assert!(plan.is_fresh_select(slot) && plan.is_low_noise_select(slot));
    assert!(with.cost < without.cost - 0.5, "{with:?} vs {without:?}");
    // Without the refresh the select chain's selects take the dearer gadget instead (the same
    // CMUXes, the same other bootstraps).
    assert!(
        with.low_noise_selects < without.low_noise_selects
            && with.cmuxes == without.cmuxes
            && with.bootstraps() == without.bootstraps() + with.select_refreshes as f64,
        "{with:?} vs {without:?}"
    );
    assert!(with.log2_worst_decision <= -64.0 + 1e-9, "{with:?}");
    assert!(without.log2_worst_decision <= -64.0 + 1e-9, "{without:?}");
    encrypted_cycles_match_plain(c, with, 5, 22);
}

/// A select that is a gate read by nothing but its CMUXes is not bootstrapped: its circuit bootstrap
/// takes the gate's linear combination and decides it (one bootstrap less, one level less); the same
/// gate also read by an output keeps its bootstrap. The encrypted run equals the plain one.
#[test]
fn selects_that_are_gates_are_decided_by_their_circuit_bootstrap() {
    use vsp_circuit::netlist::NetlistBuilder;
    let lp = LeveledParams::for_params(&Params::default_128()).unwrap();
    let mut b = NetlistBuilder::new();
    let x = b.input("x", 8);
    let s = b.input("s", 4);
    // Select 1: s0 AND s1, read only as a select. Select 2: s2 XOR s3, also an output bit.
    let only = b.gate(GateKind::And, s[0], s[1]);
    let shared = b.gate(GateKind::Xor, s[2], s[3]);
    let mut outs = Vec::new();
    for k in 0..6 {
        outs.push(b.mux(only, x[k], x[(k + 3) % 8]));
    }
    for k in 0..6 {
        outs.push(b.mux(shared, x[(k + 1) % 8], x[(k + 5) % 8]));
    }
    outs.push(shared);
    b.output("y", &outs);
    let c = Arc::new(Circuit::compile(&Blueprint::single("fused", b.build().unwrap())).unwrap());
    let plan = MuxPlan::new(&c, &lp);
    let k = plan.counts();
    let (sels, _) = plan.selects_and_lifts(&c);
    assert_eq!(sels.len(), 2, "{k:?}");
    let is_gate =
        |id: NodeId, g: GateKind| matches!(c.nodes()[id as usize], Node::Gate(k, ..) if k == g);
    for &id in &sels {
        assert_eq!(
            plan.is_fused_select(id),
            is_gate(id, GateKind::And),
            "{k:?}"
        );
    }
    assert_eq!((k.fused_selects, k.gates, k.cmuxes), (1, 1, 12), "{k:?}");
    assert!(k.log2_worst_decision <= -64.0 + 1e-9, "{k:?}");
    // Without the fusion the AND would be a bootstrap of its own: the cost says one more.
    let gates_only = MuxPlan::gates_only_under(&c, &lp).counts();
    assert_eq!(gates_only.gates, 2);
    encrypted_cycles_match_plain(c, k, 4, 31);
}

/// Two encrypted cycles of `c` (inputs `x`, 8 bits, and `s`, `s_width` bits, random from `seed`;
/// output `y`) on two threads under the default plan, which must count `plan`, give the plain
/// circuit's outputs.
fn encrypted_cycles_match_plain(c: Arc<Circuit>, plan: PlanCounts, s_width: usize, seed: u64) {
    let (sk, ek, ck) = keys();
    let mut e = Engine::new(
        TfheBackend::new(ek.clone(), Some(ck.clone())).unwrap(),
        c.clone(),
    );
    e.set_threads(2);
    assert_eq!(e.plan_counts(), plan);
    let mut p = Engine::new(PlainBackend, c);
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..2 {
        let (xv, sv) = (rng.gen_range(0..256), rng.gen_range(0..1u64 << s_width));
        e.set_input("x", client::encrypt_value(sk, xv, 8)).unwrap();
        e.set_input("s", client::encrypt_value(sk, sv, s_width))
            .unwrap();
        p.set_input_value("x", xv).unwrap();
        p.set_input_value("s", sv).unwrap();
        e.step().unwrap();
        p.step().unwrap();
        assert_eq!(
            client::decrypt_value(sk, &e.output("y").unwrap()).unwrap(),
            p.output_value("y", 0).unwrap()
        );
    }
}
