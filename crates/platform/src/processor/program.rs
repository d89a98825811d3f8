//! Programs on the client side: reading an image (or a source file, compiled on the fly), the
//! initial memories of a run (static data plus argv), and the ISA-level trace `vsp emu --trace`
//! prints.
//!
//! Every function that places a program takes the sizes of the machine's ROM and RAM ([`MemSize`]:
//! 512 bytes each, the default, up to 8 KiB each). A program that does not fit the size asked for but
//! would fit a larger one is refused with a message naming the option that selects it
//! (`use --memory-size 1024`, `use --memory-size rom=4096,ram=512`).

use std::path::{Path, PathBuf};

use vsp_cahp::cores::{self, Core, MemSize, Memory};
use vsp_cahp::{AsmOptions, Image, Simulator, Source};

use crate::error::{PlatformError, Result, ResultExt};

/// Largest number of cycles `emu` runs before it gives up waiting for the finish flag.
pub const DEFAULT_MAX_CYCLES: u64 = 100_000;

/// Reads a program for a machine with `size` ROM and RAM: an image file, or an assembly (`.s`) /
/// C (`.c`) source compiled on the fly (checked against the size; an image is checked when its
/// memories are built, by [`PlainRequest::new_sized`]).
pub fn load_program(path: &Path, runtime: bool, size: MemSize) -> Result<Image> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("s" | "S" | "asm") => assemble_files(&[path], runtime, size),
        Some("c") => Ok(compile_c(&[path.to_path_buf()], &vsp_cc::CcOptions::default(), size)?.1),
        _ => Image::read(path).context(|| format!("cannot load program image {}", path.display())),
    }
}

/// Reads a program like [`load_program`] and chooses the machine to run it on: the size an image
/// records (`vsp asm`/`vsp cc --memory-size` write it), else `requested`, else 512 bytes. An image
/// built for one size and asked to run on another (an explicit `--memory-size`) is refused with a
/// message saying both.
pub fn load_program_sized(
    path: &Path,
    runtime: bool,
    requested: Option<MemSize>,
) -> Result<(Image, MemSize)> {
    if matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("s" | "S" | "asm" | "c")
    ) {
        let size = requested.unwrap_or_default();
        return Ok((load_program(path, runtime, size)?, size));
    }
    let image = load_program(path, runtime, requested.unwrap_or_default())?;
    let size = image_size(&image, requested, path)?;
    Ok((image, size))
}

/// The machine for `image` (read from `path`): what it records, checked against `requested`.
pub fn image_size(image: &Image, requested: Option<MemSize>, path: &Path) -> Result<MemSize> {
    let Some(m) = image.memory else {
        return Ok(requested.unwrap_or_default());
    };
    let recorded = MemSize::from_mem_config(m).ok_or_else(|| {
        PlatformError::usage(format!(
            "{} was built for a {}-byte ROM and a {}-byte RAM, which no core has \
             (rebuild it with a --memory-size of 512 to 8192 bytes each)",
            path.display(),
            m.rom_size,
            m.ram_size
        ))
    })?;
    match requested {
        Some(r) if r != recorded => Err(PlatformError::usage(format!(
            "{} was built for {} (--memory-size {}), not for --memory-size {}: \
             leave the option out, or rebuild the program with --memory-size {}",
            path.display(),
            recorded,
            recorded.option(),
            r.option(),
            r.option()
        ))),
        _ => Ok(recorded),
    }
}

/// Assembles the files at `paths`, linked in order (optionally with crt0 and the runtime helpers),
/// for `size` ROM and RAM.
pub fn assemble_files<P: AsRef<Path>>(paths: &[P], runtime: bool, size: MemSize) -> Result<Image> {
    let mut texts = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let text =
            vsp_codec::read_text_bounded(p, vsp_codec::limits::SOURCE, "an assembly source")?;
        texts.push((p.display().to_string(), text));
    }
    let sources: Vec<Source<'_>> = texts
        .iter()
        .map(|(name, text)| Source { name, text })
        .collect();
    assemble(&sources, runtime, size)
}

