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

/// Entry code: loads the initial SP, calls `main(argc, argv)`, halts with the result in a0.
pub const CRT0: Module = Module {
    name: "<runtime>/crt0.s",
    source: include_str!("../asm/runtime/crt0.s"),
    defines: &["_start"],
};

/// Helper modules, searched for undefined symbols.
pub const HELPERS: [Module; 8] = [
    Module {
        name: "<runtime>/mulhi3.s",
        source: include_str!("../asm/runtime/mulhi3.s"),
        defines: &["__mulhi3"],
    },
    Module {
        name: "<runtime>/divhi3.s",
        source: include_str!("../asm/runtime/divhi3.s"),
        defines: &["__udivhi3", "__umodhi3", "__divhi3", "__modhi3"],
    },
    Module {
        name: "<runtime>/mulsi3.s",
        source: include_str!("../asm/runtime/mulsi3.s"),
        defines: &["__mulsi3"],
    },
    Module {
        name: "<runtime>/divsi3.s",
        source: include_str!("../asm/runtime/divsi3.s"),
        defines: &["__udivsi3", "__umodsi3", "__divsi3", "__modsi3"],
    },
    Module {
        name: "<runtime>/muldi3.s",
        source: include_str!("../asm/runtime/muldi3.s"),
        defines: &["__muldi3"],
    },
    Module {
        name: "<runtime>/divdi3.s",
        source: include_str!("../asm/runtime/divdi3.s"),
        defines: &[
            "__udivdi3",
            "__umoddi3",
            "__divdi3",
            "__moddi3",
            "__divdi3_mul",
        ],
    },
    Module {
        name: "<runtime>/ashldi3.s",
        source: include_str!("../asm/runtime/ashldi3.s"),
        defines: &["__ashldi3"],
    },
    Module {
        name: "<runtime>/lshrdi3.s",
        source: include_str!("../asm/runtime/lshrdi3.s"),
        defines: &["__lshrdi3", "__ashrdi3"],
    },
];
