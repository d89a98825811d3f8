//! `vsp circuit …`: the engine on any user circuit described by a blueprint (see `docs/blueprint.md`).
//!
//! Inputs come from a JSON file `{"inputs": {"en": 1}, "memories": {"rom": [1, 2, 3]}}` (values held
//! for the whole run; memory words from address 0), outputs go to a JSON file (or stdout):
//! `{"cycles": 5, "outputs": {"count": 4}, "memories": {"ram": [...]}}`. With `--key` and
//! `--eval-key` the run is encrypted: inputs and memories are encrypted with the secret key, the
//! circuit is evaluated over TFHE, and outputs are decrypted — a one-machine check of a design.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use serde::{Deserialize, Serialize};
use vsp_circuit::{
    client, Circuit, Engine, MemImpl, MemKind, MemState, PlainBackend, RunOptions, TfheBackend,
};

use vsp_platform::envelope::check_same_key;
use vsp_platform::files::{write_atomic, Access};
use vsp_platform::keys::{ClientKey, ServerKeys};

use crate::progress::Bar;

#[derive(Subcommand)]
pub enum CircuitCommand {
    /// Statistics of a blueprint's circuit: gates by type, DFFs, depth, bootstraps per cycle.
    Stats {
        #[arg(long)]
        blueprint: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Run a circuit, in plain (default) or encrypted (with --key and --eval-key).
    Run {
        #[arg(long)]
        blueprint: PathBuf,
        /// JSON file with input values and memory contents.
        #[arg(long)]
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
        #[arg(short, long, value_parser = crate::parse_threads)]
        threads: Option<usize>,
    },
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Inputs {
    #[serde(default)]
    inputs: BTreeMap<String, u64>,
    #[serde(default)]
    memories: BTreeMap<String, Vec<u64>>,
}

#[derive(Serialize)]
struct Outputs {
    cycles: u64,
    outputs: BTreeMap<String, u64>,
    memories: BTreeMap<String, Vec<u64>>,
}

pub fn run(cmd: CircuitCommand, quiet: bool) -> Result<()> {
    match cmd {
        CircuitCommand::Stats { blueprint, json } => {
            let c = Circuit::from_blueprint_path(&blueprint)?;
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
            threads,
        } => {
            if let Some(o) = &output {
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
                vsp_platform::files::check_output(o, &read)?;
            }
            let circuit = Arc::new(Circuit::from_blueprint_path(&blueprint)?);
            let inputs = match inputs {
                Some(p) => {
                    let text = std::fs::read_to_string(&p)
                        .with_context(|| format!("cannot read {}", p.display()))?;
                    serde_json::from_str(&text)
                        .with_context(|| format!("{}: malformed inputs JSON", p.display()))?
                }
                None => Inputs::default(),
            };
            let out = match (key, eval_key) {
                (Some(k), Some(e)) => {
                    if until.is_some() {
                        bail!(
                            "--until needs the plain run: an encrypted run cannot see its outputs"
                        );
                    }
                    run_encrypted(circuit, &inputs, cycles, reset, &k, &e, threads, quiet)?
                }
                _ => run_plain(circuit, &inputs, cycles, until, reset)?,
            };
            let text = serde_json::to_string_pretty(&out)?;
            match output {
                Some(p) => write_atomic(&p, text.as_bytes(), Access::Public)?,
                None => println!("{text}"),
            }
        }
    }
    Ok(())
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
    inputs: &Inputs,
    cycles: u64,
    until: Option<String>,
    reset: bool,
) -> Result<Outputs> {
    let mut e = Engine::new(PlainBackend, circuit.clone());
    for (name, v) in &inputs.inputs {
        e.set_input_value(name, *v)?;
    }
    for (name, words) in &inputs.memories {
        e.load_memory_words(name, words)?;
    }
    if reset {
        e.reset()?;
    }
    let report = e.run(
        &RunOptions {
            max_cycles: cycles,
            stop_when: until,
            ..Default::default()
        },
        &mut |_| {},
    )?;
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
    Ok(Outputs {
        cycles: report.cycles,
        outputs,
        memories,
    })
}

#[allow(clippy::too_many_arguments)]
fn run_encrypted(
    circuit: Arc<Circuit>,
    inputs: &Inputs,
    cycles: u64,
    reset: bool,
    key: &Path,
    eval_key: &Path,
    threads: Option<usize>,
    quiet: bool,
) -> Result<Outputs> {
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
    let backend = TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
    let mut e = Engine::new(backend, circuit.clone());
    if let Some(t) = threads {
        e.set_threads(t.max(1));
    }
    for (name, v) in &inputs.inputs {
        let width = circuit
            .input(name)
            .with_context(|| format!("the circuit has no input @{name}"))?
            .bits
            .len();
        if width < 64 && v >> width != 0 {
            bail!("value {v} does not fit the {width}-bit input @{name}");
        }
        e.set_input(name, client::encrypt_value(sk, *v, width))?;
    }
    for (name, words) in &inputs.memories {
        let (_, m) = circuit
            .memory(name)
            .with_context(|| format!("the circuit has no memory {name:?}"))?;
        let (a, w) = (m.spec.addr_width, m.spec.data_width);
        match (m.spec.imp, m.spec.kind) {
            (MemImpl::Cmux, MemKind::Rom) => {
                e.set_rom(name, client::encrypt_rom(sk, a, w, words)?)?
            }
            (MemImpl::Cmux, MemKind::Ram) => {
                e.set_ram(name, client::encrypt_ram(sk, a, w, words)?)?
            }
            (MemImpl::Mux, _) => {
                e.set_memory_cells(name, client::encrypt_mux_memory(sk, a, w, words)?)?
            }
        }
    }
    if reset {
        e.reset()?;
    }
    let bar = Bar::cycles(quiet, cycles);
    let t0 = std::time::Instant::now();
    let report = e.run(
        &RunOptions {
            max_cycles: cycles,
            ..Default::default()
        },
        &mut |p| {
            bar.cycle(&vsp_platform::RunProgress {
                done: p.cycles_done,
                total: cycles,
                elapsed: t0.elapsed().as_secs_f64(),
                engine: p,
            })
        },
    )?;
    bar.finish();
    let mut outputs = BTreeMap::new();
    for p in circuit.outputs() {
        outputs.insert(
            p.name.clone(),
            client::decrypt_value(sk, &e.output(&p.name)?)?,
        );
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
    Ok(Outputs {
        cycles: report.cycles,
        outputs,
        memories,
    })
}