/// vsp-cc's options from a command's: clang's `-O<opt>`, `-D`/`-U` macros and `-I` directories.
pub fn cc_options(
    opt: &str,
    define: &[String],
    undefine: &[String],
    include: &[PathBuf],
) -> vsp_cc::CcOptions {
    let mut clang_args: Vec<String> = define.iter().map(|d| format!("-D{d}")).collect();
    clang_args.extend(undefine.iter().map(|u| format!("-U{u}")));
    for dir in include {
        clang_args.push("-I".to_string());
        clang_args.push(dir.display().to_string());
    }
    vsp_cc::CcOptions {
        opt: format!("-O{opt}"),
        clang_args,
        ..Default::default()
    }
}

/// Assembles and links `sources` (optionally with crt0 and the runtime helpers) into an image that
/// fits `size` ROM and RAM.
pub fn assemble(sources: &[Source<'_>], runtime: bool, size: MemSize) -> Result<Image> {
    fitting(size, |s| {
        let opts = AsmOptions {
            runtime,
            rom_size: s.rom_bytes(),
            ram_size: s.ram_bytes(),
            ..AsmOptions::default()
        };
        Ok(vsp_cahp::assemble_sources(sources, &opts)?)
    })
}

/// Compiles C files (one program) with clang + vsp-cc and assembles them with the runtime into an
/// image that fits `size` ROM and RAM; returns the assembly text too.
pub fn compile_c(
    paths: &[PathBuf],
    opts: &vsp_cc::CcOptions,
    size: MemSize,
) -> Result<(String, Image)> {
    let asm = compile_c_asm(paths, opts)?;
    let image = assemble_c(&asm, paths, opts, size)?;
    Ok((asm, image))
}

/// The first half of [`compile_c`]: the program's assembly text, with the runtime functions
/// written in C that it needs (what `vsp cc --emit-asm` writes, whether or not the program fits).
pub fn compile_c_asm(paths: &[PathBuf], opts: &vsp_cc::CcOptions) -> Result<String> {
    if paths.is_empty() {
        return Err(vsp_cc::CcError::Program("no C files to compile".into()).into());
    }
    // Checked here (vsp-cc reads them itself): a FIFO would block it, a device would feed it forever.
    for p in paths {
        vsp_codec::check_input(p, vsp_codec::limits::SOURCE, "a C source")?;
    }
    Ok(vsp_cc::compile_c_files(paths, opts)?)
}

/// The second half of [`compile_c`]: assembles `asm` (compiled from `paths` with `opts`) with the
/// runtime into an image that fits `size` ROM and RAM. A program too large for the ROM is told to
/// try `-Oz` only when it was built otherwise.
pub fn assemble_c(
    asm: &str,
    paths: &[PathBuf],
    opts: &vsp_cc::CcOptions,
    size: MemSize,
) -> Result<Image> {
    let name = paths
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    fitting(size, |s| {
        vsp_cc::assemble_image(asm, &name, s.mem_config()).map_err(|e| e.with_opt_hint(opts).into())
    })
}

/// `place(size)`, or, when that fails and `place` succeeds with a larger size, an error saying that
/// the program does not fit `size` and which `--memory-size` holds it (the first failure is its cause).
fn fitting<T>(size: MemSize, place: impl Fn(MemSize) -> Result<T>) -> Result<T> {
    let err = match place(size) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    // The cheapest larger machine (smallest RAM, then smallest ROM) that holds the program.
    match MemSize::ALL
        .into_iter()
        .filter(|&s| s != size && s.covers(size))
        .find(|&s| place(s).is_ok())
    {
        Some(larger) => {
            let machine = if size.rom_bytes() == size.ram_bytes() {
                format!("{}-byte ROM and RAM", size.rom_bytes())
            } else {
                format!(
                    "{}-byte ROM and {}-byte RAM",
                    size.rom_bytes(),
                    size.ram_bytes()
                )
            };
            Err(err.context(format!(
                "the program does not fit in the {machine}; use --memory-size {}",
                larger.option()
            )))
        }
        None => Err(err),
    }
}

/// Parses `--memory-size`: bytes of ROM and of RAM, `512` (the default) … `8192`, or the two sizes
/// apart, `rom=4096,ram=512` (either may be left out: 512).
pub fn parse_memory_size(text: &str) -> Result<MemSize> {
    let bad = || {
        PlatformError::usage(format!(
            "unknown memory size {:?}: give the bytes of ROM and of RAM (512, 1024, 2048, 4096 or \
             8192), or each apart as rom=BYTES,ram=BYTES",
            vsp_codec::text::cut(text, 60)
        ))
    };
    let text = text.trim();
    // Digits only (`usize::from_str` would take a sign).
    let number = |v: &str| {
        let v = v.trim();
        (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .then(|| v.parse::<usize>().ok())
            .flatten()
    };
    if let Some(n) = number(text) {
        return MemSize::from_bytes(n).ok_or_else(bad);
    }
    let (mut rom, mut ram) = (None, None);
    for part in text.split(',') {
        let (key, value) = part.split_once('=').ok_or_else(bad)?;
        let slot = match key.trim() {
            "rom" => &mut rom,
            "ram" => &mut ram,
            _ => return Err(bad()),
        };
        if slot.is_some() {
            return Err(bad());
        }
        *slot = Some(number(value).ok_or_else(bad)?);
    }
    MemSize::new(rom.unwrap_or(512), ram.unwrap_or(512)).ok_or_else(bad)
}

/// The initial RAM of a run on a machine with `size` RAM: the image's static data with
/// `argv = ["", args…]` at the top.
pub fn initial_ram(image: &Image, args: &[String], size: MemSize) -> Result<Vec<u8>> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    vsp_cahp::load_args(&image.ram, &args, size.ram_bytes())
        .context(|| "cannot place the arguments in RAM".into())
}

/// A program and its arguments as the words of the core's memories: what a run starts from, and
/// what the client encrypts into a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainRequest {
    /// ROM words (32 bits each, [`MemSize::rom_addr_width`] address bits).
    pub rom: Vec<u64>,
    /// RAM words (16 bits each, [`MemSize::ram_addr_width`] address bits).
    pub ram: Vec<u64>,
    /// How the memories are built: CMUX memory, or MUX memory (gates and flip-flops).
    pub memory: Memory,
    /// The size of ROM and RAM: the machine a request must run on.
    pub size: MemSize,
}

