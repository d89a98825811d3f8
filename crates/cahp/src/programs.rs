//! The paper's three benchmark programs (kvsp-benchmark `01_fib.c`, `02_hamming.c`, `03_bf.c`,
//! `shared/reference/vsp.md` §5), hand-written in assembly and shipped as data so the CLI and the
//! co-verification tests can use them. Same argv conventions as the originals; each is
//! standalone (its own entry code, no runtime) and written for few cycles.

/// A benchmark program with its reference input and expected result.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    /// Short name (`fib`, `hamming`, `bf`).
    pub name: &'static str,
    /// Assembly source.
    pub source: &'static str,
    /// The paper's arguments (argv[1..]).
    pub args: &'static [&'static str],
    /// The result in a0 for those arguments.
    pub expected: u16,
}

/// fib: `5` → 5.
pub const FIB: Program = Program {
    name: "fib",
    source: include_str!("../asm/programs/fib.s"),
    args: &["5"],
    expected: 5,
};

/// hamming: `10 10 10 10 de ad be ef` → 24.
pub const HAMMING: Program = Program {
    name: "hamming",
    source: include_str!("../asm/programs/hamming.s"),
    args: &["10", "10", "10", "10", "de", "ad", "be", "ef"],
    expected: 24,
};

/// brainf*ck: `++++[>++++++++++<-]>++` → 42.
pub const BF: Program = Program {
    name: "bf",
    source: include_str!("../asm/programs/bf.s"),
    args: &["++++[>++++++++++<-]>++"],
    expected: 42,
};

/// All three, in the paper's order.
pub const ALL: [Program; 3] = [FIB, HAMMING, BF];

/// Looks a program up by name.
pub fn by_name(name: &str) -> Option<Program> {
    ALL.iter().copied().find(|p| p.name == name)
}
