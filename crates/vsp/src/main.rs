//! `vsp`: the Virtual Secure Platform command line — kvsp rebuilt (VSP paper, seed 000).
//!
//! Alice (the client) holds the secret key: `genkey`, `genbkey`, `asm`/`cc`, `enc`, `dec`, `emu`.
//! Bob (the server) holds only the evaluation key: `run`, `resume`. `demo` does all of it on one
//! machine. The logic is vsp-platform's; this is argument parsing and printing.
//!
//! `unsafe` is denied here; the one exception is the `SIGPIPE` reset at the top of `main`.

#![deny(unsafe_code)]

mod circuit_cmd;
mod demo;
mod progress;
mod serve_cmd;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::{Parser, Subcommand};

use vsp_platform::design::load_client_key;
use vsp_platform::files::{write_atomic, Access, OutputLock};
use vsp_platform::keys;
use vsp_platform::processor::program::{self, PlainRequest};
use vsp_platform::server::{self, claim, mpi, SnapshotPlan};
use vsp_platform::{Envelope, Kind, MemSize, Snapshots};

use crate::progress::{fmt_bytes, fmt_secs, Bar, Shown};

#[derive(Parser)]
#[command(
    name = "vsp",
    version,
    about = "Virtual Secure Platform: run programs on an encrypted CAHPv3 processor"
)]
struct Cli {
    /// Print only results (no progress bars, no sizes).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a secret key (Alice).
    Genkey(GenkeyArgs),
    /// Derive the evaluation key (gate + circuit bootstrapping keys, compressed) from a secret key.
    Genbkey {
        /// Secret key (from `vsp genkey`).
        #[arg(short, long)]
        key: PathBuf,
        /// Write the evaluation key here (for the server: `vsp run`, `vsp circuit exec`).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Encrypt a program image and its arguments into a request for the server (the request
    /// records the memory kind and size; `vsp run` builds the core for them).
    Enc(EncArgs),
    /// Run an encrypted request for a number of cycles (Bob: needs only the evaluation key), on
    /// the core with the request's memory size (512 B to 8 KiB of ROM and of RAM).
    Run {
        /// The encrypted request (from `vsp enc`).
        #[arg(short, long)]
        input: PathBuf,
        /// pearl (single-cycle: fewest bootstraps per instruction, fastest on a few cores) or ruby
        /// (5-stage pipeline: shorter critical path per cycle, pays off with many cores).
        #[arg(long, default_value = "pearl")]
        core: String,
        /// Memory the request was encrypted for (cmux or mux); checked against the request.
        #[arg(long)]
        memory: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Continue a run from its snapshot (writing a new snapshot, by default OUTPUT.snapshot).
    Resume {
        /// The snapshot to continue from (its own argument id: `--snapshot` names the new one).
        #[arg(id = "from", value_name = "SNAPSHOT")]
        snapshot: PathBuf,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Decrypt a result (Alice): finish flag, x0–x15, the return value, optionally the RAM.
    Dec(DecArgs),
    /// The engine on any circuit described by a blueprint.
    #[command(subcommand)]
    Circuit(circuit_cmd::CircuitCommand),
    /// Run a job server (Bob as a service: HTTP API, jobs in SQLite, resume after a crash), or
    /// manage its client tokens (`vsp serve token add NAME --data DIR`). docs/server.md.
    Serve(serve_cmd::Serve),
    /// Talk to a `vsp serve` server: key-upload, submit, status, watch, fetch, cancel, delete.
    Remote(serve_cmd::Remote),
    /// The whole flow on this machine: keys, encrypt fib(5), run it encrypted, decrypt, check with emu.
    Demo {
        /// pearl (single-cycle: fewest bootstraps per instruction, fastest on a few cores) or ruby
        /// (5-stage pipeline: shorter critical path per cycle, pays off with many cores).
        #[arg(long, default_value = "pearl")]
        core: String,
        /// Benchmark program: fib, hamming or bf.
        #[arg(long, default_value = "fib")]
        program: String,
        /// Worker threads (default: all cores).
        #[arg(short, long, value_parser = parse_threads)]
        threads: Option<usize>,
        /// Keep the key, request and result files in this directory (default: a temporary one).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Stop after this many cycles even if the program needs more (a shorter demo; the result
        /// is then compared with the plain run stopped at the same cycle).
        #[arg(long)]
        max_cycles: Option<u64>,
        #[command(flatten)]
        memory_size: MemorySize,
    },
    /// Assemble a CAHPv3 program into a program image.
    Asm(AsmArgs),
    /// Compile a C program (clang + vsp-cc) into a program image.
    Cc(CcArgs),
    /// Run a program in plain on the gate-level core until it halts (the oracle for `vsp run`).
    Emu(EmuArgs),
}

#[derive(clap::Args)]
struct GenkeyArgs {
    /// Write the secret key here (created 0600).
    #[arg(short, long)]
    output: PathBuf,
    /// Parameter set: default (≥128-bit), vsp2021 or cggi16 (both need --insecure).
    #[arg(long, default_value = "default")]
    params: String,
    /// Allow a parameter set below 128-bit security (paper reproduction only).
    #[arg(long)]
    insecure: bool,
}

#[derive(clap::Args)]
struct EncArgs {
    /// Secret key (from `vsp genkey`) to encrypt with.
    #[arg(short, long)]
    key: PathBuf,
    /// Program image (or a .s / .c source, compiled on the fly).
    program: PathBuf,
    /// Arguments passed to main (argv[1..]); negative numbers need no `--`.
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
    /// Write the encrypted request here (for `vsp run`).
    #[arg(short, long)]
    output: PathBuf,
    /// cmux (CMUX ROM/RAM: cheap per cycle) or mux (Iyokan's MUX memory: ROM/RAM as flip-flops
    /// and MUX trees, for the paper's CMUX-vs-MUX comparison). The request records it.
    #[arg(long, default_value = "cmux")]
    memory: String,
    #[command(flatten)]
    memory_size: MachineSize,
}

#[derive(clap::Args)]
struct DecArgs {
    /// Secret key the request was encrypted with.
    #[arg(short, long)]
    key: PathBuf,
    /// The encrypted result (from `vsp run` or `vsp resume`).
    #[arg(short, long)]
    input: PathBuf,
    /// Also print a hex dump of the RAM.
    #[arg(long)]
    ram: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct AsmArgs {
    /// Assembly source files (linked in order).
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Output image.
    #[arg(short, long)]
    output: PathBuf,
    /// Link crt0 (calls `main`, halts) and the multiply/divide helpers.
    #[arg(long)]
    runtime: bool,
    /// Print a listing of the assembled ROM.
    #[arg(long)]
    listing: bool,
    #[command(flatten)]
    memory_size: MemorySize,
}

#[derive(clap::Args)]
struct CcArgs {
    /// C source files of the program (each file is its own translation unit).
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Output program image.
    #[arg(short, long)]
    output: PathBuf,
    /// Optimisation level passed to clang (e.g. -Oz, -O2).
    #[arg(short = 'O', default_value = "z")]
    opt: String,
    /// Define a preprocessor macro (clang -D NAME[=VALUE]); may be repeated.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// Undefine a preprocessor macro (clang -U NAME); may be repeated.
    #[arg(short = 'U', value_name = "NAME")]
    undefine: Vec<String>,
    /// Add a directory to the include search path (clang -I DIR); may be repeated.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Write the generated assembly here as well.
    #[arg(long)]
    emit_asm: Option<PathBuf>,
    #[command(flatten)]
    memory_size: MemorySize,
}

#[derive(clap::Args)]
struct EmuArgs {
    /// Program image (or a .s / .c source, compiled on the fly).
    program: PathBuf,
    /// Arguments passed to main (argv[1..]); negative numbers need no `--`.
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
    /// pearl (single-cycle: fewest bootstraps per instruction, fastest on a few cores) or ruby
    /// (5-stage pipeline: shorter critical path per cycle, pays off with many cores).
    #[arg(long, default_value = "pearl")]
    core: String,
    /// cmux or mux: the memory the gate-level run uses (both compute the same).
    #[arg(long, default_value = "cmux")]
    memory: String,
    #[command(flatten)]
    memory_size: MachineSize,
    /// Print every retired instruction (ISA simulator trace with disassembly).
    #[arg(long)]
    trace: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Give up after this many cycles.
    #[arg(long, default_value_t = program::DEFAULT_MAX_CYCLES)]
    max_cycles: u64,
}

/// `--memory-size`, shared by the commands that place a program.
#[derive(clap::Args, Clone, Copy)]
struct MemorySize {
    /// Bytes of ROM and of RAM: 512 (the default), 1024, 2048, 4096 or 8192, or each apart as
    /// rom=BYTES,ram=BYTES (e.g. rom=4096,ram=512: a larger ROM costs little per encrypted cycle,
    /// a larger RAM more).
    #[arg(long = "memory-size", default_value = "512", value_name = "BYTES", value_parser = parse_memory_size)]
    size: MemSize,
}

/// `--memory-size` of the commands that run a program: an image records the size it was built
/// for, so the option is needed only for sources and for images from before it was recorded.
#[derive(clap::Args, Clone, Copy)]
struct MachineSize {
    /// Bytes of ROM and of RAM (512 … 8192), or each apart as rom=BYTES,ram=BYTES. Default: the
    /// size the image was built for (`vsp asm`/`vsp cc --memory-size`), else 512; an image built
    /// for another size is refused.
    #[arg(long = "memory-size", value_name = "BYTES", value_parser = parse_memory_size)]
    size: Option<MemSize>,
}

/// `--memory-size`: 512 … 8192, or rom=BYTES,ram=BYTES.
fn parse_memory_size(s: &str) -> std::result::Result<MemSize, String> {
    program::parse_memory_size(s).map_err(|e| e.to_string())
}

/// Most worker threads `--threads` accepts.
const MAX_THREADS: usize = 1024;

/// `--threads`: 1..=MAX_THREADS (a huge count used to panic spawning threads).
pub(crate) fn parse_threads(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a number of threads from 1 to {MAX_THREADS}"
        )),
    }
}

fn main() {
    // Printing into a closed pipe (`vsp dec … | head -1`) ends the process quietly, as it does for
    // other Unix tools, instead of a panic in `println!`.
    // SAFETY: called first thing, before any other thread exists; SIG_DFL is a valid disposition.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // Under `mpirun` (with the `mpi` feature) this process is one rank of a job (docs/mpi.md).
    let session = mpi::start().map_err(anyhow::Error::from);
    if let Err(e) = session.and_then(|s| run(cli).map(|()| s)) {
        let msg = one_line(&e);
        mpi::abort(&msg);
        eprintln!("error: {msg}");
        std::process::exit(1);
    }
}

/// Longest error line printed, in characters (a message quoting a huge input is cut).
const MAX_ERROR_CHARS: usize = 1000;

/// The error and its causes on one line: each cause once (a message that already quotes its cause,
/// as `cannot read F: No such file or directory (os error 2)` does, is not followed by it again),
/// control characters escaped, cut to [`MAX_ERROR_CHARS`].
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if s.is_empty() || msg.contains(&s) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&s);
    }
    vsp_platform::files::text::cut(&msg, MAX_ERROR_CHARS)
}

