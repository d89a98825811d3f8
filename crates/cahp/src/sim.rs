//! The CAHPv3 instruction-set simulator: the golden model the cores are checked against.
//!
//! Semantics follow `shared/reference/vsp.md` §1 with the *correct* branch conditions (the original
//! RTL gets `bltu x, 0` wrong, §1.5). Memory follows the hardware organisation (§1.6) so that a core
//! and this model agree after every instruction:
//! * ROM and RAM sizes are powers of two; addresses wrap modulo the size (the hardware simply drops
//!   the high address bits). The PC wraps the same way.
//! * Word loads/stores ignore address bit 0 (the RAM is 16-bit words); byte accesses select the low
//!   (even address) or high (odd address) byte.
//! * A 24-bit instruction may start at any byte address.
//! * Register-amount shifts of 16 or more give 0 (`lsl`, `lsr`) or the sign fill (`asr`).
//!
//! The machine halts after it executes `js 0` (halfword 0x000E, §1.7); stepping a halted machine
//! executes that `js 0` again, which changes nothing — exactly what the hardware does.

use thiserror::Error;

use crate::image::Image;
use crate::isa::{Inst, IsaError, Op, Reg};
use crate::loader::{load_args, LoadError};

/// ROM and RAM sizes in bytes (powers of two, 16..=65536).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemConfig {
    /// Instruction ROM size in bytes.
    pub rom_size: usize,
    /// Data RAM size in bytes.
    pub ram_size: usize,
}

impl Default for MemConfig {
    /// The standard build: 512-byte ROM and 512-byte RAM.
    fn default() -> Self {
        MemConfig {
            rom_size: 512,
            ram_size: 512,
        }
    }
}

impl MemConfig {
    /// The 1 KiB variant (1 KiB ROM, 1 KiB RAM).
    pub fn kib1() -> Self {
        MemConfig {
            rom_size: 1024,
            ram_size: 1024,
        }
    }

    /// Checks that both sizes are powers of two in 16..=65536.
    pub fn validate(&self) -> Result<(), SimError> {
        for (what, size) in [("ROM", self.rom_size), ("RAM", self.ram_size)] {
            if !size.is_power_of_two() || !(16..=65536).contains(&size) {
                return Err(SimError::BadMemSize { what, size });
            }
        }
        Ok(())
    }
}

/// Simulator errors.
#[derive(Debug, Error)]
pub enum SimError {
    /// A memory size that the hardware organisation cannot have.
    #[error("{what} size {size} must be a power of two between 16 and 65536 bytes")]
    BadMemSize {
        /// "ROM" or "RAM".
        what: &'static str,
        /// The size given.
        size: usize,
    },
    /// Program or data larger than the memory.
    #[error("{what} contents ({len} bytes) do not fit in {size} bytes")]
    TooLarge {
        /// "ROM" or "RAM".
        what: &'static str,
        /// Bytes given.
        len: usize,
        /// Memory size.
        size: usize,
    },
    /// The bytes at the PC are not an instruction. (The decoder's error is part of this message,
    /// not a separate source, so that a printed error chain says it once.)
    #[error("at pc 0x{pc:04x}: {error}")]
    Illegal {
        /// Address of the bad instruction.
        pc: u16,
        /// What is wrong.
        error: IsaError,
    },
    /// An instruction would move the stack pointer out of the stack that a [`StackGuard`] allows:
    /// below the end of the static data (the stack overflowed into it) or above the initial SP.
    #[error(
        "stack overflow at pc 0x{pc:04x}: sp would become 0x{sp:04x}, outside the stack (0x{low:04x} \
         to 0x{high:04x}: the {} bytes between the static data and the arguments)",
        high.saturating_sub(*low)
    )]
    StackOverflow {
        /// Address of the instruction.
        pc: u16,
        /// The value it would write to sp.
        sp: u16,
        /// Lowest allowed sp: the end of the static data.
        low: u16,
        /// Highest allowed sp: the initial one.
        high: u16,
    },
    /// The argument loader failed.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// A register write performed by one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegWrite {
    /// The register written.
    pub reg: Reg,
    /// The new value.
    pub value: u16,
}

/// A RAM write performed by one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemWrite {
    /// Byte address (after wrapping; even for word stores).
    pub addr: u16,
    /// Value written (a byte for `sb`).
    pub value: u16,
    /// 1 for `sb`, 2 for `sw`/`swsp`.
    pub width: u8,
}

