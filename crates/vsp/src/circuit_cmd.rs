//! `vsp circuit …`: the engine on any user circuit — a blueprint (`docs/blueprint.md`) or a bare
//! Yosys JSON netlist (`docs/yosys.md`) — in plain, or encrypted on one machine (with `--key` and
//! `--eval-key`: inputs and memories are encrypted with the secret key, the circuit is evaluated over
//! TFHE, and outputs are decrypted — a check of a design). The inputs file is documented in
//! [`INPUTS_HELP`] (`vsp circuit run --help`) and `docs/circuit.md`; outputs go to a JSON file (or
//! stdout): `{"cycles": 5, "outputs": {"count": 4}, "memories": {"ram": [...]}}`; `--trace` and
//! `--vcd` write the outputs of every cycle.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use vsp_platform::design::{
    decrypt_file, encrypt_inputs, load_design, outputs_json, stats_json, CircuitStart, Decrypt,
    Decrypted, Executed, LocalRun,
};

use crate::progress::{fmt_bytes, Shown};
use crate::{FromSnapshot, ServerArgs};

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
        /// Print the statistics as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a circuit, in plain (default) or encrypted (with --key and --eval-key).
    Run(RunArgs),
    /// Client: encrypt a circuit's inputs and memories into a request for `vsp circuit exec`.
    Enc {
        #[command(flatten)]
        blueprint: BlueprintArg,
        /// Secret key (from `vsp genkey`) to encrypt the inputs and memories with.
        #[arg(short, long)]
        key: PathBuf,
        #[arg(long, help = INPUTS_SHORT, long_help = INPUTS_HELP)]
        inputs: Option<PathBuf>,
        /// Write the encrypted request here (for `vsp circuit exec`).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Server: run an encrypted circuit request for some cycles (needs only the evaluation key);
    /// writes the encrypted result and a snapshot (default OUTPUT.snapshot) that `vsp circuit
    /// resume` continues from.
    Exec {
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
    },
    /// Server: continue a circuit run from its snapshot (writing a new snapshot).
    Resume {
        #[command(flatten)]
        from: FromSnapshot,
        #[command(flatten)]
        blueprint: BlueprintArg,
        #[command(flatten)]
        trace: EncryptedTraceArg,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Client: decrypt a circuit result into the outputs JSON (or, with --trace, an encrypted
    /// trace into JSON lines).
    Dec(DecArgs),
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
    /// Worker threads (default: all cores).
    #[arg(short, long, value_parser = crate::parse_threads)]
    threads: Option<usize>,
}

#[derive(clap::Args)]
pub struct DecArgs {
    #[command(flatten)]
    blueprint: BlueprintArg,
    /// Secret key the request was encrypted with.
    #[arg(short, long)]
    key: PathBuf,
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

pub fn run(cmd: CircuitCommand, shown: &mut Shown) -> Result<()> {
    let quiet = shown.quiet();
    match cmd {
        CircuitCommand::Stats { blueprint, json } => {
            let v = stats_json(&*load_design(&blueprint.blueprint)?);
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if let Some(obj) = v.as_object() {
                for (k, v) in obj {
                    println!("{k:<26} {v}");
                }
            }
        }
        CircuitCommand::Run(a) => {
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
                threads: a.threads,
            };
            if let (Some(out), None) = (run.run(shown)?, &run.output) {
                println!("{}", outputs_json(&out));
            }
        }
        CircuitCommand::Enc {
            blueprint,
            key,
            inputs,
            output,
        } => {
            let bp = &blueprint.blueprint;
            let size = encrypt_inputs(bp, &key, inputs.as_deref(), &output, shown)?;
            if !quiet {
                let (out, size) = (output.display(), fmt_bytes(size));
                eprintln!("wrote circuit request {out} ({size})");
            }
        }
        CircuitCommand::Exec {
            blueprint,
            input,
            reset,
            trace: EncryptedTraceArg { trace },
            server,
        } => {
            let (start, run) = (
                CircuitStart::Request {
                    input: &input,
                    reset,
                },
                server.run(),
            );
            let done = run.run_circuit(&blueprint.blueprint, start, trace.as_deref(), shown)?;
            print_executed(done, &run.output, run.cycles, trace, quiet);
        }
        CircuitCommand::Resume {
            from,
            blueprint,
            trace: EncryptedTraceArg { trace },
            server,
        } => {
            let (start, run) = (CircuitStart::Snapshot(&from.snapshot), server.run());
            let done = run.run_circuit(&blueprint.blueprint, start, trace.as_deref(), shown)?;
            print_executed(done, &run.output, run.cycles, trace, quiet);
        }
        CircuitCommand::Dec(a) => {
            let what = match (&a.trace, &a.input) {
                (Some(path), _) => Decrypt::Trace {
                    path,
                    vcd: a.vcd.as_deref(),
                },
                (None, Some(input)) => Decrypt::Result(input),
                (None, None) => return Ok(()),
            };
            match decrypt_file(&a.blueprint.blueprint, &a.key, what, shown)? {
                Decrypted::Trace(t) => print!("{}", t.json_lines()),
                Decrypted::Result(out) => println!("{}", outputs_json(&out)),
            }
        }
    }
    Ok(())
}

/// What the server's half of a circuit run wrote (rank 0, unless quiet).
fn print_executed(
    done: Option<Executed>,
    output: &std::path::Path,
    cycles: u64,
    trace: Option<PathBuf>,
    quiet: bool,
) {
    let Some(done) = done.filter(|_| !quiet) else {
        return;
    };
    if let (Some(size), Some(path)) = (done.trace_bytes, trace) {
        let (path, size) = (path.display(), fmt_bytes(size));
        eprintln!("wrote encrypted trace {path} ({size})");
    }
    let (out, size) = (output.display(), fmt_bytes(done.result_bytes));
    eprintln!("ran {cycles} cycles; wrote result {out} ({size})");
}
