//! Versioned, checked binary files for keys and ciphertexts, in [`vsp_codec`]'s envelope.
//!
//! Envelope: magic `VSPTFHE\0`, format version ([`FORMAT_VERSION`]), kind ([`Kind`]), parameter id
//! (the [`ParamId`] as u16 and the first 8 bytes of SHA3-256 over every parameter value), body
//! length, body, SHA3-256 checksum. Vectors in bodies are `count u64` ‖ words; readers check every
//! count against the parameters and the bytes left before allocating. Keys are stored compressed
//! (seed + bodies; masks are regenerated on load). Files are written by [`vsp_codec::write_atomic`].

use crate::bootstrap::CompressedEvalKey;
use crate::circuit_bootstrap::CompressedCircuitKey;
use crate::params::{ParamId, Params};
use crate::rng::Seed;
use crate::secret_key::SecretKey;
use crate::tlwe::Tlwe;
use crate::trlwe::Trlwe;
use crate::Error;
use sha3::{Digest, Sha3_256};
use std::path::Path;
use vsp_codec::{open, seal, write_atomic, Access, Format, Reader, Writer};
use zeroize::Zeroizing;

/// The vsp-tfhe file format: [`vsp_codec`]'s envelope with magic `VSPTFHE\0`; the parameter id is
/// the [`ParamId`] (u16) followed by the parameter [`fingerprint`] (u64).
pub const FORMAT: Format = Format {
    name: "vsp-tfhe",
    magic: b"VSPTFHE\0",
    version: FORMAT_VERSION,
    kinds: &[
        (Kind::SecretKey as u16, "secret key"),
        (Kind::EvalKey as u16, "evaluation key"),
        (Kind::CircuitKey as u16, "circuit key"),
        (Kind::TlweLvl0 as u16, "level-0 TLWE"),
        (Kind::TrlweLvl1 as u16, "level-1 TRLWE"),
    ],
};
/// Current format version (2: the shared [`vsp_codec`] envelope; 1 had its own header).
pub const FORMAT_VERSION: u16 = 2;

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

fn param_id(params: &Params) -> [u8; 10] {
    let mut id = [0u8; 10];
    id[..2].copy_from_slice(&(params.id as u16).to_le_bytes());
    id[2..].copy_from_slice(&fingerprint(params).to_le_bytes());
    id
}

/// Frames a body with the envelope.
pub fn encode(kind: Kind, params: &Params, body: &[u8]) -> Vec<u8> {
    seal(&FORMAT, kind as u16, &param_id(params), body)
}

/// Checks a framed file of the expected kind; returns its parameters and body.
pub fn decode(bytes: &[u8], kind: Kind) -> Result<(Params, &[u8]), Error> {
    let o = open(&FORMAT, bytes, kind as u16)?;
    let mut r = Reader::new(o.param);
    let params = Params::from_id(ParamId::from_u16(r.u16("parameter set")?)?);
    let fp = r.u64("parameter fingerprint")?;
    r.end()?;
    if fp != fingerprint(&params) {
        return Err(Error::Format(
            "parameter fingerprint mismatch (file made with different parameter values)".into(),
        ));
    }
    Ok((params, o.body))
}

fn seed(r: &mut Reader<'_>) -> Result<Seed, Error> {
    Ok(Seed::from_bytes(r.array("seed")?))
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
        let mut w = Writer::new();
        w.u32s(&self.data);
        encode(Kind::TlweLvl0, params, w.as_bytes())
    }
    /// Reads a level-0 ciphertext, refusing other parameters, kinds, sizes and corrupt bytes.
    pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::TlweLvl0)?;
        same_params(&p, params)?;
        let mut r = Reader::new(body);
        let data = r.u32s(p.n0 + 1, "TLWE")?;
        r.end()?;
        Ok(Tlwe { data })
    }
}

impl Trlwe<u32> {
    /// Framed bytes of a level-1 TRLWE under `params`.
    pub fn to_bytes(&self, params: &Params) -> Vec<u8> {
        let mut w = Writer::new();
        w.u32s(&self.a);
        w.u32s(&self.b);
        encode(Kind::TrlweLvl1, params, w.as_bytes())
    }
    /// Reads a level-1 TRLWE (checked as [`Tlwe::from_bytes`]).
    pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::TrlweLvl1)?;
        same_params(&p, params)?;
        let mut r = Reader::new(body);
        let a = r.u32s(p.n1, "TRLWE mask")?;
        let b = r.u32s(p.n1, "TRLWE body")?;
        r.end()?;
        Ok(Trlwe { a, b })
    }
}

impl SecretKey {
    /// Framed bytes (the 32-byte seed the key expands from); zeroized when dropped.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(encode(Kind::SecretKey, &self.params, self.seed.as_bytes()))
    }
    /// Reads a secret key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SecretKey, Error> {
        let (p, body) = decode(bytes, Kind::SecretKey)?;
        let mut r = Reader::new(body);
        let seed = seed(&mut r)?;
        r.end()?;
        SecretKey::from_seed(&p, seed)
    }
    /// Saves atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(write_atomic(path, &self.to_bytes(), Access::Private)?)
    }
    /// Loads a secret key file.
    pub fn load(path: &Path) -> Result<SecretKey, Error> {
        let b = Zeroizing::new(vsp_codec::read_file(path)?);
        Self::from_bytes(&b)
    }
}

impl CompressedEvalKey {
    /// Framed bytes (seed + bodies).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(self.mask_seed.as_bytes());
        w.u32s(&self.bk_bodies);
        w.u32s(&self.ks_bodies);
        encode(Kind::EvalKey, &self.params, w.as_bytes())
    }
    /// Reads an evaluation key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::EvalKey)?;
        let mut r = Reader::new(body);
        let mask_seed = seed(&mut r)?;
        let bk_bodies = r.u32s(
            p.n0 * 2 * p.bk1.levels as usize * p.n1,
            "bootstrapping key bodies",
        )?;
        let ks_bodies = r.u32s(p.n1 * p.ks.levels as usize, "key-switching key bodies")?;
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
        Ok(write_atomic(path, &self.to_bytes(), Access::Public)?)
    }
    /// Loads an evaluation key file (call [`CompressedEvalKey::decompress`] to use it).
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::from_bytes(&vsp_codec::read_file(path)?)
    }
}

impl CompressedCircuitKey {
    /// Framed bytes (seed + bodies).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(self.mask_seed.as_bytes());
        w.u64s(&self.bk2_bodies);
        w.u32s(&self.privks_bodies);
        encode(Kind::CircuitKey, &self.params, w.as_bytes())
    }
    /// Reads a circuit key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (p, body) = decode(bytes, Kind::CircuitKey)?;
        let mut r = Reader::new(body);
        let mask_seed = seed(&mut r)?;
        let bk2_bodies = r.u64s(
            p.n0 * 2 * p.bk2.levels as usize * p.n2,
            "level-2 bootstrapping key bodies",
        )?;
        let privks_bodies = r.u32s(
            2 * (p.n2 + 1) * p.privks.levels as usize * p.n1,
            "private key-switching key bodies",
        )?;
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
        Ok(write_atomic(path, &self.to_bytes(), Access::Public)?)
    }
    /// Loads a circuit key file (call [`CompressedCircuitKey::decompress`] to use it).
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::from_bytes(&vsp_codec::read_file(path)?)
    }
}
