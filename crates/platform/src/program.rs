//! Programs on the client side: reading an image (or a source file, compiled on the fly), the
//! initial memories of a run (static data plus argv), and the ISA-level trace `vsp emu --trace`
//! prints.

use std::path::Path;

use vsp_cahp::cores::{self, Core, Memory};
use vsp_cahp::{AsmOptions, Image, MemConfig, Simulator, Source};

use crate::error::{PlatformError, Result, ResultExt};

/// Largest number of cycles `emu` runs before it gives up waiting for the finish flag.
pub const DEFAULT_MAX_CYCLES: u64 = 100_000;

/// Reads a program: an image file, or an assembly (`.s`) / C (`.c`) source compiled on the fly.
pub fn load_program(path: &Path, runtime: bool) -> Result<Image> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("s" | "S" | "asm") => assemble_file(path, runtime),
        Some("c") => compile_c_file(path, &vsp_cc::CcOptions::default()),
        _ => Image::read(path).context(|| format!("cannot load program image {}", path.display())),
    }
}

/// Assembles `path` (optionally linking crt0 and the runtime helpers).
pub fn assemble_file(path: &Path, runtime: bool) -> Result<Image> {
    let text = std::fs::read_to_string(path).map_err(|source| PlatformError::Read {
        path: path.into(),
        source,
    })?;
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
        .context(|| "cannot place the arguments in RAM".into())
}

/// A program and its arguments as the words of the core's memories: what a run starts from, and
/// what the client encrypts into a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainRequest {
    /// ROM words (32 bits each, [`cores::ROM_ADDR_WIDTH`] address bits).
    pub rom: Vec<u64>,
    /// RAM words (16 bits each, [`cores::RAM_ADDR_WIDTH`] address bits).
    pub ram: Vec<u64>,
    /// How the memories are built: CMUX memory, or MUX memory (gates and flip-flops).
    pub memory: Memory,
}

impl PlainRequest {
    /// The memories of `image` run with `args`.
    pub fn new(image: &Image, args: &[String], memory: Memory) -> Result<PlainRequest> {
        let ram = initial_ram(image, args)?;
        let rom_words = cores::rom_words(&image.rom).ok_or_else(|| {
            PlatformError::usage(format!(
                "program is {} bytes, the ROM holds {}",
                image.rom.len(),
                cores::ROM_BYTES
            ))
        })?;
        let ram_words = cores::ram_words(&ram).ok_or_else(|| {
            PlatformError::usage(format!(
                "RAM image is {} bytes, the RAM holds {}",
                ram.len(),
                cores::RAM_BYTES
            ))
        })?;
        Ok(PlainRequest {
            rom: rom_words,
            ram: ram_words,
            memory,
        })
    }
}

/// One retired instruction of the ISA-level trace, as `vsp emu --trace` prints it.
pub fn trace_lines(image: &Image, args: &[String], max_steps: u64) -> Result<Vec<String>> {
    let ram = initial_ram(image, args)?;
    let mut sim = Simulator::new(&image.rom, &ram, MemConfig::default())?;
    let mut lines = Vec::new();
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
        lines.push(line);
    }
    Ok(lines)
}

/// Parses `--core`: `pearl` or `ruby`.
pub fn parse_core(name: &str) -> Result<Core> {
    Core::from_name(name)
        .ok_or_else(|| PlatformError::usage(format!("unknown core {name:?}: choose pearl or ruby")))
}

/// Parses `--memory`: `cmux` (CMUX ROM/RAM, the default) or `mux` (Iyokan's MUX memory: flip-flops
/// and MUX trees, for the paper's CMUX-vs-MUX comparison).
pub fn parse_memory(name: &str) -> Result<Memory> {
    match name.to_ascii_lowercase().as_str() {
        "cmux" => Ok(Memory::Cmux),
        "mux" => Ok(Memory::Mux),
        _ => Err(PlatformError::usage(format!(
            "unknown memory {name:?}: choose cmux or mux"
        ))),
    }
}

/// `cmux` or `mux`.
pub fn memory_name(memory: Memory) -> &'static str {
    match memory {
        Memory::Cmux => "cmux",
        Memory::Mux => "mux",
    }
}
