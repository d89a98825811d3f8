//! The plain gate-level run of a program (`vsp emu`, the oracle of the encrypted one): what it found
//! ([`EmuResult`], checked against the ISA simulator) and the state after a number of cycles.

use std::time::Instant;

use vsp_cahp::cores::{Core, MemSize, Memory};
use vsp_cahp::{Image, SimError, Simulator, StackGuard};

use super::machine::Machine;
use crate::error::{PlatformError, Result};
use crate::processor::packets::{regs_table, yes_no};
use crate::processor::program::PlainRequest;

/// What a plain gate-level run found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EmuResult {
    pub core: String,
    pub memory: String,
    /// Bytes of ROM and of RAM when they have the same size (512 … 8192), else 0: `rom_size` and
    /// `ram_size` say each.
    pub memory_size: usize,
    /// Bytes of ROM.
    pub rom_size: usize,
    /// Bytes of RAM.
    pub ram_size: usize,
    /// Whether the finish flag rose within the cycle limit.
    pub finished: bool,
    /// Cycles until (and including) the one in which the finish flag rose: pass this to `vsp run`.
    pub cycles: u64,
    /// x0..x15 at the end.
    pub regs: Vec<u16>,
    /// The return value of `main` (x8 = a0).
    pub result: u16,
    /// Instructions the ISA simulator retired for the same program.
    pub instructions: u64,
    /// Whether the ISA simulator halted (within four times the cycle limit).
    pub isa_halted: bool,
    /// Whether the gate-level run and the ISA simulator end in the same state (both halted, the
    /// same registers); `None` when there is nothing to compare: the gate-level run stopped at
    /// the cycle limit before the program halted (the two stop at different points), or the ISA
    /// simulator stopped with [`EmuResult::isa_error`].
    pub agrees_with_isa: Option<bool>,
    /// Why the ISA simulator stopped the program: a stack overflow (for programs that start with
    /// crt0, every write to sp is checked against the stack between the static data and the
    /// arguments, and the message says how to get more), or an illegal instruction.
    pub isa_error: Option<String>,
    pub seconds: f64,
}

impl EmuResult {
    /// What the run found, as `vsp emu` prints it: the machine (`size`: the memories it ran on),
    /// the finish flag, the cycles to pass to `vsp run` (or why the run stopped short of the halt:
    /// the ISA simulator's error, or `max_cycles`), a0, the ISA check and x0..x15.
    pub fn report(&self, size: MemSize, max_cycles: u64) -> String {
        let why = match (self.finished, &self.isa_error) {
            (true, _) => format!("(pass --cycles {} to `vsp run`)", self.cycles),
            (false, Some(_)) => "(stopped where the ISA simulator stopped the program)".into(),
            (false, None) => {
                format!("(stopped at --max-cycles {max_cycles}: the program had not halted)")
            }
        };
        let check = match (self.agrees_with_isa, &self.isa_error) {
            (Some(true), _) => "agrees",
            (Some(false), _) => "DISAGREES",
            (None, Some(_)) => "stopped the program (below)",
            (None, None) => "not made (the gate-level run stopped before the halt)",
        };
        let (r, n) = (self.result, self.instructions);
        [
            format!(
                "core:       {} ({} memory, {size})\n",
                self.core, self.memory
            ),
            format!("finished:   {}\n", yes_no(self.finished)),
            format!("cycles:     {}   {why}\n", self.cycles),
            format!("result a0:  {r} (0x{r:04x})\n"),
            format!("ISA check:  {check} ({n} instructions retired)\n"),
            regs_table(&self.regs),
        ]
        .concat()
    }

    /// Refuses a run that did not end in a halt within `max_cycles` (saying whether more cycles
    /// would do) or that the ISA simulator stopped.
    pub fn check(&self, max_cycles: u64) -> Result<()> {
        if let Some(e) = &self.isa_error {
            return Err(PlatformError::Refused(e.clone()));
        }
        if self.finished {
            return Ok(());
        }
        let hint = if self.isa_halted {
            format!(
                "; the ISA simulator halts it after {} instructions: raise --max-cycles",
                self.instructions
            )
        } else {
            String::new()
        };
        Err(PlatformError::Refused(format!(
            "the program did not halt within --max-cycles {max_cycles} cycles{hint}"
        )))
    }
}

