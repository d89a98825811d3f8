//! Co-verification on random instruction sequences: thousands of programs (64 per bit-sliced run)
//! on the Pearl and Ruby netlists, and a sample under iverilog, all against the ISA simulator.
//!
//! Each program sets all sixteen registers to random (often extreme: 0, 1, 0x7fff, 0x8000, 0xffff)
//! values, then runs random instructions of every kind — both lengths, all ALU ops with register
//! shift amounts ≥ 16, loads and stores anywhere in RAM (addresses wrap), forward branches with all
//! six conditions, counted loops closed by backward branches (Ruby predicts those taken), js/jsal
//! and jr/jalr to later instructions — and ends with `hlt`. Registers are drawn mostly from a small
//! set so that forwarding and load-use hazards are frequent.

mod coverify_support;

use coverify_support::{
    check_iverilog, check_netlist, circuit, require_tool, run_netlist, simulate, Iverilog, Lane,
};
use vsp_cahp::cores::{Core, Memory};
use vsp_cahp::isa::{imm_range, Format, Inst, Op, Reg};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const PLAIN_OPS: [Op; 40] = [
    Op::Lw,
    Op::Lb,
    Op::Lbu,
    Op::Sw,
    Op::Sb,
    Op::Li,
    Op::Add,
    Op::Sub,
    Op::And,
    Op::Xor,
    Op::Or,
    Op::Lsl,
    Op::Lsr,
    Op::Asr,
    Op::Addi,
    Op::Andi,
    Op::Xori,
    Op::Ori,
    Op::Lsli,
    Op::Lsri,
    Op::Asri,
    Op::Lwsp,
    Op::Swsp,
    Op::Lsi,
    Op::Lui,
    Op::Mov,
    Op::Add2,
    Op::Sub2,
    Op::And2,
    Op::Xor2,
    Op::Or2,
    Op::Lsl2,
    Op::Lsr2,
    Op::Asr2,
    Op::Lsli2,
    Op::Lsri2,
    Op::Asri2,
    Op::Addi2,
    Op::Andi2,
    Op::Nop,
];
const BRANCHES: [Op; 6] = [Op::Beq, Op::Bne, Op::Blt, Op::Bltu, Op::Ble, Op::Bleu];
const SPECIAL: [u16; 6] = [0, 1, 0x7fff, 0x8000, 0xffff, 0xfffe];

/// A random register other than x6 and x7, which the counted loops reserve.
fn reg(rng: &mut Rng) -> Reg {
    let n = if rng.below(10) < 6 {
        8 + rng.below(4)
    } else {
        rng.below(16)
    };
    let n = if n == 6 || n == 7 { n + 6 } else { n };
    Reg::new(n as u8).unwrap_or_default()
}

fn imm(rng: &mut Rng, op: Op) -> i32 {
    let Some((min, max, step)) = imm_range(op) else {
        return 0;
    };
    let v = match rng.below(4) {
        0 => min,
        1 => max,
        _ => min + (rng.below((max - min + 1) as u64) as i32),
    };
    v - (v - min) % step
}

/// A random non-control instruction with the unused fields zero.
fn plain(rng: &mut Rng) -> Inst {
    let op = rng.pick(&PLAIN_OPS);
    let z = Reg::default();
    let (rd, rs1, rs2) = (reg(rng), reg(rng), reg(rng));
    let i = imm(rng, op);
    let (rd, rs1, rs2) = match op.format() {
        Format::Load | Format::I | Format::Shift => (rd, rs1, z),
        Format::Store => (z, rs1, rs2),
        Format::Li | Format::Imm6 | Format::Lui | Format::Shift2 => (rd, z, z),
        Format::R => (rd, rs1, rs2),
        Format::R2 => (rd, rs1, z),
        Format::Sp if op == Op::Lwsp => (rd, z, z),
        Format::Sp => (z, z, rs2),
        _ => (z, z, z),
    };
    Inst {
        op,
        rd,
        rs1,
        rs2,
        imm: i,
    }
}

enum Slot {
    Fixed(Inst),
    Branch {
        op: Op,
        rs1: Reg,
        rs2: Reg,
        target: usize,
    },
    Jump {
        link: bool,
        target: usize,
    },
    JumpReg {
        link: bool,
        reg: Reg,
        target: usize,
    },
}

