//! Snapshots: the whole evaluation state (cycle counter, inputs, flip-flops, memories, last outputs) in a
//! versioned, checksummed file, written atomically, so a run can be resumed exactly where it stopped —
//! Iyokan's `--snapshot`/`--resume` (VSP paper seed 000).
//!
//! An [`EngineSnapshot`] is the state as a [`FileCodec`] value: [`Engine::snapshot`] takes it (borrowing
//! the state), [`FileCodec::decode`] reads it for a [`SnapshotContext`] (the backend and circuit it must
//! fit), and [`Engine::restore_snapshot`] loads the bytes into an engine. The file is [`vsp_codec`]'s
//! envelope: magic `VSPCSNAP`, format version ([`SNAPSHOT_VERSION`]), kind 1, parameter id
//! `backend kind:parameter id` (e.g. `tfhe:Default128-…`), body length, body, SHA3-256. The body
//! (little-endian): the circuit's SHA3-256 fingerprint, the cycle (u64), then inputs, flip-flops,
//! memories (tag 0 = MUX cells, 1 = ROM, 2 = RAM) and outputs in the backend's encoding.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use sha3::{Digest, Sha3_256};
use vsp_codec::{Access, FileCodec, Format, Writer};

use super::{Engine, MemState, State};
use crate::backend::{Backend, Reader};
use crate::blueprint::{MemImpl, MemKind};
use crate::circuit::Circuit;
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

/// An engine's saved state: what a snapshot file holds, for one circuit on one backend.
pub struct EngineSnapshot<'a, B: Backend> {
    /// The backend that encodes the bits (its kind and parameters are the file's parameter id).
    backend: &'a B,
    /// The fingerprint of the circuit the state belongs to.
    fingerprint: [u8; 32],
    /// Borrowed from an engine, or read from a file.
    state: Cow<'a, State<B>>,
}

/// What an [`EngineSnapshot`] is decoded for: the backend its bits are decoded with and the circuit
/// whose fingerprint, sizes and memories it must match.
pub struct SnapshotContext<'a, B: Backend> {
    pub backend: &'a B,
    pub circuit: &'a Circuit,
}

impl<B: Backend> EngineSnapshot<'_, B> {
    /// The saved state.
    pub fn state(&self) -> &State<B> {
        &self.state
    }

    /// The saved state, owned.
    pub fn into_state(self) -> State<B> {
        self.state.into_owned()
    }

    /// The cycle the state was saved at.
    pub fn cycle(&self) -> u64 {
        self.state().cycle
    }
}

/// The cycle an engine snapshot ([`Engine::snapshot_bytes`]) was taken at, without restoring it
/// (checksum and format checked; what it belongs to is checked by [`Engine::restore_snapshot`]).
pub fn snapshot_cycle(bytes: &[u8]) -> Result<u64, CircuitError> {
    let o = vsp_codec::open(&FORMAT, bytes, KIND_SNAPSHOT)?;
    let mut r = o.reader();
    r.take(32, "circuit fingerprint")?;
    read_cycle(&mut r)
}

