//! Technology mapping into multi-input cells (`vsp_circuit::techmap`): the mapped circuit computes
//! exactly what the unmapped one does, cycle by cycle (plain backend, 64 lanes: every output, every
//! flip-flop, every RAM word), on both cores running random programs and on random netlists; it
//! never costs more bootstraps nor more depth; and (encrypted) a mapped circuit decrypts to the plain
//! run.

use std::path::PathBuf;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use vsp_circuit::techmap::{self, MapParams};
use vsp_circuit::*;

fn params() -> MapParams {
    MapParams::for_params(&vsp_tfhe::Params::default_128())
}

fn core(name: &str) -> Arc<Circuit> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../hw/blueprint")
        .join(format!("{name}.toml"));
    Arc::new(Circuit::from_blueprint_path(&p).unwrap())
}

/// Both circuits step by step with the same random inputs (and memories); every output, flip-flop
/// and memory compared after every cycle.
fn run_both(a: Arc<Circuit>, b: Arc<Circuit>, cycles: usize, seed: u64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut ea = Engine::new(PlainBackend, a.clone());
    let mut eb = Engine::new(PlainBackend, b);
    for m in a.memories() {
        let (aw, dw) = (m.spec.addr_width, m.spec.data_width);
        let bits: Vec<u64> = (0..(1usize << aw) * dw).map(|_| rng.gen()).collect();
        let mem = PlainMemory {
            addr_width: aw,
            data_width: dw,
            bits,
        };
        let name = m.spec.name.clone();
        match m.spec.kind {
            MemKind::Rom if m.spec.imp == MemImpl::Cmux => {
                ea.set_rom(&name, mem.clone()).unwrap();
                eb.set_rom(&name, mem).unwrap();
            }
            MemKind::Ram if m.spec.imp == MemImpl::Cmux => {
                ea.set_ram(&name, mem.clone()).unwrap();
                eb.set_ram(&name, mem).unwrap();
            }
            _ => {}
        }
    }
    let one = RunOptions {
        max_cycles: 1,
        ..Default::default()
    };
    for cycle in 0..cycles {
        for p in a.inputs() {
            // Reset for the first two cycles, then random (rarely reset again).
            let bits: Vec<u64> = if p.name == "reset" {
                vec![
                    if cycle < 2 || rng.gen_ratio(1, 64) {
                        rng.gen()
                    } else {
                        0
                    };
                    p.bits.len()
                ]
            } else {
                (0..p.bits.len()).map(|_| rng.gen()).collect()
            };
            ea.set_input(&p.name, bits.clone()).unwrap();
            eb.set_input(&p.name, bits).unwrap();
        }
        ea.run(&one, &mut |_| {}).unwrap();
        eb.run(&one, &mut |_| {}).unwrap();
        for p in a.outputs() {
            assert_eq!(
                ea.output(&p.name).unwrap(),
                eb.output(&p.name).unwrap(),
                "output {} differs at cycle {cycle}",
                p.name
            );
        }
        assert_eq!(
            ea.state().dffs,
            eb.state().dffs,
            "flip-flops differ at cycle {cycle}"
        );
        for (x, y) in ea.state().mems.iter().zip(&eb.state().mems) {
            if let (MemState::Ram(x), MemState::Ram(y)) = (x, y) {
                assert_eq!(x, y, "RAM differs at cycle {cycle}");
            }
        }
    }
}

fn report(name: &str, before: &Circuit, after: &Circuit) -> (u64, u64, u32, u32) {
    let (sb, sa) = (before.stats(), after.stats());
    let (db, da) = (techmap::depth(before), techmap::depth(after));
    eprintln!(
        "{name}: bootstraps {} -> {}, depth {db} -> {da}, cells {:?}",
        sb.bootstraps_per_cycle,
        sa.bootstraps_per_cycle,
        techmap::kind_counts(after)
    );
    (sb.bootstraps_per_cycle, sa.bootstraps_per_cycle, db, da)
}

#[test]
fn both_cores_map_exactly_with_fewer_bootstraps_and_no_more_depth() {
    for name in ["pearl-cmux", "ruby-cmux"] {
        let c = core(name);
        let m = Arc::new(techmap::map(&c, &params()).unwrap());
        assert_eq!(m.fingerprint(), c.fingerprint());
        let (b, a, db, da) = report(name, &c, &m);
        assert!(a < b, "{name}: {b} -> {a}");
        assert!(da <= db, "{name}: depth {db} -> {da}");
        assert!(m.stats().cells > 0);
        run_both(c, m, 300, 11);
    }
}

