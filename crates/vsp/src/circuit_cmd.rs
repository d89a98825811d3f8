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
use vsp_circuit::{
    client, Backend, Circuit, Engine, MemKind, MemState, PlainBackend, RunOptions, TfheBackend,
};

use vsp_platform::design::{
    decrypt_circuit_result, load_design, CircuitInputs, CircuitMachine, CircuitOutputs,
    CircuitRequest, Trace,
};
use vsp_platform::envelope::check_same_key;
use vsp_platform::files::{write_atomic, Access};
use vsp_platform::keys::{ClientKey, ServerKeys};
use vsp_platform::{Envelope, Kind};

use crate::progress::Bar;

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
        #[arg(long)]
        json: bool,
    },
    /// Run a circuit, in plain (default) or encrypted (with --key and --eval-key).
    Run {
        /// Blueprint (TOML) or bare Yosys JSON netlist (its ports become the external ports).
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        #[arg(long, long_help = INPUTS_HELP)]
        inputs: Option<PathBuf>,
        /// Cycles to run.
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
        #[arg(short, long, value_parser = crate::parse_threads)]
        threads: Option<usize>,
    },
    /// Client: encrypt a circuit's inputs and memories into a request for `vsp circuit exec`.
    Enc {
        /// Blueprint (TOML) or bare Yosys JSON netlist: the request runs only on this circuit.
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        #[arg(short, long)]
        key: PathBuf,
        #[arg(long, long_help = INPUTS_HELP)]
        inputs: Option<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Server: run an encrypted circuit request (needs only the evaluation key); snapshots as
    /// `vsp run` writes them (default OUTPUT.snapshot).
    Exec {
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        #[arg(short, long)]
        eval_key: PathBuf,
        /// The request from `vsp circuit enc`.
        #[arg(short, long)]
        input: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        cycles: u64,
        /// Apply one (public) reset cycle first (when the circuit has a 1-bit `@reset` input).
        #[arg(long)]
        reset: bool,
        #[arg(short, long, value_parser = crate::parse_threads)]
        threads: Option<usize>,
        #[command(flatten)]
        snapshots: crate::SnapshotArgs,
    },
    /// Server: continue a circuit run from its snapshot (writing a new snapshot).
    Resume {
        snapshot: PathBuf,
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        #[arg(short, long)]
        eval_key: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        cycles: u64,
        #[arg(short, long, value_parser = crate::parse_threads)]
        threads: Option<usize>,
        #[command(flatten)]
        snapshots: crate::SnapshotArgs,
    },
    /// Client: decrypt a circuit result into the outputs JSON.
    Dec {
        #[arg(long, visible_alias = "netlist")]
        blueprint: PathBuf,
        #[arg(short, long)]
        key: PathBuf,
        #[arg(short, long)]
        input: PathBuf,
    },
}

/// How a run ends and what it records.
struct RunPlan {
    cycles: u64,
    until: Option<String>,
    reset: bool,
    /// Record every cycle's outputs.
    trace: Option<Trace>,
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
            for (what, p) in [("output", &output), ("trace", &trace), ("VCD", &vcd)] {
                if let Some(p) = p {
                    vsp_platform::files::check_output(p, &read)?;
                    read.push((what, p.as_path()));
                }
            }
            let circuit = load_design(&blueprint)?;
            let inputs = read_inputs(inputs.as_deref())?;
            let signals = circuit
                .outputs()
                .iter()
                .map(|p| (p.name.clone(), p.bits.len()))
                .collect();
            let mut plan = RunPlan {
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
            vsp_platform::files::check_output(&output, &read)?;
            let circuit = load_design(&blueprint)?;
            let inputs = read_inputs(inputs.as_deref())?;
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
            threads,
            snapshots,
        } => {
            let read = [
                ("blueprint", blueprint.as_path()),
                ("evaluation key", &eval_key),
                ("request", &input),
            ];
            let snapshots = snapshots.resolve(&output, &read)?;
            let circuit = load_design(&blueprint)?;
            let env = Envelope::read(&input, Kind::Request)?;
            let keys = crate::load_server_keys(&eval_key, quiet)?;
            let request = CircuitRequest::from_envelope(&env, &circuit, keys.ek.params())
                .map_err(|e| e.in_file(&input))?;
            drop(env);
            if request.inputs.is_empty() && request.memories.is_empty() {
                warn_public(reset);
            }
            let mut m = CircuitMachine::start(&keys, circuit, request, threads)?;
            exec(&mut m, cycles, reset, snapshots.as_ref(), &output, quiet)?;
        }
        CircuitCommand::Resume {
            snapshot,
            blueprint,
            eval_key,
            output,
            cycles,
            threads,
            snapshots,
        } => {
            let read = [
                ("snapshot", snapshot.as_path()),
                ("blueprint", &blueprint),
                ("evaluation key", &eval_key),
            ];
            let snapshots = snapshots.resolve(&output, &read)?;
            let circuit = load_design(&blueprint)?;
            let keys = crate::load_server_keys(&eval_key, quiet)?;
            let mut m = CircuitMachine::resume(&keys, circuit, &snapshot, threads)?;
            if !quiet {
                eprintln!("resuming at cycle {}", m.engine.cycle());
            }
            exec(&mut m, cycles, false, snapshots.as_ref(), &output, quiet)?;
        }
        CircuitCommand::Dec {
            blueprint,
            key,
            input,
        } => {
            let circuit = load_design(&blueprint)?;
            let key = crate::load_client_key(&key)?;
            let env = Envelope::read(&input, Kind::Result)?;
            let out =
                decrypt_circuit_result(&key, &env, &circuit).map_err(|e| e.in_file(&input))?;
            println!("{}", serde_json::to_string_pretty(&out)?);
        }
        _ => unreachable!("split() takes the client/server subcommands"),
    }
    Ok(())
}

