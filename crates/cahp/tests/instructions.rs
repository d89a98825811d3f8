//! Semantics of every CAHPv3 instruction on the simulator, one instruction at a time, with the
//! corner cases the reference calls out (x0 is writable, shifts ≥ 16, `bltu x, 0`, 0x8000 in
//! signed compares, byte lanes, word accesses ignoring address bit 0, wrap-around, links).

use vsp_cahp::isa::{Inst, Op, Reg};
use vsp_cahp::{MemConfig, Retired, Simulator};

fn r(n: u8) -> Reg {
    Reg::new(n).unwrap()
}

/// Places `inst` at `pc`, sets registers, runs one step.
fn exec(inst: Inst, pc: u16, regs: &[(u8, u16)], ram: &[u8]) -> (Simulator, Retired) {
    let mut rom = vec![0u8; 512];
    let bytes = inst.to_bytes().unwrap();
    for (k, b) in bytes.iter().enumerate() {
        rom[(usize::from(pc) + k) % 512] = *b;
    }
    // Reach `pc` with a jump from 0 when needed (js covers ±1024).
    let mut sim = if pc == 0 {
        Simulator::new(&rom, ram, MemConfig::default()).unwrap()
    } else {
        let j = Inst::bare(Op::Js)
            .with_imm(i32::from(pc))
            .to_bytes()
            .unwrap();
        rom[..2].copy_from_slice(&j);
        let mut s = Simulator::new(&rom, ram, MemConfig::default()).unwrap();
        s.step().unwrap();
        s
    };
    for &(n, v) in regs {
        sim.set_reg(r(n), v);
    }
    let ret = sim.step().unwrap();
    (sim, ret)
}

fn alu3(op: Op, a: u16, b: u16) -> u16 {
    let i = Inst::bare(op).with_rd(r(3)).with_rs1(r(4)).with_rs2(r(5));
    exec(i, 0, &[(4, a), (5, b)], &[]).0.reg(r(3))
}

fn alu2(op: Op, a: u16, b: u16) -> u16 {
    let i = Inst::bare(op).with_rd(r(3)).with_rs1(r(5));
    exec(i, 0, &[(3, a), (5, b)], &[]).0.reg(r(3))
}

fn alui(op: Op, a: u16, imm: i32) -> u16 {
    let i = Inst::bare(op).with_rd(r(3)).with_rs1(r(4)).with_imm(imm);
    exec(i, 0, &[(4, a)], &[]).0.reg(r(3))
}

fn alui2(op: Op, a: u16, imm: i32) -> u16 {
    let i = Inst::bare(op).with_rd(r(3)).with_imm(imm);
    exec(i, 0, &[(3, a)], &[]).0.reg(r(3))
}

#[test]
fn register_alu() {
    for (op, op2) in [
        (Op::Add, Op::Add2),
        (Op::Sub, Op::Sub2),
        (Op::And, Op::And2),
        (Op::Xor, Op::Xor2),
        (Op::Or, Op::Or2),
        (Op::Lsl, Op::Lsl2),
        (Op::Lsr, Op::Lsr2),
        (Op::Asr, Op::Asr2),
    ] {
        for (a, b) in [
            (0x1234u16, 0x0F0Fu16),
            (0xFFFF, 1),
            (0x8000, 0x8000),
            (0x8001, 3),
            (0x8001, 15),
            (0x8001, 16),
            (0xF000, 0xFFFF),
        ] {
            let want = match op {
                Op::Add => a.wrapping_add(b),
                Op::Sub => a.wrapping_sub(b),
                Op::And => a & b,
                Op::Xor => a ^ b,
                Op::Or => a | b,
                Op::Lsl => {
                    if b >= 16 {
                        0
                    } else {
                        a << b
                    }
                }
                Op::Lsr => {
                    if b >= 16 {
                        0
                    } else {
                        a >> b
                    }
                }
                _ => ((a as i16) >> b.min(15)) as u16,
            };
            assert_eq!(alu3(op, a, b), want, "{op:?} {a:#x} {b:#x}");
            assert_eq!(alu2(op2, a, b), want, "{op2:?} {a:#x} {b:#x}");
        }
    }
    assert_eq!(alu3(Op::Lsr, 0x8000, 16), 0);
    assert_eq!(alu3(Op::Asr, 0x8000, 40), 0xFFFF);
    assert_eq!(alu3(Op::Lsl, 1, 15), 0x8000);
    let mov = Inst::bare(Op::Mov).with_rd(r(0)).with_rs1(r(9));
    assert_eq!(
        exec(mov, 0, &[(9, 0xBEEF)], &[]).0.reg(Reg::RA),
        0xBEEF,
        "x0 is writable"
    );
}