fn bytes(i: &Inst) -> Vec<u8> {
    i.to_bytes().unwrap_or_else(|e| panic!("{i:?}: {e}"))
}

/// A random program (ROM) and random initial RAM.
fn program(seed: u64) -> Lane {
    let mut rng = Rng::new(seed);
    let mut slots = Vec::new();
    for r in 0..16u8 {
        let v = if r == 6 || r == 7 {
            0
        } else if rng.below(3) == 0 {
            rng.pick(&SPECIAL)
        } else {
            rng.next() as u16
        };
        let hi = ((u32::from(v) + 0x200) >> 10) & 0x3f;
        let lo = (i32::from(v) - ((hi as i32) << 10)) as i16 as i32;
        let lo = ((lo + 512).rem_euclid(1024)) - 512;
        let rd = Reg::new(r).unwrap_or_default();
        slots.push(Slot::Fixed(Inst {
            op: Op::Lui,
            rd,
            rs1: Reg::default(),
            rs2: Reg::default(),
            imm: hi as i32,
        }));
        slots.push(Slot::Fixed(Inst {
            op: Op::Addi,
            rd,
            rs1: rd,
            rs2: Reg::default(),
            imm: lo,
        }));
    }
    let start = slots.len();
    let body = 24 + rng.below(32) as usize;
    // Kinds first; forward targets are chosen below, once it is known which slots lie inside a
    // counted loop (a jump into a loop body would skip the initialisation of its counter).
    let mut inside = vec![false; start];
    let mut forward = Vec::new();
    let z = Reg::default();
    let (zero, counter) = (
        Reg::new(6).unwrap_or_default(),
        Reg::new(7).unwrap_or_default(),
    );
    while slots.len() < start + body {
        let k = slots.len();
        match rng.below(24) {
            0..=2 => {
                let (op, rs1, rs2) = (rng.pick(&BRANCHES), reg(&mut rng), reg(&mut rng));
                slots.push(Slot::Branch {
                    op,
                    rs1,
                    rs2,
                    target: 0,
                });
                forward.push(k);
            }
            3 => {
                slots.push(Slot::Jump {
                    link: rng.below(2) == 1,
                    target: 0,
                });
                forward.push(k);
            }
            4 => {
                slots.push(Slot::JumpReg {
                    link: rng.below(2) == 1,
                    reg: reg(&mut rng),
                    target: 0,
                });
                forward.push(k);
            }
            5 => {
                // Counted loop with a backward branch: li x7, n; 1..4 instructions; x7 -= 1;
                // branch back while x7 != 0 (x6 stays 0, and nothing else writes x6 or x7).
                let n = 1 + rng.below(3) as i32;
                slots.push(Slot::Fixed(Inst {
                    op: Op::Li,
                    rd: counter,
                    rs1: z,
                    rs2: z,
                    imm: n,
                }));
                inside.push(false);
                let first = slots.len();
                for _ in 0..1 + rng.below(4) {
                    slots.push(Slot::Fixed(plain(&mut rng)));
                    inside.push(true);
                }
                let dec = Inst {
                    op: Op::Addi2,
                    rd: counter,
                    rs1: z,
                    rs2: z,
                    imm: -1,
                };
                slots.push(Slot::Fixed(dec));
                inside.push(true);
                let (op, rs1, rs2) = rng.pick(&[
                    (Op::Bne, counter, zero),
                    (Op::Blt, zero, counter),
                    (Op::Bltu, zero, counter),
                ]);
                slots.push(Slot::Branch {
                    op,
                    rs1,
                    rs2,
                    target: first,
                });
                inside.push(true);
                continue;
            }
            _ => slots.push(Slot::Fixed(plain(&mut rng))),
        }
        inside.push(false);
    }
    let end = slots.len(); // index of the final hlt
    inside.push(false);
    slots.push(Slot::Fixed(Inst::bare(Op::Js)));
    for k in forward {
        let want = (k + 1 + rng.below(6) as usize).min(end);
        let t = (want..=end).find(|&t| !inside[t]).unwrap_or(end);
        match &mut slots[k] {
            Slot::Branch { target, .. }
            | Slot::Jump { target, .. }
            | Slot::JumpReg { target, .. } => *target = t,
            Slot::Fixed(_) => {}
        }
    }
    // Layout, then encode with the now known addresses.
    let size = |s: &Slot| match s {
        Slot::Fixed(i) => usize::from(i.size()),
        Slot::Branch { .. } => 3,
        Slot::Jump { .. } => 2,
        Slot::JumpReg { .. } => 5,
    };
    let mut addr = vec![0usize; slots.len() + 1];
    for (k, s) in slots.iter().enumerate() {
        addr[k + 1] = addr[k] + size(s);
    }
    let mut rom = Vec::new();
    let z = Reg::default();
    let mut emit = |op, rd, rs1, rs2, imm| {
        rom.extend(bytes(&Inst {
            op,
            rd,
            rs1,
            rs2,
            imm,
        }))
    };
    for (k, s) in slots.iter().enumerate() {
        let here = addr[k] as i32;
        match *s {
            Slot::Fixed(i) => emit(i.op, i.rd, i.rs1, i.rs2, i.imm),
            Slot::Branch {
                op,
                rs1,
                rs2,
                target,
            } => emit(op, z, rs1, rs2, addr[target] as i32 - here),
            Slot::Jump { link, target } => {
                let op = if link { Op::Jsal } else { Op::Js };
                emit(op, z, z, z, addr[target] as i32 - here)
            }
            Slot::JumpReg { link, reg, target } => {
                emit(Op::Li, reg, z, z, addr[target] as i32);
                let op = if link { Op::Jalr } else { Op::Jr };
                emit(op, z, reg, z, 0);
            }
        }
    }
    assert!(rom.len() <= 512, "random program of {} bytes", rom.len());
    let ram = (0..512).map(|_| rng.next() as u8).collect();
    Lane { rom, ram }
}

