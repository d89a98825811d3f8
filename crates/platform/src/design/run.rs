//! Running a design as the commands do: plainly, encrypted on one machine (client and server in one
//! process), or as the server's half of the split (a request or snapshot → the engine on every MPI
//! rank → the encrypted result and trace). The root/follower choreography is
//! [`crate::server`]'s.

use std::path::Path;
use std::sync::Arc;

use vsp_circuit::{client, Circuit, Engine, PlainBackend, TfheBackend};

use super::{
    decrypt_circuit_result, plain_outputs, run_design, CircuitInputs, CircuitMachine,
    CircuitOutputs, CircuitRequest, DesignRun, EncryptedTrace,
};
use crate::error::{PlatformError, Result};
use crate::keys::{ClientKey, ServerKeys};
use crate::processor::machine::{RunProgress, Snapshots};
use crate::server::{check_snapshot_header, mpi, Watch};
use crate::wire::envelope::{check_same_key, Envelope, Kind};

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

/// Loads a secret key; a key file others can read is warned about.
pub fn load_client_key(path: &Path, watch: &mut dyn Watch) -> Result<ClientKey> {
    // Loaded first: the warning is for a real key file, not a FIFO or device refused as one.
    let key = ClientKey::load(path)?;
    if let Some(w) = crate::files::exposure_warning(path) {
        watch.warn(&w);
    }
    Ok(key)
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
    watch.running(plan.cycles);
    run_design(&mut m.engine, plan, &value, &mut |p| watch.cycle(p))?;
    watch.ran();
    let Some(ck) = secret else {
        return Ok(None);
    };
    Ok(Some(decrypt_circuit_result(&ck, &m.result()?, &circuit)?))
}

/// What the server's half of a design run does after opening: its cycles (after a public reset
/// cycle when asked), snapshots, result and encrypted trace.
pub struct Exec<'a> {
    pub cycles: u64,
    pub reset: bool,
    pub snapshots: Option<&'a Snapshots>,
    pub output: &'a Path,
    pub trace: Option<&'a Path>,
}

/// What [`CircuitMachine::exec`] wrote: the trace's size (when asked for) and the result's.
pub struct Executed {
    pub trace_bytes: Option<u64>,
    pub result_bytes: u64,
}

impl CircuitMachine {
    /// The server's run of the request at `input` on `circuit` (the request's key checked against
    /// the evaluation key's header before that key is loaded; a request that encrypts nothing is
    /// warned about). Under MPI rank 0 reads the request and the other ranks take its state.
    pub fn open_request(
        eval_key: &Path,
        input: &Path,
        circuit: Arc<Circuit>,
        reset: bool,
        threads: Option<usize>,
        watch: &mut dyn Watch,
    ) -> Result<CircuitMachine> {
        let env = if mpi::is_root() {
            let env = Envelope::read(input, Kind::Request)?;
            ServerKeys::check_header(
                eval_key,
                &format!("the request {}", input.display()),
                env.key_id,
                &env.params,
            )?;
            Some(env)
        } else {
            None
        };
        let keys = watch.load_keys(eval_key)?;
        let mut m = match env {
            Some(env) => {
                let request = CircuitRequest::from_envelope(&env, &circuit, keys.ek.params())
                    .map_err(|e| e.in_file(input))?;
                drop(env);
                if request.inputs.is_empty() && request.memories.is_empty() {
                    watch.warn(&public_warning(reset));
                }
                CircuitMachine::start(&keys, circuit, request, threads)?
            }
            None => CircuitMachine::follower(&keys, circuit, threads)?,
        };
        mpi::join(&mut m.engine)?;
        Ok(m)
    }

    /// The server's run on `circuit` continued from `snapshot` (its key checked against the
    /// evaluation key's header first); under MPI rank 0 reads it and the other ranks take its state.
    pub fn open_snapshot(
        eval_key: &Path,
        snapshot: &Path,
        circuit: Arc<Circuit>,
        threads: Option<usize>,
        watch: &mut dyn Watch,
    ) -> Result<CircuitMachine> {
        if mpi::is_root() {
            check_snapshot_header(snapshot, eval_key)?;
        }
        let keys = watch.load_keys(eval_key)?;
        let mut m = if mpi::is_root() {
            CircuitMachine::resume(&keys, circuit, snapshot, threads)?
        } else {
            CircuitMachine::follower(&keys, circuit, threads)?
        };
        mpi::join(&mut m.engine)?;
        Ok(m)
    }

    /// Runs the server's half and writes the encrypted result (and trace); `None` on an MPI rank
    /// other than 0, which writes nothing.
    pub fn exec(&mut self, plan: &Exec<'_>, watch: &mut dyn Watch) -> Result<Option<Executed>> {
        let mut trace = plan.trace.map(|_| EncryptedTrace::new(self));
        watch.running(plan.cycles);
        let progress = &mut |p: &RunProgress<'_>| watch.cycle(p);
        match &mut trace {
            Some(tr) => self.run_traced(plan.cycles, plan.reset, plan.snapshots, tr, progress)?,
            None => self.run(plan.cycles, plan.reset, plan.snapshots, progress)?,
        }
        watch.ran();
        if !mpi::is_root() {
            return Ok(None);
        }
        let trace_bytes = match (&trace, plan.trace) {
            (Some(tr), Some(path)) => {
                Some(tr.to_envelope(self.engine.backend().params()).write(path)?)
            }
            _ => None,
        };
        let result_bytes = self.result()?.write(plan.output)?;
        Ok(Some(Executed {
            trace_bytes,
            result_bytes,
        }))
    }
}
