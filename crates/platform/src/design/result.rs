//! A circuit's result: encrypted by the server's machine, decrypted by the client, and the plain
//! run's outputs in the same shape.

use std::collections::BTreeMap;

use vsp_circuit::{client, Circuit, Engine, MemImpl, MemKind, MemState, PlainBackend, TfheRam};
use vsp_codec::Reader;

use super::request::name_of;
use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::processor::packets::{check_ram_shape, get_cells, put_cells};
use crate::wire::envelope::{Envelope, Kind, Writer};

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
        let params = e.backend().params();
        let c = e.circuit();
        let mut w = Writer::default();
        w.bytes(&c.fingerprint());
        w.u64(e.cycle());
        w.u32(c.outputs().len() as u32);
        for p in c.outputs() {
            w.blob(p.name.as_bytes());
            put_cells(&mut w, &e.output(&p.name)?, params);
        }
        let rams: Vec<_> = c
            .memories()
            .iter()
            .filter(|m| m.spec.kind == MemKind::Ram)
            .collect();
        w.u32(rams.len() as u32);
        for m in rams {
            w.blob(m.spec.name.as_bytes());
            match e.memory(&m.spec.name)? {
                MemState::Ram(r) => {
                    w.u8(1);
                    w.blob(&r.to_bytes());
                }
                _ => {
                    w.u8(2);
                    put_cells(&mut w, &e.memory_cells(&m.spec.name)?, params);
                }
            }
        }
        Ok(Envelope::new(
            Kind::Result,
            &self.stamp.params_name,
            self.stamp.key_id,
            w.into_bytes(),
        ))
    }
}

/// Decrypts a circuit result for `circuit` (names and sizes checked against it first).
pub fn decrypt_circuit_result(
    key: &ClientKey,
    env: &Envelope,
    circuit: &Circuit,
) -> Result<CircuitOutputs> {
    key.check_file("the result", env)?;
    let corrupt = |m: String| PlatformError::format(format!("corrupt circuit result: {m}"));
    let params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let fingerprint: [u8; 32] = r.array("body")?;
    if fingerprint != circuit.fingerprint() {
        return Err(PlatformError::KeyMismatch(
            "the result is of another circuit (its fingerprint differs)".into(),
        ));
    }
    let cycles = r.u64("body")?;
    let n = r.u32("body")? as usize;
    if n != circuit.outputs().len() {
        return Err(corrupt(format!(
            "{n} outputs, the circuit has {}",
            circuit.outputs().len()
        )));
    }
    let mut outputs = BTreeMap::new();
    for p in circuit.outputs() {
        let name = name_of(&mut r)?;
        if name != p.name {
            return Err(corrupt(format!(
                "output {name:?} where @{} was expected",
                p.name
            )));
        }
        let bits = get_cells(&mut r, p.bits.len(), params)?;
        outputs.insert(name, client::decrypt_value(&key.sk, &bits)?);
    }
    let rams: Vec<_> = circuit
        .memories()
        .iter()
        .filter(|m| m.spec.kind == MemKind::Ram)
        .collect();
    let n = r.u32("body")? as usize;
    if n != rams.len() {
        return Err(corrupt(format!("{n} RAMs, the circuit has {}", rams.len())));
    }
    let mut memories = BTreeMap::new();
    for m in rams {
        let name = name_of(&mut r)?;
        if name != m.spec.name {
            return Err(corrupt(format!(
                "RAM {name:?} where {:?} was expected",
                m.spec.name
            )));
        }
        let (a, w) = (m.spec.addr_width, m.spec.data_width);
        let words = match (r.u8("body")?, m.spec.imp) {
            (1, MemImpl::Cmux) => {
                let bytes = r.blob(usize::MAX, "body")?;
                check_ram_shape(bytes, a, w).map_err(|e| corrupt(format!("RAM {name}: {e}")))?;
                let ram = TfheRam::from_bytes(bytes, params).context(|| format!("RAM {name}"))?;
                if ram.noise_bounds().len() != 1 << a || ram.cells().len() != (1 << a) * w {
                    return Err(corrupt(format!("RAM {name} has another shape")));
                }
                client::decrypt_ram(&key.sk, &ram)?
            }
            (2, MemImpl::Mux) => {
                let cells = get_cells(&mut r, (1usize << a) * w, params)?;
                client::decrypt_mux_memory(&key.sk, w, &cells)?
            }
            (tag, _) => return Err(corrupt(format!("RAM {name}: unknown kind {tag}"))),
        };
        memories.insert(name, words);
    }
    r.end()?;
    Ok(CircuitOutputs {
        cycles,
        outputs,
        memories,
    })
}
