//! `vsp circuit …`: the engine on any user circuit — a blueprint (`docs/blueprint.md`) or a bare
//! Yosys JSON netlist (`docs/yosys.md`) — in plain, or encrypted on one machine (with `--key` and
//! `--eval-key`: inputs and memories are encrypted with the secret key, the circuit is evaluated over
//! TFHE, and outputs are decrypted — a check of a design). The inputs file is documented in
//! [`INPUTS_HELP`] (`vsp circuit run --help`) and `docs/circuit.md`; outputs go to a JSON file (or
//! stdout): `{"cycles": 5, "outputs": {"count": 4}, "memories": {"ram": [...]}}`; `--trace` and
//! `--vcd` write the outputs of every cycle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Result};
use clap::Subcommand;
use vsp_circuit::{client, Circuit, Engine, PlainBackend, TfheBackend};

use vsp_platform::design::{
    decrypt_circuit_result, decrypt_circuit_trace, load_design, plain_outputs, run_design,
    CircuitInputs, CircuitMachine, CircuitOutputs, CircuitRequest, DesignRun, EncryptedTrace,
    Trace,
};
use vsp_platform::envelope::check_same_key;
use vsp_platform::files::{write_atomic, Access};
use vsp_platform::keys::ServerKeys;
use vsp_platform::{Envelope, Kind, PlatformError, Snapshots};

use crate::progress::Bar;

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
    Run {
        /// Blueprint (TOML) or bare Yosys JSON netlist (its ports become the external ports).
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
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
    },
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
        /// Evaluation key (from `vsp genbkey`) of the key the request was encrypted under.
        #[arg(short, long)]
        eval_key: PathBuf,
        /// The request from `vsp circuit enc`.
        #[arg(short, long)]
        input: PathBuf,
        /// Write the encrypted result here (`vsp circuit dec` decrypts it).
        #[arg(short, long)]
        output: PathBuf,
        /// Cycles to run (after the reset cycle, which is not counted).
        #[arg(long)]
        cycles: u64,
        /// Apply one (public) reset cycle first (when the circuit has a 1-bit `@reset` input).
        #[arg(long)]
        reset: bool,
        /// Write every cycle's encrypted outputs here (`vsp circuit dec --trace` decrypts them
        /// into the JSON lines and VCD of `vsp circuit run --trace`).
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(short, long, value_parser = crate::parse_threads)]
        threads: Option<usize>,
        #[command(flatten)]
        snapshots: crate::SnapshotArgs,
    },
    /// Server: continue a circuit run from its snapshot (writing a new snapshot).
    Resume {
        /// The snapshot to continue from (its own argument id: `--snapshot` names the new one).
        #[arg(id = "from", value_name = "SNAPSHOT")]
        snapshot: PathBuf,
        /// Blueprint (TOML) or bare Yosys JSON netlist: the one the run was started on.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        /// Evaluation key the run was started with.
        #[arg(short, long)]
        eval_key: PathBuf,
        /// Write the encrypted result here (`vsp circuit dec` decrypts it).
        #[arg(short, long)]
        output: PathBuf,
        /// Cycles to run on top of the snapshot's.
        #[arg(long)]
        cycles: u64,
        /// Write every cycle's encrypted outputs here (numbered on from the snapshot's cycle;
        /// `vsp circuit dec --trace` decrypts them).
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(short, long, value_parser = crate::parse_threads)]
        threads: Option<usize>,
        #[command(flatten)]
        snapshots: crate::SnapshotArgs,
    },
    /// Client: decrypt a circuit result into the outputs JSON (or, with --trace, an encrypted
    /// trace into JSON lines).
    Dec {
        /// Blueprint (TOML) or bare Yosys JSON netlist the result is of.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
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
    },
}

