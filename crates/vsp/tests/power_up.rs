//! `vsp run` skips the reset cycle (it would cost a whole encrypted cycle): the cores' flip-flops power
//! up at 0, which is their reset state. This checks that claim on the shipped netlists — with and
//! without the reset cycle, every benchmark finishes in the same cycle with the same registers and RAM.

use std::sync::Arc;

use vsp_cahp::cores::{self, Core, Memory};
use vsp_circuit::{Blueprint, Circuit, CircuitError, Engine, PlainBackend, RunOptions};

fn run(core: Core, p: &vsp_cahp::programs::Program, reset: bool) -> (u64, Vec<u64>, Vec<u64>) {
    let image = vsp_cahp::assemble(p.source, p.name).unwrap();
    let ram = vsp_cahp::load_args(&image.ram, p.args, cores::RAM_BYTES).unwrap();
    let bp = Blueprint::from_str_with_resolver(core.blueprint(Memory::Cmux), |x| {
        cores::resolve(x)
            .map(str::to_string)
            .ok_or_else(|| CircuitError::Blueprint(x.into()))
    })
    .unwrap();
    let mut e = Engine::new(PlainBackend, Arc::new(Circuit::compile(&bp).unwrap()));
    e.load_memory_words(cores::ROM, &cores::rom_words(&image.rom).unwrap())
        .unwrap();
    e.load_memory_words(cores::RAM, &cores::ram_words(&ram).unwrap())
        .unwrap();
    if reset {
        assert!(e.reset().unwrap(), "the blueprint has a reset input");
    }
    let opts = RunOptions {
        max_cycles: 5000,
        stop_when: Some(cores::FINISH.into()),
        ..Default::default()
    };
    let r = e.run(&opts, &mut |_| {}).unwrap();
    assert!(r.stopped, "{} on {core} did not finish", p.name);
    let regs = cores::REGS
        .iter()
        .map(|n| e.output_value(n, 0).unwrap())
        .collect();
    (r.cycles, regs, e.memory_words(cores::RAM, 0).unwrap())
}

#[test]
fn power_up_state_is_the_reset_state() {
    for core in Core::ALL {
        for p in vsp_cahp::programs::ALL.iter() {
            let with = run(core, p, true);
            let without = run(core, p, false);
            assert_eq!(with, without, "{} on {core}", p.name);
            assert_eq!(without.1[8], u64::from(p.expected));
        }
    }
}