/// Runs `image` with `args` on the gate-level netlist of `core` with `memory` of `size` (plain
/// backend) until the finish flag, and cross-checks it with the ISA simulator of the same size.
pub fn emulate(
    image: &Image,
    args: &[String],
    core: Core,
    memory: Memory,
    size: MemSize,
    max_cycles: u64,
) -> Result<EmuResult> {
    let request = PlainRequest::new_sized(image, args, memory, size)?;
    // The ISA simulator first: it is cheap, and where it stops the program (a stack overflow)
    // the gate-level run need not go on to the cycle limit.
    let ram = crate::processor::program::initial_ram(image, args, size)?;
    let mut sim = Simulator::new(&image.rom, &ram, size.mem_config())?;
    sim.set_stack_guard(StackGuard::for_image(image, &ram));
    let (isa_halted, isa_error) = match sim.run(max_cycles.saturating_mul(4)) {
        Ok(stats) => (stats.halted, None),
        Err(e) => (false, Some(isa_error_message(&e, size))),
    };
    // A pipelined core takes more cycles than instructions: twice as many and a few for the
    // pipeline reach the same point.
    let limit = match isa_error {
        Some(_) => max_cycles.min(sim.instret().saturating_mul(2).saturating_add(16)),
        None => max_cycles,
    };
    let mut m = Machine::plain(core, &request)?;
    let t0 = Instant::now();
    let (cycles, finished) = m.run_until_finished(limit)?;
    let seconds = t0.elapsed().as_secs_f64();
    let regs = m.regs()?;
    let agrees_with_isa =
        (finished && isa_error.is_none()).then(|| isa_halted && sim.regs()[..] == regs[..]);
    Ok(EmuResult {
        core: core.name().to_string(),
        memory: crate::processor::program::memory_name(memory).to_string(),
        memory_size: if size.rom_bytes() == size.ram_bytes() {
            size.rom_bytes()
        } else {
            0
        },
        rom_size: size.rom_bytes(),
        ram_size: size.ram_bytes(),
        finished,
        cycles,
        result: regs[8],
        agrees_with_isa,
        isa_error,
        isa_halted,
        regs,
        instructions: sim.instret(),
        seconds,
    })
}

/// The ISA simulator's error as the user reads it: a stack overflow says how to get more stack.
pub fn isa_error_message(e: &SimError, size: MemSize) -> String {
    match e {
        SimError::StackOverflow { .. } => {
            let larger = MemSize::new(size.rom_bytes(), 2 * size.ram_bytes())
                .map(|s| {
                    format!(
                        "--memory-size {} gives the stack {} bytes more, or ",
                        s.option(),
                        s.ram_bytes() - size.ram_bytes()
                    )
                })
                .unwrap_or_default();
            format!(
                "{e}; {larger}make the program use less stack (smaller local arrays, less recursion)"
            )
        }
        e => e.to_string(),
    }
}

/// The plain state after exactly `cycles` cycles: (finish flag, x0..x15, RAM bytes).
pub fn plain_state_after(
    request: &PlainRequest,
    core: Core,
    cycles: u64,
) -> Result<(bool, Vec<u16>, Vec<u8>)> {
    let mut m = Machine::plain(core, request)?;
    m.run(cycles, None, &mut |_| {})?;
    Ok((m.finished()?, m.regs()?, m.ram_bytes()?))
}

#[cfg(test)]
mod tests {
    use super::EmuResult;
    use vsp_cahp::cores::MemSize;

    fn found(finished: bool, agrees: Option<bool>, isa_error: Option<&str>) -> EmuResult {
        EmuResult {
            core: "pearl".into(),
            memory: "cmux".into(),
            memory_size: 512,
            rom_size: 512,
            ram_size: 512,
            finished,
            cycles: 42,
            regs: vec![7; 16],
            result: 7,
            instructions: 30,
            isa_halted: finished,
            agrees_with_isa: agrees,
            isa_error: isa_error.map(str::to_string),
            seconds: 0.5,
        }
    }

    /// `vsp emu`'s text: what it ran on, the cycles to pass to `vsp run` or why it stopped, the
    /// ISA check, then the registers.
    #[test]
    fn the_report_says_what_the_run_found() {
        let size = MemSize::B512;
        let done = found(true, Some(true), None).report(size, 100);
        let mut lines = done.lines();
        assert_eq!(
            lines.next(),
            Some("core:       pearl (cmux memory, 512 B ROM and RAM)")
        );
        assert_eq!(lines.next(), Some("finished:   yes"));
        assert_eq!(
            lines.next(),
            Some("cycles:     42   (pass --cycles 42 to `vsp run`)")
        );
        assert_eq!(lines.next(), Some("result a0:  7 (0x0007)"));
        assert_eq!(
            lines.next(),
            Some("ISA check:  agrees (30 instructions retired)")
        );
        assert!(lines.next().unwrap().starts_with("x0 =7      x1 =7"));
        assert!(lines.next().unwrap().starts_with("x8 =7 "));
        assert_eq!(lines.next(), None);
        let short = found(false, None, None).report(size, 100);
        assert!(short.contains("(stopped at --max-cycles 100: the program had not halted)"));
        assert!(short.contains("not made (the gate-level run stopped before the halt)"));
        let stopped = found(false, None, Some("stack overflow")).report(size, 100);
        assert!(stopped.contains("(stopped where the ISA simulator stopped the program)"));
        assert!(stopped.contains("ISA check:  stopped the program (below)"));
        assert!(found(true, Some(false), None)
            .report(size, 100)
            .contains("DISAGREES"));
    }
}