pub fn run(cmd: CircuitCommand, quiet: bool) -> Result<()> {
    match cmd {
        c @ (CircuitCommand::Enc { .. }
        | CircuitCommand::Exec { .. }
        | CircuitCommand::Resume { .. }
        | CircuitCommand::Dec { .. }) => split(c, quiet)?,
        CircuitCommand::Stats { blueprint, json } => {
            let c = load_design(&blueprint)?;
            let s = c.stats();
            let v = stats_json(&c, &s);
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if let Some(obj) = v.as_object() {
                for (k, v) in obj {
                    println!("{k:<26} {v}");
                }
            }
        }
        CircuitCommand::Run {
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
        } => {
            let mut read = vec![("blueprint", blueprint.as_path())];
            for (what, p) in [
                ("inputs", &inputs),
                ("secret key", &key),
                ("evaluation key", &eval_key),
            ] {
                if let Some(p) = p {
                    read.push((what, p.as_path()));
                }
            }
            let mut _locks = Vec::new();
            for (what, p) in [("output", &output), ("trace", &trace), ("VCD", &vcd)] {
                if let Some(p) = p {
                    _locks.extend(crate::claim(p, &read)?);
                    read.push((what, p.as_path()));
                }
            }
            let circuit = load_design(&blueprint)?;
            check_reset(&circuit, reset)?;
            // Under MPI only rank 0 reads the inputs (and the secret key) and writes the outputs.
            let root = crate::mpi_job::is_root();
            let inputs = read_inputs(inputs.as_deref().filter(|_| root), &circuit)?;
            let signals = circuit
                .outputs()
                .iter()
                .map(|p| (p.name.clone(), p.bits.len()))
                .collect();
            let mut plan = DesignRun {
                cycles,
                until,
                reset,
                trace: (trace.is_some() || vcd.is_some()).then(|| Trace::new(signals)),
            };
            let out = match (key, eval_key) {
                (Some(k), Some(e)) => {
                    if plan.until.is_some() {
                        bail!(
                            "--until needs the plain run: an encrypted run cannot see its outputs"
                        );
                    }
                    run_encrypted(circuit, &inputs, &mut plan, &k, &e, threads, quiet)?
                }
                _ => run_plain(circuit, &inputs, &mut plan)?,
            };
            let Some(out) = out else {
                return Ok(());
            };
            if let Some(t) = &plan.trace {
                if let Some(p) = &trace {
                    write_atomic(p, t.json_lines().as_bytes(), Access::Public)?;
                }
                if let Some(p) = &vcd {
                    write_atomic(p, t.vcd().as_bytes(), Access::Public)?;
                }
            }
            let text = serde_json::to_string_pretty(&out)?;
            match output {
                Some(p) => write_atomic(&p, text.as_bytes(), Access::Public)?,
                None => println!("{text}"),
            }
        }
    }
    Ok(())
}

