//! `plan` suite: what one encrypted cycle of each core netlist costs, from the engine's plan alone
//! (no encrypted cycle is run, so it takes seconds, not minutes).
//!
//! `vsp-bench plan [netlists=DIR] [pearl|ruby] [512|1024|2048|4096|8192 …] [path] [mux]`: for each core and
//! ROM size (default: all ten committed netlists, each with a RAM of the same size) it builds the
//! circuit "core + CMUX ROM + CMUX RAM" at the default (≥128-bit) parameters exactly as `vsp run` and
//! `vsp-bench vsp` do (select-once MUXes, multi-input cells) and prints, per netlist, the core's gate
//! bootstraps per cycle by cell kind (MUXes left as gates two each, lifts predicted by the plan),
//! circuit bootstraps, the plan's cost in gate-bootstrap units (circuit bootstrap 5), the logic depth
//! (bootstraps on the longest path, CMUXes none), the critical path of the cycle's task DAG as 64 MPI
//! ranks run it (circuit bootstrap 5, a ROM bit 1 after its address) and the planner's failure
//! bounds (per cycle, and the worst single decision), all deterministic. `netlists=DIR` reads the
//! netlists from `DIR/{pearl,ruby}{,-1k,-2k,-4k,-8k}.json` instead of the committed ones (to compare
//! a synthesis experiment before committing it); `path` also prints the nodes on each critical path
//! (`vsp_circuit::techmap::critical_chain`) and the carried flip-flops' lifts in each of the first 16
//! cycles from power-up (`MuxPlan::carried_lift_schedule`: what a run of a few cycles measures);
//! `mux` builds the MUX-memory machine (`--memory mux`: flip-flops and MUX trees) instead. Each
//! netlist's engine construction time (its two plans, before and after technology mapping) goes to
//! stderr. Keys are generated once (the backend needs them; none is
//! used). Ends with `<core>_plan_bootstraps=`, `<core>_plan_circuit_bootstraps=` and
//! `<core>_critical_path_bootstraps=` for the 512-byte machine.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use vsp_cahp::cores::{Core, Memory};
use vsp_circuit::{techmap, Engine, LeveledParams, MuxPlan, Node, TfheBackend};
use vsp_platform::{CoreBuild, MemSize};
use vsp_tfhe::{CircuitKey, EvalKey, Params, SecretKey};

use crate::vsp::Kinds;