/// The cycle counter, refused beyond [`MAX_SNAPSHOT_CYCLE`].
fn read_cycle(r: &mut Reader<'_>) -> Result<u64, CircuitError> {
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
fn param_id(b: &impl Backend) -> Vec<u8> {
    let id = format!("{}:{}", b.kind(), b.params_id());
    if id.len() <= vsp_codec::envelope::MAX_PARAM_ID {
        id.into_bytes()
    } else {
        Sha3_256::digest(id.as_bytes()).to_vec()
    }
}

/// Refuses a snapshot whose parameter id is not `b`'s, naming the backend or parameters it was
/// written with.
fn check_param_id(param: &[u8], b: &impl Backend) -> Result<(), CircuitError> {
    if param == param_id(b).as_slice() {
        return Ok(());
    }
    let found = String::from_utf8_lossy(param);
    let (kind, params) = found.split_once(':').unwrap_or(("another", &found));
    Err(CircuitError::Snapshot(if kind != b.kind() {
        format!(
            "written by the {kind} backend, cannot resume with the {} backend",
            b.kind()
        )
    } else {
        format!(
            "written with parameters {params}, the key uses {}",
            b.params_id()
        )
    }))
}

impl<'a, B: Backend> FileCodec for EngineSnapshot<'a, B> {
    const FORMAT: &'static Format = &FORMAT;
    const KIND: u16 = KIND_SNAPSHOT;
    type Context = SnapshotContext<'a, B>;
    type Error = CircuitError;

    fn param_id(&self, _: &SnapshotContext<'a, B>) -> Vec<u8> {
        param_id(self.backend)
    }

    fn write_body(&self, w: &mut Writer) {
        let b = self.backend;
        let st = self.state();
        w.bytes(&self.fingerprint);
        w.u64(st.cycle);
        let bits = |w: &mut Writer, v: &[B::Bit]| {
            w.count(v.len());
            for x in v {
                b.encode_bit(x, w.vec_mut());
            }
        };
        bits(w, &st.inputs);
        bits(w, &st.dffs);
        w.count(st.mems.len());
        for m in &st.mems {
            match m {
                MemState::Cells => w.u8(0),
                MemState::Rom(r) => {
                    w.u8(1);
                    b.encode_rom(r, w.vec_mut());
                }
                MemState::Ram(r) => {
                    w.u8(2);
                    b.encode_ram(r, w.vec_mut());
                }
            }
        }
        match &st.outputs {
            None => w.u8(0),
            Some(o) => {
                w.u8(1);
                bits(w, o);
            }
        }
    }

    /// Reads a state for `ctx`: backend and parameters, circuit fingerprint, every count, memory
    /// kind and shape checked against them before anything is decoded or allocated.
    fn read_body(
        param: &[u8],
        r: &mut Reader<'_>,
        ctx: &SnapshotContext<'a, B>,
    ) -> Result<Self, CircuitError> {
        let (b, circuit) = (ctx.backend, ctx.circuit);
        check_param_id(param, b)?;
        let fingerprint = r.array("circuit fingerprint")?;
        if fingerprint != circuit.fingerprint() {
            return Err(CircuitError::Snapshot(
                "written for a different circuit (blueprint or netlists changed)".into(),
            ));
        }
        let cycle = read_cycle(r)?;
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
        let inputs = bits(r, circuit.input_bits(), "inputs")?;
        let dffs = bits(r, circuit.dffs().len(), "flip-flops")?;
        let n = r.count(1, MAX_ITEMS, "memories")?;
        let specs = circuit.memories();
        if n != specs.len() {
            return Err(CircuitError::Snapshot(format!(
                "{n} memories, the circuit has {}",
                specs.len()
            )));
        }
        let mut mems = Vec::with_capacity(n);
        for (i, m) in specs.iter().enumerate() {
            let spec = &m.spec;
            let new = match (r.u8("memory tag")?, spec.imp, spec.kind) {
                (0, MemImpl::Mux, _) => MemState::Cells,
                (1, MemImpl::Cmux, MemKind::Rom) => MemState::Rom(b.decode_rom(r)?),
                (2, MemImpl::Cmux, MemKind::Ram) => MemState::Ram(b.decode_ram(r)?),
                _ => {
                    return Err(CircuitError::Snapshot(format!(
                        "memory #{i} has the wrong kind"
                    )))
                }
            };
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
                let w = circuit.outputs().iter().map(|p| p.bits.len()).sum();
                Some(bits(r, w, "outputs")?)
            }
            t => return Err(CircuitError::Snapshot(format!("bad outputs tag {t}"))),
        };
        Ok(EngineSnapshot {
            backend: b,
            fingerprint,
            state: Cow::Owned(State {
                cycle,
                inputs,
                dffs,
                mems,
                outputs,
            }),
        })
    }
}

impl<B: Backend> Engine<B> {
    /// The state as a snapshot (borrowed; [`FileCodec::encode`] writes it).
    pub fn snapshot(&self) -> EngineSnapshot<'_, B> {
        EngineSnapshot {
            backend: self.backend(),
            fingerprint: self.circuit().fingerprint(),
            state: Cow::Borrowed(self.state()),
        }
    }

    /// What this engine's snapshots are decoded for (its backend and circuit).
    pub fn snapshot_context(&self) -> SnapshotContext<'_, B> {
        SnapshotContext {
            backend: self.backend(),
            circuit: self.circuit(),
        }
    }

    /// Serializes the state ([`Engine::snapshot`], encoded).
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        self.snapshot().encode(&self.snapshot_context())
    }

    /// Restores a state written by [`Self::snapshot_bytes`] for the same circuit and backend parameters.
    pub fn restore_snapshot(&mut self, bytes: &[u8]) -> Result<(), CircuitError> {
        let state = EngineSnapshot::decode(bytes, &self.snapshot_context())?.into_state();
        *self.state_mut() = state;
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
