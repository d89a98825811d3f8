//! `vsp run` skips the reset cycle (it would cost a whole encrypted cycle): the cores' flip-flops power
//! up at 0, which is their reset state. This checks that claim on the shipped netlists — with and
//! without the reset cycle, every benchmark finishes in the same cycle with the same registers and
//! RAM, in CMUX and in MUX memory.

use vsp_platform::{Core, Machine, Memory, PlainRequest};

fn run(
    core: Core,
    memory: Memory,
    p: &vsp_cahp::programs::Program,
    reset: bool,
) -> (u64, Vec<u16>, Vec<u8>) {
    let image = vsp_cahp::assemble(p.source, p.name).unwrap();
    let args: Vec<String> = p.args.iter().map(|s| s.to_string()).collect();
    let mut m = Machine::plain(core, &PlainRequest::new(&image, &args, memory).unwrap()).unwrap();
    if reset {
        assert!(
            m.engine_mut().reset().unwrap(),
            "the blueprint has a reset input"
        );
    }
    let (cycles, finished) = m.run_until_finished(5000).unwrap();
    assert!(finished, "{} on {core} did not finish", p.name);
    (cycles, m.regs().unwrap(), m.ram_bytes().unwrap())
}

#[test]
fn power_up_state_is_the_reset_state() {
    for core in Core::ALL {
        for memory in [Memory::Cmux, Memory::Mux] {
            for p in vsp_cahp::programs::ALL.iter() {
                let with = run(core, memory, p, true);
                let without = run(core, memory, p, false);
                assert_eq!(with, without, "{} on {core}", p.name);
                assert_eq!(without.1[8], p.expected);
            }
        }
    }
}
