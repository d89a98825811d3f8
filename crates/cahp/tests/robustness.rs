//! Property tests: nothing a user can feed (assembly text, image files, ROM bytes) makes the
//! library panic, and every instruction's disassembly assembles back to the same bytes.

use proptest::prelude::*;
use vsp_cahp::isa::{imm_range, Inst, Reg, OPCODES};
use vsp_cahp::{assemble, assemble_sources, AsmOptions, Image, MemConfig, Simulator, Source};

const WORDS: &[&str] = &[
    "add",
    "addi",
    "lw",
    "sw",
    "lb",
    "sb",
    "li",
    "lui",
    "beq",
    "bgt",
    "j",
    "call",
    "ret",
    "hlt",
    "nop",
    "mv",
    "lwsp",
    "js",
    "jr",
    "x0",
    "x15",
    "x16",
    "sp",
    "a0",
    "t1",
    "ra",
    ".text",
    ".data",
    ".bss",
    ".rodata",
    ".byte",
    ".half",
    ".ascii",
    ".string",
    ".space",
    ".align",
    ".balign",
    ".globl",
    ".equ",
    ".option",
    "nocompress",
    "hi",
    "lo",
    "%hi",
    "lab",
    "lab:",
    "(",
    ")",
    ",",
    "+",
    "-",
    "*",
    "/",
    "<<",
    ">>",
    "~",
    "'a'",
    "\"s\\n\"",
    "0x7fff",
    "-513",
    "600",
    "65535",
    "1",
    "0",
    ".",
    "#",
    "\n",
    "\n",
    ":",
    "\\",
    "\"",
    "'",
];

fn word_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..40).prop_map(|w| w.join(" "))
}

/// The body of the fib benchmark's image file (the envelope opened).
fn fib_body() -> &'static [u8] {
    static BODY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BODY.get_or_init(|| {
        let p = vsp_cahp::programs::ALL[0];
        let image = assemble(p.source, p.name).expect("fib assembles");
        let bytes = image.to_bytes().expect("serializes");
        let kind = vsp_cahp::image::FORMAT.kinds[0].0;
        let opened = vsp_codec::open(&vsp_cahp::image::FORMAT, &bytes, kind).expect("opens");
        assert!(Image::from_bytes(&bytes).is_ok());
        opened.body.to_vec()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn assembler_never_panics_on_token_soup(src in word_soup()) {
        let _ = assemble(&src, "fuzz.s");
    }

    #[test]
    fn assembler_never_panics_on_arbitrary_text(src in "\\PC{0,120}") {
        let _ = assemble(&src, "fuzz.s");
    }

    #[test]
    fn image_reader_never_panics(tail in prop::collection::vec(any::<u8>(), 0..80), version in 0u16..3) {
        let _ = Image::from_bytes(&tail);
        let mut b = b"VSPCAHPI".to_vec();
        b.extend_from_slice(&version.to_le_bytes());
        b.extend_from_slice(&tail);
        let _ = Image::from_bytes(&b);
    }

    /// Random tails almost never pass the envelope's checksum, so this one aims at the body parser:
    /// a real image's body, mutated and sealed again, must be refused in one error or load as an
    /// image that a simulator accepts, never panic.
    #[test]
    fn resealed_mutated_image_bodies_never_panic(
        edits in prop::collection::vec((any::<u16>(), any::<u8>()), 1..6),
        cut in any::<u16>(),
        extra in prop::collection::vec(any::<u8>(), 0..24),
    ) {
        let body = fib_body();
        let mut b = body.to_vec();
        for (at, v) in edits {
            let i = at as usize % b.len();
            b[i] ^= v.max(1);
        }
        b.truncate(b.len() - cut as usize % (b.len() / 4 + 1));
        b.extend_from_slice(&extra);
        let kind = vsp_cahp::image::FORMAT.kinds[0].0;
        let sealed = vsp_codec::seal(&vsp_cahp::image::FORMAT, kind, b"", &b);
        if let Ok(image) = Image::from_bytes(&sealed) {
            let _ = Simulator::from_image(&image, &["3"], MemConfig::kib1());
        }
    }

    #[test]
    fn simulator_never_panics_on_random_rom(rom in prop::collection::vec(any::<u8>(), 0..64), ram in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut sim = Simulator::new(&rom, &ram, MemConfig::default()).unwrap();
        for _ in 0..64 {
            if sim.step().is_err() { break; }
        }
    }

    #[test]
    fn every_instruction_disassembles_and_reassembles(row in 0..OPCODES.len(), rd in 0u8..16, rs1 in 0u8..16, rs2 in 0u8..16, pick in any::<u32>()) {
        let op = OPCODES[row].op;
        // A canonical instruction: start from a full one and keep the fields the format uses by
        // letting decode(encode) canonicalise.
        let imm = match imm_range(op) {
            Some((lo, hi, step)) => {
                let n = ((hi - lo) / step + 1) as u32;
                lo + (pick % n) as i32 * step
            }
            None => 0,
        };
        let full = Inst { op, rd: Reg::new(rd).unwrap(), rs1: Reg::new(rs1).unwrap(), rs2: Reg::new(rs2).unwrap(), imm };
        let inst = (0..8u8).find_map(|mask| {
            let mut i = full;
            if mask & 1 != 0 { i.rd = Reg::default(); }
            if mask & 2 != 0 { i.rs1 = Reg::default(); }
            if mask & 4 != 0 { i.rs2 = Reg::default(); }
            i.check().ok().map(|_| i)
        }).unwrap();
        let bytes = inst.to_bytes().unwrap();
        // Branch/jump targets are relative to `.`; put the instruction at 0 so targets stay in range.
        let text = format!(".option nocompress\n{inst}\n");
        let img = assemble_sources(&[Source { name: "d.s", text: &text }], &AsmOptions::default())
            .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(img.rom, bytes, "{}", text);
    }
}
