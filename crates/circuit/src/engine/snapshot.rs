//! Snapshots: the whole evaluation state (cycle counter, inputs, flip-flops, memories, last outputs) in a
//! versioned, checksummed file, written atomically, so a run can be resumed exactly where it stopped —
//! Iyokan's `--snapshot`/`--resume` (VSP paper seed 000).
//!
//! The file is [`vsp_codec`]'s envelope: magic `VSPCSNAP`, format version ([`SNAPSHOT_VERSION`]),
//! kind 1, parameter id `backend kind:parameter id` (e.g. `tfhe:Default128-…`), body length, body,
//! SHA3-256. The body (little-endian): the circuit's SHA3-256 fingerprint, the cycle (u64), then
//! inputs, flip-flops, memories (tag 0 = MUX cells, 1 = ROM, 2 = RAM) and outputs in the backend's
//! encoding, read with the shared bounds-checked [`vsp_codec::Reader`].

use std::path::Path;
use std::sync::Arc;

use sha3::{Digest, Sha3_256};
use vsp_codec::{Access, Format};

use super::{Engine, MemState};
use crate::backend::{Backend, Reader};
use crate::error::CircuitError;

/// The snapshot format version this crate writes and reads (2: the shared [`vsp_codec`] envelope).
pub const SNAPSHOT_VERSION: u16 = 2;
/// The snapshot file format.
pub const FORMAT: Format = Format {
    name: "VSP circuit snapshot",
    magic: b"VSPCSNAP",
    version: SNAPSHOT_VERSION,
    kinds: &[(KIND_SNAPSHOT, "engine state")],
};
/// The one kind of snapshot file.
pub const KIND_SNAPSHOT: u16 = 1;
const MAX_ITEMS: usize = 1 << 28;
/// Largest cycle counter a snapshot may hold: far beyond any run (2^62 cycles at a nanosecond each
/// take 146 years), and far enough from 2^64 that running on can never wrap the counter.
pub const MAX_SNAPSHOT_CYCLE: u64 = 1 << 62;

/// The cycle an engine snapshot ([`Engine::snapshot_bytes`]) was taken at, without restoring it
/// (checksum and format checked; what it belongs to is checked by [`Engine::restore_snapshot`]).
pub fn snapshot_cycle(bytes: &[u8]) -> Result<u64, CircuitError> {
    let o = vsp_codec::open(&FORMAT, bytes, KIND_SNAPSHOT)?;
    let mut r = o.reader();
    r.take(32, "circuit fingerprint")?;
    let cycle = r.u64("cycle counter")?;
    if cycle > MAX_SNAPSHOT_CYCLE {
        return Err(CircuitError::Snapshot(format!(
            "cycle counter {cycle} is beyond any run (at most {MAX_SNAPSHOT_CYCLE}): corrupt snapshot"
        )));
    }
    Ok(cycle)
}

/// Turns an engine snapshot ([`Engine::snapshot_bytes`]) into the bytes of a snapshot file: how a
/// platform writes its own envelope (key id, machine) around the engine's state while the engine's
/// run writes the periodic snapshots ([`crate::RunOptions::snapshot_wrap`]).
#[derive(Clone)]
pub struct SnapshotWrap(pub Arc<WrapFn>);

/// The function inside a [`SnapshotWrap`]: engine snapshot bytes in, file bytes out.
pub type WrapFn = dyn Fn(&[u8]) -> Vec<u8> + Send + Sync;

impl std::fmt::Debug for SnapshotWrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnapshotWrap(..)")
    }
}

/// The envelope's parameter id: `kind:params` (hashed when a backend's id is unusually long).
fn param_id(kind: &str, params: &str) -> Vec<u8> {
    let id = format!("{kind}:{params}");
    if id.len() <= vsp_codec::envelope::MAX_PARAM_ID {
        id.into_bytes()
    } else {
        Sha3_256::digest(id.as_bytes()).to_vec()
    }
}