fn run(cli: Cli) -> Result<()> {
    use circuit_cmd::CircuitCommand as C;
    let distributed = matches!(
        cli.command,
        Command::Run { .. }
            | Command::Resume { .. }
            | Command::Circuit(C::Run { .. } | C::Exec { .. } | C::Resume { .. })
    );
    // Rank 0 reports progress; the others work quietly.
    let quiet = cli.quiet || !mpi::check_command(distributed)?;
    let mut shown = Shown::new(quiet);
    match cli.command {
        Command::Genkey(a) => a.run(&mut shown)?,
        Command::Genbkey { key, output } => {
            let _lock = claim(&output, &[("secret key", &key)])?;
            let key = load_client_key(&key, &mut shown)?;
            let t = Instant::now();
            let bar = Bar::spinner(
                quiet,
                "generating the evaluation key (gate + circuit bootstrapping)",
            );
            let size = key.save_eval_key(&output)?;
            bar.finish();
            if !quiet {
                eprintln!(
                    "wrote evaluation key {} ({} compressed) in {}",
                    output.display(),
                    fmt_bytes(size),
                    fmt_secs(t.elapsed().as_secs_f64())
                );
            }
        }
        Command::Enc(a) => a.run(&mut shown)?,
        Command::Run {
            input,
            core,
            memory,
            server: s,
        } => {
            let inputs = [
                ("evaluation key", s.eval_key.as_path()),
                ("request", &input),
            ];
            let (snapshots, _locks) = s.claim(&inputs, None)?;
            let core = program::parse_core(&core)?;
            let memory = memory.as_deref().map(program::parse_memory).transpose()?;
            let mut machine =
                server::open_request(&s.eval_key, &input, core, memory, s.threads, &mut shown)?;
            advance(&mut machine, &s, snapshots.as_ref(), &mut shown)?;
        }
        Command::Resume {
            snapshot,
            server: s,
        } => {
            let inputs = [
                ("snapshot", snapshot.as_path()),
                ("evaluation key", &s.eval_key),
            ];
            let (snapshots, _locks) = s.claim(&inputs, None)?;
            let mut machine = server::open_snapshot(&s.eval_key, &snapshot, s.threads, &mut shown)?;
            if !quiet {
                eprintln!(
                    "resuming {} ({} memory, {}) at cycle {}",
                    machine.core(),
                    program::memory_name(machine.memory()),
                    machine.size(),
                    machine.cycle()
                );
            }
            advance(&mut machine, &s, snapshots.as_ref(), &mut shown)?;
        }
        Command::Dec(a) => a.run(&mut shown)?,
        Command::Circuit(c) => circuit_cmd::run(c, quiet)?,
        Command::Serve(s) => serve_cmd::serve(s, quiet)?,
        Command::Remote(r) => serve_cmd::remote(r, quiet)?,
        Command::Demo {
            core,
            program,
            threads,
            dir,
            max_cycles,
            memory_size: MemorySize { size },
        } => demo::run(&demo::DemoOptions {
            core,
            program,
            threads,
            dir,
            max_cycles,
            size,
            quiet,
        })?,
        Command::Asm(a) => a.run(&mut shown)?,
        Command::Cc(a) => a.run(&mut shown)?,
        Command::Emu(a) => a.run(&mut shown)?,
    }
    Ok(())
}