#[test]
fn immediate_alu() {
    // (32- or 16-bit form, op, rs1 value, immediate, result)
    type Form = fn(Op, u16, i32) -> u16;
    let cases: [(Form, Op, u16, i32, u16); 17] = [
        (alui, Op::Addi, 10, -500, 10u16.wrapping_sub(500)),
        (alui, Op::Addi, 0xFFFF, 511, 510),
        (alui, Op::Andi, 0xABCD, -256, 0xAB00),
        (alui, Op::Andi, 0xABCD, 0xFF, 0xCD),
        (alui, Op::Xori, 0x00FF, -1, 0xFF00),
        (alui, Op::Ori, 0x1000, 0x1FF, 0x11FF),
        (alui, Op::Lsli, 0x00F1, 4, 0x0F10),
        (alui, Op::Lsri, 0x8F00, 8, 0x008F),
        (alui, Op::Asri, 0x8F00, 8, 0xFF8F),
        (alui, Op::Asri, 0x7F00, 15, 0),
        (alui2, Op::Addi2, 5, -32, 5u16.wrapping_sub(32)),
        (alui2, Op::Addi2, 5, 31, 36),
        (alui2, Op::Andi2, 0xFFFF, -16, 0xFFF0),
        (alui2, Op::Andi2, 0xFFFF, 7, 7),
        (alui2, Op::Lsli2, 3, 15, 0x8000),
        (alui2, Op::Lsri2, 0x8000, 15, 1),
        (alui2, Op::Asri2, 0x8000, 15, 0xFFFF),
    ];
    for (form, op, a, imm, want) in cases {
        assert_eq!(form(op, a, imm), want, "{op:?} {a:#x}, {imm}");
    }
}

#[test]
fn constants() {
    let li = |op: Op, imm: i32| {
        exec(
            Inst::bare(op).with_rd(r(7)).with_imm(imm),
            0,
            &[(7, 0x5555)],
            &[],
        )
        .0
        .reg(r(7))
    };
    assert_eq!(li(Op::Li, -500), (-500i16) as u16);
    assert_eq!(li(Op::Li, 511), 511);
    assert_eq!(li(Op::Lsi, -32), 0xFFE0);
    assert_eq!(li(Op::Lsi, 31), 31);
    assert_eq!(li(Op::Lui, 63), 63 << 10);
    assert_eq!(li(Op::Lui, 1), 0x0400);
}

#[test]
fn loads_and_stores() {
    let mut ram = vec![0u8; 512];
    ram[100] = 0x34;
    ram[101] = 0x92;
    ram[511] = 0x80;
    let ld = |op: Op, base: u16, imm: i32| {
        exec(
            Inst::bare(op).with_rd(r(2)).with_rs1(r(5)).with_imm(imm),
            0,
            &[(5, base)],
            &ram,
        )
        .0
        .reg(r(2))
    };
    assert_eq!(ld(Op::Lw, 90, 10), 0x9234);
    assert_eq!(
        ld(Op::Lw, 101, 0),
        0x9234,
        "word access ignores address bit 0"
    );
    assert_eq!(ld(Op::Lb, 101, 0), 0xFF92);
    assert_eq!(ld(Op::Lbu, 101, 0), 0x0092);
    assert_eq!(ld(Op::Lb, 100, 0), 0x0034);
    assert_eq!(
        ld(Op::Lbu, 0, -1),
        0x80,
        "addresses wrap modulo the RAM size"
    );
    assert_eq!(ld(Op::Lb, 512 + 511, 0), 0xFF80);
    // lwsp/swsp use x1.
    let lwsp = Inst::bare(Op::Lwsp).with_rd(r(8)).with_imm(100);
    assert_eq!(exec(lwsp, 0, &[(1, 0)], &ram).0.reg(r(8)), 0x9234);
    let swsp = Inst::bare(Op::Swsp).with_rs2(r(8)).with_imm(126);
    let (s, ret) = exec(swsp, 0, &[(1, 4), (8, 0xCAFE)], &[]);
    assert_eq!(&s.ram()[130..132], &[0xFE, 0xCA]);
    assert_eq!(
        ret.mem_write.map(|m| (m.addr, m.value, m.width)),
        Some((130, 0xCAFE, 2))
    );
    let sw = Inst::bare(Op::Sw)
        .with_rs2(r(8))
        .with_rs1(r(9))
        .with_imm(-3);
    let (s, _) = exec(sw, 0, &[(9, 10), (8, 0x1234)], &[]);
    assert_eq!(
        &s.ram()[6..8],
        &[0x34, 0x12],
        "store to odd address 7 writes the word at 6"
    );
    let sb = Inst::bare(Op::Sb).with_rs2(r(8)).with_rs1(r(9)).with_imm(1);
    let (s, ret) = exec(sb, 0, &[(9, 10), (8, 0x12AB)], &ram);
    assert_eq!(s.ram()[11], 0xAB);
    assert_eq!(s.ram()[10], 0);
    assert_eq!(
        ret.mem_write.map(|m| (m.addr, m.value, m.width)),
        Some((11, 0xAB, 1))
    );
    assert!(ret.reg_write.is_none());
}