/// What one executed instruction did — the trace record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// Address of the instruction.
    pub pc: u16,
    /// The instruction.
    pub inst: Inst,
    /// PC after it.
    pub next_pc: u16,
    /// Register written, if any.
    pub reg_write: Option<RegWrite>,
    /// RAM written, if any.
    pub mem_write: Option<MemWrite>,
}

/// Result of [`Simulator::run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStats {
    /// Instructions executed by this call.
    pub steps: u64,
    /// Whether the machine halted.
    pub halted: bool,
}

/// The range a C program's stack pointer stays in: from the end of its static data (`low`) up to
/// the initial SP that the argument loader stores (`high`). A simulator with a guard stops with
/// [`SimError::StackOverflow`] at the first instruction that would move sp outside it, instead of
/// running on with the stack overwriting data, return addresses and finally code pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackGuard {
    /// Lowest allowed sp.
    pub low: u16,
    /// Highest allowed sp.
    pub high: u16,
}

impl StackGuard {
    /// The guard for `image` loaded into `ram` (the complete initial RAM, e.g. from
    /// [`load_args`]) when the image starts with crt0 (its `_start` at ROM address 0: a C program,
    /// or assembly linked with the runtime), whose stack is the RAM between the static data and
    /// the arguments. `None` for other programs, which may use sp as they like.
    pub fn for_image(image: &Image, ram: &[u8]) -> Option<StackGuard> {
        let start = image.symbol("_start")?;
        if start.section != crate::image::Section::Rom || start.value != 0 || ram.len() < 2 {
            return None;
        }
        let n = ram.len();
        let high = u16::from_le_bytes([ram[n - 2], ram[n - 1]]);
        let low = u16::try_from(image.ram.len().next_multiple_of(2)).ok()?;
        (low <= high).then_some(StackGuard { low, high })
    }
}

/// The architectural state of a CAHPv3 machine plus an instruction counter.
#[derive(Clone, Debug)]
pub struct Simulator {
    rom: Vec<u8>,
    ram: Vec<u8>,
    regs: [u16; 16],
    pc: u16,
    halted: bool,
    count: u64,
    guard: Option<StackGuard>,
}

impl Simulator {
    /// A machine at reset (PC 0, registers 0) with `rom` and `ram` zero-padded to the sizes in
    /// `config`. `ram` is the complete initial RAM, e.g. from [`load_args`].
    pub fn new(rom: &[u8], ram: &[u8], config: MemConfig) -> Result<Simulator, SimError> {
        config.validate()?;
        for (what, len, size) in [
            ("ROM", rom.len(), config.rom_size),
            ("RAM", ram.len(), config.ram_size),
        ] {
            if len > size {
                return Err(SimError::TooLarge { what, len, size });
            }
        }
        let mut r = vec![0u8; config.rom_size];
        r[..rom.len()].copy_from_slice(rom);
        let mut m = vec![0u8; config.ram_size];
        m[..ram.len()].copy_from_slice(ram);
        Ok(Simulator {
            rom: r,
            ram: m,
            regs: [0; 16],
            pc: 0,
            halted: false,
            count: 0,
            guard: None,
        })
    }

    /// Checks every write to sp against `guard` from now on (`None`: no check, the default).
    pub fn set_stack_guard(&mut self, guard: Option<StackGuard>) {
        self.guard = guard;
    }

    /// Loads an image with command-line arguments (`argv = ["", args…]`, §1.7) and resets.
    pub fn from_image(
        image: &Image,
        args: &[&str],
        config: MemConfig,
    ) -> Result<Simulator, SimError> {
        config.validate()?;
        let ram = load_args(&image.ram, args, config.ram_size)?;
        Simulator::new(&image.rom, &ram, config)
    }

    /// The sixteen registers.
    pub fn regs(&self) -> &[u16; 16] {
        &self.regs
    }

    /// One register.
    pub fn reg(&self, r: Reg) -> u16 {
        self.regs[r.index()]
    }

    /// Overwrites one register (for tests and random-state co-verification).
    pub fn set_reg(&mut self, r: Reg, value: u16) {
        self.regs[r.index()] = value;
    }

    /// The whole RAM.
    pub fn ram(&self) -> &[u8] {
        &self.ram
    }

    /// The whole ROM.
    pub fn rom(&self) -> &[u8] {
        &self.rom
    }

    /// The program counter.
    pub fn pc(&self) -> u16 {
        self.pc
    }