impl GenkeyArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let GenkeyArgs {
            output,
            params,
            insecure,
        } = self;
        let quiet = shown.quiet();
        let _lock = claim(&output, &[])?;
        let p = keys::params_by_name(&params, insecure)?;
        if keys::is_insecure(&params) {
            eprintln!(
                "WARNING: parameter set {params:?} is below 128-bit security; never use it for real data"
            );
        }
        let key = keys::generate_secret(&params, &p)?;
        let size = key.save(&output)?;
        if !quiet {
            eprintln!(
                "wrote secret key {} ({}, parameters {params}, key id {})",
                output.display(),
                fmt_bytes(size),
                key.key_id
            );
        }
        Ok(())
    }
}

impl EncArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let EncArgs {
            key,
            program,
            args,
            output,
            memory,
            memory_size: MachineSize { size: requested },
        } = self;
        let quiet = shown.quiet();
        let _lock = claim(&output, &[("secret key", &key), ("program", &program)])?;
        let memory = program::parse_memory(&memory)?;
        let key = load_client_key(&key, shown)?;
        let (image, memory_size) = program::load_program_sized(&program, false, requested)?;
        let plain = PlainRequest::new_sized(&image, &args, memory, memory_size)?;
        let bar = Bar::spinner(quiet, "encrypting ROM and RAM");
        let request = plain.encrypt(&key)?;
        let size = request.to_envelope(key.sk.params()).write(&output)?;
        bar.finish();
        if !quiet {
            eprintln!(
                "wrote request {} ({}, {} memory, {})",
                output.display(),
                fmt_bytes(size),
                program::memory_name(memory),
                memory_size
            );
        }
        Ok(())
    }
}