/// The client and server halves of an encrypted circuit run.
fn split(cmd: CircuitCommand, quiet: bool) -> Result<()> {
    match cmd {
        CircuitCommand::Enc {
            blueprint,
            key,
            inputs,
            output,
        } => {
            let mut read = vec![("blueprint", blueprint.as_path()), ("secret key", &key)];
            if let Some(p) = &inputs {
                read.push(("inputs", p));
            }
            let _lock = crate::claim(&output, &read)?;
            let circuit = load_design(&blueprint)?;
            let inputs = read_inputs(inputs.as_deref(), &circuit)?;
            warn_if_public(&inputs, false);
            let key = crate::load_client_key(&key)?;
            let env = inputs.encrypt(&key, &circuit)?.to_envelope(key.sk.params());
            let size = env.write(&output)?;
            if !quiet {
                eprintln!(
                    "wrote circuit request {} ({})",
                    output.display(),
                    crate::progress::fmt_bytes(size)
                );
            }
        }
        CircuitCommand::Exec {
            blueprint,
            eval_key,
            input,
            output,
            cycles,
            reset,
            trace,
            threads,
            snapshots,
        } => {
            let read = [
                ("blueprint", blueprint.as_path()),
                ("evaluation key", &eval_key),
                ("request", &input),
            ];
            let (snapshots, mut _locks) = snapshots.resolve(&output, &read)?;
            _locks.extend(claim_trace(
                trace.as_deref(),
                &read,
                &output,
                snapshots.as_ref(),
            )?);
            let circuit = load_design(&blueprint)?;
            check_reset(&circuit, reset)?;
            // The request is read next: its key is checked against the evaluation key's header
            // before that key is loaded.
            let env = if crate::mpi_job::is_root() {
                let env = Envelope::read(&input, Kind::Request)?;
                ServerKeys::check_header(
                    &eval_key,
                    &format!("the request {}", input.display()),
                    env.key_id,
                    &env.params,
                )?;
                Some(env)
            } else {
                None
            };
            let keys = crate::load_server_keys(&eval_key, quiet)?;
            let mut m = if let Some(env) = env {
                let request = CircuitRequest::from_envelope(&env, &circuit, keys.ek.params())
                    .map_err(|e| e.in_file(&input))?;
                drop(env);
                if request.inputs.is_empty() && request.memories.is_empty() {
                    warn_public(reset);
                }
                CircuitMachine::start(&keys, circuit, request, threads)?
            } else {
                // Another MPI rank: rank 0 reads the request; this rank takes its state.
                CircuitMachine::follower(&keys, circuit, threads)?
            };
            crate::mpi_job::join(&mut m.engine)?;
            let plan = ExecPlan {
                cycles,
                reset,
                snapshots: snapshots.as_ref(),
                output: &output,
                trace: trace.as_deref(),
            };
            exec(&mut m, &plan, quiet)?;
        }
        CircuitCommand::Resume {
            snapshot,
            blueprint,
            eval_key,
            output,
            cycles,
            trace,
            threads,
            snapshots,
        } => {
            let read = [
                ("snapshot", snapshot.as_path()),
                ("blueprint", &blueprint),
                ("evaluation key", &eval_key),
            ];
            let (snapshots, mut _locks) = snapshots.resolve(&output, &read)?;
            _locks.extend(claim_trace(
                trace.as_deref(),
                &read,
                &output,
                snapshots.as_ref(),
            )?);
            if crate::mpi_job::is_root() {
                crate::check_snapshot_header(&snapshot, &eval_key)?;
            }
            let (circuit, keys) = server(&blueprint, &eval_key, quiet)?;
            let mut m = if crate::mpi_job::is_root() {
                CircuitMachine::resume(&keys, circuit, &snapshot, threads)?
            } else {
                CircuitMachine::follower(&keys, circuit, threads)?
            };
            crate::mpi_job::join(&mut m.engine)?;
            if !quiet {
                eprintln!("resuming at cycle {}", m.engine.cycle());
            }
            let plan = ExecPlan {
                cycles,
                reset: false,
                snapshots: snapshots.as_ref(),
                output: &output,
                trace: trace.as_deref(),
            };
            exec(&mut m, &plan, quiet)?;
        }
        CircuitCommand::Dec {
            blueprint,
            key,
            input,
            trace,
            vcd,
        } => {
            let mut read = vec![("blueprint", blueprint.as_path()), ("secret key", &key)];
            read.extend(input.as_deref().map(|p| ("result", p)));
            read.extend(trace.as_deref().map(|p| ("trace", p)));
            let _lock = vcd.as_deref().map(|p| crate::claim(p, &read)).transpose()?;
            let circuit = load_design(&blueprint)?;
            let key = crate::load_client_key(&key)?;
            if let Some(t) = trace {
                let env = Envelope::read(&t, Kind::Trace)?;
                let trace =
                    decrypt_circuit_trace(&key, &env, &circuit).map_err(|e| e.in_file(&t))?;
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
        }
        _ => unreachable!("split() takes the client/server subcommands"),
    }
    Ok(())
}

/// Refuses `--reset` on a circuit without a 1-bit `@reset` input (the reset cycle was silently
/// skipped), before any work.
fn check_reset(circuit: &Circuit, reset: bool) -> Result<()> {
    if reset && circuit.input("reset").is_none_or(|p| p.bits.len() != 1) {
        bail!("--reset needs a 1-bit input @reset; the circuit has none");
    }
    Ok(())
}

/// What `circuit resume` needs: the circuit and the evaluation key.
fn server(
    blueprint: &Path,
    eval_key: &Path,
    quiet: bool,
) -> Result<(Arc<Circuit>, Arc<ServerKeys>)> {
    let circuit = load_design(blueprint)?;
    let keys = crate::load_server_keys(eval_key, quiet)?;
    Ok((circuit, keys))
}

/// Checks and claims the path of an encrypted trace against the command's inputs and outputs.
fn claim_trace(
    trace: Option<&Path>,
    read: &[(&str, &Path)],
    output: &Path,
    snapshots: Option<&Snapshots>,
) -> Result<Option<vsp_platform::files::OutputLock>> {
    let Some(t) = trace else {
        return Ok(None);
    };
    let mut all = read.to_vec();
    all.push(("output", output));
    all.extend(snapshots.map(|s| ("snapshot", s.path.as_path())));
    crate::claim(t, &all)
}

/// What the server's half runs and writes.
struct ExecPlan<'a> {
    cycles: u64,
    reset: bool,
    snapshots: Option<&'a Snapshots>,
    output: &'a Path,
    trace: Option<&'a Path>,
}

