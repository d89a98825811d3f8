//! The 64-bit runtime helpers (`__muldi3`, `__udivdi3`, `__umoddi3`, `__divdi3`, `__moddi3`,
//! `__divdi3_mul`, `__ashldi3`, `__lshrdi3`, `__ashrdi3`): the results Rust's `u64`/`i64` give,
//! the registers the calling convention keeps, their sizes (what a 1 KiB ROM can afford) and
//! linking on demand.

mod runtime_support;

use runtime_support::check_mul_div;
use vsp_cahp::{
    assemble_sources, assemble_with_runtime, AsmOptions, MemConfig, Reg, Simulator, Source,
};

/// Values placed in the callee-saved registers before the call, checked after it.
const KEPT: [(&str, u16); 6] = [
    ("fp", 0x5A02),
    ("s0", 0x5A03),
    ("s1", 0x5A04),
    ("s2", 0x5A05),
    ("s3", 0x5A06),
    ("s4", 0x5A07),
];

fn words(x: u64) -> [u64; 4] {
    [x & 0xFFFF, x >> 16 & 0xFFFF, x >> 32 & 0xFFFF, x >> 48]
}

/// Runs `main`, which calls `f` with the words of `args` laid out as vsp-cc passes them (a0..a5,
/// then the stack), and returns a3:a0; checks that the callee-saved registers and sp survive.
fn call(f: &str, args: &[u64]) -> u64 {
    let mut src = String::from("main:\n addi sp, sp, -6\n sw ra, 4(sp)\n");
    for (k, w) in args.iter().enumerate() {
        if k < 6 {
            src.push_str(&format!(" li a{k}, {w}\n"));
        } else {
            src.push_str(&format!(" li t0, {w}\n sw t0, {}(sp)\n", 2 * (k - 6)));
        }
    }
    for (r, v) in KEPT {
        src.push_str(&format!(" li {r}, {v}\n"));
    }
    src.push_str(&format!(
        " la t0, spv\n sw sp, 0(t0)\n call {f}\n la t0, spv\n lw t0, 0(t0)\n sub a4, t0, sp\n \
         lw ra, 4(sp)\n addi sp, sp, 6\n ret\n .data\nspv: .half 0\n"
    ));
    let img = assemble_with_runtime(&src, "m.s").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::from_image(&img, &[], MemConfig::default()).unwrap();
    assert!(sim.run(100_000).unwrap().halted, "{f} did not return");
    for (r, v) in KEPT {
        assert_eq!(sim.reg(Reg::parse(r).unwrap()), v, "{f} must keep {r}");
    }
    let r = |n: u8| u64::from(sim.reg(Reg::new(n).unwrap()));
    assert_eq!(r(12), 0, "{f} must keep sp");
    r(8) | r(9) << 16 | r(10) << 32 | r(11) << 48
}

fn binary(f: &str, a: u64, b: u64) -> u64 {
    let mut args = words(a).to_vec();
    args.extend(words(b));
    call(f, &args)
}

fn shift(f: &str, a: u64, n: u16) -> u64 {
    let mut args = words(a).to_vec();
    args.push(u64::from(n));
    call(f, &args)
}

/// Edge values and a few from a fixed xorshift stream.
fn values() -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2,
        3,
        10,
        0xFFFF,
        0x1_0000,
        0xFFFF_FFFF,
        0x1_0000_0000,
        0x1234_5678_9ABC_DEF0,
        0x7FFF_FFFF_FFFF_FFFF,
        0x8000_0000_0000_0000,
        0x8000_0000_0000_0001,
        0xFFFF_FFFF_FFFF_FFFE,
        u64::MAX,
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for k in 0..6 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Some small, some 32-bit, some full-width.
        v.push(match k % 3 {
            0 => x >> 48,
            1 => x >> 32,
            _ => x,
        });
    }
    v
}

#[test]
fn multiply_and_divide_match_rust() {
    let vals = values();
    check_mul_div!(binary, "di3", &vals, u64, i64);
    for &a in &vals {
        for &b in &vals {
            assert_eq!(
                binary("__divdi3_mul", a, b),
                a.wrapping_mul(b),
                "{a:#x} * {b:#x} in the division loop"
            );
        }
    }
}

#[test]
fn shifts_match_rust() {
    for a in values() {
        for n in 0..64u16 {
            assert_eq!(shift("__ashldi3", a, n), a << n, "{a:#x} << {n}");
            assert_eq!(shift("__lshrdi3", a, n), a >> n, "{a:#x} >> {n}");
            assert_eq!(
                shift("__ashrdi3", a, n),
                ((a as i64) >> n) as u64,
                "{a:#x} >>s {n}"
            );
        }
        // Amounts of 64 or more: everything shifted out.
        for n in [64u16, 100, 1000] {
            assert_eq!(shift("__ashldi3", a, n), 0);
            assert_eq!(shift("__lshrdi3", a, n), 0);
            assert_eq!(shift("__ashrdi3", a, n), ((a as i64) >> 63) as u64);
        }
    }
}

/// ROM bytes of a program whose `main` refers to `symbols`, linked with the runtime for the 1 KiB
/// ROM (all of them together do not fit the 512-byte one).
fn program_bytes(symbols: &[&str]) -> usize {
    let mut src = String::from("main: ret\n    .data\n");
    for s in symbols {
        src.push_str(&format!("    .half {s}\n"));
    }
    let kib1 = MemConfig::kib1();
    let opts = AsmOptions {
        runtime: true,
        rom_size: kib1.rom_size,
        ram_size: kib1.ram_size,
        ..AsmOptions::default()
    };
    let img = assemble_sources(
        &[Source {
            name: "s.s",
            text: &src,
        }],
        &opts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    img.rom.len()
}

#[test]
fn the_64_bit_helpers_are_small_and_linked_only_when_used() {
    let base = program_bytes(&[]);
    let size = |s: &[&str]| program_bytes(s) - base;
    let mul = size(&["__muldi3"]);
    let div = size(&["__divdi3"]);
    let shl = size(&["__ashldi3"]);
    let shr = size(&["__lshrdi3"]);
    // The division module serves all four entry points and its multiply, the right shifts both.
    assert_eq!(
        size(&[
            "__udivdi3",
            "__umoddi3",
            "__divdi3",
            "__moddi3",
            "__divdi3_mul"
        ]),
        div
    );
    assert_eq!(size(&["__lshrdi3", "__ashrdi3"]), shr);
    let all = size(&[
        "__muldi3",
        "__udivdi3",
        "__umoddi3",
        "__divdi3",
        "__moddi3",
        "__ashldi3",
        "__lshrdi3",
        "__ashrdi3",
    ]);
    assert_eq!(all, mul + div + shl + shr, "each module once");
    // The sizes docs/isa.md states: together well under half of a 1 KiB ROM.
    assert_eq!((mul, div, shl, shr), (159, 331, 44, 56));
    assert!(all <= 600, "{all} bytes");
    // Nothing 64-bit is linked into a program that does not use it.
    let img = assemble_with_runtime("main: mv s0, ra\n call __divsi3\n mv ra, s0\n ret\n", "m.s")
        .unwrap();
    for s in ["__muldi3", "__divdi3", "__ashldi3", "__lshrdi3"] {
        assert!(img.symbol(s).is_none(), "{s} linked");
    }
}
