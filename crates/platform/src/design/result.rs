//! A circuit's result: encrypted by the server's machine, decrypted by the client, and the plain
//! run's outputs in the same shape.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use vsp_circuit::{client, Circuit, Engine, MemImpl, MemKind, MemState, PlainBackend, TfheRam};
use vsp_codec::{FileCodec, Reader};
use vsp_tfhe::{Params, Tlwe};

use super::request::{name_of, put_named, EncryptedMemory, RequestContext};
use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::processor::packets::{check_ram_shape, get_cells, put_cells};
use crate::wire::envelope::{vsp_file, Envelope, Kind, Stamp, Writer};

/// A circuit's final state in plain: what a result decrypts to.
#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq)]
pub struct CircuitOutputs {
    pub cycles: u64,
    pub outputs: BTreeMap<String, u64>,
    /// RAM contents (ROMs are not repeated).
    pub memories: BTreeMap<String, Vec<u64>>,
}

/// A plain run's final state (lane 0) as a result decrypts to: every output and every RAM.
pub fn plain_outputs(engine: &Engine<PlainBackend>, cycles: u64) -> Result<CircuitOutputs> {
    let c = engine.circuit();
    let mut outputs = BTreeMap::new();
    for p in c.outputs() {
        outputs.insert(p.name.clone(), engine.output_value(&p.name, 0)?);
    }
    let mut memories = BTreeMap::new();
    for m in c.memories().iter().filter(|m| m.spec.kind == MemKind::Ram) {
        memories.insert(m.spec.name.clone(), engine.memory_words(&m.spec.name, 0)?);
    }
    Ok(CircuitOutputs {
        cycles,
        outputs,
        memories,
    })
}

impl CircuitMachine {
    /// The encrypted result: the cycle count, every output, every RAM.
    pub fn result(&self) -> Result<Envelope> {
        let e = &self.engine;
        let c = e.circuit();
        let outputs = (c.outputs().iter())
            .map(|p| Ok((p.name.clone(), e.output(&p.name)?)))
            .collect::<Result<Vec<_>>>()?;
        let mut rams = Vec::new();
        for m in c.memories().iter().filter(|m| m.spec.kind == MemKind::Ram) {
            let ram = match e.memory(&m.spec.name)? {
                MemState::Ram(r) => EncryptedMemory::Ram(Cow::Borrowed(r)),
                _ => EncryptedMemory::Cells(e.memory_cells(&m.spec.name)?),
            };
            rams.push((m.spec.name.clone(), ram));
        }
        let result = CircuitResult {
            stamp: self.stamp.clone(),
            fingerprint: c.fingerprint(),
            cycles: e.cycle(),
            outputs,
            rams,
            params: *e.backend().params(),
        };
        Ok(Envelope::of(
            &result,
            Kind::Result,
            &self.stamp.params_name,
            self.stamp.key_id,
        ))
    }
}

/// A circuit's encrypted result: the cycle count, every output and every RAM (in the circuit's
/// order) of the circuit of `fingerprint`, stamped with the key they are encrypted under.
pub struct CircuitResult<'a> {
    pub stamp: Stamp,
    pub fingerprint: [u8; 32],
    pub cycles: u64,
    pub outputs: Vec<(String, Vec<Tlwe<u32>>)>,
    /// Each a CMUX RAM or MUX cells.
    pub rams: Vec<(String, EncryptedMemory<'a>)>,
    /// The parameter set of the ciphertexts.
    pub params: Params,
}

impl CircuitResult<'_> {
    /// Decrypts the result of `circuit` (the one it was decoded for) with the secret key.
    pub fn decrypt(&self, key: &ClientKey, circuit: &Circuit) -> Result<CircuitOutputs> {
        if self.fingerprint != circuit.fingerprint() {
            return Err(other_circuit());
        }
        let mut outputs = BTreeMap::new();
        for (name, bits) in &self.outputs {
            outputs.insert(name.clone(), client::decrypt_value(&key.sk, bits)?);
        }
        let specs = circuit.memories().iter().map(|m| &m.spec);
        let specs = specs.filter(|s| s.kind == MemKind::Ram);
        let mut memories = BTreeMap::new();
        for ((name, ram), spec) in self.rams.iter().zip(specs) {
            let words = match ram {
                EncryptedMemory::Ram(r) => client::decrypt_ram(&key.sk, r)?,
                EncryptedMemory::Cells(c) => {
                    client::decrypt_mux_memory(&key.sk, spec.data_width, c)?
                }
                EncryptedMemory::Rom(_) => return Err(corrupt(format!("RAM {name} is a ROM"))),
            };
            memories.insert(name.clone(), words);
        }
        Ok(CircuitOutputs {
            cycles: self.cycles,
            outputs,
            memories,
        })
    }
}

