//! A circuit request: the inputs and memories the client encrypted for one circuit, and its wire
//! format.

use vsp_circuit::{client, Circuit, Engine, MemImpl, MemKind, TfheBackend, TfheRam, TfheRom};
use vsp_codec::Reader;
use vsp_tfhe::{Params, Tlwe};

use super::inputs::{input_width, memory_spec};
use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::processor::packets::{get_cells, put_cells};
use crate::wire::envelope::{Envelope, KeyId, Kind, Writer};

/// An encrypted memory of a circuit.
pub enum EncryptedMemory {
    Rom(TfheRom),
    Ram(TfheRam),
    /// MUX memory: one TLWE per bit.
    Cells(Vec<Tlwe<u32>>),
}

/// An encrypted circuit request: the inputs and memories the client encrypted, for one circuit.
pub struct CircuitRequest {
    pub params_name: String,
    pub key_id: KeyId,
    /// The circuit's fingerprint: a request runs only on the circuit it was made for.
    pub fingerprint: [u8; 32],
    pub inputs: Vec<(String, Vec<Tlwe<u32>>)>,
    pub memories: Vec<(String, EncryptedMemory)>,
}

impl CircuitInputs {
    /// Encrypts every input and memory named under `key`, for `circuit`.
    pub fn encrypt(&self, key: &ClientKey, circuit: &Circuit) -> Result<CircuitRequest> {
        let sk = &key.sk;
        let mut inputs = Vec::new();
        for (name, &v) in &self.inputs {
            let width = input_width(circuit, name)?;
            if width < 64 && v >> width != 0 {
                return Err(PlatformError::usage(format!(
                    "value {v} does not fit the {width}-bit input @{name}"
                )));
            }
            inputs.push((name.clone(), client::encrypt_value(sk, v, width)));
        }
        let mut memories = Vec::new();
        for (name, words) in &self.memories {
            let spec = memory_spec(circuit, name)?;
            let (a, w) = (spec.addr_width, spec.data_width);
            let m = match (spec.imp, spec.kind) {
                (MemImpl::Cmux, MemKind::Rom) => {
                    EncryptedMemory::Rom(client::encrypt_rom(sk, a, w, words)?)
                }
                (MemImpl::Cmux, MemKind::Ram) => {
                    EncryptedMemory::Ram(client::encrypt_ram(sk, a, w, words)?)
                }
                (MemImpl::Mux, _) => {
                    EncryptedMemory::Cells(client::encrypt_mux_memory(sk, a, w, words)?)
                }
            };
            memories.push((name.clone(), m));
        }
        Ok(CircuitRequest {
            params_name: key.params_name.clone(),
            key_id: key.key_id,
            fingerprint: circuit.fingerprint(),
            inputs,
            memories,
        })
    }
}

impl CircuitRequest {
    /// The request as a file: fingerprint ‖ inputs (u32 count ‖ name blob ‖ cells) ‖ memories
    /// (u32 count ‖ name blob ‖ kind u8 (0 ROM, 1 RAM, 2 cells) ‖ blob or cells).
    pub fn to_envelope(&self, params: &Params) -> Envelope {
        let mut w = Writer::default();
        w.bytes(&self.fingerprint);
        w.u32(self.inputs.len() as u32);
        for (name, bits) in &self.inputs {
            w.blob(name.as_bytes());
            put_cells(&mut w, bits, params);
        }
        w.u32(self.memories.len() as u32);
        for (name, m) in &self.memories {
            w.blob(name.as_bytes());
            match m {
                EncryptedMemory::Rom(r) => {
                    w.u8(0);
                    w.blob(&r.to_bytes());
                }
                EncryptedMemory::Ram(r) => {
                    w.u8(1);
                    w.blob(&r.to_bytes());
                }
                EncryptedMemory::Cells(c) => {
                    w.u8(2);
                    put_cells(&mut w, c, params);
                }
            }
        }
        Envelope::new(
            Kind::Request,
            &self.params_name,
            self.key_id,
            w.into_bytes(),
        )
    }

    /// Parses a request for `circuit`: the fingerprint, every name and every size is checked against
    /// the circuit before anything is decoded.
    pub fn from_envelope(env: &Envelope, circuit: &Circuit, params: &Params) -> Result<Self> {
        let corrupt = |m: String| PlatformError::format(format!("corrupt circuit request: {m}"));
        let mut r = Reader::new(&env.body);
        let fingerprint: [u8; 32] = r.array("body")?;
        if fingerprint != circuit.fingerprint() {
            return Err(PlatformError::KeyMismatch(
                "the request was made for another circuit (its fingerprint differs)".into(),
            ));
        }
        let n = r.u32("body")? as usize;
        if n > circuit.inputs().len() {
            return Err(corrupt(format!(
                "{n} inputs, the circuit has {}",
                circuit.inputs().len()
            )));
        }
        let mut inputs = Vec::with_capacity(n);
        for _ in 0..n {
            let name = name_of(&mut r)?;
            let width = input_width(circuit, &name).map_err(|e| corrupt(e.to_string()))?;
            inputs.push((name, get_cells(&mut r, width, params)?));
        }
        let n = r.u32("body")? as usize;
        if n > circuit.memories().len() {
            return Err(corrupt(format!(
                "{n} memories, the circuit has {}",
                circuit.memories().len()
            )));
        }
        let mut memories = Vec::with_capacity(n);
        for _ in 0..n {
            let name = name_of(&mut r)?;
            let spec = memory_spec(circuit, &name).map_err(|e| corrupt(e.to_string()))?;
            let m = match (r.u8("body")?, spec.imp, spec.kind) {
                (0, MemImpl::Cmux, MemKind::Rom) => EncryptedMemory::Rom(
                    TfheRom::from_bytes(r.blob(usize::MAX, "body")?, params)
                        .context(|| format!("memory {name}"))?,
                ),
                (1, MemImpl::Cmux, MemKind::Ram) => EncryptedMemory::Ram(
                    TfheRam::from_bytes(r.blob(usize::MAX, "body")?, params)
                        .context(|| format!("memory {name}"))?,
                ),
                (2, MemImpl::Mux, _) => EncryptedMemory::Cells(get_cells(
                    &mut r,
                    (1usize << spec.addr_width) * spec.data_width,
                    params,
                )?),
                (tag, ..) => {
                    return Err(corrupt(format!(
                        "memory {name}: kind {tag} is not the circuit's ({:?} {:?})",
                        spec.imp, spec.kind
                    )))
                }
            };
            memories.push((name, m));
        }
        r.end()?;
        Ok(CircuitRequest {
            params_name: env.params.clone(),
            key_id: env.key_id,
            fingerprint,
            inputs,
            memories,
        })
    }

    /// Loads the inputs and memories into `engine`.
    pub fn load(self, engine: &mut Engine<TfheBackend>) -> Result<()> {
        for (name, bits) in self.inputs {
            engine.set_input(&name, bits)?;
        }
        for (name, m) in self.memories {
            match m {
                EncryptedMemory::Rom(r) => engine.set_rom(&name, r)?,
                EncryptedMemory::Ram(r) => engine.set_ram(&name, r)?,
                EncryptedMemory::Cells(c) => engine.set_memory_cells(&name, c)?,
            }
        }
        Ok(())
    }
}

pub(super) fn name_of(r: &mut Reader<'_>) -> Result<String> {
    let b = r.blob(usize::MAX, "body")?;
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|_| PlatformError::format("corrupt circuit file: a name is not text"))
}