/// Runs the server's half and writes the encrypted result.
fn exec(
    m: &mut CircuitMachine,
    cycles: u64,
    reset: bool,
    snapshots: Option<&vsp_platform::Snapshots>,
    output: &Path,
    quiet: bool,
) -> Result<()> {
    let bar = Bar::cycles(quiet, cycles);
    m.run(cycles, reset, snapshots, &mut |p| bar.cycle(p))?;
    bar.finish();
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

fn read_inputs(path: Option<&Path>) -> Result<CircuitInputs> {
    Ok(match path {
        Some(p) => CircuitInputs::read(p)?,
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

/// Runs `plan.cycles` cycles (or until the 1-bit output `plan.until` is 1), recording every cycle's
/// outputs in `plan.trace`; `value` reads an output (decrypting it in an encrypted run). Returns the
/// cycles run.
fn run_cycles<B: Backend>(
    e: &mut Engine<B>,
    plan: &mut RunPlan,
    value: &dyn Fn(&Engine<B>, &str) -> Result<u64>,
    progress: &mut dyn FnMut(u64, &vsp_circuit::Progress),
) -> Result<u64> {
    if let Some(name) = &plan.until {
        match e.circuit().outputs().iter().find(|p| &p.name == name) {
            Some(p) if p.bits.len() == 1 => {}
            Some(_) => bail!("--until {name}: the output must be 1 bit wide"),
            None => bail!("--until {name}: the circuit has no output @{name}"),
        }
    }
    if plan.reset {
        e.reset()?;
    }
    let names: Vec<String> = e
        .circuit()
        .outputs()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let one = RunOptions {
        max_cycles: 1,
        ..Default::default()
    };
    let mut done = 0;
    while done < plan.cycles {
        let cycle = e.cycle();
        e.run(&one, &mut |p| progress(done, p))?;
        done += 1;
        if let Some(t) = &mut plan.trace {
            let values = names
                .iter()
                .map(|n| value(e, n))
                .collect::<Result<Vec<u64>>>()?;
            t.record(cycle, &values);
        }
        if let Some(name) = &plan.until {
            if value(e, name)? == 1 {
                break;
            }
        }
    }
    Ok(done)
}

fn run_plain(
    circuit: Arc<Circuit>,
    inputs: &CircuitInputs,
    plan: &mut RunPlan,
) -> Result<CircuitOutputs> {
    let mut e = Engine::new(PlainBackend, circuit.clone());
    for (name, v) in &inputs.inputs {
        e.set_input_value(name, *v)?;
    }
    for (name, words) in &inputs.memories {
        e.load_memory_words(name, words)?;
    }
    let value = |e: &Engine<PlainBackend>, n: &str| Ok(e.output_value(n, 0)?);
    let cycles = run_cycles(&mut e, plan, &value, &mut |_, _| {})?;
    let mut outputs = BTreeMap::new();
    for p in circuit.outputs() {
        outputs.insert(p.name.clone(), e.output_value(&p.name, 0)?);
    }
    let mut memories = BTreeMap::new();
    for m in circuit
        .memories()
        .iter()
        .filter(|m| m.spec.kind == MemKind::Ram)
    {
        memories.insert(m.spec.name.clone(), e.memory_words(&m.spec.name, 0)?);
    }
    Ok(CircuitOutputs {
        cycles,
        outputs,
        memories,
    })
}

fn run_encrypted(
    circuit: Arc<Circuit>,
    inputs: &CircuitInputs,
    plan: &mut RunPlan,
    key: &Path,
    eval_key: &Path,
    threads: Option<usize>,
    quiet: bool,
) -> Result<CircuitOutputs> {
    let ck = ClientKey::load(key)?;
    let sk = &ck.sk;
    let keys = ServerKeys::load(eval_key)?;
    check_same_key(
        "the evaluation key",
        keys.key_id,
        &keys.params_name,
        ck.key_id,
        &ck.params_name,
    )?;
    warn_if_public(inputs, plan.reset);
    let backend = TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
    let mut e = Engine::new(backend, circuit.clone());
    if let Some(t) = threads {
        e.set_threads(t.max(1));
    }
    // The same request the client/server split sends, loaded here without the file.
    inputs.encrypt(&ck, &circuit)?.load(&mut e)?;
    let total = plan.cycles;
    let bar = Bar::cycles(quiet, total);
    let t0 = std::time::Instant::now();
    let value = |e: &Engine<TfheBackend>, n: &str| Ok(client::decrypt_value(sk, &e.output(n)?)?);
    let cycles = run_cycles(&mut e, plan, &value, &mut |done, p| {
        bar.cycle(&vsp_platform::RunProgress {
            done: done + p.cycles_done,
            total,
            elapsed: t0.elapsed().as_secs_f64(),
            engine: p,
        })
    })?;
    bar.finish();
    let mut outputs = BTreeMap::new();
    for p in circuit.outputs() {
        outputs.insert(p.name.clone(), value(&e, &p.name)?);
    }
    let mut memories = BTreeMap::new();
    for m in circuit
        .memories()
        .iter()
        .filter(|m| m.spec.kind == MemKind::Ram)
    {
        let words = match e.memory(&m.spec.name)? {
            MemState::Ram(ram) => client::decrypt_ram(sk, ram)?,
            _ => client::decrypt_mux_memory(sk, m.spec.data_width, &e.memory_cells(&m.spec.name)?)?,
        };
        memories.insert(m.spec.name.clone(), words);
    }
    Ok(CircuitOutputs {
        cycles,
        outputs,
        memories,
    })
}
