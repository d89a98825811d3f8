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
    check_reset, decrypt_circuit_result, decrypt_circuit_trace, load_client_key, load_design,
    public_warning, run_encrypted, run_plain, stats_json, CircuitInputs, CircuitMachine, DesignRun,
    Exec, Trace,
};
use vsp_platform::files::{write_atomic, Access};
use vsp_platform::server::claim;
use vsp_platform::{Envelope, Kind};

use crate::progress::{fmt_bytes, Shown};
use crate::ServerArgs;

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

#[derive(Subcommand)]
pub enum CircuitCommand {
    /// Statistics of a circuit: gates by type, DFFs, depth, bootstraps per cycle.
    Stats {
        /// Blueprint (TOML) or bare Yosys JSON netlist.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        /// Print the statistics as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a circuit, in plain (default) or encrypted (with --key and --eval-key).
    Run(RunArgs),
    /// Client: encrypt a circuit's inputs and memories into a request for `vsp circuit exec`.
    Enc {
        /// Blueprint (TOML) or bare Yosys JSON netlist: the request runs only on this circuit.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
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
        /// Blueprint (TOML) or bare Yosys JSON netlist: the one the request was made for.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        /// The request from `vsp circuit enc`.
        #[arg(short, long)]
        input: PathBuf,
        /// Apply one (public) reset cycle first (when the circuit has a 1-bit `@reset` input).
        #[arg(long)]
        reset: bool,
        /// Write every cycle's encrypted outputs here (`vsp circuit dec --trace` decrypts them
        /// into the JSON lines and VCD of `vsp circuit run --trace`).
        #[arg(long)]
        trace: Option<PathBuf>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Server: continue a circuit run from its snapshot (writing a new snapshot).
    Resume {
        /// The snapshot to continue from (its own argument id: `--snapshot` names the new one).
        #[arg(id = "from", value_name = "SNAPSHOT")]
        snapshot: PathBuf,
        /// Blueprint (TOML) or bare Yosys JSON netlist: the one the run was started on.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        /// Write every cycle's encrypted outputs here (numbered on from the snapshot's cycle;
        /// `vsp circuit dec --trace` decrypts them).
        #[arg(long)]
        trace: Option<PathBuf>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Client: decrypt a circuit result into the outputs JSON (or, with --trace, an encrypted
    /// trace into JSON lines).
    Dec(DecArgs),
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Blueprint (TOML) or bare Yosys JSON netlist (its ports become the external ports).
    #[arg(long, visible_alias = "netlist")]
    pub(crate) blueprint: PathBuf,
    #[arg(long, help = INPUTS_SHORT, long_help = INPUTS_HELP)]
    pub(crate) inputs: Option<PathBuf>,
    /// Cycles to run (after the reset cycle, which is not counted).
    #[arg(long)]
    pub(crate) cycles: u64,
    /// Plain only: stop after the first cycle in which this 1-bit output is 1.
    #[arg(long)]
    pub(crate) until: Option<String>,
    /// Apply one reset cycle first (when the circuit has a 1-bit `@reset` input).
    #[arg(long)]
    pub(crate) reset: bool,
    /// Secret key: encrypt the inputs, decrypt the outputs.
    #[arg(long, requires = "eval_key")]
    pub(crate) key: Option<PathBuf>,
    /// Evaluation key for the encrypted run.
    #[arg(long, requires = "key")]
    pub(crate) eval_key: Option<PathBuf>,
    /// Write the outputs (JSON) here instead of stdout.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Write every cycle's outputs here as JSON lines: {"cycle":0,"outputs":{"count":0}}.
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// Write every cycle's outputs here as a VCD (Value Change Dump; GTKWave opens it).
    #[arg(long)]
    pub(crate) vcd: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(short, long, value_parser = crate::parse_threads)]
    pub(crate) threads: Option<usize>,
}

#[derive(clap::Args)]
pub struct DecArgs {
    /// Blueprint (TOML) or bare Yosys JSON netlist the result is of.
    #[arg(long, visible_alias = "netlist")]
    pub(crate) blueprint: PathBuf,
    /// Secret key the request was encrypted with.
    #[arg(short, long)]
    pub(crate) key: PathBuf,
    /// Encrypted result (from `vsp circuit exec` or `resume`).
    #[arg(
        short,
        long,
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    pub(crate) input: Option<PathBuf>,
    /// Decrypt this encrypted trace (from `exec`/`resume --trace`) instead: prints one JSON
    /// object per cycle, {"cycle":0,"outputs":{"count":0}}, as `vsp circuit run --trace` writes.
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// With --trace: also write the trace as a VCD (Value Change Dump) here.
    #[arg(long, requires = "trace")]
    pub(crate) vcd: Option<PathBuf>,
}

pub fn run(cmd: CircuitCommand, quiet: bool) -> Result<()> {
    let mut shown = Shown::new(quiet);
    match cmd {
        CircuitCommand::Stats { blueprint, json } => {
            let v = stats_json(&*load_design(&blueprint)?);
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if let Some(obj) = v.as_object() {
                for (k, v) in obj {
                    println!("{k:<26} {v}");
                }
            }
        }
        CircuitCommand::Run(a) => a.run(&mut shown)?,
        CircuitCommand::Enc {
            blueprint,
            key,
            inputs,
            output,
        } => {
            let mut read = vec![("blueprint", blueprint.as_path()), ("secret key", &key)];
            read.extend(inputs.as_deref().map(|p| ("inputs", p)));
            let _lock = claim(&output, &read)?;
            let circuit = load_design(&blueprint)?;
            let inputs = CircuitInputs::read_for(inputs.as_deref(), &circuit)?;
            if inputs.is_empty() {
                eprintln!("{}", public_warning(false));
            }
            let key = load_client_key(&key, &mut shown)?;
            let env = inputs.encrypt(&key, &circuit)?.to_envelope(key.sk.params());
            let size = env.write(&output)?;
            if !quiet {
                let (out, size) = (output.display(), fmt_bytes(size));
                eprintln!("wrote circuit request {out} ({size})");
            }
        }
        CircuitCommand::Exec {
            blueprint,
            input,
            reset,
            trace,
            server: s,
        } => {
            let read = [
                ("blueprint", blueprint.as_path()),
                ("evaluation key", &s.eval_key),
                ("request", &input),
            ];
            let (snapshots, _locks) = s.claim(&read, trace.as_deref())?;
            let circuit = load_design(&blueprint)?;
            check_reset(&circuit, reset)?;
            let mut m = CircuitMachine::open_request(
                &s.eval_key,
                &input,
                circuit,
                reset,
                s.threads,
                &mut shown,
            )?;
            exec(
                &mut m,
                &s,
                snapshots.as_ref(),
                reset,
                trace.as_deref(),
                &mut shown,
            )?;
        }
        CircuitCommand::Resume {
            snapshot,
            blueprint,
            trace,
            server: s,
        } => {
            let read = [
                ("snapshot", snapshot.as_path()),
                ("blueprint", &blueprint),
                ("evaluation key", &s.eval_key),
            ];
            let (snapshots, _locks) = s.claim(&read, trace.as_deref())?;
            let circuit = load_design(&blueprint)?;
            let mut m = CircuitMachine::open_snapshot(
                &s.eval_key,
                &snapshot,
                circuit,
                s.threads,
                &mut shown,
            )?;
            if !quiet {
                eprintln!("resuming at cycle {}", m.engine.cycle());
            }
            exec(
                &mut m,
                &s,
                snapshots.as_ref(),
                false,
                trace.as_deref(),
                &mut shown,
            )?;
        }
        CircuitCommand::Dec(a) => a.run(&mut shown)?,
    }
    Ok(())
}

impl RunArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let RunArgs {
            blueprint,
            inputs,
            cycles,
            until,
            reset,
            key,
            eval_key,
            output,
            trace,
            vcd,
            threads,
        } = self;
        let mut read = vec![("blueprint", blueprint.as_path())];
        let named = [
            ("inputs", &inputs),
            ("secret key", &key),
            ("evaluation key", &eval_key),
        ];
        read.extend(named.iter().filter_map(|(w, p)| Some((*w, p.as_deref()?))));
        let mut _locks = Vec::new();
        for (what, p) in [("output", &output), ("trace", &trace), ("VCD", &vcd)] {
            if let Some(p) = p {
                _locks.extend(claim(p, &read)?);
                read.push((what, p.as_path()));
            }
        }
        let circuit = load_design(&blueprint)?;
        check_reset(&circuit, reset)?;
        let inputs = CircuitInputs::read_for(inputs.as_deref(), &circuit)?;
        let signals = circuit.outputs().iter();
        let signals = signals.map(|p| (p.name.clone(), p.bits.len())).collect();
        let mut plan = DesignRun {
            cycles,
            until,
            reset,
            trace: (trace.is_some() || vcd.is_some()).then(|| Trace::new(signals)),
        };
        let out = match (key, eval_key) {
            (Some(k), Some(e)) => {
                run_encrypted(circuit, &inputs, &mut plan, &k, &e, threads, shown)?
            }
            _ => run_plain(circuit, &inputs, &mut plan)?,
        };
        let Some(out) = out else {
            return Ok(());
        };
        if let Some(t) = &plan.trace {
            for (p, text) in [(&trace, t.json_lines().to_string()), (&vcd, t.vcd())] {
                if let Some(p) = p {
                    write_atomic(p, text.as_bytes(), Access::Public)?;
                }
            }
        }
        let text = serde_json::to_string_pretty(&out)?;
        match output {
            Some(p) => write_atomic(&p, text.as_bytes(), Access::Public)?,
            None => println!("{text}"),
        }
        Ok(())
    }
}

impl DecArgs {
    fn run(self, shown: &mut Shown) -> Result<()> {
        let DecArgs {
            blueprint,
            key,
            input,
            trace,
            vcd,
        } = self;
        let mut read = vec![("blueprint", blueprint.as_path()), ("secret key", &key)];
        read.extend(input.as_deref().map(|p| ("result", p)));
        read.extend(trace.as_deref().map(|p| ("trace", p)));
        let _lock = vcd.as_deref().map(|p| claim(p, &read)).transpose()?;
        let circuit = load_design(&blueprint)?;
        let key = load_client_key(&key, shown)?;
        if let Some(t) = trace {
            let env = Envelope::read(&t, Kind::Trace)?;
            let trace = decrypt_circuit_trace(&key, &env, &circuit).map_err(|e| e.in_file(&t))?;
            if let Some(p) = &vcd {
                write_atomic(p, trace.vcd().as_bytes(), Access::Public)?;
            }
            print!("{}", trace.json_lines());
        } else if let Some(input) = input {
            let env = Envelope::read(&input, Kind::Result)?;
            let out =
                decrypt_circuit_result(&key, &env, &circuit).map_err(|e| e.in_file(&input))?;
            println!("{}", serde_json::to_string_pretty(&out)?);
        }
        Ok(())
    }
}

/// The server's half after opening: runs, writes, reports.
fn exec(
    m: &mut CircuitMachine,
    s: &ServerArgs,
    snapshots: Option<&vsp_platform::Snapshots>,
    reset: bool,
    trace: Option<&std::path::Path>,
    shown: &mut Shown,
) -> Result<()> {
    let plan = Exec {
        cycles: s.cycles,
        reset,
        snapshots,
        output: &s.output,
        trace,
    };
    let Some(done) = m.exec(&plan, shown)? else {
        return Ok(());
    };
    if shown.quiet() {
        return Ok(());
    }
    if let (Some(size), Some(path)) = (done.trace_bytes, trace) {
        eprintln!(
            "wrote encrypted trace {} ({})",
            path.display(),
            fmt_bytes(size)
        );
    }
    let (cycles, out) = (s.cycles, s.output.display());
    eprintln!(
        "ran {cycles} cycles; wrote result {out} ({})",
        fmt_bytes(done.result_bytes)
    );
    Ok(())
}