/// Runs the server's half and writes the encrypted result (and trace).
fn exec(m: &mut CircuitMachine, plan: &ExecPlan<'_>, quiet: bool) -> Result<()> {
    let (cycles, output) = (plan.cycles, plan.output);
    let bar = Bar::cycles(quiet, cycles);
    let mut trace = plan.trace.map(|_| EncryptedTrace::new(m));
    match &mut trace {
        Some(t) => m.run_traced(cycles, plan.reset, plan.snapshots, t, &mut |p| bar.cycle(p))?,
        None => m.run(cycles, plan.reset, plan.snapshots, &mut |p| bar.cycle(p))?,
    }
    bar.finish();
    if !crate::mpi_job::is_root() {
        return Ok(());
    }
    if let (Some(t), Some(path)) = (&trace, plan.trace) {
        let size = t.to_envelope(m.engine.backend().params()).write(path)?;
        if !quiet {
            eprintln!(
                "wrote encrypted trace {} ({})",
                path.display(),
                crate::progress::fmt_bytes(size)
            );
        }
    }
    let size = m.result()?.write(output)?;
    if !quiet {
        eprintln!(
            "ran {cycles} cycles; wrote result {} ({})",
            output.display(),
            crate::progress::fmt_bytes(size)
        );
    }
    Ok(())
}

/// Reads the inputs file (if any), its names checked against `circuit`.
fn read_inputs(path: Option<&Path>, circuit: &Circuit) -> Result<CircuitInputs> {
    Ok(match path {
        Some(p) => {
            let inputs = CircuitInputs::read(p)?;
            inputs.check_names(circuit, p)?;
            inputs
        }
        None => CircuitInputs::default(),
    })
}

/// Warns when an encrypted run would encrypt nothing.
fn warn_if_public(inputs: &CircuitInputs, reset: bool) {
    if inputs.is_empty() {
        warn_public(reset);
    }
}

fn warn_public(reset: bool) {
    eprintln!(
        "warning: no input or memory is encrypted (the inputs file names none{}): the run computes \
         on trivial ciphertexts of public values, so nothing is secret and its timing means nothing",
        if reset { "; --reset is public" } else { "" }
    );
}

fn stats_json(c: &Circuit, s: &vsp_circuit::NetlistStats) -> serde_json::Value {
    let gates: BTreeMap<String, u64> = vsp_circuit::GateKind::ALL
        .iter()
        .zip(s.gates.iter())
        .map(|(k, n)| (format!("{k:?}"), *n))
        .collect();
    serde_json::json!({
        "gates": gates,
        "not": s.not,
        "mux": s.mux,
        "dff": s.dff,
        "memories": c.memories().iter().map(|m| format!("{} ({:?} {:?}, {}x{} bits)", m.spec.name, m.spec.imp, m.spec.kind, 1u64 << m.spec.addr_width, m.spec.data_width)).collect::<Vec<_>>(),
        "critical_path_bootstraps": s.critical_path,
        "bootstraps_per_cycle": s.bootstraps_per_cycle,
        "encrypted_per_cycle": encrypted_plan_json(c),
    })
}

