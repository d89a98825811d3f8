//! A circuit request: the inputs and memories the client encrypted for one circuit, and its wire
//! format.

use std::borrow::Cow;
use std::sync::Arc;

use vsp_circuit::{client, Circuit, Engine, MemImpl, MemKind, TfheBackend, TfheRam, TfheRom};
use vsp_codec::{FileCodec, Reader};
use vsp_tfhe::{Params, Tlwe};

use super::inputs::{input_width, memory_spec};
use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::processor::packets::{get_cells, put_cells};
use crate::wire::envelope::{vsp_file, Envelope, Kind, Stamp, Writer};

/// An encrypted memory of a circuit: in a request its initial contents, in a result a RAM's final
/// ones (a machine's CMUX RAM borrowed while the result is written).
pub enum EncryptedMemory<'a> {
    Rom(TfheRom),
    Ram(Cow<'a, TfheRam>),
    /// MUX memory: one TLWE per bit.
    Cells(Vec<Tlwe<u32>>),
}

impl EncryptedMemory<'_> {
    /// The memory as a circuit's files hold it: kind u8 (0 CMUX ROM, 1 CMUX RAM, 2 MUX cells) ‖ the
    /// CMUX memory's blob or the cells.
    pub(super) fn write(&self, w: &mut Writer, params: &Params) {
        match self {
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
                put_cells(w, c, params);
            }
        }
    }
}

/// An encrypted circuit request: the inputs and memories the client encrypted, for one circuit.
pub struct CircuitRequest {
    /// The key the request is encrypted under.
    pub stamp: Stamp,
    /// The circuit's fingerprint: a request runs only on the circuit it was made for.
    pub fingerprint: [u8; 32],
    pub inputs: Vec<(String, Vec<Tlwe<u32>>)>,
    pub memories: Vec<(String, EncryptedMemory<'static>)>,
    /// The parameter set of the ciphertexts.
    pub params: Params,
}

/// What a circuit's request or result is decoded for: its circuit (names, widths and fingerprint
/// checked against it) and the parameter set.
pub type RequestContext = (Arc<Circuit>, Params);

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
                    EncryptedMemory::Ram(Cow::Owned(client::encrypt_ram(sk, a, w, words)?))
                }
                (MemImpl::Mux, _) => {
                    EncryptedMemory::Cells(client::encrypt_mux_memory(sk, a, w, words)?)
                }
            };
            memories.push((name.clone(), m));
        }
        Ok(CircuitRequest {
            stamp: key.stamp(),
            fingerprint: circuit.fingerprint(),
            inputs,
            memories,
            params: *sk.params(),
        })
    }
}

impl CircuitRequest {
    /// The request as an envelope (written by [`Envelope::write`], or sent).
    pub fn to_envelope(&self) -> Envelope {
        Envelope::of(
            self,
            Kind::Request,
            &self.stamp.params_name,
            self.stamp.key_id,
        )
    }

    /// Parses a verified request envelope for `circuit` and `params` ([`FileCodec::read_body`]).
    pub fn from_envelope(env: &Envelope, circuit: &Arc<Circuit>, params: &Params) -> Result<Self> {
        env.decode(&(circuit.clone(), *params))
    }

    /// Loads the inputs and memories into `engine`.
    pub fn load(self, engine: &mut Engine<TfheBackend>) -> Result<()> {
        for (name, bits) in self.inputs {
            engine.set_input(&name, bits)?;
        }
        for (name, m) in self.memories {
            match m {
                EncryptedMemory::Rom(r) => engine.set_rom(&name, r)?,
                EncryptedMemory::Ram(r) => engine.set_ram(&name, r.into_owned())?,
                EncryptedMemory::Cells(c) => engine.set_memory_cells(&name, c)?,
            }
        }
        Ok(())
    }
}

/// The request file: fingerprint ‖ inputs (u32 count ‖ name blob ‖ cells) ‖ memories (u32 count ‖
/// name blob ‖ kind u8 (0 ROM, 1 RAM, 2 cells) ‖ blob or cells). Read for a circuit: the
/// fingerprint, every name and every size is checked against the circuit before anything is decoded.
impl FileCodec for CircuitRequest {
    vsp_file!(Request, RequestContext);

    fn write_body(&self, w: &mut Writer) {
        let params = &self.params;
        w.bytes(&self.fingerprint);
        put_named(w, &self.inputs, |w, bits| put_cells(w, bits, params));
        put_named(w, &self.memories, |w, m| m.write(w, params));
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, ctx: &RequestContext) -> Result<Self> {
        let stamp = Stamp::parse(param)?;
        let (circuit, params) = (&*ctx.0, &ctx.1);
        let corrupt = |m: String| PlatformError::format(format!("corrupt circuit request: {m}"));
        let fingerprint: [u8; 32] = r.array("body")?;
        if fingerprint != circuit.fingerprint() {
            return Err(PlatformError::KeyMismatch(
                "the request was made for another circuit (its fingerprint differs)".into(),
            ));
        }
        let count = |r: &mut Reader<'_>, max: usize, what: &str| -> Result<usize> {
            let n = r.u32("body")? as usize;
            if n > max {
                return Err(corrupt(format!("{n} {what}, the circuit has {max}")));
            }
            Ok(n)
        };
        let n = count(r, circuit.inputs().len(), "inputs")?;
        let mut inputs = Vec::with_capacity(n);
        for _ in 0..n {
            let name = name_of(r)?;
            let width = input_width(circuit, &name).map_err(|e| corrupt(e.to_string()))?;
            inputs.push((name, get_cells(r, width, params)?));
        }
        let n = count(r, circuit.memories().len(), "memories")?;
        let mut memories = Vec::with_capacity(n);
        for _ in 0..n {
            let name = name_of(r)?;
            let spec = memory_spec(circuit, &name).map_err(|e| corrupt(e.to_string()))?;
            let m = match (r.u8("body")?, spec.imp, spec.kind) {
                (0, MemImpl::Cmux, MemKind::Rom) => EncryptedMemory::Rom(
                    TfheRom::from_bytes(r.blob(usize::MAX, "body")?, params)
                        .context(|| format!("memory {name}"))?,
                ),
                (1, MemImpl::Cmux, MemKind::Ram) => EncryptedMemory::Ram(Cow::Owned(
                    TfheRam::from_bytes(r.blob(usize::MAX, "body")?, params)
                        .context(|| format!("memory {name}"))?,
                )),
                (2, MemImpl::Mux, _) => EncryptedMemory::Cells(get_cells(
                    r,
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
        Ok(CircuitRequest {
            stamp,
            fingerprint,
            inputs,
            memories,
            params: *params,
        })
    }
}

/// A list of named items as a circuit's files write it: u32 count ‖ per item its name blob ‖ the
/// item (`put`); read back name by name with [`name_of`].
pub(super) fn put_named<T>(w: &mut Writer, items: &[(String, T)], put: impl Fn(&mut Writer, &T)) {
    w.u32(items.len() as u32);
    for (name, item) in items {
        w.blob(name.as_bytes());
        put(w, item);
    }
}

/// The name of an item of a list written by [`put_named`].
pub(super) fn name_of(r: &mut Reader<'_>) -> Result<String> {
    let b = r.blob(usize::MAX, "body")?;
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|_| PlatformError::format("corrupt circuit file: a name is not text"))
}
