//! Versioned, checked binary files for keys and ciphertexts.
//!
//! Layout (little endian):
//! `magic "VSPTFHE\0"` (8) ‖ `format version u16` ‖ `kind u16` ‖ `parameter id u16` ‖ `reserved u16 = 0` ‖
//! `parameter fingerprint u64` (first 8 bytes of SHA3-256 over every parameter value) ‖ `body length u64` ‖
//! body ‖ `SHA3-256 of everything before` (32).
//! Vectors in bodies are `count u64` ‖ words; readers check every count against the bytes left before
//! allocating, so a corrupt length can never trigger a huge allocation. Keys are stored compressed
//! (seed + bodies; masks are regenerated on load). Files are written to a temporary name and renamed.

use crate::bootstrap::CompressedEvalKey;
use crate::circuit::CompressedCircuitKey;
use crate::params::{ParamId, Params};
use crate::rng::Seed;
use crate::secret_key::SecretKey;
use crate::tlwe::Tlwe;
use crate::trlwe::Trlwe;
use crate::Error;
use sha3::{Digest, Sha3_256};
use std::path::Path;
use zeroize::Zeroizing;

const MAGIC: &[u8; 8] = b"VSPTFHE\0";
/// Current format version.
pub const FORMAT_VERSION: u16 = 1;
const HEADER: usize = 8 + 2 + 2 + 2 + 2 + 8 + 8;

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Kind {
    /// [`SecretKey`] (its 32-byte seed).
    SecretKey = 1,
    /// [`CompressedEvalKey`].
    EvalKey = 2,
    /// [`CompressedCircuitKey`].
    CircuitKey = 3,
    /// Level-0 TLWE.
    TlweLvl0 = 4,
    /// Level-1 TRLWE.
    TrlweLvl1 = 5,
}

/// Fingerprint of every parameter value (detects a file made by a different build of a named set).
pub fn fingerprint(p: &Params) -> u64 {
    let mut h = Sha3_256::new();
    for v in [
        p.n0 as u64,
        p.n1 as u64,
        p.n2 as u64,
        p.sigma0.to_bits(),
        p.sigma1.to_bits(),
        p.sigma2.to_bits(),
    ] {
        h.update(v.to_le_bytes());
    }
    h.update([p.key1 as u8, p.key2 as u8]);
    for g in [p.bk1, p.ks, p.bk2, p.cb, p.privks] {
        h.update(g.levels.to_le_bytes());
        h.update(g.base_bits.to_le_bytes());
    }
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// Frames a body with header and checksum.
pub fn encode(kind: Kind, params: &Params, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body.len() + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u16).to_le_bytes());
    out.extend_from_slice(&(params.id as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&fingerprint(params).to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let sum = Sha3_256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// Checks a framed file of the expected kind; returns its parameters and body.
pub fn decode(bytes: &[u8], kind: Kind) -> Result<(Params, &[u8]), Error> {
    let f = |m: String| Err(Error::Format(m));
    if bytes.len() < HEADER + 32 {
        return f(format!("file too short ({} bytes)", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return f("not a vsp-tfhe file (bad magic)".into());
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
    let u64_at = |o: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[o..o + 8]);
        u64::from_le_bytes(b)
    };
    let version = u16_at(8);
    if version != FORMAT_VERSION {
        return f(format!(
            "unsupported format version {version} (this build reads {FORMAT_VERSION})"
        ));
    }
    let k = u16_at(10);
    if k != kind as u16 {
        return f(format!(
            "file holds kind {k}, expected {:?} ({})",
            kind, kind as u16
        ));
    }
    let params = Params::from_id(ParamId::from_u16(u16_at(12))?);
    let reserved = u16_at(14);
    if reserved != 0 {
        return f(format!(
            "reserved header field is {reserved}, must be 0 (corrupt file or a newer format)"
        ));
    }
    if u64_at(16) != fingerprint(&params) {
        return f(
            "parameter fingerprint mismatch (file made with different parameter values)".into(),
        );
    }
    let len = u64_at(24);
    if len != (bytes.len() - HEADER - 32) as u64 {
        return f(format!(
            "body length {len} does not match the file size (truncated or padded)"
        ));
    }
    let (content, sum) = bytes.split_at(bytes.len() - 32);
    if Sha3_256::digest(content).as_slice() != sum {
        return f("checksum mismatch (corrupt file)".into());
    }
    Ok((params, &content[HEADER..]))
}

/// Writes `bytes` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(())
}

/// Body writer.
#[derive(Default)]
struct W(Vec<u8>);
impl W {
    fn u32s(&mut self, v: &[u32]) {
        self.0.extend_from_slice(&(v.len() as u64).to_le_bytes());
        v.iter()
            .for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
    }
    fn u64s(&mut self, v: &[u64]) {
        self.0.extend_from_slice(&(v.len() as u64).to_le_bytes());
        v.iter()
            .for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
    }
}

/// Body reader; every read is bounds-checked.
struct R<'a>(&'a [u8]);
impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.0.len() < n {
            return Err(Error::Format("body truncated".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u64(&mut self) -> Result<u64, Error> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    fn count(&mut self, width: usize, expected: usize) -> Result<usize, Error> {
        let n = self.u64()?;
        if n != expected as u64 || (self.0.len() as u64) < n.saturating_mul(width as u64) {
            return Err(Error::Format(format!(
                "vector of {n} words, expected {expected}"
            )));
        }
        Ok(expected)
    }
    fn u32s(&mut self, expected: usize) -> Result<Vec<u32>, Error> {
        let n = self.count(4, expected)?;
        let b = self.take(4 * n)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    fn u64s(&mut self, expected: usize) -> Result<Vec<u64>, Error> {
        let n = self.count(8, expected)?;
        let b = self.take(8 * n)?;
        Ok(b.chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                u64::from_le_bytes(a)
            })
            .collect())
    }
    fn seed(&mut self) -> Result<Seed, Error> {
        let mut s = [0u8; 32];
        s.copy_from_slice(self.take(32)?);
        Ok(Seed(s))
    }
    fn end(&self) -> Result<(), Error> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Error::Format(format!(
                "{} unexpected trailing bytes",
                self.0.len()
            )))
        }
    }
}

