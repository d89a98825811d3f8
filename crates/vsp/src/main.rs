//! `vsp`: the Virtual Secure Platform command line — kvsp rebuilt (VSP paper, seed 000).
//!
//! Alice (the client) holds the secret key: `genkey`, `genbkey`, `asm`/`cc`, `enc`, `dec`, `emu`.
//! Bob (the server) holds only the evaluation key: `run`, `resume`. `demo` does all of it on one
//! machine. The logic is vsp-platform's; this is argument parsing, dispatch and printing.
//!
//! `unsafe` is denied here; the one exception is the `SIGPIPE` reset at the top of `main`.

#![deny(unsafe_code)]

mod circuit_cmd;
mod progress;
mod serve_cmd;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::{Parser, Subcommand};

use vsp_platform::processor::client::load_client_key;
use vsp_platform::processor::client::{self, ProgramRequest};
use vsp_platform::processor::program;
use vsp_platform::server::{mpi, Ran, ServerRun, SnapshotPlan, Start};
use vsp_platform::{demo, Envelope, Kind, MemSize};

use crate::progress::{fmt_bytes, fmt_secs, Shown};

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
        #[command(flatten)]
        core: CoreArg,
        /// Memory the request was encrypted for (cmux or mux); checked against the request.
        #[arg(long)]
        memory: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Continue a run from its snapshot (writing a new snapshot, by default OUTPUT.snapshot).
    Resume {
        #[command(flatten)]
        from: FromSnapshot,
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
        #[command(flatten)]
        core: CoreArg,
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

/// `--core`, shared by the commands that build a core.
#[derive(clap::Args)]
struct CoreArg {
    /// pearl (single-cycle: fewest bootstraps per instruction, fastest on a few cores) or ruby
    /// (5-stage pipeline: shorter critical path per cycle, pays off with many cores).
    #[arg(long, default_value = "pearl")]
    core: String,
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
    #[command(flatten)]
    program: ProgramArgs,
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

/// A program and its arguments, shared by `enc` and `emu`.
#[derive(clap::Args)]
struct ProgramArgs {
    /// Program image (or a .s / .c source, compiled on the fly).
    program: PathBuf,
    /// Arguments passed to main (argv[1..]); negative numbers need no `--`.
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
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
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    core: CoreArg,
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
    let shown = &mut Shown::new(quiet);
    match cli.command {
        Command::Genkey(a) => {
            let (key, size) = client::write_secret_key(&a.params, a.insecure, &a.output, shown)?;
            if !quiet {
                let (out, size, id) = (a.output.display(), fmt_bytes(size), key.key_id);
                eprintln!(
                    "wrote secret key {out} ({size}, parameters {}, key id {id})",
                    a.params
                );
            }
        }
        Command::Genbkey { key, output } => {
            let t = Instant::now();
            let size = client::write_eval_key(&key, &output, shown)?;
            if !quiet {
                let (out, size) = (output.display(), fmt_bytes(size));
                let secs = fmt_secs(t.elapsed().as_secs_f64());
                eprintln!("wrote evaluation key {out} ({size} compressed) in {secs}");
            }
        }
        Command::Enc(a) => {
            let p = ProgramRequest {
                program: &a.program.program,
                args: &a.program.args,
                memory: &a.memory,
                size: a.memory_size.size,
            };
            let (size, memory, memory_size) =
                client::encrypt_program(&a.key, &p, &a.output, shown)?;
            if !quiet {
                let (out, size, memory) = (
                    a.output.display(),
                    fmt_bytes(size),
                    program::memory_name(memory),
                );
                eprintln!("wrote request {out} ({size}, {memory} memory, {memory_size})");
            }
        }
        Command::Run {
            input,
            core,
            memory,
            server,
        } => {
            let core = program::parse_core(&core.core)?;
            let memory = memory.as_deref().map(program::parse_memory).transpose()?;
            let input = &input;
            let start = Start::Request {
                input,
                core,
                memory,
            };
            print_ran(server.run().run_processor(start, shown)?, quiet);
        }
        Command::Resume { from, server } => {
            let start = Start::Snapshot(&from.snapshot);
            print_ran(server.run().run_processor(start, shown)?, quiet);
        }
        Command::Dec(a) => a.run(shown)?,
        Command::Circuit(c) => circuit_cmd::run(c, shown)?,
        Command::Serve(s) => serve_cmd::serve(s, quiet)?,
        Command::Remote(r) => serve_cmd::remote(r, quiet)?,
        Command::Demo {
            core,
            program,
            threads,
            dir,
            max_cycles,
            memory_size: MemorySize { size },
        } => {
            let o = demo::DemoOptions {
                core: core.core,
                program,
                threads,
                dir,
                max_cycles,
                size,
            };
            demo::run(&o, shown)?;
        }
        Command::Asm(a) => {
            let image = client::assemble_to(&a.sources, a.runtime, a.memory_size.size, &a.output)?;
            if a.listing {
                print!("{}", vsp_cahp::listing(&image));
            }
            if !quiet {
                let (out, rom, ram) = (a.output.display(), image.rom.len(), image.ram.len());
                let n = image.symbols.len();
                eprintln!("wrote {out} (ROM {rom} B, RAM data {ram} B, {n} symbols)");
            }
        }
        Command::Cc(a) => {
            let opts = program::cc_options(&a.opt, &a.define, &a.undefine, &a.include);
            let (size, asm) = (a.memory_size.size, a.emit_asm.as_deref());
            let image = client::compile_to(&a.sources, &opts, size, &a.output, asm)?;
            if !quiet {
                let (out, rom, ram) = (a.output.display(), image.rom.len(), image.ram.len());
                eprintln!("wrote {out} (ROM {rom} B, RAM data {ram} B)");
            }
        }
        Command::Emu(a) => a.run()?,
    }
    Ok(())
}

impl DecArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let key = load_client_key(&self.key, shown)?;
        let env = Envelope::read(&self.input, Kind::Result)?;
        let d = vsp_platform::decrypt_result(&key, &env)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&d)?);
            return Ok(());
        }
        println!("cycles:     {}", d.cycles);
        println!("finished:   {}", yes_no(d.finished));
        println!("result a0:  {} (0x{:04x})", d.result, d.result);
        print!("{}", regs_table(&d.regs));
        if self.ram {
            print!("{}", hexdump(&d.ram));
        }
        Ok(())
    }
}