/// A random synchronous netlist: mostly gates over recent wires (deep cones, reconvergence), NOTs,
/// full adders, MUXes sharing selects, flip-flops.
fn random_circuit(seed: u64, gates: usize) -> Arc<Circuit> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut b = NetlistBuilder::new();
    let mut w = b.input("x", 10);
    let dffs: Vec<_> = (0..16).map(|i| b.dff(i % 3 == 0)).collect();
    w.extend(&dffs);
    let sels: Vec<_> = w[..3].to_vec();
    let pick = |rng: &mut rand::rngs::StdRng, w: &[Wire]| {
        let n = w.len();
        if rng.gen_bool(0.7) {
            w[n - 1 - rng.gen_range(0..n.min(12))]
        } else {
            w[rng.gen_range(0..n)]
        }
    };
    while w.len() < gates {
        let (x, y, z) = (pick(&mut rng, &w), pick(&mut rng, &w), pick(&mut rng, &w));
        match rng.gen_range(0..12) {
            0 => {
                let v = b.not(x);
                w.push(v);
            }
            1 => {
                let v = b.mux(sels[rng.gen_range(0..sels.len())], x, y);
                w.push(v);
            }
            2 => {
                // A full adder: sum and carry.
                let t = b.gate(GateKind::Xor, x, y);
                let s = b.gate(GateKind::Xor, t, z);
                let g = b.gate(GateKind::And, x, y);
                let p = b.gate(GateKind::And, t, z);
                let c = b.gate(GateKind::Or, g, p);
                w.extend([s, c]);
            }
            _ => {
                let k = GateKind::ALL[rng.gen_range(0..GateKind::ALL.len())];
                let v = b.gate(k, x, y);
                w.push(v);
            }
        }
    }
    for (k, &q) in dffs.iter().enumerate() {
        b.connect_dff(q, w[w.len() - 1 - 3 * k]).unwrap();
    }
    let outs: Vec<_> = (0..12).map(|k| w[w.len() - 2 - 5 * k]).collect();
    b.output("y", &outs);
    let bp = Blueprint::single("core", b.build().unwrap());
    Arc::new(Circuit::compile(&bp).unwrap())
}

#[test]
fn random_netlists_map_exactly() {
    let (mut before, mut after) = (0, 0);
    for seed in 0..24 {
        let c = random_circuit(seed, 120 + 20 * seed as usize);
        for p in [
            params(),
            MapParams {
                max_inputs: 3,
                ..params()
            },
            // Every MUX result as noisy as a fresh bit: more cells on MUX leaves.
            MapParams {
                v_noisy: params().v_fresh,
                ..params()
            },
            // MUXes on a NOT moved onto its operand, data swapped.
            MapParams {
                swap_not_selects: true,
                ..params()
            },
        ] {
            let m = Arc::new(techmap::map(&c, &p).unwrap());
            let (b, a, db, da) = report(&format!("random {seed}"), &c, &m);
            assert!(
                a <= b && da <= db,
                "seed {seed}: {b} -> {a}, depth {db} -> {da}"
            );
            if p == params() {
                before += b;
                after += a;
            }
            run_both(c.clone(), m, 12, seed);
        }
    }
    assert!(after < before, "{before} -> {after}");
}

/// Every cell the mapping may emit meets the per-decision bound with its inputs at their bounds, and
/// the leveled plan of a mapped core keeps ≤ 2^-64 per decision and ≤ 2^-40 per cycle.
#[test]
fn mapped_cores_keep_the_failure_bounds() {
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    for name in ["pearl-cmux", "ruby-cmux"] {
        let c = core(name);
        let m = techmap::map(&c, &params()).unwrap();
        let before = MuxPlan::new(&c, &lp).counts();
        let after = MuxPlan::new(&m, &lp).counts();
        eprintln!("{name}: before {before:?}\n{name}: after  {after:?}");
        // The plan keeps level-0 bits at the bound where a two-input gate is exactly at 2^-64.
        assert!(after.log2_worst_decision <= -64.0 + 1e-9, "{after:?}");
        assert!(after.log2_failure <= -40.0, "{after:?}");
        assert!(after.cells > 0);
        assert!(after.bootstraps() < before.bootstraps());
    }
}

/// Mapped under the cores' MUX plans (what the engine does), the cycle's critical path as its tasks
/// run (CMUX data free, selects a circuit bootstrap, gate MUXes two bootstraps) gets no longer, and the
/// result still matches the unmapped circuit.
#[test]
fn planned_mapping_shortens_the_cycles_critical_path() {
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    for name in ["pearl-cmux", "ruby-cmux"] {
        let c = core(name);
        let plan = MuxPlan::new(&c, &lp);
        let m = Arc::new(techmap::map_planned(&c, &params(), &plan).unwrap());
        let mplan = MuxPlan::new(&m, &lp);
        let (before, after) = (
            techmap::critical_path(&c, Some(&plan)),
            techmap::critical_path(&m, Some(&mplan)),
        );
        let (b, a) = (plan.counts().bootstraps(), mplan.counts().bootstraps());
        eprintln!("{name}: planned critical path {before} -> {after}, bootstraps {b} -> {a}");
        assert!(after <= before, "{name}: {before} -> {after}");
        assert!(a < b, "{name}: {b} -> {a}");
        run_both(c, m, 100, 5);
    }
}