impl<B: Backend> Engine<B> {
    /// Serializes the state.
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        let b = self.backend();
        let st = self.state();
        let mut out = Vec::new();
        out.extend_from_slice(&self.circuit().fingerprint());
        out.extend_from_slice(&st.cycle.to_le_bytes());
        let bits = |out: &mut Vec<u8>, v: &[B::Bit]| {
            out.extend_from_slice(&(v.len() as u64).to_le_bytes());
            for x in v {
                b.encode_bit(x, out);
            }
        };
        bits(&mut out, &st.inputs);
        bits(&mut out, &st.dffs);
        out.extend_from_slice(&(st.mems.len() as u64).to_le_bytes());
        for m in &st.mems {
            match m {
                MemState::Cells => out.push(0),
                MemState::Rom(r) => {
                    out.push(1);
                    b.encode_rom(r, &mut out);
                }
                MemState::Ram(r) => {
                    out.push(2);
                    b.encode_ram(r, &mut out);
                }
            }
        }
        match &st.outputs {
            None => out.push(0),
            Some(o) => {
                out.push(1);
                bits(&mut out, o);
            }
        }
        vsp_codec::seal(
            &FORMAT,
            KIND_SNAPSHOT,
            &param_id(b.kind(), &b.params_id()),
            &out,
        )
    }

    /// Restores a state written by [`Self::snapshot_bytes`] for the same circuit and backend parameters.
    pub fn restore_snapshot(&mut self, bytes: &[u8]) -> Result<(), CircuitError> {
        let o = vsp_codec::open(&FORMAT, bytes, KIND_SNAPSHOT)?;
        let b = self.backend();
        if o.param != param_id(b.kind(), &b.params_id()).as_slice() {
            let found = String::from_utf8_lossy(o.param);
            let (kind, params) = found.split_once(':').unwrap_or(("another", &found));
            return Err(CircuitError::Snapshot(if kind != b.kind() {
                format!(
                    "written by the {kind} backend, cannot resume with the {} backend",
                    b.kind()
                )
            } else {
                format!(
                    "written with parameters {params}, the key uses {}",
                    b.params_id()
                )
            }));
        }
        let mut r = o.reader();
        if r.take(32, "circuit fingerprint")? != self.circuit().fingerprint() {
            return Err(CircuitError::Snapshot(
                "written for a different circuit (blueprint or netlists changed)".into(),
            ));
        }
        let cycle = r.u64("cycle counter")?;
        if cycle > MAX_SNAPSHOT_CYCLE {
            return Err(CircuitError::Snapshot(format!(
                "cycle counter {cycle} is beyond any run (at most {MAX_SNAPSHOT_CYCLE}): corrupt snapshot"
            )));
        }
        let bits =
            |r: &mut Reader<'_>, want: usize, what: &str| -> Result<Vec<B::Bit>, CircuitError> {
                let n = r.count(1, MAX_ITEMS, what)?;
                if n != want {
                    return Err(CircuitError::Snapshot(format!(
                        "{what}: {n} bits, the circuit has {want}"
                    )));
                }
                (0..n).map(|_| b.decode_bit(r)).collect()
            };
        let inputs = bits(&mut r, self.circuit().input_bits(), "inputs")?;
        let dffs = bits(&mut r, self.circuit().dffs().len(), "flip-flops")?;
        let n = r.count(1, MAX_ITEMS, "memories")?;
        let old = &self.state().mems;
        if n != old.len() {
            return Err(CircuitError::Snapshot(format!(
                "{n} memories, the circuit has {}",
                old.len()
            )));
        }
        let mut mems = Vec::with_capacity(n);
        for (i, m) in old.iter().enumerate() {
            let tag = r.u8("memory tag")?;
            let new = match (tag, m) {
                (0, MemState::Cells) => MemState::Cells,
                (1, MemState::Rom(_)) => MemState::Rom(b.decode_rom(&mut r)?),
                (2, MemState::Ram(_)) => MemState::Ram(b.decode_ram(&mut r)?),
                _ => {
                    return Err(CircuitError::Snapshot(format!(
                        "memory #{i} has the wrong kind"
                    )))
                }
            };
            let spec = &self.circuit().memories()[i].spec;
            let shape = match &new {
                MemState::Rom(x) => Some(b.rom_shape(x)),
                MemState::Ram(x) => Some(b.ram_shape(x)),
                MemState::Cells => None,
            };
            if shape.is_some_and(|s| s != (spec.addr_width, spec.data_width)) {
                return Err(CircuitError::Snapshot(format!(
                    "memory {} has the wrong shape",
                    spec.name
                )));
            }
            mems.push(new);
        }
        let outputs = match r.u8("outputs tag")? {
            0 => None,
            1 => {
                let w = self.circuit().outputs().iter().map(|p| p.bits.len()).sum();
                Some(bits(&mut r, w, "outputs")?)
            }
            t => return Err(CircuitError::Snapshot(format!("bad outputs tag {t}"))),
        };
        r.end()?;
        let st = self.state_mut();
        st.cycle = cycle;
        st.inputs = inputs;
        st.dffs = dffs;
        st.mems = mems;
        st.outputs = outputs;
        Ok(())
    }

    /// Writes a snapshot to `path` with [`vsp_codec::write_atomic`].
    pub fn save_snapshot(&self, path: &Path) -> Result<(), CircuitError> {
        self.write_snapshot(path, None).map(|_| ())
    }

    /// Writes a snapshot to `path` with [`vsp_codec::write_atomic`], wrapped by `wrap` when given
    /// (the one way every snapshot file is written, periodic ones during [`Engine::run`] included);
    /// returns the file's size.
    pub fn write_snapshot(
        &self,
        path: &Path,
        wrap: Option<&SnapshotWrap>,
    ) -> Result<u64, CircuitError> {
        let state = self.snapshot_bytes();
        let bytes = match wrap {
            Some(w) => (w.0)(&state),
            None => state,
        };
        vsp_codec::write_atomic(path, &bytes, Access::Public)?;
        Ok(bytes.len() as u64)
    }

    /// Restores the state from a snapshot file; an error names the file.
    pub fn load_snapshot(&mut self, path: &Path) -> Result<(), CircuitError> {
        let bytes = vsp_codec::read_file(path)?;
        self.restore_snapshot(&bytes)
            .map_err(|e| CircuitError::in_file(path, e))
    }
}