impl DecArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let DecArgs {
            key,
            input,
            ram,
            json,
        } = self;
        let key = load_client_key(&key, shown)?;
        let env = Envelope::read(&input, Kind::Result)?;
        let d = vsp_platform::decrypt_result(&key, &env)?;
        if json {
            println!("{}", serde_json::to_string_pretty(&d)?);
        } else {
            println!("cycles:     {}", d.cycles);
            println!("finished:   {}", if d.finished { "yes" } else { "no" });
            println!("result a0:  {} (0x{:04x})", d.result, d.result);
            print!("{}", regs_table(&d.regs));
            if ram {
                print!("{}", hexdump(&d.ram));
            }
        }
        Ok(())
    }
}

impl AsmArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let AsmArgs {
            sources,
            output,
            runtime,
            listing,
            memory_size: MemorySize { size: memory_size },
        } = self;
        let quiet = shown.quiet();
        let named: Vec<(&str, &std::path::Path)> =
            sources.iter().map(|p| ("source", p.as_path())).collect();
        let _lock = claim(&output, &named)?;
        let image = program::assemble_files(&sources, runtime, memory_size)?;
        write_image(&image, &output)?;
        if listing {
            print!("{}", vsp_cahp::listing(&image));
        }
        if !quiet {
            eprintln!(
                "wrote {} (ROM {} B, RAM data {} B, {} symbols)",
                output.display(),
                image.rom.len(),
                image.ram.len(),
                image.symbols.len()
            );
        }
        Ok(())
    }
}