/// What an encrypted cycle costs with select-once MUXes at the default parameters (memories aside).
fn encrypted_plan_json(c: &Circuit) -> serde_json::Value {
    let Some(lp) = vsp_circuit::LeveledParams::for_params(&vsp_tfhe::Params::default_128()) else {
        return serde_json::Value::Null;
    };
    let k = vsp_circuit::MuxPlan::new(c, &lp).counts();
    serde_json::json!({
        "gate_bootstraps": k.bootstraps().round() as u64,
        "circuit_bootstraps": k.circuit_bootstraps,
        "cmuxes": k.cmuxes,
        "mux_gates": k.gate_muxes,
        "lifts": k.lifts,
        "carried_flip_flops": k.carried,
        "refreshes": k.refreshes,
        "key_switches": k.key_switches,
        "bootstrap_equivalents": (k.cost * 10.0).round() / 10.0,
        "log2_failure_per_cycle": (k.log2_failure * 10.0).round() / 10.0,
    })
}

fn run_plain(
    circuit: Arc<Circuit>,
    inputs: &CircuitInputs,
    plan: &mut DesignRun,
) -> Result<Option<CircuitOutputs>> {
    let mut e = Engine::new(PlainBackend, circuit);
    inputs.load_plain(&mut e)?;
    crate::mpi_job::join(&mut e)?;
    let value = |e: &Engine<PlainBackend>, n: &str| -> vsp_platform::Result<u64> {
        Ok(e.output_value(n, 0)?)
    };
    let cycles = run_design(&mut e, plan, &value, &mut |_| {})?;
    if !crate::mpi_job::is_root() {
        return Ok(None);
    }
    Ok(Some(plain_outputs(&e, cycles)?))
}

/// Client and server on one machine: the client's request ([`CircuitInputs::encrypt`]) runs on the
/// server's machine ([`CircuitMachine`]), whose result the client decrypts — the split's path
/// without its files.
fn run_encrypted(
    circuit: Arc<Circuit>,
    inputs: &CircuitInputs,
    plan: &mut DesignRun,
    key: &Path,
    eval_key: &Path,
    threads: Option<usize>,
    quiet: bool,
) -> Result<Option<CircuitOutputs>> {
    // Under MPI rank 0 encrypts the inputs; the other ranks take its state and compute.
    let secret = if crate::mpi_job::is_root() {
        let ck = crate::load_client_key(key)?;
        // From the header, before the evaluation key is loaded and decompressed.
        ServerKeys::check_header(
            eval_key,
            &format!("the secret key {}", key.display()),
            ck.key_id,
            &ck.params_name,
        )?;
        warn_if_public(inputs, plan.reset);
        Some(ck)
    } else {
        None
    };
    let keys = ServerKeys::load(eval_key)?;
    if let Some(ck) = &secret {
        check_same_key(
            "the evaluation key",
            keys.key_id,
            &keys.params_name,
            ck.key_id,
            &ck.params_name,
        )?;
    }
    let mut m = match &secret {
        Some(ck) => {
            let request = inputs.encrypt(ck, &circuit)?;
            CircuitMachine::start(&keys, circuit.clone(), request, threads)?
        }
        None => CircuitMachine::follower(&keys, circuit.clone(), threads)?,
    };
    crate::mpi_job::join(&mut m.engine)?;
    let bar = Bar::cycles(quiet || secret.is_none(), plan.cycles);
    let value = |e: &Engine<TfheBackend>, n: &str| -> vsp_platform::Result<u64> {
        match &secret {
            Some(ck) => Ok(client::decrypt_value(&ck.sk, &e.output(n)?)?),
            None => Err(PlatformError::usage("only rank 0 reads outputs")),
        }
    };
    run_design(&mut m.engine, plan, &value, &mut |p| bar.cycle(p))?;
    bar.finish();
    let Some(ck) = secret else {
        return Ok(None);
    };
    Ok(Some(decrypt_circuit_result(&ck, &m.result()?, &circuit)?))
}
