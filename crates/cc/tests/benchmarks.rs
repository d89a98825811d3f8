//! The paper's three benchmark programs (kvsp-benchmark 01_fib.c, 02_hamming.c, 03_bf.c) compiled
//! by vsp-cc and run on the vsp-cahp ISA simulator with the paper's arguments.

mod common;
use common::{check, require_clang};

const FIB: &str = include_str!("c/01_fib.c");
const HAMMING: &str = include_str!("c/02_hamming.c");
const BF: &str = include_str!("c/03_bf.c");

#[test]
#[ignore = "needs clang"]
fn fib_gives_5() {
    require_clang();
    let r = check(FIB, &["5"], 5);
    eprintln!("fib: rom {} B, {} instructions", r.rom, r.steps);
    check(FIB, &["9"], 34);
    check(FIB, &["0"], 0);
}

#[test]
#[ignore = "needs clang"]
fn hamming_gives_24() {
    require_clang();
    let r = check(
        HAMMING,
        &["10", "10", "10", "10", "de", "ad", "be", "ef"],
        24,
    );
    eprintln!("hamming: rom {} B, {} instructions", r.rom, r.steps);
    check(
        HAMMING,
        &["00", "00", "00", "00", "00", "00", "00", "00"],
        0,
    );
    check(
        HAMMING,
        &["ff", "FF", "0f", "00", "00", "00", "00", "01"],
        21,
    );
}

#[test]
#[ignore = "needs clang"]
fn bf_gives_42() {
    require_clang();
    let r = check(BF, &["++++[>++++++++++<-]>++"], 42);
    eprintln!("bf: rom {} B, {} instructions", r.rom, r.steps);
    check(BF, &["+++[>+++[>+<-]<-]>>"], 9);
    check(BF, &["[+++]-"], 0xFFFF);
}
