//! Co-verification of the larger memories (ROM 2, 4 and 8 KiB with RAM chosen apart, 512 B to
//! 8 KiB): the ISA simulator, the synthesized netlists in the plain engine (CMUX memory; MUX memory
//! where the RAM is small enough to build as flip-flops quickly) and the Verilog under iverilog agree
//! after every instruction, on a program whose code, far call, return address and RAM accesses lie in
//! the top quarter of each memory, and on the paper's benchmarks (arguments and stack at the top of
//! the RAM).

mod coverify_support;

use coverify_support::{
    assemble_lane, benchmark_lanes, check_iverilog_lanes, check_netlists_sized, simulate_sized,
    Lane,
};
use vsp_cahp::cores::{Core, MemSize, Memory};
use vsp_cahp::{assemble_sources, AsmOptions, Source};

/// The machines checked here: every new ROM size, with RAMs smaller, equal and larger than it.
fn sizes() -> Vec<MemSize> {
    [
        (2048, 512),
        (4096, 2048),
        (8192, 1024),
        (1024, 4096),
        (8192, 8192),
    ]
    .into_iter()
    .map(|(rom, ram)| MemSize::new(rom, ram).expect("a machine"))
    .collect()
}

/// A jump into the top quarter of the ROM, a `call` from there back down (beyond ±1 KiB it goes
/// through t0: the far form), a word and a byte stored near the top of the RAM.
fn far_program(size: MemSize) -> String {
    let (rom, ram) = (size.rom_bytes(), size.ram_bytes());
    format!(
        r#"
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP: RAMSIZE - 2 minus the arguments
    li    s0, {top}        # a word in the top quarter of the RAM
    li    t1, 421
    li    a5, far
    jr    a5               # into the top quarter of the ROM
back:
    sw    t1, 0(s0)
    sb    t1, 3(s0)
    ret
    .space {gap}
far:
    call  back             # ra = an address in the top quarter of the ROM
    lw    a0, 0(s0)        # 421
    lbu   a1, 3(s0)        # 0xa5
    add   a0, a0, a1       # 586
    mov   a2, ra
    lw    a3, 0(sp)        # argc (1: argv[0] only), near the top of the RAM
    hlt
"#,
        top = ram - ram / 4,
        gap = rom - rom / 4,
    )
}

fn options(size: MemSize) -> AsmOptions {
    AsmOptions {
        rom_size: size.rom_bytes(),
        ram_size: size.ram_bytes(),
        ..AsmOptions::default()
    }
}

/// (name, lane, expected a0) for the far program and the three benchmarks, built for `size`.
fn lanes(size: MemSize) -> Vec<(&'static str, Lane, u16)> {
    let far = assemble_lane("far.s", &far_program(size), &[], size);
    assert!(
        far.rom.len() > size.rom_bytes() * 3 / 4,
        "{size}: the far program must reach the top quarter of the ROM"
    );
    let mut out = vec![("far", far, 586)];
    out.extend(benchmark_lanes(size));
    out
}

#[test]
fn larger_netlists_match_the_simulator() {
    for size in sizes() {
        let lanes = lanes(size);
        for core in Core::ALL {
            let memories: &[Memory] = if size.ram_bytes() <= 2048 {
                &[Memory::Cmux, Memory::Mux]
            } else {
                &[Memory::Cmux]
            };
            for &memory in memories {
                check_netlists_sized(core, memory, size, &lanes);
            }
        }
    }
}

#[test]
fn the_far_program_needs_its_memories() {
    for size in sizes() {
        let (_, lane, _) = &lanes(size)[0];
        // A smaller ROM does not even load the program: the check above is not vacuous.
        let smaller = MemSize::new(size.rom_bytes() / 2, size.ram_bytes()).expect("a machine");
        assert!(vsp_cahp::Simulator::new(&lane.rom, &lane.ram, smaller.mem_config()).is_err());
        let sim = simulate_sized(lane, 1000, size);
        let last = sim.steps.last().expect("ran").regs;
        let (rom, ram) = (size.rom_bytes(), size.ram_bytes());
        assert!(
            usize::from(last[10]) > rom * 3 / 4,
            "{size}: ra = {} should lie in the top quarter of the ROM",
            last[10]
        );
        assert!(
            usize::from(last[1]) > ram * 3 / 4,
            "{size}: sp = {}",
            last[1]
        );
        assert_eq!(last[11], 1, "{size}: argc read from the top of the RAM");
        let top = ram - ram / 4;
        assert_eq!(
            u16::from_le_bytes([sim.ram[top], sim.ram[top + 1]]),
            421,
            "{size}: the RAM word in the top quarter"
        );
    }
}

/// Beyond ±1 KiB `call` takes its far form through t0 (7 bytes), within it stays `jsal` (2).
#[test]
fn call_takes_its_far_form_only_beyond_jsal() {
    let size = MemSize::new(8192, 512).expect("a machine");
    let rom_len = |gap: usize| {
        let text = format!("call f\nhlt\n.space {gap}\nf: ret\n");
        assemble_sources(
            &[Source {
                name: "c.s",
                text: &text,
            }],
            &options(size),
        )
        .expect("assembles")
        .rom
        .len()
    };
    assert_eq!(rom_len(1000), 2 + 2 + 1000 + 2);
    assert_eq!(rom_len(4000), 7 + 2 + 4000 + 2);
}

#[test]
#[ignore = "needs iverilog"]
fn larger_rtl_under_iverilog_matches_the_simulator() {
    for size in sizes() {
        check_iverilog_lanes(size, &lanes(size));
    }
}
