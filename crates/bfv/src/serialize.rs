//! Versioned binary serialization of parameters, keys, plaintexts and ciphertexts.
//!
//! Layout (little endian): magic `VBFV`, format version (u16, currently 1), kind (u8), reserved (u8),
//! the 32-byte parameter id, body length (u64), body, and a SHA3-256 checksum of everything before
//! it. Polynomial limbs are bit-packed at the bit width of their prime. Seeded objects (fresh
//! secret-key ciphertexts, public keys, key-switching keys) store the 32-byte seed instead of their
//! uniform half. Readers check every length before allocating, every residue against its modulus,
//! the kind, version, parameter id and checksum, and refuse trailing bytes.

use crate::ciphertext::Ciphertext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::{expand_uniform, GaloisKeys, KeySwitchingKey, PublicKey, RelinKey, SecretKey};
use crate::params::{BfvParameters, MulMethod};
use crate::sampling::ErrorDistribution;
use sha3::{Digest, Sha3_256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 4] = b"VBFV";
const VERSION: u16 = 1;
const HEADER: usize = 4 + 2 + 1 + 1 + 32 + 8;

/// What a serialized object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
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
    let mut out = Vec::with_capacity(HEADER + body.len() + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(kind as u8);
    out.push(0);
    out.extend_from_slice(id);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    let sum: [u8; 32] = Sha3_256::digest(&out).into();
    out.extend_from_slice(&sum);
    out
}

/// Checks the envelope and returns (parameter id, body).
fn unwrap(bytes: &[u8], kind: Kind) -> Result<([u8; 32], &[u8])> {
    if bytes.len() < HEADER + 32 {
        return Err(fmt_err(format!(
            "{} bytes: shorter than the header",
            bytes.len()
        )));
    }
    if &bytes[..4] != MAGIC {
        return Err(fmt_err("not a vsp-bfv object (bad magic)"));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != VERSION {
        return Err(fmt_err(format!(
            "format version {version} not supported (this build reads {VERSION})"
        )));
    }
    if bytes[6] != kind as u8 {
        return Err(fmt_err(format!(
            "object kind {} where {:?} was expected",
            bytes[6], kind
        )));
    }
    let mut id = [0u8; 32];
    id.copy_from_slice(&bytes[8..40]);
    let mut len8 = [0u8; 8];
    len8.copy_from_slice(&bytes[40..48]);
    let len = u64::from_le_bytes(len8);
    let expected = (HEADER as u64)
        .checked_add(len)
        .and_then(|v| v.checked_add(32));
    if expected != Some(bytes.len() as u64) {
        return Err(fmt_err(format!(
            "body length {len} does not match the {} bytes given",
            bytes.len()
        )));
    }
    let split = bytes.len() - 32;
    let sum: [u8; 32] = Sha3_256::digest(&bytes[..split]).into();
    if sum[..] != bytes[split..] {
        return Err(fmt_err("checksum mismatch: corrupt data"));
    }
    Ok((id, &bytes[HEADER..split]))
}

fn check_id(params: &BfvParameters, id: &[u8; 32]) -> Result<()> {
    if *id != params.id() {
        return Err(Error::ParameterMismatch(
            "serialized object belongs to other parameters",
        ));
    }
    Ok(())
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.b.len() < n {
            return Err(fmt_err("truncated body"));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(a))
    }
    fn u64(&mut self) -> Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn seed(&mut self) -> Result<[u8; 32]> {
        let mut s = [0u8; 32];
        s.copy_from_slice(self.take(32)?);
        Ok(s)
    }
    fn finish(&self) -> Result<()> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(fmt_err(format!("{} trailing bytes", self.b.len())))
        }
    }
    /// A polynomial over Q, each limb bit-packed at its modulus' width; residues are range-checked.
    fn poly(&mut self, p: &BfvParameters) -> Result<Vec<u64>> {
        let n = p.degree();
        let mut out = Vec::with_capacity(n * p.q.len());
        for m in p.q.moduli() {
            let q = m.value();
            let w = 64 - q.leading_zeros() as usize;
            let bytes = self.take((n * w).div_ceil(8))?;
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

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
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
        let mut r = Reader { b: body };
        let n = r.u32()? as usize;
        let t = r.u64()?;
        let k = r.u32()? as usize;
        if k == 0 || k > 256 {
            return Err(fmt_err(format!("{k} moduli")));
        }
        let moduli = (0..k).map(|_| r.u64()).collect::<Result<Vec<_>>>()?;
        let error = match r.u8()? {
            0 => ErrorDistribution::Cbd {
                eta: u32::try_from(r.u64()?).map_err(|_| fmt_err("eta"))?,
            },
            1 => ErrorDistribution::Gaussian {
                sigma: f64::from_bits(r.u64()?),
            },
            2 => ErrorDistribution::Ziggurat {
                sigma: f64::from_bits(r.u64()?),
            },
            e => return Err(fmt_err(format!("unknown error distribution {e}"))),
        };
        let method = match r.u8()? {
            0 => MulMethod::Hps,
            1 => MulMethod::Behz,
            m => return Err(fmt_err(format!("unknown multiplication method {m}"))),
        };
        let insecure = match r.u8()? {
            0 => false,
            1 => true,
            v => return Err(fmt_err(format!("bad insecure flag {v}"))),
        };
        r.finish()?;
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
        let mut r = Reader { b: body };
        let size = r.u8()? as usize;
        let seeded = r.u8()?;
        if !(2..=3).contains(&size) {
            return Err(fmt_err(format!("ciphertext size {size}")));
        }
        let ct = match seeded {
            0 => {
                let polys = (0..size)
                    .map(|_| r.poly(params))
                    .collect::<Result<Vec<_>>>()?;
                Ciphertext {
                    params: params.clone(),
                    polys,
                    seed: None,
                }
            }
            1 if size == 2 => {
                let c0 = r.poly(params)?;
                let seed = r.seed()?;
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
        r.finish()?;
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
        let mut r = Reader { b: body };
        let coeffs = (0..params.degree())
            .map(|_| r.u64())
            .collect::<Result<Vec<_>>>()?;
        r.finish()?;
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
        let mut r = Reader { b: body };
        let seed = r.seed()?;
        let b = r.poly(params)?;
        r.finish()?;
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
    let seed = r.seed()?;
    let keys = (0..params.q.len())
        .map(|i| Ok((r.poly(params)?, expand_uniform(params, &seed, i as u64))))
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
        let mut r = Reader { b: body };
        let k = read_ksk(params, &mut r)?;
        r.finish()?;
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
        let mut r = Reader { b: body };
        let count = r.u32()? as usize;
        let mut keys = BTreeMap::new();
        for _ in 0..count {
            let g = r.u32()? as usize;
            if g & 1 == 0 || g >= 2 * params.degree() {
                return Err(fmt_err(format!("invalid Galois element {g}")));
            }
            keys.insert(g, read_ksk(params, &mut r)?);
        }
        r.finish()?;
        Ok(GaloisKeys { keys })
    }
}
