//! Assembler behaviour: compression, pseudo-instructions, relocations, relaxation, sections and
//! directives, linking, the runtime helpers, and disassembly round trips.

mod runtime_support;

use runtime_support::check_mul_div;
use vsp_cahp::image::Section;
use vsp_cahp::{
    assemble, assemble_sources, assemble_with_runtime, disassemble, listing, programs, AsmOptions,
    Image, MemConfig, Reg, Simulator, Source,
};

fn run(image: &Image, args: &[&str]) -> Simulator {
    let mut sim = Simulator::from_image(image, args, MemConfig::default()).unwrap();
    assert!(sim.run(100_000).unwrap().halted, "did not halt");
    sim
}

fn asm(src: &str) -> Image {
    assemble(src, "t.s").unwrap_or_else(|e| panic!("{e}"))
}

fn size(src: &str) -> usize {
    asm(src).rom.len()
}

#[test]
fn compression_picks_16_bit_forms_where_legal() {
    // (source, bytes, why)
    let cases: [(&str, usize, &str); 21] = [
        ("add a0, a0, a1", 2, ""),
        ("add a0, a1, a0", 2, "commutative"),
        ("sub a0, a1, a0", 3, "not commutative"),
        ("sub a0, a0, a1", 2, ""),
        ("addi a0, a0, -32", 2, ""),
        ("addi a0, a0, 32", 3, ""),
        ("addi a0, a1, 1", 3, ""),
        ("andi t0, t0, 15", 2, ""),
        ("xori t0, t0, 1", 3, "no 16-bit xori"),
        ("lsli a0, a0, 3", 2, ""),
        ("lw a0, 126(sp)", 2, ""),
        ("lw a0, 127(sp)", 3, ""),
        ("lw a0, -2(sp)", 3, ""),
        ("sw a0, 0(sp)", 2, ""),
        ("sw a0, 0(fp)", 3, ""),
        ("lb a0, 0(sp)", 3, ""),
        ("li a0, -32", 2, ""),
        ("li a0, 300", 3, ""),
        ("li a0, 0x8000", 2, "lui alone"),
        ("li a0, 0x8010", 4, "lui + addi2"),
        ("li a0, 0x1234", 5, "lui + addi"),
    ];
    for (src, bytes, why) in cases {
        assert_eq!(size(src), bytes, "{src}: {why}");
    }
    assert_eq!(
        size(".option nocompress\nadd a0, a0, a1\nli a0, 1\nlw a0, 0(sp)"),
        9
    );
    assert_eq!(size("add2 a0, a1\nlsi a0, 1"), 4);
}

#[test]
fn li_loads_every_16_bit_value() {
    let mut values: Vec<i64> = (-32768..=65535).step_by(97).collect();
    values.extend([
        -32768, -513, -512, -33, -32, -1, 0, 31, 32, 511, 512, 0x7FFF, 0x8000, 0xFC00, 0xFE00,
        0xFFFF, 65535,
    ]);
    for v in values {
        for opt in ["", ".option nocompress\n"] {
            let img = asm(&format!("{opt}li t1, {v}\nhlt"));
            assert_eq!(
                run(&img, &[]).reg(Reg::new(15).unwrap()),
                v as u16,
                "li {v} {opt}"
            );
        }
    }
}

#[test]
fn hi_lo_relocations_and_sections() {
    let src = r#"
        .data
first:  .byte 1, 2, 3
        .align 1
word:   .half 0x1234, first
        .rodata
msg:    .string "hi"
raw:    .ascii "ab", "c"
        .bss
        .balign 4
buf:    .space 300
after:  .zero 2
        .data
late:   .byte -1
        .text
        .globl _start, buf
_start: lui  a0, hi(after)
        addi a0, a0, lo(after)
        lui  a1, %hi(word)
        addi a1, a1, %lo(word)
        lw   a2, 0(a1)
        lw   a3, 2(a1)
        lbu  a4, msg+1(x15)
        lb   a5, late(x15)
        la   t0, buf
        hlt
"#;
    let img = asm(src);
    let sym = |n: &str| img.symbol(n).unwrap_or_else(|| panic!("{n}"));
    assert_eq!(
        (sym("first").value, sym("word").value, sym("late").value),
        (2, 6, 10)
    );
    assert_eq!(sym("msg").value, 12, "rodata follows data, 2-aligned");
    assert_eq!(
        (sym("raw").value, sym("buf").value, sym("after").value),
        (15, 20, 320)
    );
    assert_eq!(sym("_start").section, Section::Rom);
    assert_eq!(sym("buf").section, Section::Ram);
    assert!(sym("buf").global && sym("_start").global && !sym("msg").global);
    assert_eq!(
        &img.ram[..18],
        &[0, 0, 1, 2, 3, 0, 0x34, 0x12, 2, 0, 0xFF, 0, b'h', b'i', 0, b'a', b'b', b'c']
    );
    assert_eq!(img.ram.len(), 322, "RAM image runs to the end of .bss");
    let s = run(&img, &[]);
    let reg = |n: &str| s.reg(Reg::parse(n).unwrap());
    assert_eq!(
        (reg("a0"), reg("a1"), reg("a2"), reg("a3")),
        (320, 6, 0x1234, 2)
    );
    assert_eq!(
        (reg("a4"), reg("a5"), reg("t0")),
        (u16::from(b'i'), 0xFFFF, 20)
    );
}