fn corrupt(m: String) -> PlatformError {
    PlatformError::format(format!("corrupt circuit result: {m}"))
}

fn other_circuit() -> PlatformError {
    PlatformError::KeyMismatch("the result is of another circuit (its fingerprint differs)".into())
}

/// The result file: fingerprint ‖ cycles u64 ‖ outputs (u32 count ‖ name blob ‖ cells) ‖ RAMs (u32
/// count ‖ name blob ‖ kind u8 (1 CMUX RAM blob, 2 cells)). Read for a circuit: the fingerprint,
/// every name and every size is checked against the circuit before anything is decoded.
impl FileCodec for CircuitResult<'_> {
    vsp_file!(Result, RequestContext);

    fn write_body(&self, w: &mut Writer) {
        let params = &self.params;
        w.bytes(&self.fingerprint);
        w.u64(self.cycles);
        put_named(w, &self.outputs, |w, bits| put_cells(w, bits, params));
        put_named(w, &self.rams, |w, ram| ram.write(w, params));
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, ctx: &RequestContext) -> Result<Self> {
        let stamp = Stamp::parse(param)?;
        let (circuit, params) = (&*ctx.0, &ctx.1);
        let fingerprint: [u8; 32] = r.array("body")?;
        if fingerprint != circuit.fingerprint() {
            return Err(other_circuit());
        }
        let cycles = r.u64("body")?;
        let n = r.u32("body")? as usize;
        if n != circuit.outputs().len() {
            return Err(corrupt(format!(
                "{n} outputs, the circuit has {}",
                circuit.outputs().len()
            )));
        }
        let mut outputs = Vec::with_capacity(n);
        for p in circuit.outputs() {
            let name = name_of(r)?;
            if name != p.name {
                return Err(corrupt(format!(
                    "output {name:?} where @{} was expected",
                    p.name
                )));
            }
            let bits = get_cells(r, p.bits.len(), params)?;
            outputs.push((name, bits));
        }
        let specs: Vec<_> = circuit
            .memories()
            .iter()
            .filter(|m| m.spec.kind == MemKind::Ram)
            .map(|m| &m.spec)
            .collect();
        let n = r.u32("body")? as usize;
        if n != specs.len() {
            return Err(corrupt(format!(
                "{n} RAMs, the circuit has {}",
                specs.len()
            )));
        }
        let mut rams = Vec::with_capacity(n);
        for spec in specs {
            let name = name_of(r)?;
            if name != spec.name {
                return Err(corrupt(format!(
                    "RAM {name:?} where {:?} was expected",
                    spec.name
                )));
            }
            let (a, w) = (spec.addr_width, spec.data_width);
            let ram = match (r.u8("body")?, spec.imp) {
                (1, MemImpl::Cmux) => {
                    let bytes = r.blob(usize::MAX, "body")?;
                    check_ram_shape(bytes, a, w)
                        .map_err(|e| corrupt(format!("RAM {name}: {e}")))?;
                    let ram =
                        TfheRam::from_bytes(bytes, params).context(|| format!("RAM {name}"))?;
                    if ram.noise_bounds().len() != 1 << a || ram.cells().len() != (1 << a) * w {
                        return Err(corrupt(format!("RAM {name} has another shape")));
                    }
                    EncryptedMemory::Ram(Cow::Owned(ram))
                }
                (2, MemImpl::Mux) => {
                    EncryptedMemory::Cells(get_cells(r, (1usize << a) * w, params)?)
                }
                (tag, _) => return Err(corrupt(format!("RAM {name}: unknown kind {tag}"))),
            };
            rams.push((name, ram));
        }
        Ok(CircuitResult {
            stamp,
            fingerprint,
            cycles,
            outputs,
            rams,
            params: *params,
        })
    }
}

/// Decrypts a circuit result envelope for `circuit` (its key checked first; names and sizes
/// checked against the circuit before anything is decoded).
pub fn decrypt_circuit_result(
    key: &ClientKey,
    env: &Envelope,
    circuit: &Arc<Circuit>,
) -> Result<CircuitOutputs> {
    key.check_file("the result", env)?;
    let result: CircuitResult = env.decode(&(circuit.clone(), *key.sk.params()))?;
    result.decrypt(key, circuit)
}
