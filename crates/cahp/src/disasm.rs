//! The disassembler (used by `vsp emu --trace` and for listings).
//!
//! Text uses ABI register names and machine mnemonics; branch and jump targets are written relative
//! to the instruction (`.+12`, `.-6`, `.`), which is exactly what the encoding holds. Assembling the
//! output under `.option nocompress` reproduces the bytes.

use std::fmt;

use crate::image::{Image, Section};
use crate::isa::{Format, Inst, Op};

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.op.mnemonic();
        let (rd, rs1, rs2, imm) = (self.rd, self.rs1, self.rs2, self.imm);
        let rel = |v: i32| match v {
            0 => ".".to_string(),
            v if v > 0 => format!(".+{v}"),
            v => format!(".{v}"),
        };
        match self.op.format() {
            Format::Load => write!(f, "{m} {rd}, {imm}({rs1})"),
            Format::Store => write!(f, "{m} {rs2}, {imm}({rs1})"),
            Format::Li | Format::Imm6 | Format::Lui | Format::Shift2 => {
                write!(f, "{m} {rd}, {imm}")
            }
            Format::R => write!(f, "{m} {rd}, {rs1}, {rs2}"),
            Format::I | Format::Shift => write!(f, "{m} {rd}, {rs1}, {imm}"),
            Format::Branch => write!(f, "{m} {rs1}, {rs2}, {}", rel(imm)),
            Format::Sp if self.op == Op::Lwsp => write!(f, "{m} {rd}, {imm}(sp)"),
            Format::Sp => write!(f, "{m} {rs2}, {imm}(sp)"),
            Format::R2 => write!(f, "{m} {rd}, {rs1}"),
            Format::JReg => write!(f, "{m} {rs1}"),
            Format::JImm => write!(f, "{m} {}", rel(imm)),
            Format::None => write!(f, "{m}"),
        }
    }
}

/// One line of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// ROM address.
    pub addr: u16,
    /// The instruction bytes (1 byte for an undecodable position).
    pub bytes: Vec<u8>,
    /// The instruction, or `None` where the bytes are not one (the sweep then advances one byte).
    pub inst: Option<Inst>,
}

impl Line {
    /// `addr: bytes  text` with the absolute target of branches and jumps as a comment.
    pub fn render(&self, labels: &[(u16, &str)]) -> String {
        let hex: Vec<String> = self.bytes.iter().map(|b| format!("{b:02x}")).collect();
        let text = match &self.inst {
            Some(i) => {
                let mut t = i.to_string();
                if matches!(i.op.format(), Format::Branch | Format::JImm) {
                    let target = (i32::from(self.addr) + i.imm) as u16;
                    let name = labels
                        .iter()
                        .find(|(a, _)| *a == target)
                        .map(|(_, n)| format!(" <{n}>"))
                        .unwrap_or_default();
                    t.push_str(&format!("    # 0x{target:04x}{name}"));
                    if i.is_halt() {
                        t.push_str(" hlt");
                    }
                }
                t
            }
            None => format!(
                ".byte 0x{:02x}    # not an instruction",
                self.bytes.first().copied().unwrap_or(0)
            ),
        };
        format!("{:04x}: {:<8} {}", self.addr, hex.join(" "), text)
    }
}

/// Linear-sweep disassembly of `rom` from address 0.
pub fn disassemble(rom: &[u8]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pc = 0usize;
    while pc < rom.len() {
        match Inst::decode(&rom[pc..]) {
            Ok(inst) => {
                let n = usize::from(inst.size());
                out.push(Line {
                    addr: pc as u16,
                    bytes: rom[pc..pc + n].to_vec(),
                    inst: Some(inst),
                });
                pc += n;
            }
            Err(_) => {
                out.push(Line {
                    addr: pc as u16,
                    bytes: vec![rom[pc]],
                    inst: None,
                });
                pc += 1;
            }
        }
    }
    out
}

/// A full listing of an image's ROM with labels from its symbol table.
pub fn listing(image: &Image) -> String {
    let labels: Vec<(u16, &str)> = image
        .symbols
        .iter()
        .filter(|s| s.section == Section::Rom)
        .map(|s| (s.value, s.name.as_str()))
        .collect();
    let mut s = String::new();
    for line in disassemble(&image.rom) {
        for (_, name) in labels.iter().filter(|(a, _)| *a == line.addr) {
            s.push_str(&format!("{name}:\n"));
        }
        s.push_str(&line.render(&labels));
        s.push('\n');
    }
    s
}
