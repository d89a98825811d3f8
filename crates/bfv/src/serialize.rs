//! Versioned binary serialization of parameters, keys, plaintexts and ciphertexts.
//!
//! Every object implements [`vsp_codec::FileCodec`] in [`FORMAT`](crate::serialize::FORMAT). Layout ([`vsp_codec`]'s envelope,
//! little endian): magic `VBFV`, format version (u16, currently 2: [`FORMAT_VERSION`](crate::serialize::FORMAT_VERSION)), kind (u16:
//! each type's [`FileCodec::KIND`](vsp_codec::FileCodec::KIND)), parameter-id length (u8) and the 32-byte parameter id, body
//! length (u64), body, and a SHA3-256 checksum of everything before it. Objects other than the
//! parameters are read under the parameters the caller holds (their id must match the file's). Polynomial limbs are bit-packed at the bit width of their prime. Seeded objects (fresh
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
use vsp_codec::{Access, FileCodec, Format, Reader, Writer};

/// Current format version (2: the shared [`vsp_codec`] envelope; 1 had its own header).
pub const FORMAT_VERSION: u16 = 2;
/// The vsp-bfv object format: [`vsp_codec`]'s envelope with magic `VBFV` and the 32-byte parameter
/// id.
pub const FORMAT: Format = Format {
    name: "vsp-bfv",
    magic: b"VBFV",
    version: FORMAT_VERSION,
    kinds: &[
        (<BfvParameters as FileCodec>::KIND, "parameters"),
        (<SecretKey as FileCodec>::KIND, "secret key"),
        (<PublicKey as FileCodec>::KIND, "public key"),
        (<RelinKey as FileCodec>::KIND, "relinearisation key"),
        (<GaloisKeys as FileCodec>::KIND, "Galois keys"),
        (<Ciphertext as FileCodec>::KIND, "ciphertext"),
        (<Plaintext as FileCodec>::KIND, "plaintext"),
    ],
};

fn fmt_err(s: impl Into<String>) -> Error {
    Error::Format(s.into())
}

/// The 32-byte parameter id of a header.
fn id_of(param: &[u8]) -> Result<[u8; 32]> {
    param
        .try_into()
        .map_err(|_| fmt_err(format!("parameter id of {} bytes, not 32", param.len())))
}

