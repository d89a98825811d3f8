//! C programs covering the lowering (every integer width, control flow, memory, calls) compiled by
//! vsp-cc, run on the vsp-cahp ISA simulator and compared with the same program compiled for the
//! host with fixed-width types (`tests/c/prelude.h`).

mod common;
use common::{differential, have_clang};

const ARGS: &[&[&str]] = &[
    &["1234", "-77"],
    &["-30000", "123"],
    &["7", "7"],
    &["0", "1"],
    &["-5", "3"],
];

macro_rules! prog {
    ($name:ident, $file:literal) => {
        #[test]
        fn $name() {
            if !have_clang() {
                return;
            }
            differential(include_str!($file), ARGS);
        }
    };
}

prog!(arith16, "c/arith16.c");
prog!(arith8, "c/arith8.c");
prog!(arith32a, "c/arith32a.c");
prog!(arith32b, "c/arith32b.c");
prog!(control, "c/control.c");
prog!(memory, "c/memory.c");
prog!(calls, "c/calls.c");
prog!(misc, "c/misc.c");