impl CcArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let CcArgs {
            sources,
            output,
            opt,
            define,
            undefine,
            include,
            emit_asm,
            memory_size: MemorySize { size: memory_size },
        } = self;
        let quiet = shown.quiet();
        let mut inputs: Vec<(&str, &Path)> =
            sources.iter().map(|s| ("source", s.as_path())).collect();
        let _lock = claim(&output, &inputs)?;
        inputs.push(("output image", &output));
        let _asm_lock = emit_asm.as_deref().map(|p| claim(p, &inputs)).transpose()?;
        let opts = program::cc_options(&opt, &define, &undefine, &include);
        let asm = program::compile_c_asm(&sources, &opts)?;
        // Written before the size check, so that a program that does not fit can be looked at.
        if let Some(p) = emit_asm {
            write_atomic(&p, asm.as_bytes(), Access::Public)?;
        }
        let image = program::assemble_c(&asm, &sources, &opts, memory_size)?;
        write_image(&image, &output)?;
        if !quiet {
            eprintln!(
                "wrote {} (ROM {} B, RAM data {} B)",
                output.display(),
                image.rom.len(),
                image.ram.len()
            );
        }
        Ok(())
    }
}

impl EmuArgs {
    fn run(self, _shown: &mut Shown) -> Result<()> {
        let EmuArgs {
            program,
            args,
            core,
            memory,
            memory_size: MachineSize { size: requested },
            trace,
            json,
            max_cycles,
        } = self;
        let core = program::parse_core(&core)?;
        let memory = program::parse_memory(&memory)?;
        let (image, memory_size) = program::load_program_sized(&program, false, requested)?;
        if trace {
            for line in program::trace_lines(&image, &args, memory_size, max_cycles)? {
                println!("{line}");
            }
        }
        let r = vsp_platform::emulate(&image, &args, core, memory, memory_size, max_cycles)?;
        if json {
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            println!(
                "core:       {} ({} memory, {})",
                r.core, r.memory, memory_size
            );
            println!("finished:   {}", if r.finished { "yes" } else { "no" });
            if r.finished {
                println!(
                    "cycles:     {}   (pass --cycles {} to `vsp run`)",
                    r.cycles, r.cycles
                );
            } else if r.isa_error.is_some() {
                println!(
                    "cycles:     {}   (stopped where the ISA simulator stopped the program)",
                    r.cycles
                );
            } else {
                println!(
                    "cycles:     {}   (stopped at --max-cycles {max_cycles}: the program had not halted)",
                    r.cycles
                );
            }
            println!("result a0:  {} (0x{:04x})", r.result, r.result);
            let check = match r.agrees_with_isa {
                Some(true) => "agrees".to_string(),
                Some(false) => "DISAGREES".to_string(),
                None if r.isa_error.is_some() => "stopped the program (below)".to_string(),
                None => "not made (the gate-level run stopped before the halt)".to_string(),
            };
            println!(
                "ISA check:  {check} ({} instructions retired)",
                r.instructions
            );
            print!("{}", regs_table(&r.regs));
        }
        if let Some(e) = &r.isa_error {
            anyhow::bail!("{e}");
        }
        if !r.finished {
            let hint = if r.isa_halted {
                format!(
                    "; the ISA simulator halts it after {} instructions: raise --max-cycles",
                    r.instructions
                )
            } else {
                String::new()
            };
            anyhow::bail!("the program did not halt within --max-cycles {max_cycles} cycles{hint}");
        }
        Ok(())
    }
}

/// Writes a program image with the one atomic writer.
fn write_image(image: &vsp_cahp::Image, path: &std::path::Path) -> Result<()> {
    let bytes = image.to_bytes()?;
    Ok(write_atomic(path, &bytes, Access::Public)?)
}

/// The arguments of every server run (`run`, `resume`, `circuit exec`, `circuit resume`).
#[derive(clap::Args)]
pub(crate) struct ServerArgs {
    /// Evaluation key (from `vsp genbkey`) of the key the request was encrypted under.
    #[arg(short, long)]
    eval_key: PathBuf,
    /// Write the encrypted result here (`vsp dec` or `vsp circuit dec` decrypts it).
    #[arg(short, long)]
    output: PathBuf,
    /// Cycles to run (on top of the snapshot's when resuming; `vsp emu` tells how many a program
    /// needs; a circuit's reset cycle is not counted).
    #[arg(short, long)]
    cycles: u64,
    /// Worker threads (default: all cores).
    #[arg(short, long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Write the machine state here after the run and every --snapshot-every cycles (default:
    /// OUTPUT.snapshot; the matching `resume` command continues from it).
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// Write the snapshot every this many cycles (at least 1; the run's end always writes one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    snapshot_every: u64,
    /// Write no snapshot.
    #[arg(long, conflicts_with = "snapshot")]
    no_snapshot: bool,
}

