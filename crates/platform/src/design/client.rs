//! The client's side of a design's split: its inputs encrypted into a request
//! ([`encrypt_inputs`], `vsp circuit enc`), its result or encrypted trace decrypted
//! ([`decrypt_file`], `vsp circuit dec`).

use std::path::Path;

use super::run::public_warning;
use super::{
    decrypt_circuit_result, decrypt_circuit_trace, load_design, CircuitInputs, CircuitOutputs,
    Trace,
};
use crate::error::Result;
use crate::files::{write_atomic, Access, What, Written};
use crate::processor::client::load_client_key;
use crate::server::{claim, Watch};
use crate::wire::envelope::{Envelope, Kind};

/// The client's request of `vsp circuit enc`: the inputs file (none: all zero) of the design at
/// `blueprint` encrypted under the secret key at `key` and written to `output` (a request that
/// encrypts nothing is warned about).
pub fn encrypt_inputs(
    blueprint: &Path,
    key: &Path,
    inputs: Option<&Path>,
    output: &Path,
    watch: &mut dyn Watch,
) -> Result<Written> {
    let mut read = vec![("blueprint", blueprint), ("secret key", key)];
    read.extend(inputs.map(|p| ("inputs", p)));
    let _lock = claim(output, &read)?;
    let circuit = load_design(blueprint)?;
    let inputs = CircuitInputs::read_for(inputs, &circuit)?;
    if inputs.is_empty() {
        watch.warn(&public_warning(false));
    }
    let key = load_client_key(key, watch)?;
    let request = inputs.encrypt(&key, &circuit)?;
    let bytes = crate::wire::envelope::save(&request, output, &(circuit, *key.sk.params()))?;
    Ok(Written::new(output, bytes, What::CircuitRequest))
}

/// What `vsp circuit dec` decrypts.
pub enum Decrypt<'a> {
    /// A result (from `vsp circuit exec` or `resume`).
    Result(&'a Path),
    /// An encrypted trace, also written as a VCD at `vcd` when given.
    Trace {
        path: &'a Path,
        vcd: Option<&'a Path>,
    },
}

/// What a circuit file decrypts to.
pub enum Decrypted {
    Result(CircuitOutputs),
    Trace(Trace),
}

/// The client's `vsp circuit dec`: a result or an encrypted trace of the design at `blueprint`,
/// decrypted with the secret key at `key`.
pub fn decrypt_file(
    blueprint: &Path,
    key: &Path,
    what: Decrypt<'_>,
    watch: &mut dyn Watch,
) -> Result<Decrypted> {
    let mut read = vec![("blueprint", blueprint), ("secret key", key)];
    let (path, vcd) = match what {
        Decrypt::Result(p) => (p, None),
        Decrypt::Trace { path, vcd } => (path, vcd),
    };
    let is_trace = matches!(what, Decrypt::Trace { .. });
    read.push((if is_trace { "trace" } else { "result" }, path));
    let _lock = vcd.map(|p| claim(p, &read)).transpose()?;
    let circuit = load_design(blueprint)?;
    let key = load_client_key(key, watch)?;
    if !is_trace {
        let env = Envelope::read(path, Kind::Result)?;
        let out = decrypt_circuit_result(&key, &env, &circuit).map_err(|e| e.in_file(path))?;
        return Ok(Decrypted::Result(out));
    }
    let trace: super::EncryptedTrace = crate::wire::envelope::load(path, key.sk.params())?;
    let trace = decrypt_circuit_trace(&key, &trace, &circuit).map_err(|e| e.in_file(path))?;
    if let Some(p) = vcd {
        write_atomic(p, trace.vcd().as_bytes(), Access::Public)?;
    }
    Ok(Decrypted::Trace(trace))
}