#[test]
fn pseudo_instructions() {
    let src = r#"
        li   s0, 5
        li   s1, -3
        mv   a0, s0
        not  a1, s0
        neg  a2, s0
        li   a3, 0
        bgt  s0, s1, gt_ok
        li   a3, 99
gt_ok:  bge  s1, s0, bad
        bgtu s1, s0, ok1
        j    bad
ok1:    bgeu s0, s0, ok2
        j    bad
ok2:    call fn
        li   a5, 2
        js   .+4
        li   a5, 7
        hlt
fn:     li   a4, 77
        ret
bad:    li   a3, 1
        hlt
"#;
    let s = run(&asm(src), &[]);
    let reg = |n: &str| s.reg(Reg::parse(n).unwrap());
    assert_eq!(
        (reg("a0"), reg("a1"), reg("a2")),
        (5, !5u16, (-5i16) as u16)
    );
    assert_eq!((reg("a3"), reg("a4"), reg("a5")), (0, 77, 2));
}

#[test]
fn relaxation_converges_with_label_dependent_sizes() {
    // `li` of labels past a growing block: each li's size depends on addresses that depend on the
    // other li's sizes; values that cross the simm6 and simm10 limits force growth.
    let mut src = String::from("_start:\n");
    for k in 0..12 {
        src.push_str(&format!("    li a0, target{k}\n"));
    }
    src.push_str("    hlt\n    .space 500\n");
    for k in 0..12 {
        src.push_str(&format!("target{k}: .space {}\n", 2 + 3 * k));
    }
    let img = assemble_sources(
        &[Source {
            name: "t.s",
            text: &src,
        }],
        &AsmOptions {
            rom_size: 65536,
            ..AsmOptions::default()
        },
    )
    .unwrap();
    // Step through: each li must leave a0 = its label's address.
    let mut sim = Simulator::new(
        &img.rom,
        &[],
        MemConfig {
            rom_size: 1024,
            ram_size: 512,
        },
    )
    .unwrap();
    for k in 0..12 {
        sim.step().unwrap();
        let mut s2 = sim.clone();
        // li may be two instructions (lui + addi): step until the next statement starts.
        let want = img.symbol(&format!("target{k}")).unwrap().value;
        while s2.reg(Reg::A0) != want && s2.pc() < 100 {
            s2.step().unwrap();
        }
        assert_eq!(s2.reg(Reg::A0), want, "target{k}");
        sim = s2;
    }
    // A branch to a label whose distance depends on relaxed sizes stays correct.
    let img = asm("beq a0, a1, end\nli a0, end\nli a1, end\nend: hlt\n");
    let s = run(&img, &[]);
    assert_eq!(s.pc(), img.symbol("end").unwrap().value);
}

#[test]
fn constants_and_expressions() {
    let img = asm(".equ N, 3\n.set M, N*4+1\nli a0, (M << 2) | 1\nli a1, ~0 & 0xFF\nli a2, 'A' - 1\nli a3, 0b101 ^ 0o7\nli a4, M/2-N\nhlt");
    let s = run(&img, &[]);
    let reg = |n: &str| s.reg(Reg::parse(n).unwrap());
    assert_eq!(
        (reg("a0"), reg("a1"), reg("a2"), reg("a3"), reg("a4")),
        (53, 255, 64, 2, 3)
    );
    assert_eq!(
        img.symbol("M").map(|s| (s.section, s.value)),
        Some((Section::Abs, 13))
    );
}

