//! Programs on the client side: reading an image (or a source file, compiled on the fly), `vsp asm`,
//! `vsp cc`, and `vsp emu` — the plain gate-level run of a core that tells the user the result and how
//! many cycles to ask `vsp run` for.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use vsp_cahp::cores::{self, Core, Memory};
use vsp_cahp::{AsmOptions, Image, MemConfig, Simulator, Source};
use vsp_circuit::{Blueprint, Circuit, CircuitError, Engine, PlainBackend, RunOptions};

/// Largest number of cycles `emu` runs before it gives up waiting for the finish flag.
pub const DEFAULT_MAX_CYCLES: u64 = 100_000;

/// Reads a program: an image file, or an assembly (`.s`) / C (`.c`) source compiled on the fly.
pub fn load_program(path: &Path, runtime: bool) -> Result<Image> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("s" | "S" | "asm") => assemble_file(path, runtime),
        Some("c") => compile_c_file(path, &vsp_cc::CcOptions::default()),
        _ => Image::read(path)
            .with_context(|| format!("cannot load program image {}", path.display())),
    }
}

/// Assembles `path` (optionally linking crt0 and the runtime helpers).
pub fn assemble_file(path: &Path, runtime: bool) -> Result<Image> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = path.display().to_string();
    let opts = AsmOptions {
        runtime,
        ..AsmOptions::default()
    };
    Ok(vsp_cahp::assemble_sources(
        &[Source {
            name: &name,
            text: &text,
        }],
        &opts,
    )?)
}

/// Compiles a C file with clang + vsp-cc and assembles it with the runtime.
pub fn compile_c_file(path: &Path, opts: &vsp_cc::CcOptions) -> Result<Image> {
    Ok(vsp_cc::compile_c_to_image(path, opts)?.1)
}

/// The initial RAM of a run: the image's static data with `argv = ["", args…]` at the top.
pub fn initial_ram(image: &Image, args: &[String]) -> Result<Vec<u8>> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    vsp_cahp::load_args(&image.ram, &args, cores::RAM_BYTES)
        .context("cannot place the arguments in RAM")
}

/// ROM and RAM as the memories' words.
pub fn memory_words(image: &Image, ram: &[u8]) -> Result<(Vec<u64>, Vec<u64>)> {
    let rom = cores::rom_words(&image.rom).with_context(|| {
        format!(
            "program is {} bytes, the ROM holds {}",
            image.rom.len(),
            cores::ROM_BYTES
        )
    })?;
    let ram = cores::ram_words(ram).with_context(|| {
        format!(
            "RAM image is {} bytes, the RAM holds {}",
            ram.len(),
            cores::RAM_BYTES
        )
    })?;
    Ok((rom, ram))
}

/// The flattened circuit "core + ROM + RAM" of `core` with `memory`.
pub fn core_circuit(core: Core, memory: Memory) -> Result<Arc<Circuit>> {
    let bp = Blueprint::from_str_with_resolver(core.blueprint(memory), |p| {
        cores::resolve(p).map(str::to_string).ok_or_else(|| {
            CircuitError::Blueprint(format!("shipped blueprint names unknown file {p}"))
        })
    })
    .with_context(|| format!("cannot load the {core} blueprint"))?;
    Ok(Arc::new(Circuit::compile(&bp).with_context(|| {
        format!("cannot build the {core} circuit")
    })?))
}

/// What a plain gate-level run found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EmuResult {
    pub core: String,
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
    /// Whether the gate-level registers agree with the ISA simulator's.
    pub agrees_with_isa: bool,
    pub seconds: f64,
}

/// A plain engine for `core` (CMUX-memory blueprint, the same circuit `vsp run` evaluates) loaded
/// with `image` and `args`. No reset cycle: the cores power up in their reset state (all flip-flops
/// 0; `tests/power_up.rs`), and `vsp run` skips it too because it would cost a whole encrypted cycle.
pub fn plain_engine(
    image: &Image,
    args: &[String],
    core: Core,
) -> Result<(Engine<PlainBackend>, Vec<u8>)> {
    let ram = initial_ram(image, args)?;
    let (rom_w, ram_w) = memory_words(image, &ram)?;
    let mut e = Engine::new(PlainBackend, core_circuit(core, Memory::Cmux)?);
    e.load_memory_words(cores::ROM, &rom_w)?;
    e.load_memory_words(cores::RAM, &ram_w)?;
    Ok((e, ram))
}

/// x0..x15 as the plain engine outputs them.
pub fn plain_regs(e: &Engine<PlainBackend>) -> Result<Vec<u16>> {
    Ok(cores::REGS
        .iter()
        .map(|r| e.output_value(r, 0).map(|v| v as u16))
        .collect::<Result<Vec<u16>, _>>()?)
}

/// Runs `image` with `args` on the gate-level netlist of `core` (plain backend) until the finish flag,
/// and cross-checks it with the ISA simulator.
pub fn emulate(image: &Image, args: &[String], core: Core, max_cycles: u64) -> Result<EmuResult> {
    let (mut e, ram) = plain_engine(image, args, core)?;
    let opts = RunOptions {
        max_cycles,
        stop_when: Some(cores::FINISH.to_string()),
        ..Default::default()
    };
    let report = e.run(&opts, &mut |_| {})?;
    let regs = plain_regs(&e)?;
    let mut sim = Simulator::new(&image.rom, &ram, MemConfig::default())?;
    let stats = sim.run(max_cycles.saturating_mul(4))?;
    Ok(EmuResult {
        core: core.name().to_string(),
        finished: report.stopped,
        cycles: report.cycles,
        result: regs[8],
        agrees_with_isa: stats.halted == report.stopped && sim.regs()[..] == regs[..],
        regs,
        instructions: sim.instret(),
        seconds: report.seconds,
    })
}

/// The plain state after exactly `cycles` cycles: (finish flag, x0..x15, RAM bytes).
pub fn plain_state_after(
    image: &Image,
    args: &[String],
    core: Core,
    cycles: u64,
) -> Result<(bool, Vec<u16>, Vec<u8>)> {
    let (mut e, _) = plain_engine(image, args, core)?;
    e.run(
        &RunOptions {
            max_cycles: cycles,
            ..Default::default()
        },
        &mut |_| {},
    )?;
    let finished = e.output_value(cores::FINISH, 0)? == 1;
    let ram = cores::ram_bytes(&e.memory_words(cores::RAM, 0)?);
    Ok((finished, plain_regs(&e)?, ram))
}

/// Prints the ISA-level trace of a run: one line per retired instruction.
pub fn print_trace(image: &Image, args: &[String], max_steps: u64) -> Result<()> {
    let ram = initial_ram(image, args)?;
    let mut sim = Simulator::new(&image.rom, &ram, MemConfig::default())?;
    for step in sim.trace(max_steps) {
        let r = step?;
        let mut line = format!("{:04x}: {:<28}", r.pc, r.inst.to_string());
        if let Some(w) = r.reg_write {
            line.push_str(&format!(" {:?} <- 0x{:04x}", w.reg, w.value));
        }
        if let Some(m) = r.mem_write {
            line.push_str(&format!(
                " mem[0x{:03x}] <- 0x{:04x} ({} B)",
                m.addr, m.value, m.width
            ));
        }
        println!("{line}");
    }
    Ok(())
}

/// Parses `--core`.
pub fn parse_core(name: &str) -> Result<Core> {
    match Core::from_name(name) {
        Some(c) => Ok(c),
        None => bail!("unknown core {name:?}: choose pearl or ruby"),
    }
}