    /// Whether `js 0` has been executed.
    pub fn halted(&self) -> bool {
        self.halted
    }

    /// Instructions executed since reset (including the final `js 0`).
    pub fn instret(&self) -> u64 {
        self.count
    }

    /// The return value register a0 (x8), which kvsp reports as the program's result.
    pub fn result(&self) -> u16 {
        self.regs[8]
    }

    /// Decodes the instruction at `pc` without executing it.
    pub fn fetch(&self, pc: u16) -> Result<Inst, SimError> {
        let m = self.rom.len() - 1;
        let p = usize::from(pc);
        let bytes = [
            self.rom[p & m],
            self.rom[(p + 1) & m],
            self.rom[(p + 2) & m],
        ];
        Inst::decode(&bytes).map_err(|error| SimError::Illegal { pc, error })
    }

    fn word_addr(&self, addr: u16) -> usize {
        usize::from(addr) & (self.ram.len() - 1) & !1
    }

    fn load16(&self, addr: u16) -> u16 {
        let a = self.word_addr(addr);
        u16::from_le_bytes([self.ram[a], self.ram[a + 1]])
    }

    fn load8(&self, addr: u16) -> u8 {
        self.ram[usize::from(addr) & (self.ram.len() - 1)]
    }

    /// Executes one instruction and reports what it did.
    pub fn step(&mut self) -> Result<Retired, SimError> {
        let pc = self.pc;
        let inst = self.fetch(pc)?;
        let regs = self.regs;
        let r = |x: Reg| regs[x.index()];
        let (a, b) = (r(inst.rs1), r(inst.rs2));
        let imm = inst.imm as u16; // two's complement wrap is the hardware behaviour
        let mut next = pc.wrapping_add(u16::from(inst.size()));
        let mut wr: Option<(Reg, u16)> = None;
        let mut mw: Option<MemWrite> = None;
        let alu = |op: Op, x: u16, y: u16| -> u16 {
            match op {
                Op::Add | Op::Add2 | Op::Addi | Op::Addi2 => x.wrapping_add(y),
                Op::Sub | Op::Sub2 => x.wrapping_sub(y),
                Op::And | Op::And2 | Op::Andi | Op::Andi2 => x & y,
                Op::Xor | Op::Xor2 | Op::Xori => x ^ y,
                Op::Or | Op::Or2 | Op::Ori => x | y,
                Op::Lsl | Op::Lsl2 | Op::Lsli | Op::Lsli2 => {
                    x.checked_shl(u32::from(y)).unwrap_or(0)
                }
                Op::Lsr | Op::Lsr2 | Op::Lsri | Op::Lsri2 => {
                    x.checked_shr(u32::from(y)).unwrap_or(0)
                }
                _ => ((x as i16) >> y.min(15)) as u16, // asr family
            }
        };
        match inst.op {
            Op::Lw => wr = Some((inst.rd, self.load16(a.wrapping_add(imm)))),
            Op::Lb => wr = Some((inst.rd, self.load8(a.wrapping_add(imm)) as i8 as i16 as u16)),
            Op::Lbu => wr = Some((inst.rd, u16::from(self.load8(a.wrapping_add(imm))))),
            Op::Lwsp => wr = Some((inst.rd, self.load16(self.regs[1].wrapping_add(imm)))),
            Op::Sw | Op::Swsp => {
                let base = if inst.op == Op::Sw { a } else { self.regs[1] };
                let addr = self.word_addr(base.wrapping_add(imm));
                self.ram[addr..addr + 2].copy_from_slice(&b.to_le_bytes());
                mw = Some(MemWrite {
                    addr: addr as u16,
                    value: b,
                    width: 2,
                });
            }
            Op::Sb => {
                let addr = usize::from(a.wrapping_add(imm)) & (self.ram.len() - 1);
                self.ram[addr] = b as u8;
                mw = Some(MemWrite {
                    addr: addr as u16,
                    value: b & 0xFF,
                    width: 1,
                });
            }
            Op::Li | Op::Lsi => wr = Some((inst.rd, imm)),
            Op::Lui => wr = Some((inst.rd, imm << 10)),
            Op::Mov => wr = Some((inst.rd, a)),
            Op::Add | Op::Sub | Op::And | Op::Xor | Op::Or | Op::Lsl | Op::Lsr | Op::Asr => {
                wr = Some((inst.rd, alu(inst.op, a, b)))
            }
            Op::Addi | Op::Andi | Op::Xori | Op::Ori | Op::Lsli | Op::Lsri | Op::Asri => {
                wr = Some((inst.rd, alu(inst.op, a, imm)))
            }
            Op::Add2
            | Op::Sub2
            | Op::And2
            | Op::Xor2
            | Op::Or2
            | Op::Lsl2
            | Op::Lsr2
            | Op::Asr2 => wr = Some((inst.rd, alu(inst.op, r(inst.rd), a))),
            Op::Lsli2 | Op::Lsri2 | Op::Asri2 | Op::Addi2 | Op::Andi2 => {
                wr = Some((inst.rd, alu(inst.op, r(inst.rd), imm)))
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bltu | Op::Ble | Op::Bleu => {
                let taken = match inst.op {
                    Op::Beq => a == b,
                    Op::Bne => a != b,
                    Op::Blt => (a as i16) < (b as i16),
                    Op::Ble => (a as i16) <= (b as i16),
                    Op::Bltu => a < b,
                    _ => a <= b,
                };
                if taken {
                    next = pc.wrapping_add(imm);
                }
            }
            Op::Js | Op::Jsal => {
                if inst.op == Op::Jsal {
                    wr = Some((Reg::RA, pc.wrapping_add(2)));
                }
                next = pc.wrapping_add(imm);
            }
            Op::Jr | Op::Jalr => {
                if inst.op == Op::Jalr {
                    wr = Some((Reg::RA, pc.wrapping_add(2)));
                }
                next = a; // target read before the link write (jalr ra works)
            }
            Op::Nop => {}
        }
        if let (Some((Reg::SP, sp)), Some(g)) = (wr, self.guard) {
            if !(g.low..=g.high).contains(&sp) {
                return Err(SimError::StackOverflow {
                    pc,
                    sp,
                    low: g.low,
                    high: g.high,
                });
            }
        }
        if let Some((reg, value)) = wr {
            self.regs[reg.index()] = value;
        }
        let next_pc = next & (self.rom.len() - 1) as u16;
        self.pc = next_pc;
        self.count += 1;
        if inst.is_halt() {
            self.halted = true;
        }
        let reg_write = wr.map(|(reg, value)| RegWrite { reg, value });
        Ok(Retired {
            pc,
            inst,
            next_pc,
            reg_write,
            mem_write: mw,
        })
    }

    /// Runs until halt or until `max_steps` instructions have executed.
    pub fn run(&mut self, max_steps: u64) -> Result<RunStats, SimError> {
        let mut steps = 0;
        while !self.halted && steps < max_steps {
            self.step()?;
            steps += 1;
        }
        Ok(RunStats {
            steps,
            halted: self.halted,
        })
    }

    /// An iterator over at most `max_steps` executed instructions, ending after the halt (or at the
    /// first error, which it yields).
    pub fn trace(&mut self, max_steps: u64) -> Trace<'_> {
        Trace {
            sim: self,
            left: max_steps,
            done: false,
        }
    }

