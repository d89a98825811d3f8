//! The simulator's stack guard: a program that starts with crt0 keeps sp between the end of its
//! static data and the initial SP, and the first instruction that would move it out is refused
//! as a stack overflow instead of running on over the data.

use vsp_cahp::{
    assemble, assemble_with_runtime, load_args, MemConfig, SimError, Simulator, StackGuard,
};

fn guarded(image: &vsp_cahp::Image, args: &[&str]) -> (Simulator, Option<StackGuard>) {
    let ram = load_args(&image.ram, args, 512).unwrap();
    let mut sim = Simulator::new(&image.rom, &ram, MemConfig::default()).unwrap();
    let guard = StackGuard::for_image(image, &ram);
    sim.set_stack_guard(guard);
    (sim, guard)
}

#[test]
fn recursion_past_the_static_data_is_a_stack_overflow() {
    // 100 bytes of data; each call takes 16 bytes of stack.
    let src =
        "main:\n addi sp, sp, -16\n sw ra, 14(sp)\n call main\n ret\n .data\nbuf: .space 100\n";
    let image = assemble_with_runtime(src, "r.s").unwrap();
    let (mut sim, guard) = guarded(&image, &["ab"]);
    let g = guard.expect("a crt0 program has a stack guard");
    assert_eq!(g.low, 102, "data from address 2, 100 bytes");
    // argv = ["", "ab"]: the strings, the pointers and argc below RAMSIZE - 2.
    assert!(g.high < 510 && g.high > 490, "{g:?}");
    match sim.run(100_000) {
        Err(SimError::StackOverflow { sp, low, high, .. }) => {
            assert!(sp < low, "{sp:#x}");
            assert_eq!((low, high), (g.low, g.high));
        }
        other => panic!("expected a stack overflow, got {other:?}"),
    }
    // The stack never went below the data: every word of it is still zero.
    assert!(sim.ram()[2..102].iter().all(|b| *b == 0));
    // Without the guard the same program runs on over its data.
    let mut sim = Simulator::from_image(&image, &["ab"], MemConfig::default()).unwrap();
    assert!(sim.run(2_000).is_ok_and(|s| !s.halted));
}

#[test]
fn programs_within_their_stack_and_programs_without_crt0_are_not_stopped() {
    let image = assemble_with_runtime(
        "main:\n addi sp, sp, -40\n sw ra, 38(sp)\n li a0, 7\n lw ra, 38(sp)\n addi sp, sp, 40\n ret\n",
        "ok.s",
    )
    .unwrap();
    let (mut sim, guard) = guarded(&image, &[]);
    assert!(guard.is_some());
    assert!(sim.run(1000).unwrap().halted);
    assert_eq!(sim.result(), 7);
    // Assembly without crt0 may use sp as it likes.
    let image = assemble("li sp, 0\n addi sp, sp, -2\n hlt\n", "raw.s").unwrap();
    let (mut sim, guard) = guarded(&image, &[]);
    assert_eq!(guard, None);
    assert!(sim.run(100).unwrap().halted);
}