impl PlainRequest {
    /// The 512-byte memories of `image` run with `args`.
    pub fn new(image: &Image, args: &[String], memory: Memory) -> Result<PlainRequest> {
        PlainRequest::new_sized(image, args, memory, MemSize::B512)
    }

    /// The memories (of `size`) of `image` run with `args`.
    pub fn new_sized(
        image: &Image,
        args: &[String],
        memory: Memory,
        size: MemSize,
    ) -> Result<PlainRequest> {
        let (rom, ram) = fitting(size, |s| memory_words(image, args, s))?;
        Ok(PlainRequest {
            rom,
            ram,
            memory,
            size,
        })
    }
}

/// ROM and RAM words of `image` run with `args` on memories of `size`.
fn memory_words(image: &Image, args: &[String], size: MemSize) -> Result<(Vec<u64>, Vec<u64>)> {
    let rom = cores::rom_words_sized(&image.rom, size).ok_or_else(|| {
        PlatformError::usage(format!(
            "the program's code is {} bytes, the ROM holds {}",
            image.rom.len(),
            size.rom_bytes()
        ))
    })?;
    let ram = initial_ram(image, args, size)?;
    let ram = cores::ram_words_sized(&ram, size).ok_or_else(|| {
        PlatformError::usage(format!(
            "RAM image is {} bytes, the RAM holds {}",
            ram.len(),
            size.ram_bytes()
        ))
    })?;
    Ok((rom, ram))
}

/// One retired instruction of the ISA-level trace, as `vsp emu --trace` prints it, and a last
/// `stopped: …` line when the simulator stops the program (a stack overflow, an illegal instruction).
pub fn trace_lines(
    image: &Image,
    args: &[String],
    size: MemSize,
    max_steps: u64,
) -> Result<Vec<String>> {
    // The fit check first, for its message.
    fitting(size, |s| memory_words(image, args, s))?;
    let ram = initial_ram(image, args, size)?;
    let mut sim = Simulator::new(&image.rom, &ram, size.mem_config())?;
    sim.set_stack_guard(vsp_cahp::StackGuard::for_image(image, &ram));
    let mut lines = Vec::new();
    for step in sim.trace(max_steps) {
        // The instructions up to an error are the trace's point; the error ends it.
        let r = match step {
            Ok(r) => r,
            Err(e) => {
                lines.push(format!(
                    "stopped: {}",
                    crate::processor::emu::isa_error_message(&e, size)
                ));
                break;
            }
        };
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
