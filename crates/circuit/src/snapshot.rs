//! Snapshots: the whole evaluation state (cycle counter, inputs, flip-flops, memories, last outputs) in a
//! versioned, checksummed file, written atomically (temporary file + rename), so a run can be resumed
//! exactly where it stopped — Iyokan's `--snapshot`/`--resume` (VSP paper seed 000).
//!
//! Layout (little-endian): magic `VSPCSNAP`, format version (u32), backend kind and parameter id
//! (length-prefixed strings), the circuit's SHA3-256 fingerprint, the cycle (u64), then inputs, flip-flops,
//! memories (tag 0 = MUX cells, 1 = ROM, 2 = RAM) and outputs in the backend's encoding, and finally the
//! SHA3-256 of everything before it.

use std::io::Write;
use std::path::Path;

use sha3::{Digest, Sha3_256};

use crate::backend::{Backend, Reader};
use crate::engine::{Engine, MemState};
use crate::error::CircuitError;

const MAGIC: &[u8; 8] = b"VSPCSNAP";
/// The snapshot format version this crate writes and reads.
pub const SNAPSHOT_VERSION: u32 = 1;
const MAX_ITEMS: usize = 1 << 28;
/// Largest cycle counter a snapshot may hold: far beyond any run (2^62 cycles at a nanosecond each
/// take 146 years), and far enough from 2^64 that running on can never wrap the counter.
pub const MAX_SNAPSHOT_CYCLE: u64 = 1 << 62;

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn get_str(r: &mut Reader<'_>, what: &str) -> Result<String, CircuitError> {
    let n = r.len(4096, what)?;
    String::from_utf8(r.bytes(n)?.to_vec())
        .map_err(|_| CircuitError::Snapshot(format!("{what} is not UTF-8")))
}

impl<B: Backend> Engine<B> {
    /// Serializes the state.
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        let b = self.backend();
        let st = self.state();
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
        put_str(&mut out, b.kind());
        put_str(&mut out, &b.params_id());
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
        let digest = Sha3_256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Restores a state written by [`Self::snapshot_bytes`] for the same circuit and backend parameters.
    pub fn restore_snapshot(&mut self, bytes: &[u8]) -> Result<(), CircuitError> {
        if bytes.len() < MAGIC.len() + 4 + 32 || &bytes[..8] != MAGIC {
            return Err(CircuitError::Snapshot(
                "not a VSP circuit snapshot (bad magic)".into(),
            ));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if Sha3_256::digest(body).as_slice() != sum {
            return Err(CircuitError::Snapshot(
                "checksum mismatch: the file is corrupt or truncated".into(),
            ));
        }
        let mut r = Reader::new(body);
        r.bytes(8)?;
        let version = r.u32()?;
        if version != SNAPSHOT_VERSION {
            return Err(CircuitError::Snapshot(format!(
                "format version {version}, this build reads version {SNAPSHOT_VERSION}"
            )));
        }
        let b = self.backend();
        let kind = get_str(&mut r, "backend kind")?;
        if kind != b.kind() {
            return Err(CircuitError::Snapshot(format!(
                "written by the {kind} backend, cannot resume with the {} backend",
                b.kind()
            )));
        }
        let params = get_str(&mut r, "parameter id")?;
        if params != b.params_id() {
            return Err(CircuitError::Snapshot(format!(
                "written with parameters {params}, the key uses {}",
                b.params_id()
            )));
        }
        if r.bytes(32)? != self.circuit().fingerprint() {
            return Err(CircuitError::Snapshot(
                "written for a different circuit (blueprint or netlists changed)".into(),
            ));
        }
        let cycle = r.u64()?;
        if cycle > MAX_SNAPSHOT_CYCLE {
            return Err(CircuitError::Snapshot(format!(
                "cycle counter {cycle} is beyond any run (at most {MAX_SNAPSHOT_CYCLE}): corrupt snapshot"
            )));
        }
        let bits =
            |r: &mut Reader<'_>, want: usize, what: &str| -> Result<Vec<B::Bit>, CircuitError> {
                let n = r.len(MAX_ITEMS, what)?;
                if n != want {
                    return Err(CircuitError::Snapshot(format!(
                        "{what}: {n} bits, the circuit has {want}"
                    )));
                }
                (0..n).map(|_| b.decode_bit(r)).collect()
            };
        let inputs = bits(&mut r, self.circuit().input_bits(), "inputs")?;
        let dffs = bits(&mut r, self.circuit().dffs().len(), "flip-flops")?;
        let n = r.len(MAX_ITEMS, "memories")?;
        let old = &self.state().mems;
        if n != old.len() {
            return Err(CircuitError::Snapshot(format!(
                "{n} memories, the circuit has {}",
                old.len()
            )));
        }
        let mut mems = Vec::with_capacity(n);
        for (i, m) in old.iter().enumerate() {
            let tag = r.u8()?;
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
        let outputs = match r.u8()? {
            0 => None,
            1 => {
                let w = self.circuit().outputs().iter().map(|p| p.bits.len()).sum();
                Some(bits(&mut r, w, "outputs")?)
            }
            t => return Err(CircuitError::Snapshot(format!("bad outputs tag {t}"))),
        };
        if r.remaining() != 0 {
            return Err(CircuitError::Snapshot(format!(
                "{} trailing bytes",
                r.remaining()
            )));
        }
        let st = self.state_mut();
        st.cycle = cycle;
        st.inputs = inputs;
        st.dffs = dffs;
        st.mems = mems;
        st.outputs = outputs;
        Ok(())
    }

    /// Writes a snapshot to `path` atomically.
    pub fn save_snapshot(&self, path: &Path) -> Result<(), CircuitError> {
        write_atomic(path, &self.snapshot_bytes())
    }

    /// Restores the state from a snapshot file.
    pub fn load_snapshot(&mut self, path: &Path) -> Result<(), CircuitError> {
        let bytes = std::fs::read(path).map_err(|e| CircuitError::io(path, e))?;
        self.restore_snapshot(&bytes).map_err(|e| match e {
            CircuitError::Snapshot(m) => CircuitError::Snapshot(format!("{}: {m}", path.display())),
            other => other,
        })
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so readers
/// never see a half-written file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CircuitError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(CircuitError::io(path, e));
    }
    Ok(())
}