    /// A register dump, one line per four registers (`x0/ra=0x0000 …`).
    pub fn dump_regs(&self) -> String {
        let mut s = format!(
            "pc=0x{:04x} instret={} halted={}\n",
            self.pc, self.count, self.halted
        );
        for row in 0..4 {
            let cells: Vec<String> = (0..4)
                .map(|c| {
                    let i = row * 4 + c;
                    let name = crate::isa::ABI_NAMES[i];
                    format!("x{i:<2}/{name:<2} = 0x{:04x}", self.regs[i])
                })
                .collect();
            s.push_str(&cells.join("  "));
            s.push('\n');
        }
        s
    }

    /// A hex dump of RAM, 16 bytes a line, skipping all-zero lines.
    pub fn dump_ram(&self) -> String {
        let mut s = String::new();
        for (i, chunk) in self.ram.chunks(16).enumerate() {
            if chunk.iter().all(|&b| b == 0) {
                continue;
            }
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            s.push_str(&format!("{:04x}: {}\n", i * 16, hex.join(" ")));
        }
        s
    }
}

/// Iterator returned by [`Simulator::trace`].
pub struct Trace<'a> {
    sim: &'a mut Simulator,
    left: u64,
    done: bool,
}

impl Iterator for Trace<'_> {
    type Item = Result<Retired, SimError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.left == 0 || self.sim.halted {
            return None;
        }
        self.left -= 1;
        let r = self.sim.step();
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}
