//! Co-verification of the 1 KiB cores (seed 000, appendix C: 1 KiB ROM and 1 KiB RAM, a 10-bit PC):
//! the ISA simulator with 1 KiB memories, the synthesized 1 KiB netlists in the plain engine (CMUX and
//! MUX memory) and the Verilog under iverilog agree after every instruction, on a program whose code,
//! data and return addresses lie beyond the first 512 bytes and on the paper's benchmarks (whose
//! arguments and stack sit at the top of the 1 KiB RAM).

mod coverify_support;

use coverify_support::{
    assemble_lane, benchmark_lanes, check_iverilog_lanes, check_netlists_sized, simulate_sized,
    Lane,
};
use vsp_cahp::cores::{Core, MemSize, Memory};

/// Code past 512 bytes, a call from there (link register > 512), RAM words and bytes past 512, argc
/// near the top of the RAM (vsp-platform's and the CLI's tests run the same program).
const FAR: &str = include_str!("../../platform/tests/data/far-code.s");

/// (name, lane, expected a0) for the far program and the three benchmarks, built for 1 KiB.
fn lanes() -> Vec<(&'static str, Lane, u16)> {
    let far = assemble_lane("far.s", FAR, &[], MemSize::K1);
    assert!(
        far.rom.len() > 512,
        "the far program must not fit 512 bytes"
    );
    let mut out = vec![("far", far, 586)];
    out.extend(benchmark_lanes(MemSize::K1));
    out
}

#[test]
fn kib_netlists_match_the_simulator_in_cmux_and_mux_memory() {
    let lanes = lanes();
    let size = MemSize::K1;
    for core in Core::ALL {
        for memory in [Memory::Cmux, Memory::Mux] {
            check_netlists_sized(core, memory, size, &lanes);
        }
    }
}

#[test]
fn the_far_program_needs_the_1k_memories() {
    // The same program on a 512-byte simulator does not even load: the check above is not vacuous.
    let (_, lane, _) = &lanes()[0];
    assert!(vsp_cahp::Simulator::new(&lane.rom, &lane.ram, MemSize::B512.mem_config()).is_err());
    let sim = simulate_sized(lane, 1000, MemSize::K1);
    let last = sim.steps.last().expect("ran").regs;
    assert!(last[10] > 512, "ra = {} should lie past 512", last[10]);
    assert!(last[1] > 512, "sp = {} should lie past 512", last[1]);
    assert_eq!(last[11], 1, "argc read from the top of the RAM");
    assert_eq!(
        u16::from_le_bytes([sim.ram[768], sim.ram[769]]),
        421,
        "the RAM word past 512"
    );
}

#[test]
#[ignore = "needs iverilog"]
fn kib_rtl_under_iverilog_matches_the_simulator() {
    check_iverilog_lanes(MemSize::K1, &lanes());
}
