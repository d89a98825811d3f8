//! The paper's three benchmark programs (kvsp-benchmark 01_fib.c, 02_hamming.c, 03_bf.c) compiled
//! by vsp-cc and run on the vsp-cahp ISA simulator with the paper's arguments.

mod common;
use common::{check, require_clang};

const FIB: &str = include_str!("c/01_fib.c");
const HAMMING: &str = include_str!("c/02_hamming.c");
const BF: &str = include_str!("c/03_bf.c");

/// Runs `src` with each (arguments, expected result); prints the size and instruction count of the
/// first run (the paper's arguments).
fn check_program(name: &str, src: &str, cases: &[(&[&str], u16)]) {
    require_clang();
    for (k, (args, expected)) in cases.iter().enumerate() {
        let r = check(src, args, *expected);
        if k == 0 {
            eprintln!("{name}: rom {} B, {} instructions", r.rom, r.steps);
        }
    }
}

#[test]
#[ignore = "needs clang"]
fn fib_gives_5() {
    check_program("fib", FIB, &[(&["5"], 5), (&["9"], 34), (&["0"], 0)]);
}

#[test]
#[ignore = "needs clang"]
fn hamming_gives_24() {
    check_program(
        "hamming",
        HAMMING,
        &[
            (&["10", "10", "10", "10", "de", "ad", "be", "ef"], 24),
            (&["00", "00", "00", "00", "00", "00", "00", "00"], 0),
            (&["ff", "FF", "0f", "00", "00", "00", "00", "01"], 21),
        ],
    );
}

#[test]
#[ignore = "needs clang"]
fn bf_gives_42() {
    check_program(
        "bf",
        BF,
        &[
            (&["++++[>++++++++++<-]>++"], 42),
            (&["+++[>+++[>+<-]<-]>>"], 9),
            (&["[+++]-"], 0xFFFF),
        ],
    );
}
