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

use anyhow::Result;
use clap::{Parser, Subcommand};

use vsp_platform::files::error_line;
use vsp_platform::processor::client::{self, ProgramRequest};
use vsp_platform::processor::program::{self, parse_core, parse_memory, parse_memory_size};
use vsp_platform::server::{mpi, parse_threads, Ran, ServerRun, SnapshotPlan, Start};
use vsp_platform::{demo, MemSize};

use crate::progress::Shown;

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
    Genbkey(GenbkeyArgs),
    /// Encrypt a program image and its arguments into a request for the server.
    ///
    /// The request records the memory kind and size; `vsp run` builds the core for them.
    Enc(EncArgs),
    /// Run an encrypted request for a number of cycles (Bob: needs only the evaluation key).
    ///
    /// The core is built for the memory the request records (CMUX or MUX, 512 B to 8 KiB of ROM
    /// and of RAM).
    Run(RunArgs),
    /// Continue a run from its snapshot (writing a new snapshot, by default OUTPUT.snapshot).
    Resume(ResumeArgs),
    /// Decrypt a result (Alice): finish flag, x0–x15, the return value, optionally the RAM.
    Dec(DecArgs),
    /// The engine on any circuit described by a blueprint.
    #[command(subcommand)]
    Circuit(circuit_cmd::CircuitCommand),
    /// Run a job server (Bob as a service) or manage its client tokens.
    ///
    /// The server keeps jobs in SQLite under --data, runs them with snapshots, resumes them after
    /// a crash and answers an HTTP API (docs/server.md); `vsp serve token add NAME --data DIR`
    /// makes a client's token.
    Serve(serve_cmd::Serve),
    /// Talk to a `vsp serve` server: key-upload, submit, status, watch, fetch, cancel, delete.
    Remote(serve_cmd::Remote),
    /// The whole flow on this machine: keys, encrypt fib(5), run it encrypted, decrypt, check with emu.
    Demo(DemoArgs),
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
    /// pearl (single-cycle: fewest bootstraps per cycle) or ruby (5-stage pipeline: a shorter
    /// critical path, pays off with many cores).
    #[arg(long, default_value = "pearl")]
    core: String,
}

/// `--key`: the secret key, shared by Alice's commands.
#[derive(clap::Args)]
pub(crate) struct SecretKeyArg {
    /// Secret key (from `vsp genkey`).
    #[arg(short, long)]
    pub(crate) key: PathBuf,
}

