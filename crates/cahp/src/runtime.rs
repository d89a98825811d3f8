//! The runtime a C program needs, in CAHPv3 assembly: crt0, the 16-, 32- and 64-bit multiply,
//! divide and modulo helpers and the 64-bit variable shifts (the functions cahp-rt's libc
//! provides, `shared/reference/vsp.md` §1.7–1.8, and their 64-bit counterparts).
//!
//! [`crate::asm::assemble_with_runtime`] links crt0 first (at ROM address 0) and then only the
//! helper modules the program refers to, like a linker pulling members out of an archive.

/// One assembly module of the runtime.
#[derive(Clone, Copy, Debug)]
pub struct Module {
    /// File name used in error messages and listings.
    pub name: &'static str,
    /// Assembly text.
    pub source: &'static str,
    /// Global symbols it defines.
    pub defines: &'static [&'static str],
}

/// The module of `asm/runtime/<file>`, defining `defines`.
macro_rules! module {
    ($file:literal, [$($define:literal),*]) => {
        Module {
            name: concat!("<runtime>/", $file),
            source: include_str!(concat!("../asm/runtime/", $file)),
            defines: &[$($define),*],
        }
    };
}

/// Entry code: loads the initial SP, calls `main(argc, argv)`, halts with the result in a0.
pub const CRT0: Module = module!("crt0.s", ["_start"]);

/// Helper modules, searched for undefined symbols.
pub const HELPERS: [Module; 8] = [
    module!("mulhi3.s", ["__mulhi3"]),
    module!(
        "divhi3.s",
        ["__udivhi3", "__umodhi3", "__divhi3", "__modhi3"]
    ),
    module!("mulsi3.s", ["__mulsi3"]),
    module!(
        "divsi3.s",
        ["__udivsi3", "__umodsi3", "__divsi3", "__modsi3"]
    ),
    module!("muldi3.s", ["__muldi3"]),
    module!(
        "divdi3.s",
        [
            "__udivdi3",
            "__umoddi3",
            "__divdi3",
            "__moddi3",
            "__divdi3_mul"
        ]
    ),
    module!("ashldi3.s", ["__ashldi3"]),
    module!("lshrdi3.s", ["__lshrdi3", "__ashrdi3"]),
];