/// Batches of 64 programs per core; 2 × 16 × 64 = 2048 programs in all.
const BATCHES: u64 = 16;

#[test]
fn random_programs_netlists_match_the_simulator() {
    for core in Core::ALL {
        let c = circuit(core, Memory::Cmux).expect("blueprint compiles");
        for batch in 0..BATCHES {
            let lanes: Vec<Lane> = (0..64).map(|l| program(batch * 64 + l)).collect();
            let nets = run_netlist(&c, Memory::Cmux, &lanes, 2_000);
            for (l, (lane, net)) in lanes.iter().zip(&nets).enumerate() {
                let sim = simulate(lane, 10_000);
                check_netlist(
                    &format!("{core} random program {}", batch * 64 + l as u64),
                    &sim,
                    net,
                );
            }
        }
    }
}

#[test]
#[ignore = "needs iverilog"]
fn random_programs_iverilog_match_the_simulator() {
    require_tool("iverilog");
    for core in Core::ALL {
        let tb = Iverilog::compile(core);
        for seed in 0..48 {
            let lane = program(1_000_000 + seed);
            let sim = simulate(&lane, 10_000);
            let (steps, fin) = tb.run(&lane, 2_000);
            check_iverilog(
                &format!("{core} random program {} (iverilog)", 1_000_000 + seed),
                &sim,
                &steps,
                fin,
            );
        }
    }
}

#[test]
fn random_programs_exercise_every_instruction() {
    // Guards the generator itself: a generator that stopped emitting some instruction would make the
    // tests above weaker without failing them.
    let mut seen = std::collections::HashSet::new();
    let mut backward = 0;
    for seed in 0..256 {
        let lane = program(seed);
        let mut pc = 0;
        while pc < lane.rom.len() {
            let i = Inst::decode(&lane.rom[pc..]).expect("generator emits valid code");
            seen.insert(i.op);
            backward += usize::from(BRANCHES.contains(&i.op) && i.imm < 0);
            pc += usize::from(i.size());
        }
    }
    assert!(
        backward > 100,
        "only {backward} backward branches in 256 programs"
    );
    for op in PLAIN_OPS
        .iter()
        .chain(&BRANCHES)
        .chain(&[Op::Js, Op::Jsal, Op::Jr, Op::Jalr])
    {
        assert!(seen.contains(op), "{op:?} never generated");
    }
}