fn same_params(file: &Params, expected: &Params) -> Result<(), Error> {
    if file.id != expected.id {
        return Err(Error::Format(format!(
            "made with parameters {:?}, expected {:?}",
            file.id, expected.id
        )));
    }
    Ok(())
}

impl Tlwe<u32> {
    /// Framed bytes of a level-0 gate ciphertext under `params`.
    pub fn to_bytes(&self, params: &Params) -> Vec<u8> {
        let mut w = W::default();
        w.u32s(&self.data);
        encode(Kind::TlweLvl0, params, &w.0)
    }
    /// Reads a level-0 ciphertext, refusing other parameters, kinds, sizes and corrupt bytes.
    pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::TlweLvl0)?;
        same_params(&p, params)?;
        let mut r = R(body);
        let data = r.u32s(p.n0 + 1)?;
        r.end()?;
        Ok(Tlwe { data })
    }
}

impl Trlwe<u32> {
    /// Framed bytes of a level-1 TRLWE under `params`.
    pub fn to_bytes(&self, params: &Params) -> Vec<u8> {
        let mut w = W::default();
        w.u32s(&self.a);
        w.u32s(&self.b);
        encode(Kind::TrlweLvl1, params, &w.0)
    }
    /// Reads a level-1 TRLWE (checked as [`Tlwe::from_bytes`]).
    pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::TrlweLvl1)?;
        same_params(&p, params)?;
        let mut r = R(body);
        let a = r.u32s(p.n1)?;
        let b = r.u32s(p.n1)?;
        r.end()?;
        Ok(Trlwe { a, b })
    }
}

impl SecretKey {
    /// Framed bytes (the 32-byte seed the key expands from); zeroized when dropped.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(encode(Kind::SecretKey, &self.params, &self.seed.0))
    }
    /// Reads a secret key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SecretKey, Error> {
        let (p, body) = decode(bytes, Kind::SecretKey)?;
        let mut r = R(body);
        let seed = r.seed()?;
        r.end()?;
        SecretKey::from_seed(&p, seed)
    }
    /// Saves atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, &self.to_bytes())
    }
    /// Loads a secret key file.
    pub fn load(path: &Path) -> Result<SecretKey, Error> {
        let b = Zeroizing::new(std::fs::read(path)?);
        Self::from_bytes(&b)
    }
}

impl CompressedEvalKey {
    /// Framed bytes (seed + bodies).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = W::default();
        w.0.extend_from_slice(&self.mask_seed.0);
        w.u32s(&self.bk_bodies);
        w.u32s(&self.ks_bodies);
        encode(Kind::EvalKey, &self.params, &w.0)
    }
    /// Reads an evaluation key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::EvalKey)?;
        let mut r = R(body);
        let mask_seed = r.seed()?;
        let bk_bodies = r.u32s(p.n0 * 2 * p.bk1.levels as usize * p.n1)?;
        let ks_bodies = r.u32s(p.n1 * p.ks.levels as usize)?;
        r.end()?;
        Ok(CompressedEvalKey {
            params: p,
            mask_seed,
            bk_bodies,
            ks_bodies,
        })
    }
    /// Saves atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, &self.to_bytes())
    }
    /// Loads an evaluation key file (call [`CompressedEvalKey::decompress`] to use it).
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::from_bytes(&std::fs::read(path)?)
    }
}

impl CompressedCircuitKey {
    /// Framed bytes (seed + bodies).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = W::default();
        w.0.extend_from_slice(&self.mask_seed.0);
        w.u64s(&self.bk2_bodies);
        w.u32s(&self.privks_bodies);
        encode(Kind::CircuitKey, &self.params, &w.0)
    }
    /// Reads a circuit key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::CircuitKey)?;
        let mut r = R(body);
        let mask_seed = r.seed()?;
        let bk2_bodies = r.u64s(p.n0 * 2 * p.bk2.levels as usize * p.n2)?;
        let privks_bodies = r.u32s(2 * (p.n2 + 1) * p.privks.levels as usize * p.n1)?;
        r.end()?;
        Ok(CompressedCircuitKey {
            params: p,
            mask_seed,
            bk2_bodies,
            privks_bodies,
        })
    }
    /// Saves atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, &self.to_bytes())
    }
    /// Loads a circuit key file (call [`CompressedCircuitKey::decompress`] to use it).
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::from_bytes(&std::fs::read(path)?)
    }
}
