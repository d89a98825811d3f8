//! Versioned binary serialization of parameters, keys, plaintexts and ciphertexts.
//!
//! Layout ([`vsp_codec`]'s envelope, little endian): magic `VBFV`, format version (u16, currently 2:
//! [`FORMAT_VERSION`]), kind (u16), parameter-id length (u8) and the 32-byte parameter id, body
//! length (u64), body, and a SHA3-256 checksum of everything before it. Polynomial limbs are bit-packed at the bit width of their prime. Seeded objects (fresh
//! secret-key ciphertexts, public keys, key-switching keys) store the 32-byte seed instead of their
//! uniform half. Readers check every length before allocating, every residue against its modulus,
//! the kind, version, parameter id and checksum, and refuse trailing bytes.

use crate::ciphertext::Ciphertext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::{expand_uniform, GaloisKeys, KeySwitchingKey, PublicKey, RelinKey, SecretKey};
use crate::params::{BfvParameters, MulMethod};
use crate::sampling::ErrorDistribution;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use vsp_codec::{open, seal, Access, Format, Reader};

/// Current format version (2: the shared [`vsp_codec`] envelope; 1 had its own header).
pub const FORMAT_VERSION: u16 = 2;
/// The vsp-bfv object format: [`vsp_codec`]'s envelope with magic `VBFV` and the 32-byte parameter
/// id.
pub const FORMAT: Format = Format {
    name: "vsp-bfv",
    magic: b"VBFV",
    version: FORMAT_VERSION,
    kinds: &[
        (Kind::Parameters as u16, "parameters"),
        (Kind::SecretKey as u16, "secret key"),
        (Kind::PublicKey as u16, "public key"),
        (Kind::RelinKey as u16, "relinearisation key"),
        (Kind::GaloisKeys as u16, "Galois keys"),
        (Kind::Ciphertext as u16, "ciphertext"),
        (Kind::Plaintext as u16, "plaintext"),
    ],
};

/// What a serialized object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Kind {
    /// [`BfvParameters`].
    Parameters = 1,
    /// [`SecretKey`].
    SecretKey = 2,
    /// [`PublicKey`].
    PublicKey = 3,
    /// [`RelinKey`].
    RelinKey = 4,
    /// [`GaloisKeys`].
    GaloisKeys = 5,
    /// [`Ciphertext`].
    Ciphertext = 6,
    /// [`Plaintext`].
    Plaintext = 7,
}

fn fmt_err(s: impl Into<String>) -> Error {
    Error::Format(s.into())
}

fn wrap(kind: Kind, id: &[u8; 32], body: Vec<u8>) -> Vec<u8> {
    seal(&FORMAT, kind as u16, id, &body)
}

/// Checks the envelope and returns (parameter id, body).
fn unwrap(bytes: &[u8], kind: Kind) -> Result<([u8; 32], &[u8])> {
    let o = open(&FORMAT, bytes, kind as u16)?;
    let id: [u8; 32] = o
        .param
        .try_into()
        .map_err(|_| fmt_err(format!("parameter id of {} bytes, not 32", o.param.len())))?;
    Ok((id, o.body))
}

fn check_id(params: &BfvParameters, id: &[u8; 32]) -> Result<()> {
    if *id != params.id() {
        return Err(Error::ParameterMismatch(
            "serialized object belongs to other parameters",
        ));
    }
    Ok(())
}

fn seed(r: &mut Reader<'_>) -> Result<[u8; 32]> {
    Ok(r.array("seed")?)
}

/// A polynomial over Q, each limb bit-packed at its modulus' width; residues are range-checked.
fn read_poly(r: &mut Reader<'_>, p: &BfvParameters) -> Result<Vec<u64>> {
    let n = p.degree();
    let mut out = Vec::with_capacity(n * p.q.len());
    for m in p.q.moduli() {
        let q = m.value();
        let w = 64 - q.leading_zeros() as usize;
        let bytes = r.take((n * w).div_ceil(8), "polynomial limb")?;
        let mut acc: u128 = 0;
        let mut have = 0usize;
        let mut it = bytes.iter();
        for _ in 0..n {
            while have < w {
                let byte = *it.next().ok_or_else(|| fmt_err("truncated limb"))?;
                acc |= (byte as u128) << have;
                have += 8;
            }
            let v = (acc & ((1u128 << w) - 1)) as u64;
            acc >>= w;
            have -= w;
            if v >= q {
                return Err(fmt_err(format!("residue {v} ≥ modulus {q}")));
            }
            out.push(v);
        }
    }
    Ok(out)
}

fn write_poly(out: &mut Vec<u8>, p: &BfvParameters, poly: &[u64]) {
    let n = p.degree();
    for (i, m) in p.q.moduli().iter().enumerate() {
        let w = 64 - m.value().leading_zeros() as usize;
        let mut acc: u128 = 0;
        let mut have = 0usize;
        for &v in &poly[i * n..(i + 1) * n] {
            acc |= (v as u128) << have;
            have += w;
            while have >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                have -= 8;
            }
        }
        if have > 0 {
            out.push(acc as u8);
        }
    }
}