/// With `swap_not_selects` a MUX selecting on a NOT is mapped to a MUX on the NOT's operand with its
/// data swapped: the mapped circuit computes the same, no MUX selects on a NOT, and the MUX plan
/// evaluates it as a CMUX of the group on that operand (one circuit bootstrap for both polarities)
/// instead of leaving it a gate MUX (two bootstraps) on a select of its own. Without it the mapping
/// leaves the MUX on the NOT.
#[test]
fn muxes_on_a_not_join_the_group_on_its_operand() {
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    let mut b = NetlistBuilder::new();
    let x = b.input("x", 16);
    let s = b.input("s", 1)[0];
    let ns = b.not(s);
    let d: Vec<_> = (0..15)
        .map(|i| b.gate(GateKind::And, x[i], x[i + 1]))
        .collect();
    let mut outs: Vec<_> = (0..6).map(|i| b.mux(s, d[2 * i], d[2 * i + 1])).collect();
    outs.push(b.mux(ns, d[12], d[13]));
    b.output("y", &outs);
    let bp = Blueprint::single("core", b.build().unwrap());
    let c = Arc::new(Circuit::compile(&bp).unwrap());
    let swap = MapParams {
        swap_not_selects: true,
        ..params()
    };
    let kept = Arc::new(techmap::map(&c, &params()).unwrap());
    let m = Arc::new(techmap::map(&c, &swap).unwrap());
    let on_not = |c: &Circuit| {
        c.nodes()
            .iter()
            .filter(|n| matches!(n, Node::Mux { s, .. } if matches!(c.nodes()[*s as usize], Node::Not(_))))
            .count()
    };
    assert_eq!(on_not(&c), 1);
    assert_eq!(on_not(&kept), 1);
    assert_eq!(on_not(&m), 0);
    let (before, after) = (
        MuxPlan::new(&c, &lp).counts(),
        MuxPlan::new(&m, &lp).counts(),
    );
    assert_eq!((before.gate_muxes, before.cmuxes), (1, 6), "{before:?}");
    assert_eq!((after.gate_muxes, after.cmuxes), (0, 7), "{after:?}");
    assert_eq!(after.circuit_bootstraps, 1, "{after:?}");
    assert!(after.cost < before.cost, "{before:?} -> {after:?}");
    run_both(c, m, 16, 3);
}

/// With `swap_not_selects` the MUXes on complementary gates of the same operands (here an AND and a
/// NAND with their operands swapped, and an ANDNOT(p, q) and an ORNOT(q, p)) are mapped to MUXes on
/// one gate of each pair with their data swapped: the mapped circuit computes the same, its MUXes
/// read two selects instead of four, and the MUX plan circuit-bootstraps two instead of four. Without
/// it the mapping keeps the four.
#[test]
fn muxes_on_complementary_gates_share_one_select() {
    let lp = LeveledParams::for_params(&vsp_tfhe::Params::default_128()).unwrap();
    let mut b = NetlistBuilder::new();
    let x = b.input("x", 32);
    let pq = b.input("pq", 2);
    let (p, q) = (pq[0], pq[1]);
    let sels = [
        b.gate(GateKind::And, p, q),
        b.gate(GateKind::Nand, q, p),
        b.gate(GateKind::AndNot, p, q),
        b.gate(GateKind::OrNot, q, p),
    ];
    let d: Vec<_> = (0..31)
        .map(|i| b.gate(GateKind::Xor, x[i], x[i + 1]))
        .collect();
    let outs: Vec<_> = (0..24)
        .map(|i| b.mux(sels[i / 6], d[i], d[i + 7]))
        .collect();
    b.output("y", &outs);
    let bp = Blueprint::single("core", b.build().unwrap());
    let c = Arc::new(Circuit::compile(&bp).unwrap());
    let swap = MapParams {
        swap_not_selects: true,
        ..params()
    };
    let kept = Arc::new(techmap::map(&c, &params()).unwrap());
    let m = Arc::new(techmap::map(&c, &swap).unwrap());
    let selects = |c: &Circuit| {
        let mut s: Vec<NodeId> = c
            .nodes()
            .iter()
            .filter_map(|n| match n {
                Node::Mux { s, .. } => Some(*s),
                _ => None,
            })
            .collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    assert_eq!(selects(&c), 4);
    assert_eq!(selects(&kept), 4);
    assert_eq!(selects(&m), 2);
    let (before, after) = (
        MuxPlan::new(&c, &lp).counts(),
        MuxPlan::new(&m, &lp).counts(),
    );
    assert_eq!(before.circuit_bootstraps, 4, "{before:?}");
    assert_eq!(after.circuit_bootstraps, 2, "{after:?}");
    assert!(after.cost < before.cost, "{before:?} -> {after:?}");
    run_both(c, m, 16, 4);
}