impl EmuArgs {
    fn run(self) -> Result<()> {
        let (image_path, args) = (&self.program.program, &self.program.args);
        let core = program::parse_core(&self.core.core)?;
        let memory = program::parse_memory(&self.memory)?;
        let (image, size) = program::load_program_sized(image_path, false, self.memory_size.size)?;
        let max = self.max_cycles;
        if self.trace {
            for line in program::trace_lines(&image, args, size, max)? {
                println!("{line}");
            }
        }
        let r = vsp_platform::emulate(&image, args, core, memory, size, max)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&r)?);
            return Ok(r.check(max)?);
        }
        println!("core:       {} ({} memory, {size})", r.core, r.memory);
        println!("finished:   {}", yes_no(r.finished));
        let why = if r.finished {
            format!("(pass --cycles {} to `vsp run`)", r.cycles)
        } else if r.isa_error.is_some() {
            "(stopped where the ISA simulator stopped the program)".to_string()
        } else {
            format!("(stopped at --max-cycles {max}: the program had not halted)")
        };
        println!("cycles:     {}   {why}", r.cycles);
        println!("result a0:  {} (0x{:04x})", r.result, r.result);
        let check = match r.agrees_with_isa {
            Some(true) => "agrees",
            Some(false) => "DISAGREES",
            None if r.isa_error.is_some() => "stopped the program (below)",
            None => "not made (the gate-level run stopped before the halt)",
        };
        let n = r.instructions;
        println!("ISA check:  {check} ({n} instructions retired)");
        print!("{}", regs_table(&r.regs));
        Ok(r.check(max)?)
    }
}

/// The snapshot a `resume` continues from.
#[derive(clap::Args)]
pub(crate) struct FromSnapshot {
    /// The snapshot to continue from (its own argument id: `--snapshot` names the new one).
    #[arg(id = "from", value_name = "SNAPSHOT")]
    pub(crate) snapshot: PathBuf,
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
    /// The run these arguments ask for.
    pub(crate) fn run(self) -> ServerRun {
        ServerRun {
            eval_key: self.eval_key,
            output: self.output,
            cycles: self.cycles,
            threads: self.threads,
            snapshots: SnapshotPlan {
                path: self.snapshot,
                every: self.snapshot_every,
                none: self.no_snapshot,
            },
        }
    }
}

/// What a processor's server run wrote (rank 0, unless quiet).
fn print_ran(ran: Option<Ran>, quiet: bool) {
    let Some(r) = ran.filter(|_| !quiet) else {
        return;
    };
    eprintln!(
        "ran {} cycles on {} ({}) with {} threads in {} ({:.2} s/cycle); wrote result {} ({}){}",
        r.cycles,
        r.core,
        r.size,
        r.threads,
        fmt_secs(r.seconds),
        r.seconds / r.cycles.max(1) as f64,
        r.output.display(),
        fmt_bytes(r.result_bytes),
        r.snapshot
            .map(|s| format!(", snapshot {}", s.display()))
            .unwrap_or_default()
    );
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// x0..x15, eight to a line.
fn regs_table(regs: &[u16]) -> String {
    let mut s = String::new();
    for (i, v) in regs.iter().enumerate() {
        let end = if i % 8 == 7 { "\n" } else { " " };
        s.push_str(&format!("x{i:<2}={v:<6}{end}"));
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
