//! Running a design as `vsp circuit run` does ([`LocalRun`]): plainly ([`run_plain`]) or encrypted
//! on one machine, client and server in one process ([`run_encrypted`]), one cycle at a time
//! ([`run_design`]), on every MPI rank.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use vsp_circuit::{client, Circuit, Engine, PlainBackend, TfheBackend};

use super::{
    decrypt_circuit_result, load_design, plain_outputs, CircuitInputs, CircuitMachine,
    CircuitOutputs, Trace,
};
use crate::error::{PlatformError, Result};
use crate::files::{write_atomic, Access};
use crate::keys::ServerKeys;
use crate::processor::client::load_client_key;
use crate::processor::run::RunProgress;
use crate::server::{claim, mpi, watched, Watch};
use crate::wire::envelope::check_same_key;

/// Refuses `reset` on a circuit without a 1-bit `@reset` input (the reset cycle would be silently
/// skipped), before any work.
pub fn check_reset(circuit: &Circuit, reset: bool) -> Result<()> {
    if reset && circuit.input("reset").is_none_or(|p| p.bits.len() != 1) {
        return Err(PlatformError::usage(
            "--reset needs a 1-bit input @reset; the circuit has none",
        ));
    }
    Ok(())
}

/// The warning of a run that encrypts nothing.
pub fn public_warning(reset: bool) -> String {
    format!(
        "warning: no input or memory is encrypted (the inputs file names none{}): the run computes \
         on trivial ciphertexts of public values, so nothing is secret and its timing means nothing",
        if reset { "; --reset is public" } else { "" }
    )
}

impl CircuitInputs {
    /// The inputs file at `path` (none: all zero), its names checked against `circuit`. Under MPI
    /// only rank 0 reads it.
    pub fn read_for(path: Option<&Path>, circuit: &Circuit) -> Result<CircuitInputs> {
        Ok(match path.filter(|_| mpi::is_root()) {
            Some(p) => {
                let inputs = CircuitInputs::read(p)?;
                inputs.check_names(circuit, p)?;
                inputs
            }
            None => CircuitInputs::default(),
        })
    }
}

/// A plain run of `plan` (on every MPI rank); the outputs on rank 0, `None` on the others.
pub fn run_plain(
    circuit: Arc<Circuit>,
    inputs: &CircuitInputs,
    plan: &mut DesignRun,
) -> Result<Option<CircuitOutputs>> {
    let mut e = Engine::new(PlainBackend, circuit);
    inputs.load_plain(&mut e)?;
    mpi::join(&mut e)?;
    let value = |e: &Engine<PlainBackend>, n: &str| -> Result<u64> { Ok(e.output_value(n, 0)?) };
    let cycles = run_design(&mut e, plan, &value, &mut |_| {})?;
    if !mpi::is_root() {
        return Ok(None);
    }
    Ok(Some(plain_outputs(&e, cycles)?))
}

/// Client and server on one machine: the client's request ([`CircuitInputs::encrypt`]) runs on the
/// server's machine ([`CircuitMachine`]), whose result the client decrypts — the split's path
/// without its files. Under MPI rank 0 encrypts the inputs and decrypts the outputs; the other ranks
/// take its state and compute (`None` there).
pub fn run_encrypted(
    circuit: Arc<Circuit>,
    inputs: &CircuitInputs,
    plan: &mut DesignRun,
    key: &Path,
    eval_key: &Path,
    threads: Option<usize>,
    watch: &mut dyn Watch,
) -> Result<Option<CircuitOutputs>> {
    if plan.until.is_some() {
        return Err(PlatformError::usage(
            "--until needs the plain run: an encrypted run cannot see its outputs",
        ));
    }
    let secret = if mpi::is_root() {
        let ck = load_client_key(key, watch)?;
        // From the header, before the evaluation key is loaded and decompressed.
        ServerKeys::check_header(
            eval_key,
            &format!("the secret key {}", key.display()),
            ck.key_id,
            &ck.params_name,
        )?;
        if inputs.is_empty() {
            watch.warn(&public_warning(plan.reset));
        }
        Some(ck)
    } else {
        None
    };
    let keys = ServerKeys::load(eval_key)?;
    let mut m = match &secret {
        Some(ck) => {
            check_same_key(
                "the evaluation key",
                keys.key_id,
                &keys.params_name,
                ck.key_id,
                &ck.params_name,
            )?;
            let request = inputs.encrypt(ck, &circuit)?;
            CircuitMachine::start(&keys, circuit.clone(), request, threads)?
        }
        None => CircuitMachine::follower(&keys, circuit.clone(), threads)?,
    };
    mpi::join(&mut m.engine)?;
    let value = |e: &Engine<TfheBackend>, n: &str| -> Result<u64> {
        match &secret {
            Some(ck) => Ok(client::decrypt_value(&ck.sk, &e.output(n)?)?),
            None => Err(PlatformError::usage("only rank 0 reads outputs")),
        }
    };
    let cycles = plan.cycles;
    watched(watch, cycles, |p| {
        run_design(&mut m.engine, plan, &value, p).map(drop)
    })?;
    let Some(ck) = secret else {
        return Ok(None);
    };
    Ok(Some(decrypt_circuit_result(&ck, &m.result()?, &circuit)?))
}

/// How a local run of a design (`vsp circuit run`, plain or encrypted on one machine) ends and what
/// it records.
pub struct DesignRun {
    pub cycles: u64,
    /// Stop after the first cycle in which this 1-bit output is 1 (plain runs only: an encrypted
    /// engine cannot see its outputs).
    pub until: Option<String>,
    /// Apply one reset cycle first (when the circuit has a 1-bit `@reset` input).
    pub reset: bool,
    /// Every cycle's outputs, when asked for.
    pub trace: Option<Trace>,
}