/// `--json`, shared by the commands that print a result.
#[derive(clap::Args)]
pub(crate) struct JsonArg {
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
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
struct GenbkeyArgs {
    #[command(flatten)]
    key: SecretKeyArg,
    /// Write the evaluation key here (for the server: `vsp run`, `vsp circuit exec`).
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(clap::Args)]
struct EncArgs {
    #[command(flatten)]
    key: SecretKeyArg,
    #[command(flatten)]
    program: ProgramArgs,
    /// Write the encrypted request here (for `vsp run`).
    #[arg(short, long)]
    output: PathBuf,
    /// cmux (CMUX ROM/RAM: cheap per cycle) or mux (Iyokan's MUX memory: ROM/RAM as flip-flops
    /// and MUX trees, for the paper's CMUX-vs-MUX comparison).
    #[arg(long, default_value = "cmux")]
    memory: String,
    #[command(flatten)]
    memory_size: MachineSize,
}

#[derive(clap::Args)]
struct RunArgs {
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
}

/// A `resume`: the snapshot it continues from, and the run.
#[derive(clap::Args)]
pub(crate) struct ResumeArgs {
    /// The snapshot to continue from (its own argument id: `--snapshot` names the new one).
    #[arg(id = "from", value_name = "SNAPSHOT")]
    pub(crate) snapshot: PathBuf,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
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
    #[command(flatten)]
    key: SecretKeyArg,
    /// The encrypted result (from `vsp run` or `vsp resume`).
    #[arg(short, long)]
    input: PathBuf,
    /// Also print a hex dump of the RAM.
    #[arg(long)]
    ram: bool,
    #[command(flatten)]
    json: JsonArg,
}

#[derive(clap::Args)]
struct DemoArgs {
    #[command(flatten)]
    core: CoreArg,
    /// Benchmark program: fib, hamming or bf.
    #[arg(long, default_value = "fib")]
    program: String,
    #[command(flatten)]
    threads: ThreadsArg,
    /// Keep the key, request and result files in this directory (default: a temporary one).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Stop after this many cycles (a shorter demo, checked against the plain run stopped there).
    #[arg(long)]
    max_cycles: Option<u64>,
    #[command(flatten)]
    memory_size: MemorySize,
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
    #[command(flatten)]
    json: JsonArg,
    /// Give up after this many cycles.
    #[arg(long, default_value_t = program::DEFAULT_MAX_CYCLES)]
    max_cycles: u64,
}

/// `--memory-size`, shared by the commands that place a program.
#[derive(clap::Args, Clone, Copy)]
struct MemorySize {
    /// Bytes of ROM and of RAM: 512 (the default), 1024, 2048, 4096 or 8192, or each apart as
    /// rom=BYTES,ram=BYTES (a larger ROM costs little per encrypted cycle, a larger RAM more).
    #[arg(long = "memory-size", default_value = "512", value_name = "BYTES", value_parser = parse_memory_size)]
    size: MemSize,
}

/// `--memory-size` of the commands that run a program: an image records the size it was built for.
#[derive(clap::Args, Clone, Copy)]
struct MachineSize {
    /// Bytes of ROM and of RAM (512 … 8192, or rom=BYTES,ram=BYTES). Default: the size the image
    /// was built for, else 512; an image built for another size is refused.
    #[arg(long = "memory-size", value_name = "BYTES", value_parser = parse_memory_size)]
    size: Option<MemSize>,
}

/// `--threads`, shared by the commands that run encrypted.
#[derive(clap::Args)]
pub(crate) struct ThreadsArg {
    /// Worker threads (default: all cores).
    #[arg(short, long, value_parser = parse_threads)]
    pub(crate) threads: Option<usize>,
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
    #[command(flatten)]
    threads: ThreadsArg,
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
            threads: self.threads.threads,
            snapshots: SnapshotPlan {
                path: self.snapshot,
                every: self.snapshot_every,
                none: self.no_snapshot,
            },
        }
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
        let msg = error_line(e.as_ref());
        mpi::abort(&msg);
        eprintln!("error: {msg}");
        std::process::exit(1);
    }
}

/// Dispatch: each command's handler with what it shows (nothing but results when quiet, and on an
/// MPI rank other than 0, which works quietly).
fn run(cli: Cli) -> Result<()> {
    use circuit_cmd::CircuitCommand as C;
    let distributed = matches!(
        cli.command,
        Command::Run(_)
            | Command::Resume(_)
            | Command::Circuit(C::Run(_) | C::Exec(_) | C::Resume { .. })
    );
    let shown = &mut Shown::new(cli.quiet || !mpi::check_command(distributed)?);
    match cli.command {
        Command::Genkey(a) => genkey(a, shown),
        Command::Genbkey(a) => {
            let w = client::write_eval_key(&a.key.key, &a.output, shown)?;
            shown.end(w)
        }
        Command::Enc(a) => enc(a, shown),
        Command::Run(a) => run_processor(a, shown),
        Command::Resume(a) => {
            let start = Start::Snapshot(&a.snapshot);
            print_ran(a.server.run().run_processor(start, shown)?, shown)
        }
        Command::Dec(a) => dec(a, shown),
        Command::Circuit(c) => c.run(shown),
        Command::Serve(s) => s.run(shown),
        Command::Remote(r) => r.run(shown),
        Command::Demo(a) => Ok(demo::run(&a.options(), shown)?),
        Command::Asm(a) => asm(a, shown),
        Command::Cc(a) => cc(a, shown),
        Command::Emu(a) => emu(a, shown),
    }
}

/// `vsp genkey`: the key written, with its key id.
fn genkey(a: GenkeyArgs, shown: &mut Shown) -> Result<()> {
    let w = client::write_secret_key(&a.params, a.insecure, &a.output, shown)?;
    shown.end(w)
}

/// `vsp enc`: the request written.
fn enc(a: EncArgs, shown: &mut Shown) -> Result<()> {
    let p = a.program.request(&a.memory, a.memory_size.size);
    let w = client::encrypt_program(&a.key.key, &p, &a.output, shown)?;
    shown.end(w)
}