#[test]
fn branches() {
    type Cond = fn(u16, u16) -> bool;
    let cases: [(Op, Cond); 6] = [
        (Op::Beq, |a, b| a == b),
        (Op::Bne, |a, b| a != b),
        (Op::Blt, |a, b| (a as i16) < (b as i16)),
        (Op::Ble, |a, b| (a as i16) <= (b as i16)),
        (Op::Bltu, |a, b| a < b),
        (Op::Bleu, |a, b| a <= b),
    ];
    let vals = [0u16, 1, 0x7FFF, 0x8000, 0xFFFF, 5];
    for (op, f) in cases {
        for a in vals {
            for b in vals {
                let i = Inst::bare(op)
                    .with_rs1(r(10))
                    .with_rs2(r(11))
                    .with_imm(-100);
                let (s, ret) = exec(i, 200, &[(10, a), (11, b)], &[]);
                let want = if f(a, b) { 100 } else { 203 };
                assert_eq!(s.pc(), want, "{op:?} {a:#x} {b:#x}");
                assert_eq!(ret.next_pc, want);
            }
        }
    }
    // The original RTL takes `bltu x, 0`; the correct semantics never do.
    let i = Inst::bare(Op::Bltu)
        .with_rs1(r(10))
        .with_rs2(r(11))
        .with_imm(20);
    assert_eq!(exec(i, 0, &[(10, 7), (11, 0)], &[]).0.pc(), 3);
    // Forward branch across the end of ROM wraps.
    let i = Inst::bare(Op::Beq).with_imm(100);
    assert_eq!(exec(i, 500, &[], &[]).0.pc(), (500 + 100) % 512);
}

#[test]
fn jumps_and_links() {
    let (s, ret) = exec(Inst::bare(Op::Js).with_imm(-1024), 300, &[], &[]);
    assert_eq!(s.pc(), 300, "300 - 1024 wraps modulo 512 back to 300");
    assert!(ret.reg_write.is_none());
    let (s, _) = exec(Inst::bare(Op::Jsal).with_imm(50), 100, &[(0, 7)], &[]);
    assert_eq!((s.pc(), s.reg(Reg::RA)), (150, 102));
    let (s, _) = exec(Inst::bare(Op::Jr).with_rs1(r(12)), 100, &[(12, 0x1F0)], &[]);
    assert_eq!((s.pc(), s.reg(Reg::RA)), (0x1F0, 0));
    let (s, _) = exec(Inst::bare(Op::Jalr).with_rs1(r(12)), 100, &[(12, 40)], &[]);
    assert_eq!((s.pc(), s.reg(Reg::RA)), (40, 102));
    // jalr ra: the target is read before the link is written.
    let (s, _) = exec(Inst::bare(Op::Jalr).with_rs1(Reg::RA), 100, &[(0, 60)], &[]);
    assert_eq!((s.pc(), s.reg(Reg::RA)), (60, 102));
    // Jump targets wrap to the ROM size.
    let (s, _) = exec(Inst::bare(Op::Jr).with_rs1(r(12)), 0, &[(12, 0xFFFE)], &[]);
    assert_eq!(s.pc(), 510);
    let (s, _) = exec(Inst::bare(Op::Nop), 10, &[], &[]);
    assert_eq!((s.pc(), *s.regs()), (12, [0; 16]));
}

#[test]
fn halt_and_counting() {
    let (mut s, ret) = exec(Inst::bare(Op::Js), 0, &[], &[]);
    assert!(s.halted() && ret.inst.is_halt());
    assert_eq!(s.instret(), 1);
    let before = (*s.regs(), s.pc(), s.ram().to_vec());
    assert_eq!(
        s.run(100).unwrap().steps,
        0,
        "run stops at once when halted"
    );
    s.step().unwrap();
    assert_eq!(
        (*s.regs(), s.pc(), s.ram().to_vec()),
        before,
        "stepping a halted machine changes nothing"
    );
    // An illegal instruction is an error naming the PC.
    let mut bad = Simulator::new(&[0x01, 0x00, 0xF0], &[], MemConfig::default()).unwrap();
    let e = bad.step().unwrap_err().to_string();
    assert!(e.contains("pc 0x0000") && e.contains("illegal"), "{e}");
}

#[test]
fn memory_configuration() {
    assert!(Simulator::new(
        &[],
        &[],
        MemConfig {
            rom_size: 500,
            ram_size: 512
        }
    )
    .is_err());
    assert!(Simulator::new(&[0; 600], &[], MemConfig::default()).is_err());
    let s = Simulator::new(&[], &[], MemConfig::kib1()).unwrap();
    assert_eq!((s.rom().len(), s.ram().len()), (1024, 1024));
    // In 1 KiB RAM, -2 wraps to 1022.
    let mut rom = Inst::bare(Op::Lw)
        .with_rd(r(1))
        .with_rs1(r(1))
        .with_imm(-2)
        .to_bytes()
        .unwrap();
    rom.extend(Inst::bare(Op::Js).to_bytes().unwrap());
    let mut ram = vec![0u8; 1024];
    ram[1022] = 0x34;
    ram[1023] = 0x12;
    let mut s = Simulator::new(&rom, &ram, MemConfig::kib1()).unwrap();
    assert!(s.run(10).unwrap().halted);
    assert_eq!(s.reg(Reg::SP), 0x1234);
    let t: Vec<_> = Simulator::new(&rom, &ram, MemConfig::kib1())
        .unwrap()
        .trace(10)
        .map(|r| r.unwrap().pc)
        .collect();
    assert_eq!(t, [0, 3]);
}
