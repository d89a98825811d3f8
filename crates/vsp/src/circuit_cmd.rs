//! `vsp circuit …`: the engine on any user circuit — a blueprint (`docs/blueprint.md`) or a bare
//! Yosys JSON netlist (`docs/yosys.md`) — in plain or encrypted on one machine (`run`), or split
//! between client and server (`enc`, `exec`/`resume`, `dec`). Inputs: [`INPUTS_HELP`]; outputs,
//! traces and VCD: `docs/circuit.md`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use vsp_platform::design::{
    decrypt_file, encrypt_inputs, load_design, outputs_json, stats_json, stats_text, CircuitStart,
    Decrypt, Decrypted, LocalRun,
};
use vsp_platform::server::Watch;

use crate::progress::Shown;
use crate::{print_json, JsonArg, ResumeArgs, SecretKeyArg, ServerArgs, ThreadsArg};

/// The inputs file, as `-h` shows it.
const INPUTS_SHORT: &str =
    "JSON file of input values and memory contents (--help shows its format)";

/// The inputs file, as `--help` shows it.
const INPUTS_HELP: &str = "JSON file with input values and memory contents:
  {\"inputs\": {\"en\": 1, \"data\": 200}, \"memories\": {\"rom\": [1, 2, 3]}}
\"inputs\" maps an external input (the @name of a blueprint, a port of a bare netlist) to a number
(unsigned, at most the port's width), held for the whole run; inputs not named are 0. \"memories\"
maps a memory (a [[builtin]]) to its words from address 0 (the rest 0). Both keys are optional;
unknown keys are refused. Encrypted runs encrypt every value and memory given here; the other
inputs (and --reset) are public. See docs/circuit.md.";

/// `--blueprint`, shared by every circuit command.
#[derive(clap::Args)]
pub struct BlueprintArg {
    /// Blueprint (TOML) or bare Yosys JSON netlist (its ports become the external ports); a
    /// request, snapshot or result runs or decrypts only on the circuit it was made for.
    #[arg(long, visible_alias = "netlist")]
    blueprint: PathBuf,
}

#[derive(Subcommand)]
pub enum CircuitCommand {
    /// Statistics of a circuit: gates by type, DFFs, depth, bootstraps per cycle.
    Stats {
        #[command(flatten)]
        blueprint: BlueprintArg,
        #[command(flatten)]
        json: JsonArg,
    },
    /// Run a circuit, in plain (default) or encrypted (with --key and --eval-key).
    Run(RunArgs),
    /// Client: encrypt a circuit's inputs and memories into a request for `vsp circuit exec`.
    Enc(EncArgs),
    /// Server: run an encrypted circuit request for some cycles (needs only the evaluation key).
    ///
    /// Writes the encrypted result and a snapshot (default OUTPUT.snapshot) that `vsp circuit
    /// resume` continues from.
    Exec(ExecArgs),
    /// Server: continue a circuit run from its snapshot (writing a new snapshot).
    Resume {
        #[command(flatten)]
        resume: ResumeArgs,
        #[command(flatten)]
        blueprint: BlueprintArg,
        #[command(flatten)]
        trace: EncryptedTraceArg,
    },
    /// Client: decrypt a circuit result into the outputs JSON (or, with --trace, an encrypted
    /// trace into JSON lines).
    Dec(DecArgs),
}

#[derive(clap::Args)]
pub struct EncArgs {
    #[command(flatten)]
    blueprint: BlueprintArg,
    #[command(flatten)]
    key: SecretKeyArg,
    #[arg(long, help = INPUTS_SHORT, long_help = INPUTS_HELP)]
    inputs: Option<PathBuf>,
    /// Write the encrypted request here (for `vsp circuit exec`).
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(clap::Args)]
pub struct ExecArgs {
    #[command(flatten)]
    blueprint: BlueprintArg,
    /// The request from `vsp circuit enc`.
    #[arg(short, long)]
    input: PathBuf,
    /// Apply one (public) reset cycle first (when the circuit has a 1-bit `@reset` input).
    #[arg(long)]
    reset: bool,
    #[command(flatten)]
    trace: EncryptedTraceArg,
    #[command(flatten)]
    server: ServerArgs,
}

/// `--trace` of the server's commands.
#[derive(clap::Args)]
pub struct EncryptedTraceArg {
    /// Write every cycle's encrypted outputs here (numbered by the engine's cycle, so a resumed
    /// run continues the count; `vsp circuit dec --trace` decrypts them into the JSON lines and
    /// VCD of `vsp circuit run --trace`).
    #[arg(long)]
    trace: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    blueprint: BlueprintArg,
    #[arg(long, help = INPUTS_SHORT, long_help = INPUTS_HELP)]
    inputs: Option<PathBuf>,
    /// Cycles to run (after the reset cycle, which is not counted).
    #[arg(long)]
    cycles: u64,
    /// Plain only: stop after the first cycle in which this 1-bit output is 1.
    #[arg(long)]
    until: Option<String>,
    /// Apply one reset cycle first (when the circuit has a 1-bit `@reset` input).
    #[arg(long)]
    reset: bool,
    /// Secret key: encrypt the inputs, decrypt the outputs.
    #[arg(long, requires = "eval_key")]
    key: Option<PathBuf>,
    /// Evaluation key for the encrypted run.
    #[arg(long, requires = "key")]
    eval_key: Option<PathBuf>,
    /// Write the outputs (JSON) here instead of stdout.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write every cycle's outputs here as JSON lines: {"cycle":0,"outputs":{"count":0}}.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Write every cycle's outputs here as a VCD (Value Change Dump; GTKWave opens it).
    #[arg(long)]
    vcd: Option<PathBuf>,
    #[command(flatten)]
    threads: ThreadsArg,
}

#[derive(clap::Args)]
pub struct DecArgs {
    #[command(flatten)]
    blueprint: BlueprintArg,
    #[command(flatten)]
    key: SecretKeyArg,
    /// Encrypted result (from `vsp circuit exec` or `resume`).
    #[arg(
        short,
        long,
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    input: Option<PathBuf>,
    /// Decrypt this encrypted trace (from `exec`/`resume --trace`) instead: prints one JSON
    /// object per cycle, {"cycle":0,"outputs":{"count":0}}, as `vsp circuit run --trace` writes.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// With --trace: also write the trace as a VCD (Value Change Dump) here.
    #[arg(long, requires = "trace")]
    vcd: Option<PathBuf>,
}

impl CircuitCommand {
    pub fn run(self, shown: &mut Shown) -> Result<()> {
        match self {
            CircuitCommand::Stats { blueprint, json } => {
                let v = stats_json(&*load_design(&blueprint.blueprint)?);
                if json.json {
                    return print_json(&v);
                }
                print!("{}", stats_text(&v));
                Ok(())
            }
            CircuitCommand::Run(a) => run(a, shown),
            CircuitCommand::Enc(a) => {
                let (bp, inputs) = (&a.blueprint.blueprint, a.inputs.as_deref());
                let w = encrypt_inputs(bp, &a.key.key, inputs, &a.output, shown)?;
                shown.end(w)
            }
            CircuitCommand::Exec(a) => {
                let (input, reset) = (&a.input, a.reset);
                let start = CircuitStart::Request { input, reset };
                exec(a.server, &a.blueprint, start, a.trace, shown)
            }
            CircuitCommand::Resume {
                resume,
                blueprint,
                trace,
            } => {
                let start = CircuitStart::Snapshot(&resume.snapshot);
                exec(resume.server, &blueprint, start, trace, shown)
            }
            CircuitCommand::Dec(a) => dec(a, shown),
        }
    }
}

/// `vsp circuit run`: the outputs JSON on stdout unless written to --output.
fn run(a: RunArgs, shown: &mut Shown) -> Result<()> {
    let run = LocalRun {
        blueprint: a.blueprint.blueprint,
        inputs: a.inputs,
        cycles: a.cycles,
        until: a.until,
        reset: a.reset,
        keys: a.key.zip(a.eval_key),
        output: a.output,
        trace: a.trace,
        vcd: a.vcd,
        threads: a.threads.threads,
    };
    if let (Some(out), None) = (run.run(shown)?, &run.output) {
        println!("{}", outputs_json(&out));
    }
    Ok(())
}

/// `vsp circuit dec`: the outputs JSON, or the decrypted trace as JSON lines.
fn dec(a: DecArgs, shown: &mut Shown) -> Result<()> {
    let what = match (&a.trace, &a.input) {
        (Some(path), _) => Decrypt::Trace {
            path,
            vcd: a.vcd.as_deref(),
        },
        (None, Some(input)) => Decrypt::Result(input),
        (None, None) => return Ok(()),
    };
    match decrypt_file(&a.blueprint.blueprint, &a.key.key, what, shown)? {
        Decrypted::Trace(t) => print!("{}", t.json_lines()),
        Decrypted::Result(out) => println!("{}", outputs_json(&out)),
    }
    Ok(())
}

/// The server's half of a circuit run (`exec`, `resume`), and what it wrote (rank 0, unless quiet).
fn exec(
    server: ServerArgs,
    blueprint: &BlueprintArg,
    start: CircuitStart<'_>,
    EncryptedTraceArg { trace }: EncryptedTraceArg,
    shown: &mut Shown,
) -> Result<()> {
    let run = server.run();
    let done = run.run_circuit(&blueprint.blueprint, start, trace.as_deref(), shown)?;
    let Some(done) = done else { return Ok(()) };
    if let Some(line) = done.trace_line() {
        shown.note(&line);
    }
    shown.end(done)
}