/// Writes `bytes` to `path` with [`vsp_codec::write_atomic`] (0600: the bytes may be a secret key).
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(vsp_codec::write_atomic(path, bytes, Access::Private)?)
}

impl BfvParameters {
    /// Serializes the parameter set (degree, t, primes, error distribution, method, insecure flag).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(self.degree() as u32).to_le_bytes());
        b.extend_from_slice(&self.plaintext_modulus().to_le_bytes());
        b.extend_from_slice(&(self.moduli().len() as u32).to_le_bytes());
        for q in self.moduli() {
            b.extend_from_slice(&q.to_le_bytes());
        }
        match self.error_distribution() {
            ErrorDistribution::Cbd { eta } => {
                b.push(0);
                b.extend_from_slice(&(eta as u64).to_le_bytes());
            }
            ErrorDistribution::Gaussian { sigma } => {
                b.push(1);
                b.extend_from_slice(&sigma.to_bits().to_le_bytes());
            }
            ErrorDistribution::Ziggurat { sigma } => {
                b.push(2);
                b.extend_from_slice(&sigma.to_bits().to_le_bytes());
            }
        }
        b.push(match self.mul_method() {
            MulMethod::Hps => 0,
            MulMethod::Behz => 1,
        });
        b.push(self.is_insecure() as u8);
        wrap(Kind::Parameters, &self.id(), b)
    }

    /// Reads and re-validates a parameter set (insecure sets only if they were saved as such).
    pub fn from_bytes(bytes: &[u8]) -> Result<Arc<Self>> {
        let (id, body) = unwrap(bytes, Kind::Parameters)?;
        let mut r = Reader::new(body);
        let n = r.u32("degree")? as usize;
        let t = r.u64("plaintext modulus")?;
        let k = r.u32("modulus count")? as usize;
        if k == 0 || k > 256 {
            return Err(fmt_err(format!("{k} moduli")));
        }
        let moduli = r.u64_words(k, "moduli")?;
        let error = match r.u8("error distribution")? {
            0 => ErrorDistribution::Cbd {
                eta: u32::try_from(r.u64("eta")?).map_err(|_| fmt_err("eta"))?,
            },
            1 => ErrorDistribution::Gaussian {
                sigma: f64::from_bits(r.u64("sigma")?),
            },
            2 => ErrorDistribution::Ziggurat {
                sigma: f64::from_bits(r.u64("sigma")?),
            },
            e => return Err(fmt_err(format!("unknown error distribution {e}"))),
        };
        let method = match r.u8("multiplication method")? {
            0 => MulMethod::Hps,
            1 => MulMethod::Behz,
            m => return Err(fmt_err(format!("unknown multiplication method {m}"))),
        };
        let insecure = match r.u8("insecure flag")? {
            0 => false,
            1 => true,
            v => return Err(fmt_err(format!("bad insecure flag {v}"))),
        };
        r.end()?;
        let mut builder = Self::builder()
            .degree(n)
            .plaintext_modulus(t)
            .moduli(&moduli)
            .error_distribution(error)
            .mul_method(method);
        if insecure {
            builder = builder.insecure();
        }
        let p = builder.build()?;
        if p.id() != id {
            return Err(fmt_err("parameter id does not match the parameters"));
        }
        Ok(p)
    }
}

impl Ciphertext {
    /// Serializes; a seeded ciphertext stores c0 and the 32-byte seed of c1 (about half the size).
    pub fn to_bytes(&self) -> Vec<u8> {
        let p = &self.params;
        let mut b = vec![self.polys.len() as u8, self.seed.is_some() as u8];
        match (&self.seed, self.polys.first()) {
            (Some(seed), Some(c0)) => {
                write_poly(&mut b, p, c0);
                b.extend_from_slice(seed);
            }
            _ => self.polys.iter().for_each(|c| write_poly(&mut b, p, c)),
        }
        wrap(Kind::Ciphertext, &p.id(), b)
    }

    /// Reads a ciphertext of `params`.
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        let (id, body) = unwrap(bytes, Kind::Ciphertext)?;
        check_id(params, &id)?;
        let mut r = Reader::new(body);
        let size = r.u8("ciphertext size")? as usize;
        let seeded = r.u8("seeded flag")?;
        if !(2..=3).contains(&size) {
            return Err(fmt_err(format!("ciphertext size {size}")));
        }
        let ct = match seeded {
            0 => {
                let polys = (0..size)
                    .map(|_| read_poly(&mut r, params))
                    .collect::<Result<Vec<_>>>()?;
                Ciphertext {
                    params: params.clone(),
                    polys,
                    seed: None,
                }
            }
            1 if size == 2 => {
                let c0 = read_poly(&mut r, params)?;
                let seed = seed(&mut r)?;
                let mut c1 = expand_uniform(params, &seed, 0);
                crate::poly::inverse(
                    params.q.ntt(),
                    &mut c1,
                    params.degree(),
                    &crate::exec::Exec::sequential(),
                );
                Ciphertext {
                    params: params.clone(),
                    polys: vec![c0, c1],
                    seed: Some(seed),
                }
            }
            v => return Err(fmt_err(format!("bad seeded flag {v}"))),
        };
        r.end()?;
        Ok(ct)
    }
}