#[test]
fn several_sources_link_into_one_image() {
    let a = Source {
        name: "a.s",
        text: ".globl _start\n_start: call helper\n hlt\n.data\nshared: .half 41\n",
    };
    let b = Source {
        name: "b.s",
        text: "helper: lw a0, shared(x15)\n addi a0, a0, 1\n ret\n",
    };
    let img = assemble_sources(&[a, b], &AsmOptions::default()).unwrap();
    assert_eq!(run(&img, &[]).result(), 42);
    let e = assemble_sources(
        &[
            a,
            Source {
                name: "b.s",
                text: "\n_start: ret",
            },
        ],
        &AsmOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "b.s:2:1: error: duplicate symbol `_start` (first defined at a.s:2:1)"
    );
}

/// `main` returning f(a, b) for one runtime helper.
fn helper(f: &str, a: u16, b: u16) -> u16 {
    let src = format!("main: mv s0, ra\n li a0, {a}\n li a1, {b}\n call {f}\n mv ra, s0\n ret\n");
    let img = assemble_with_runtime(&src, "m.s").unwrap_or_else(|e| panic!("{e}"));
    run(&img, &[]).result()
}

#[test]
fn runtime_helpers_match_rust() {
    let vals: [u16; 14] = [
        0, 1, 2, 3, 7, 10, 255, 256, 1000, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF,
    ];
    check_mul_div!(helper, "hi3", &vals, u16, i16);
}

/// `main` returning the 32-bit f(a, b) (low half in a0, high half in a1).
fn helper32(f: &str, a: u32, b: u32) -> u32 {
    let (al, ah, bl, bh) = (a & 0xFFFF, a >> 16, b & 0xFFFF, b >> 16);
    let src = format!("main: mv s1, ra\n li a0, {al}\n li a1, {ah}\n li a2, {bl}\n li a3, {bh}\n li s0, 0x5A5A\n call {f}\n mv ra, s1\n ret\n");
    let img = assemble_with_runtime(&src, "m.s").unwrap_or_else(|e| panic!("{e}"));
    let s = run(&img, &[]);
    assert_eq!(s.reg(Reg::parse("s0").unwrap()), 0x5A5A, "{f} must keep s0");
    u32::from(s.reg(Reg::A0)) | u32::from(s.reg(Reg::new(9).unwrap())) << 16
}

#[test]
fn runtime_32_bit_helpers_match_rust() {
    let vals: [u32; 12] = [
        0,
        1,
        3,
        10,
        0xFFFF,
        0x1_0000,
        0x1234_5678,
        0x7FFF_FFFF,
        0x8000_0000,
        0x8000_0001,
        0xFFFF_FFFE,
        0xFFFF_FFFF,
    ];
    check_mul_div!(helper32, "si3", &vals, u32, i32);
}

#[test]
fn runtime_links_only_what_is_used_and_passes_argv() {
    let main = "main: lw t0, 2(a1)\n lbu a0, 0(t0)\n add a0, a0, a0\n ret\n";
    let img = assemble_with_runtime(main, "m.s").unwrap();
    assert!(img.symbol("__mulhi3").is_none() && img.symbol("__divhi3").is_none());
    assert_eq!(img.symbol("_start").map(|s| s.value), Some(0));
    let s = run(&img, &["!x", "y"]);
    assert_eq!(s.result(), 2 * u16::from(b'!'));
    let img = assemble_with_runtime("main: mv s0, ra\n call __modhi3\n mv ra, s0\n ret\n", "m.s")
        .unwrap();
    assert!(img.symbol("__udivhi3").is_some() && img.symbol("__mulhi3").is_none());
    // argc
    let img = assemble_with_runtime("main: ret\n", "m.s").unwrap();
    assert_eq!(run(&img, &["a", "b", "c"]).result(), 4);
}

#[test]
fn disassembly_reassembles_to_the_same_bytes() {
    let mut images: Vec<Image> = programs::ALL.iter().map(|p| asm(p.source)).collect();
    images
        .push(assemble_with_runtime("main: call __mulhi3\n call __divhi3\n ret\n", "m.s").unwrap());
    for img in images {
        let mut text = String::from(".option nocompress\n");
        for line in disassemble(&img.rom) {
            match line.inst {
                Some(i) => text.push_str(&format!("{i}\n")),
                None => text.push_str(&format!(".byte {}\n", line.bytes[0])),
            }
        }
        let again = assemble_sources(
            &[Source {
                name: "dis.s",
                text: &text,
            }],
            &AsmOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again.rom, img.rom, "\n{text}");
    }
    let l = listing(&asm(programs::FIB.source));
    assert!(l.contains("_start:\n0000: d5 11 fe lw sp, -2(sp)"), "{l}");
    assert!(l.contains("hlt"), "{l}");
}