pub fn run(args: &[String]) -> Result<()> {
    let (mut dir, mut only, mut sizes, mut path) = (None, None, Vec::new(), false);
    let mut memory = Memory::Cmux;
    for a in args {
        if let Some(d) = a.strip_prefix("netlists=") {
            dir = Some(std::path::PathBuf::from(d));
        } else if let Some(c) = Core::from_name(a) {
            only = Some(c);
        } else if a == "path" {
            path = true;
        } else if a == "mux" {
            memory = Memory::Mux;
        } else if let Some(s) = a.parse().ok().and_then(MemSize::from_bytes) {
            sizes.push(s);
        } else {
            bail!(
                "expected `netlists=DIR`, `pearl`, `ruby`, `path`, `mux` or a ROM size (512, 1024, 2048, \
                 4096, 8192), got {a:?}"
            );
        }
    }
    if sizes.is_empty() {
        sizes = MemSize::SIZES
            .iter()
            .filter_map(|&b| MemSize::from_bytes(b))
            .collect();
    }
    let params = Params::default_128();
    let lp = LeveledParams::for_params(&params)
        .ok_or_else(|| anyhow::anyhow!("no CMUX plan for these parameters"))?;
    let t = Instant::now();
    let sk = SecretKey::generate(&params)?;
    let ek = Arc::new(EvalKey::generate(&sk)?);
    let ck = Arc::new(CircuitKey::generate(&sk)?);
    let backend = TfheBackend::new(ek, Some(ck))?;
    eprintln!("keys: {:.1} s", t.elapsed().as_secs_f64());
    println!(
        "Core cost per cycle from the plan (default parameters, select-once MUXes and multi-input \
         cells; gate MUX = 2 bootstraps each, lifts predicted; cost = gate bootstraps + 5 per circuit \
         bootstrap + CMUXes and key switches; depth = bootstraps on the longest path, CMUXes none; \
         critical path = the task DAG on 64 ranks, circuit bootstrap 5):"
    );
    println!();
    let mut rows = Vec::new();
    let mut stats_rows = Vec::new();
    let mut last = Vec::new();
    for core in Core::ALL
        .into_iter()
        .filter(|&c| only.is_none_or(|o| o == c))
    {
        for &size in &sizes {
            let stem = match size.rom_bytes() {
                512 => core.name().to_string(),
                b => format!("{}-{}k", core.name(), b / 1024),
            };
            let text = match &dir {
                Some(d) => {
                    let p = d.join(format!("{stem}.json"));
                    Some(
                        std::fs::read_to_string(&p)
                            .with_context(|| format!("cannot read {}", p.display()))?,
                    )
                }
                None => None,
            };
            let build = CoreBuild {
                size: MemSize::new(size.rom_bytes(), size.rom_bytes())
                    .ok_or_else(|| anyhow::anyhow!("no machine of {} bytes", size.rom_bytes()))?,
                netlist: text.as_deref(),
                ..CoreBuild::default()
            };
            let json = text
                .as_deref()
                .unwrap_or_else(|| core.netlist_json_sized(build.size));
            let st = vsp_circuit::parse_yosys_json(json)?.stats();
            let gates: Vec<String> = st.gates.iter().map(|n| n.to_string()).collect();
            stats_rows.push(format!(
                "| {stem} | {} | {} | {} | {} | {} | {} | {} |",
                gates.join(" | "),
                st.mux,
                st.not,
                st.logic_cells(),
                st.dff,
                st.bootstraps_per_cycle,
                st.critical_path
            ));
            let c = vsp_platform::core_circuit_with(core, memory, build)?;
            let t = Instant::now();
            let e = Engine::new(backend.clone(), c);
            eprintln!(
                "{stem}: engine (two plans) {:.1} s",
                t.elapsed().as_secs_f64()
            );
            let k = e.plan_counts();
            let kinds = Kinds::of(&e);
            if path {
                let plan = MuxPlan::new(e.circuit(), &lp);
                let chain = techmap::critical_chain(e.circuit(), Some(&plan));
                let (sels, lifts) = plan.selects_and_lifts(e.circuit());
                let names = |v: &mut dyn Iterator<Item = vsp_circuit::NodeId>| {
                    v.map(|x| e.circuit().node_name(x).to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                println!(
                    "{stem} selects ({}): {}",
                    sels.len(),
                    names(&mut sels.iter().copied())
                );
                println!(
                    "{stem} lifted every cycle: {}",
                    names(&mut lifts.iter().filter(|l| !l.1).map(|l| l.0))
                );
                println!(
                    "{stem} carried (lifted when over budget): {}",
                    names(&mut lifts.iter().filter(|l| l.1).map(|l| l.0))
                );
                // The engine's carry rule from power-up: register bits share one worst-case noise,
                // so they are lifted in bursts (what a run of a few cycles measures).
                let burst: Vec<String> = plan
                    .carried_lift_schedule(e.circuit(), 16, true)
                    .iter()
                    .map(|n| n.to_string())
                    .collect();
                println!(
                    "{stem} carried lifts in cycles 0-15 from power-up: {} (steady-state mean {:.1})",
                    burst.join(" "),
                    k.carried_lifts
                );
                println!("{stem} critical path ({} nodes):", chain.len());
                for (id, t) in chain {
                    let n = &e.circuit().nodes()[id as usize];
                    let what = match n {
                        Node::Mux { s, .. } => {
                            if plan.is_cmux(id) {
                                format!("CMUX sel {}", e.circuit().node_name(*s))
                            } else {
                                "gate MUX".to_string()
                            }
                        }
                        Node::Gate(g, ..) => g.name().to_string(),
                        Node::Cell { spec, .. } => techmap::cell_class(spec),
                        other => format!("{other:?}"),
                    };
                    println!("  {t:5.1} {:<12} {}", what, e.circuit().node_name(id));
                }
            }
            let by_kind: Vec<String> = kinds
                .by_kind
                .iter()
                .filter(|(_, &v)| v > 0.0)
                .map(|(n, v)| format!("{n} {v:.0}"))
                .collect();
            rows.push(format!(
                "| {stem} | {} | {:.0} | {} ({}) | {:.1} | {:.1} | {} | {:.1} | {:.1} | {:.1} |",
                by_kind.join(", "),
                kinds.bootstraps,
                k.circuit_bootstraps,
                k.fused_selects,
                k.lifts as f64 + k.carried_lifts,
                k.cost,
                kinds.depth,
                kinds.dag,
                k.log2_failure,
                k.log2_worst_decision
            ));
            if size == MemSize::B512 {
                last.push((core, kinds.bootstraps, k.circuit_bootstraps, kinds.dag));
            }
        }
    }
    println!("| netlist | gate bootstraps by kind | total | circuit bootstraps (of which decide their select's gate) | lifts | cost | depth | critical path | log2 failure/cycle | log2 worst decision |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!();
    println!(
        "The netlists as synthesized (Netlist::stats: every MUX two bootstraps, levels = the core's \
         longest path with a gate or MUX one level):"
    );
    println!();
    let kinds: Vec<&str> = vsp_circuit::GateKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    println!(
        "| netlist | {} | MUX | NOT | logic | DFF | bootstraps/cycle | levels |",
        kinds.join(" | ")
    );
    println!(
        "|---|{}---|---|---|---|---|---|",
        "---|".repeat(kinds.len())
    );
    for r in stats_rows {
        println!("{r}");
    }
    println!();
    for (core, b, cb, dag) in last {
        println!(
            "{core}_plan_bootstraps={b:.0} {core}_plan_circuit_bootstraps={cb} \
             {core}_critical_path_bootstraps={dag:.1}"
        );
    }
    Ok(())
}