impl Plaintext {
    /// Serializes the N coefficients.
    pub fn to_bytes(&self) -> Vec<u8> {
        let b: Vec<u8> = self.coeffs.iter().flat_map(|c| c.to_le_bytes()).collect();
        wrap(Kind::Plaintext, &self.params_id, b)
    }

    /// Reads a plaintext of `params` (every coefficient < t).
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        let (id, body) = unwrap(bytes, Kind::Plaintext)?;
        check_id(params, &id)?;
        let mut r = Reader::new(body);
        let coeffs = r.u64_words(params.degree(), "plaintext coefficients")?;
        r.end()?;
        if coeffs.iter().any(|&c| c >= params.plaintext_modulus()) {
            return Err(fmt_err("plaintext coefficient ≥ t"));
        }
        Ok(Plaintext {
            params_id: id,
            coeffs,
        })
    }
}

impl SecretKey {
    /// Serializes the ternary coefficients (2 bits each). Handle the bytes as secret.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; self.coeffs.len().div_ceil(4)];
        for (i, &c) in self.coeffs.iter().enumerate() {
            b[i / 4] |= ((c + 1) as u8 & 3) << (2 * (i % 4));
        }
        let out = wrap(Kind::SecretKey, &self.params.id(), b.clone());
        zeroize::Zeroize::zeroize(&mut b);
        out
    }

    /// Reads a secret key of `params`.
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        let (id, body) = unwrap(bytes, Kind::SecretKey)?;
        check_id(params, &id)?;
        let n = params.degree();
        if body.len() != n.div_ceil(4) {
            return Err(fmt_err("secret key length"));
        }
        let mut coeffs = Vec::with_capacity(n);
        for i in 0..n {
            let v = (body[i / 4] >> (2 * (i % 4))) & 3;
            if v == 3 {
                return Err(fmt_err("secret key coefficient out of {-1, 0, 1}"));
            }
            coeffs.push(v as i64 - 1);
        }
        Ok(SecretKey::from_coefficients(params, coeffs))
    }
}

impl PublicKey {
    /// Serializes in compressed form: the seed of a and the polynomial b.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.seed.to_vec();
        write_poly(&mut b, &self.params, &self.b);
        wrap(Kind::PublicKey, &self.params.id(), b)
    }

    /// Reads a public key of `params`.
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        let (id, body) = unwrap(bytes, Kind::PublicKey)?;
        check_id(params, &id)?;
        let mut r = Reader::new(body);
        let seed = seed(&mut r)?;
        let b = read_poly(&mut r, params)?;
        r.end()?;
        Ok(PublicKey {
            params: params.clone(),
            seed,
            a: expand_uniform(params, &seed, 0),
            b,
        })
    }
}

fn write_ksk(out: &mut Vec<u8>, k: &KeySwitchingKey) {
    out.extend_from_slice(&k.seed);
    for (b, _) in &k.keys {
        write_poly(out, &k.params, b);
    }
}

fn read_ksk(params: &Arc<BfvParameters>, r: &mut Reader<'_>) -> Result<KeySwitchingKey> {
    let seed = seed(r)?;
    let keys = (0..params.q.len())
        .map(|i| {
            Ok((
                read_poly(r, params)?,
                expand_uniform(params, &seed, i as u64),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(KeySwitchingKey {
        params: params.clone(),
        seed,
        keys,
    })
}

impl RelinKey {
    /// Serializes in compressed form (seed + the b halves).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        write_ksk(&mut b, &self.0);
        wrap(Kind::RelinKey, &self.0.params.id(), b)
    }

    /// Reads a relinearisation key of `params`.
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        let (id, body) = unwrap(bytes, Kind::RelinKey)?;
        check_id(params, &id)?;
        let mut r = Reader::new(body);
        let k = read_ksk(params, &mut r)?;
        r.end()?;
        Ok(RelinKey(k))
    }
}

impl GaloisKeys {
    /// Serializes every key with its Galois element.
    pub fn to_bytes(&self, params: &BfvParameters) -> Vec<u8> {
        let mut b = (self.keys.len() as u32).to_le_bytes().to_vec();
        for (g, k) in &self.keys {
            b.extend_from_slice(&(*g as u32).to_le_bytes());
            write_ksk(&mut b, k);
        }
        wrap(Kind::GaloisKeys, &params.id(), b)
    }

    /// Reads Galois keys of `params`.
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        let (id, body) = unwrap(bytes, Kind::GaloisKeys)?;
        check_id(params, &id)?;
        let mut r = Reader::new(body);
        let count = r.u32("Galois key count")?;
        let count = r.check_count(u64::from(count), 4 + 32, 2 * params.degree(), "Galois keys")?;
        let mut keys = BTreeMap::new();
        for _ in 0..count {
            let g = r.u32("Galois element")? as usize;
            if g & 1 == 0 || g >= 2 * params.degree() {
                return Err(fmt_err(format!("invalid Galois element {g}")));
            }
            keys.insert(g, read_ksk(params, &mut r)?);
        }
        r.end()?;
        Ok(GaloisKeys { keys })
    }
}