impl ProgramArgs {
    /// The program to run with its arguments on `memory` of `size`.
    fn request<'a>(&'a self, memory: &'a str, size: Option<MemSize>) -> ProgramRequest<'a> {
        let (program, args) = (&self.program, &self.args);
        ProgramRequest {
            program,
            args,
            memory,
            size,
        }
    }
}

/// `vsp run`: the core for the request's memory (checked against --memory), run by the server.
fn run_processor(a: RunArgs, shown: &mut Shown) -> Result<()> {
    let core = parse_core(&a.core.core)?;
    let memory = a.memory.as_deref().map(parse_memory).transpose()?;
    let input = &a.input;
    let start = Start::Request {
        input,
        core,
        memory,
    };
    print_ran(a.server.run().run_processor(start, shown)?, shown)
}

/// What a processor's server run wrote (rank 0, unless quiet).
fn print_ran(ran: Option<Ran>, shown: &mut Shown) -> Result<()> {
    ran.map_or(Ok(()), |r| shown.end(r))
}

/// `value` as pretty JSON on stdout (`--json`).
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// `vsp dec`: the result's state, with --ram its RAM, or JSON.
fn dec(a: DecArgs, shown: &mut Shown) -> Result<()> {
    let d = client::decrypt_file(&a.key.key, &a.input, shown)?;
    if a.json.json {
        return print_json(&d);
    }
    print!("{d}");
    if a.ram {
        print!("{}", d.ram_dump());
    }
    Ok(())
}

impl DemoArgs {
    fn options(self) -> demo::DemoOptions {
        demo::DemoOptions {
            core: self.core.core,
            program: self.program,
            threads: self.threads.threads,
            dir: self.dir,
            max_cycles: self.max_cycles,
            size: self.memory_size.size,
        }
    }
}

/// `vsp asm`: the image written, with --listing its ROM listed.
fn asm(a: AsmArgs, shown: &mut Shown) -> Result<()> {
    let w = client::assemble_to(&a.sources, a.runtime, a.memory_size.size, &a.output)?;
    if a.listing {
        print!("{}", vsp_cahp::listing(&w.image));
    }
    shown.end(w)
}

/// `vsp cc`: the image written (and the assembly, with --emit-asm).
fn cc(a: CcArgs, shown: &mut Shown) -> Result<()> {
    let opts = program::cc_options(&a.opt, &a.define, &a.undefine, &a.include);
    let (size, asm) = (a.memory_size.size, a.emit_asm.as_deref());
    shown.end(client::compile_to(&a.sources, &opts, size, &a.output, asm)?)
}

/// `vsp emu`: the report (or JSON), then the check that the program halted and agrees with the
/// ISA simulator.
fn emu(a: EmuArgs, shown: &mut Shown) -> Result<()> {
    let (p, max) = (
        a.program.request(&a.memory, a.memory_size.size),
        a.max_cycles,
    );
    let (r, size) = client::emulate_file(&p, &a.core.core, max, a.trace, shown)?;
    if a.json.json {
        print_json(&r)?;
    } else {
        print!("{}", r.report(size, max));
    }
    Ok(r.check(max)?)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    /// clap's own consistency checks (unique argument ids, valid conflicts) on every subcommand.
    /// clap runs them only where it is built with debug assertions, so the test exists only there:
    /// `.ci/run` runs it in a debug build (`cargo test -p vsp --bin vsp`).
    #[cfg(debug_assertions)]
    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Issue 25: every flag of every command says what it is (`circuit exec`/`resume` had six
    /// without a word).
    #[test]
    fn every_flag_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                let documented = a.get_help().is_some() || a.get_long_help().is_some();
                if !documented && id != "help" && id != "version" {
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

    /// `resume`'s positional snapshot and `--snapshot`/`--no-snapshot` (the new one) are different
    /// arguments: `--no-snapshot` conflicted with the positional when they shared an id.
    #[test]
    fn resume_takes_no_snapshot_and_a_new_snapshot_path() {
        for extra in ["--no-snapshot", "--snapshot new.snap"] {
            for cmd in [
                "vsp resume old.snap -c 1 -e ek -o out",
                "vsp circuit resume old.snap --blueprint b.toml -e ek -o out --cycles 1",
            ] {
                let args = format!("{cmd} {extra}");
                let cli = super::Cli::try_parse_from(args.split(' '));
                assert!(cli.is_ok(), "{args}: {:?}", cli.err());
            }
        }
    }
}