/// Checks that a header's parameter id is the one of `params`.
fn check_id(params: &BfvParameters, param: &[u8]) -> Result<()> {
    if id_of(param)? != params.id() {
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

/// The [`FileCodec`] items every object of the format shares.
macro_rules! bfv_codec {
    ($kind:expr, $ctx:ty) => {
        const FORMAT: &'static Format = &FORMAT;
        const KIND: u16 = $kind;
        type Context = $ctx;
        type Error = Error;
    };
}

/// The parameter set (degree, t, primes, error distribution, method, insecure flag); reading
/// re-validates it (insecure sets only if they were saved as such).
impl FileCodec for BfvParameters {
    bfv_codec!(1, ());
    fn param_id(&self, _: &()) -> Vec<u8> {
        self.id().to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.degree() as u32);
        w.u64(self.plaintext_modulus());
        w.u32(self.moduli().len() as u32);
        for q in self.moduli() {
            w.u64(*q);
        }
        let (tag, value) = match self.error_distribution() {
            ErrorDistribution::Cbd { eta } => (0, eta as u64),
            ErrorDistribution::Gaussian { sigma } => (1, sigma.to_bits()),
            ErrorDistribution::Ziggurat { sigma } => (2, sigma.to_bits()),
        };
        w.u8(tag);
        w.u64(value);
        w.u8(match self.mul_method() {
            MulMethod::Hps => 0,
            MulMethod::Behz => 1,
        });
        w.u8(self.is_insecure() as u8);
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, _: &()) -> Result<Self> {
        let id = id_of(param)?;
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
        Arc::try_unwrap(p).map_err(|_| fmt_err("parameters shared while being read"))
    }
}

/// A ciphertext; a seeded one stores c0 and the 32-byte seed of c1 (about half the size).
impl FileCodec for Ciphertext {
    bfv_codec!(6, Arc<BfvParameters>);
    fn param_id(&self, _: &Arc<BfvParameters>) -> Vec<u8> {
        self.params.id().to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        let p = &self.params;
        w.u8(self.polys.len() as u8);
        w.u8(self.seed.is_some() as u8);
        let b = w.vec_mut();
        match (&self.seed, self.polys.first()) {
            (Some(seed), Some(c0)) => {
                write_poly(b, p, c0);
                b.extend_from_slice(seed);
            }
            _ => self.polys.iter().for_each(|c| write_poly(b, p, c)),
        }
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Arc<BfvParameters>) -> Result<Self> {
        check_id(params, param)?;
        let size = r.u8("ciphertext size")? as usize;
        let seeded = r.u8("seeded flag")?;
        if !(2..=3).contains(&size) {
            return Err(fmt_err(format!("ciphertext size {size}")));
        }
        let ct = match seeded {
            0 => {
                let polys = (0..size)
                    .map(|_| read_poly(r, params))
                    .collect::<Result<Vec<_>>>()?;
                Ciphertext {
                    params: params.clone(),
                    polys,
                    seed: None,
                }
            }
            1 if size == 2 => {
                let c0 = read_poly(r, params)?;
                let seed = seed(r)?;
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
        Ok(ct)
    }
}

/// A plaintext's N coefficients (every one < t).
impl FileCodec for Plaintext {
    bfv_codec!(7, Arc<BfvParameters>);
    fn param_id(&self, _: &Arc<BfvParameters>) -> Vec<u8> {
        self.params_id.to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        for c in &self.coeffs {
            w.u64(*c);
        }
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Arc<BfvParameters>) -> Result<Self> {
        check_id(params, param)?;
        let coeffs = r.u64_words(params.degree(), "plaintext coefficients")?;
        r.end()?;
        if coeffs.iter().any(|&c| c >= params.plaintext_modulus()) {
            return Err(fmt_err("plaintext coefficient ≥ t"));
        }
        Ok(Plaintext {
            params_id: id_of(param)?,
            coeffs,
        })
    }
}

/// The secret key's ternary coefficients, 2 bits each (saved 0600; the encoded body is wiped).
impl FileCodec for SecretKey {
    bfv_codec!(2, Arc<BfvParameters>);
    const ACCESS: Access = Access::Private;
    fn param_id(&self, _: &Arc<BfvParameters>) -> Vec<u8> {
        self.params.id().to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        let mut byte = 0u8;
        for (i, &c) in self.coeffs.iter().enumerate() {
            byte |= ((c + 1) as u8 & 3) << (2 * (i % 4));
            if i % 4 == 3 || i + 1 == self.coeffs.len() {
                w.u8(byte);
                byte = 0;
            }
        }
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Arc<BfvParameters>) -> Result<Self> {
        check_id(params, param)?;
        let n = params.degree();
        if r.remaining() != n.div_ceil(4) {
            return Err(fmt_err("secret key length"));
        }
        let body = r.take(n.div_ceil(4), "secret key")?;
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

/// A public key, compressed: the seed of a and the polynomial b.
impl FileCodec for PublicKey {
    bfv_codec!(3, Arc<BfvParameters>);
    fn param_id(&self, _: &Arc<BfvParameters>) -> Vec<u8> {
        self.params.id().to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        w.bytes(&self.seed);
        write_poly(w.vec_mut(), &self.params, &self.b);
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Arc<BfvParameters>) -> Result<Self> {
        check_id(params, param)?;
        let seed = seed(r)?;
        let b = read_poly(r, params)?;
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

/// A relinearisation key, compressed (seed + the b halves).
impl FileCodec for RelinKey {
    bfv_codec!(4, Arc<BfvParameters>);
    fn param_id(&self, _: &Arc<BfvParameters>) -> Vec<u8> {
        self.0.params.id().to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        write_ksk(w.vec_mut(), &self.0);
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Arc<BfvParameters>) -> Result<Self> {
        check_id(params, param)?;
        Ok(RelinKey(read_ksk(params, r)?))
    }
}

/// Galois keys: every key with its Galois element.
impl FileCodec for GaloisKeys {
    bfv_codec!(5, Arc<BfvParameters>);
    fn param_id(&self, params: &Arc<BfvParameters>) -> Vec<u8> {
        params.id().to_vec()
    }
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.keys.len() as u32);
        for (g, k) in &self.keys {
            w.u32(*g as u32);
            write_ksk(w.vec_mut(), k);
        }
    }
    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Arc<BfvParameters>) -> Result<Self> {
        check_id(params, param)?;
        let count = r.u32("Galois key count")?;
        let count = r.check_count(u64::from(count), 4 + 32, 2 * params.degree(), "Galois keys")?;
        let mut keys = BTreeMap::new();
        for _ in 0..count {
            let g = r.u32("Galois element")? as usize;
            if g & 1 == 0 || g >= 2 * params.degree() {
                return Err(fmt_err(format!("invalid Galois element {g}")));
            }
            keys.insert(g, read_ksk(params, r)?);
        }
        Ok(GaloisKeys { keys })
    }
}

// The crate's own names for the trait's methods, kept for its callers.

impl BfvParameters {
    /// Serializes the parameter set.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(&())
    }
    /// Reads and re-validates a parameter set.
    pub fn from_bytes(bytes: &[u8]) -> Result<Arc<Self>> {
        Ok(Arc::new(Self::decode(bytes, &())?))
    }
}

impl GaloisKeys {
    /// Serializes every key with its Galois element.
    pub fn to_bytes(&self, params: &Arc<BfvParameters>) -> Vec<u8> {
        self.encode(params)
    }
    /// Reads Galois keys of `params`.
    pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, params)
    }
}

/// `to_bytes()` and `from_bytes(params, bytes)` of the objects read under their parameters
/// (`$id`: the object's own parameter id).
macro_rules! bfv_bytes {
    ($($t:ty, $s:ident => $id:expr;)*) => {$(
        impl $t {
            /// The object's file bytes ([`FileCodec::encode`]).
            pub fn to_bytes(&self) -> Vec<u8> {
                let $s = self;
                self.encode_with_id(&$id)
            }
            /// Reads an object of `params` ([`FileCodec::decode`]).
            pub fn from_bytes(params: &Arc<BfvParameters>, bytes: &[u8]) -> Result<Self> {
                Self::decode(bytes, params)
            }
        }
    )*};
}

bfv_bytes! {
    Ciphertext, s => s.params.id();
    Plaintext, s => s.params_id;
    SecretKey, s => s.params.id();
    PublicKey, s => s.params.id();
    RelinKey, s => s.0.params.id();
}