impl ServerArgs {
    /// The snapshots, and the claims on the outputs (result, snapshot, and an encrypted `trace`),
    /// each checked against the command's inputs and the outputs before it.
    fn claim(
        &self,
        inputs: &[(&str, &Path)],
        trace: Option<&Path>,
    ) -> Result<(Option<Snapshots>, Vec<OutputLock>)> {
        let plan = SnapshotPlan {
            path: self.snapshot.clone(),
            every: self.snapshot_every,
            none: self.no_snapshot,
        };
        let (snapshots, mut locks) = plan.resolve(&self.output, inputs)?;
        if let Some(t) = trace {
            let mut all = inputs.to_vec();
            all.push(("output", &self.output));
            all.extend(snapshots.as_ref().map(|s| ("snapshot", s.path.as_path())));
            locks.extend(claim(t, &all)?);
        }
        Ok((snapshots, locks))
    }
}

/// Runs the processor and reports what was written.
fn advance(
    machine: &mut vsp_platform::Machine<vsp_circuit::TfheBackend>,
    s: &ServerArgs,
    snapshots: Option<&Snapshots>,
    shown: &mut Shown,
) -> Result<()> {
    let Some(ran) = server::advance(machine, s.cycles, snapshots, &s.output, shown)? else {
        return Ok(());
    };
    if !shown.quiet() {
        let secs = ran.seconds;
        eprintln!(
            "ran {} cycles on {} ({}) with {} threads in {} ({:.2} s/cycle); wrote result {} ({}){}",
            s.cycles,
            machine.core(),
            machine.size(),
            machine.engine().threads(),
            fmt_secs(secs),
            secs / s.cycles.max(1) as f64,
            s.output.display(),
            fmt_bytes(ran.result_bytes),
            snapshots
                .map(|s| format!(", snapshot {}", s.path.display()))
                .unwrap_or_default()
        );
    }
    Ok(())
}

/// x0..x15, eight to a line.
fn regs_table(regs: &[u16]) -> String {
    let mut s = String::new();
    for (i, v) in regs.iter().enumerate() {
        s.push_str(&format!(
            "x{i:<2}={v:<6}{}",
            if i % 8 == 7 { "\n" } else { " " }
        ));
    }
    s
}

/// 16 bytes a line, all-zero lines skipped.
fn hexdump(bytes: &[u8]) -> String {
    let mut s = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        if chunk.iter().all(|&b| b == 0) {
            continue;
        }
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        s.push_str(&format!("{:04x}: {}\n", i * 16, hex.join(" ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    /// clap's own consistency checks (unique argument ids, valid conflicts) on every subcommand.
    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// `resume`'s positional snapshot and `--snapshot`/`--no-snapshot` (the new one) are different
    /// arguments: `--no-snapshot` conflicted with the positional when they shared an id.
    /// Issue 25: every flag of every command says what it is (`circuit exec`/`resume` had six
    /// without a word).
    #[test]
    fn every_flag_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "vsp", &mut missing);
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }

    #[test]
    fn resume_takes_no_snapshot_and_a_new_snapshot_path() {
        for extra in [&["--no-snapshot"][..], &["--snapshot", "new.snap"]] {
            let mut args = vec![
                "vsp", "resume", "old.snap", "-c", "1", "-e", "ek", "-o", "out",
            ];
            args.extend_from_slice(extra);
            let cli = super::Cli::try_parse_from(&args);
            assert!(cli.is_ok(), "{args:?}: {:?}", cli.err());
            let mut args = vec![
                "vsp",
                "circuit",
                "resume",
                "old.snap",
                "--blueprint",
                "b.toml",
            ];
            args.extend_from_slice(&["-e", "ek", "-o", "out", "--cycles", "1"]);
            args.extend_from_slice(extra);
            let cli = super::Cli::try_parse_from(&args);
            assert!(cli.is_ok(), "{args:?}: {:?}", cli.err());
        }
    }
}