/// Runs `plan` on `engine` one cycle at a time, recording each cycle's outputs in `plan.trace`
/// (`value` reads an output: directly in plain, by decrypting in an encrypted run). In a distributed
/// run only the root engine ([`Engine::is_root`]) reads outputs, and the engine stops every rank on
/// the root's decision. Returns the cycles run.
pub fn run_design<B: vsp_circuit::Backend>(
    engine: &mut Engine<B>,
    plan: &mut DesignRun,
    value: &dyn Fn(&Engine<B>, &str) -> Result<u64>,
    progress: &mut dyn FnMut(&RunProgress<'_>),
) -> Result<u64> {
    if let Some(name) = &plan.until {
        match engine.circuit().outputs().iter().find(|p| &p.name == name) {
            Some(p) if p.bits.len() == 1 => {}
            Some(_) => {
                return Err(PlatformError::usage(format!(
                    "--until {name}: the output must be 1 bit wide"
                )))
            }
            None => {
                return Err(PlatformError::usage(format!(
                    "--until {name}: the circuit has no output @{name}"
                )))
            }
        }
    }
    crate::processor::run::target_cycle(engine.cycle(), plan.cycles)?;
    if plan.reset {
        engine.reset()?;
    }
    let names: Vec<String> = engine
        .circuit()
        .outputs()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let one = vsp_circuit::RunOptions {
        max_cycles: 1,
        stop_when: plan.until.clone(),
        ..Default::default()
    };
    let root = engine.is_root();
    let t0 = std::time::Instant::now();
    let mut done = 0;
    while done < plan.cycles {
        let cycle = engine.cycle();
        let report = engine.run(&one, &mut |p| {
            progress(&RunProgress {
                done: done + p.cycles_done,
                total: plan.cycles,
                elapsed: t0.elapsed().as_secs_f64(),
                engine: p,
            })
        })?;
        done += 1;
        if let Some(t) = plan.trace.as_mut().filter(|_| root) {
            let e: &Engine<B> = engine;
            let values = names
                .iter()
                .map(|n| value(e, n))
                .collect::<Result<Vec<u64>>>()?;
            t.record(cycle, &values);
        }
        if report.stopped {
            break;
        }
    }
    Ok(done)
}

/// A local run of a design as `vsp circuit run` asks for it: plain, or encrypted on one machine
/// (client and server in one process) with a secret key and an evaluation key.
pub struct LocalRun {
    /// The blueprint or bare netlist.
    pub blueprint: PathBuf,
    /// The inputs file (none: every input and memory 0).
    pub inputs: Option<PathBuf>,
    /// Cycles to run (after the reset cycle, which is not counted).
    pub cycles: u64,
    /// Plain only: stop after the first cycle in which this 1-bit output is 1.
    pub until: Option<String>,
    /// Apply one reset cycle first.
    pub reset: bool,
    /// The secret key and the evaluation key of an encrypted run.
    pub keys: Option<(PathBuf, PathBuf)>,
    /// Write the outputs JSON here.
    pub output: Option<PathBuf>,
    /// Write every cycle's outputs here as JSON lines.
    pub trace: Option<PathBuf>,
    /// Write every cycle's outputs here as a VCD.
    pub vcd: Option<PathBuf>,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
}

impl LocalRun {
    /// Runs: the output files claimed first, then the run, then the trace, the VCD and the outputs
    /// JSON written. The outputs on rank 0 (`None` on the other MPI ranks).
    pub fn run(&self, watch: &mut dyn Watch) -> Result<Option<CircuitOutputs>> {
        let mut read = vec![("blueprint", self.blueprint.as_path())];
        read.extend(self.inputs.as_deref().map(|p| ("inputs", p)));
        if let Some((k, e)) = &self.keys {
            read.extend([("secret key", k.as_path()), ("evaluation key", e.as_path())]);
        }
        let mut _locks = Vec::new();
        let outputs = [
            ("output", &self.output),
            ("trace", &self.trace),
            ("VCD", &self.vcd),
        ];
        for (what, p) in outputs {
            if let Some(p) = p {
                _locks.extend(claim(p, &read)?);
                read.push((what, p.as_path()));
            }
        }
        let circuit = load_design(&self.blueprint)?;
        check_reset(&circuit, self.reset)?;
        let inputs = CircuitInputs::read_for(self.inputs.as_deref(), &circuit)?;
        let signals = circuit.outputs().iter();
        let signals = signals.map(|p| (p.name.clone(), p.bits.len())).collect();
        let mut plan = DesignRun {
            cycles: self.cycles,
            until: self.until.clone(),
            reset: self.reset,
            trace: (self.trace.is_some() || self.vcd.is_some()).then(|| Trace::new(signals)),
        };
        let out = match &self.keys {
            Some((k, e)) => run_encrypted(circuit, &inputs, &mut plan, k, e, self.threads, watch)?,
            None => run_plain(circuit, &inputs, &mut plan)?,
        };
        let Some(out) = out else {
            return Ok(None);
        };
        if let Some(t) = &plan.trace {
            for (p, text) in [
                (&self.trace, t.json_lines().to_string()),
                (&self.vcd, t.vcd()),
            ] {
                if let Some(p) = p {
                    write_atomic(p, text.as_bytes(), Access::Public)?;
                }
            }
        }
        if let Some(p) = &self.output {
            write_atomic(p, outputs_json(&out).as_bytes(), Access::Public)?;
        }
        Ok(Some(out))
    }
}

/// The outputs JSON of `vsp circuit run` and `vsp circuit dec`.
pub fn outputs_json(out: &CircuitOutputs) -> String {
    serde_json::to_string_pretty(out).unwrap_or_default()
}
