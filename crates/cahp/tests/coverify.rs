//! Co-verification on the paper's benchmark programs (fib, hamming, brainf*ck): the ISA simulator,
//! the synthesized Pearl and Ruby netlists in the plain engine (CMUX and MUX memory) and the Verilog
//! under iverilog agree on the state after every instruction, and the cores finish in the expected
//! number of cycles.

mod coverify_support;

use coverify_support::{
    benchmark_lanes, check_iverilog_lanes, check_netlist, circuit, run_netlist, simulate,
};
use vsp_cahp::cores::{Core, MemSize, Memory};

/// Bounds on the cycles to the finish flag, from what the program did (n instructions, j taken
/// jumps/branches, l loads): Pearl needs one cycle per instruction plus at most one refetch cycle
/// per jump (a jump to an instruction that straddles two ROM words); Ruby needs 3 more cycles to
/// drain the pipeline, at most 2 per mispredicted branch or jump, 1 per load-use stall and 1 per
/// straddling jump target. A core that got slower than this fails here.
fn cycle_bounds(core: Core, n: u64, j: u64, l: u64) -> (u64, u64) {
    match core {
        Core::Pearl => (n, n + j),
        Core::Ruby => (n + 3, n + 3 + 3 * j + l),
    }
}

#[test]
fn benchmarks_netlists_match_the_simulator() {
    let lanes = benchmark_lanes(MemSize::B512);
    for core in Core::ALL {
        let c = circuit(core, Memory::Cmux).expect("blueprint compiles");
        for (name, lane, expected) in &lanes {
            let sim = simulate(lane, 100_000);
            assert_eq!(
                sim.steps.last().map(|e| e.regs[8]),
                Some(*expected),
                "{name}: simulator result"
            );
            let net = run_netlist(&c, Memory::Cmux, std::slice::from_ref(lane), 20_000);
            check_netlist(&format!("{core} {name}"), &sim, &net[0]);
            let cycles = net[0].cycles.unwrap_or(0);
            println!(
                "{core} {name}: {} instructions, {cycles} cycles",
                sim.steps.len()
            );
            let (lo, hi) = cycle_bounds(
                core,
                sim.steps.len() as u64,
                sim.jumps as u64,
                sim.loads as u64,
            );
            assert!(
                (lo..=hi).contains(&cycles),
                "{core} {name}: {cycles} cycles, expected {lo}..={hi}"
            );
        }
    }
}

#[test]
fn benchmarks_in_mux_memory_match_the_simulator() {
    // MUX memory is the same netlist with gate-built ROM/RAM: one short program per core suffices.
    let lanes = benchmark_lanes(MemSize::B512);
    let (name, lane, _) = &lanes[0];
    let sim = simulate(lane, 100_000);
    for core in Core::ALL {
        let c = circuit(core, Memory::Mux).expect("blueprint compiles");
        let net = run_netlist(&c, Memory::Mux, std::slice::from_ref(lane), 20_000);
        check_netlist(&format!("{core} {name} (MUX memory)"), &sim, &net[0]);
    }
}

#[test]
#[ignore = "needs iverilog"]
fn benchmarks_iverilog_match_the_simulator() {
    check_iverilog_lanes(MemSize::B512, &benchmark_lanes(MemSize::B512));
}

#[test]
fn cores_are_smaller_than_the_originals() {
    // The originals (Iyokan test netlists, vsp.md §2.1): pearl 2,985 logic cells (861 MUX, 28 NOT)
    // + 298 DFFs, ruby 3,433 (996 MUX, 15 NOT) + 457 DFFs; bootstraps = 2-input gates + 2 × MUX.
    let originals = [
        (Core::Pearl, 2985, 298, 2096 + 2 * 861),
        (Core::Ruby, 3433, 457, 2422 + 2 * 996),
    ];
    for (core, logic, dff, boots) in originals {
        let n = vsp_circuit::parse_yosys_json(core.netlist_json()).expect("netlist imports");
        let s = n.stats();
        println!("{core}: {s}");
        assert!(
            s.logic_cells() < logic,
            "{core}: {} logic cells",
            s.logic_cells()
        );
        assert!(s.dff <= dff, "{core}: {} DFFs", s.dff);
        assert!(
            s.bootstraps_per_cycle < boots,
            "{core}: {} bootstraps",
            s.bootstraps_per_cycle
        );
        assert_eq!(
            (s.input_bits, s.output_bits),
            (49, 296),
            "{core}: port bits as the originals, the RAM word address 15 bits instead of 8"
        );
    }
}
