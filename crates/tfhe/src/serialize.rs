//! Versioned, checked binary files for keys and ciphertexts: every object implements
//! [`vsp_codec::FileCodec`] in [`FORMAT`].
//!
//! Envelope: magic `VSPTFHE\0`, format version ([`FORMAT_VERSION`]), kind (each type's
//! [`FileCodec::KIND`]), parameter id (the [`ParamId`] as u16 and the first 8 bytes of SHA3-256 over
//! every parameter value), body length, body, SHA3-256 checksum. Vectors in bodies are `count u64` ‖
//! words; readers check every count against the parameters and the bytes left before allocating.
//! Keys are stored compressed (seed + bodies; masks are regenerated on load); ciphertexts are read
//! under the parameters the caller expects. Files are written by [`vsp_codec::write_atomic`].

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
use vsp_codec::{Access, FileCodec, Format, Reader, Writer};
use zeroize::Zeroizing;

/// The vsp-tfhe file format: [`vsp_codec`]'s envelope with magic `VSPTFHE\0`; the parameter id is
/// the [`ParamId`] (u16) followed by the parameter [`fingerprint`] (u64).
pub const FORMAT: Format = Format {
    name: "vsp-tfhe",
    magic: b"VSPTFHE\0",
    version: FORMAT_VERSION,
    kinds: &[
        (<SecretKey as FileCodec>::KIND, "secret key"),
        (<CompressedEvalKey as FileCodec>::KIND, "evaluation key"),
        (<CompressedCircuitKey as FileCodec>::KIND, "circuit key"),
        (<Tlwe<u32> as FileCodec>::KIND, "level-0 TLWE"),
        (<Trlwe<u32> as FileCodec>::KIND, "level-1 TRLWE"),
    ],
};
/// Current format version (2: the shared [`vsp_codec`] envelope; 1 had its own header).
pub const FORMAT_VERSION: u16 = 2;

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

fn param_id(params: &Params) -> Vec<u8> {
    let mut id = (params.id as u16).to_le_bytes().to_vec();
    id.extend_from_slice(&fingerprint(params).to_le_bytes());
    id
}

/// The parameters a header's parameter id names, checked against their fingerprint.
fn params_of(id: &[u8]) -> Result<Params, Error> {
    let mut r = Reader::new(id);
    let params = Params::from_id(ParamId::from_u16(r.u16("parameter set")?)?);
    let fp = r.u64("parameter fingerprint")?;
    r.end()?;
    if fp != fingerprint(&params) {
        return Err(Error::ParamsChanged(format!("{:?}", params.id)));
    }
    Ok(params)
}

/// The parameters of a ciphertext's file, which must be the ones the caller expects.
fn expected_params(id: &[u8], expected: &Params) -> Result<Params, Error> {
    let file = params_of(id)?;
    if file.id != expected.id {
        return Err(Error::Format(format!(
            "made with parameters {:?}, expected {:?}",
            file.id, expected.id
        )));
    }
    Ok(file)
}

fn seed(r: &mut Reader<'_>) -> Result<Seed, Error> {
    Ok(Seed::from_bytes(r.array("seed")?))
}

/// A level-0 gate ciphertext, read under the parameters the caller expects.
impl FileCodec for Tlwe<u32> {
    const FORMAT: &'static Format = &FORMAT;
    const KIND: u16 = 4;
    type Context = Params;
    type Error = Error;
    fn param_id(&self, params: &Params) -> Vec<u8> {
        param_id(params)
    }
    fn write_body(&self, w: &mut Writer) {
        w.u32s(&self.data);
    }
    fn read_body(id: &[u8], r: &mut Reader<'_>, params: &Params) -> Result<Self, Error> {
        let p = expected_params(id, params)?;
        Ok(Tlwe {
            data: r.u32s(p.n0 + 1, "TLWE")?,
        })
    }
}

/// A level-1 TRLWE, read under the parameters the caller expects.
impl FileCodec for Trlwe<u32> {
    const FORMAT: &'static Format = &FORMAT;
    const KIND: u16 = 5;
    type Context = Params;
    type Error = Error;
    fn param_id(&self, params: &Params) -> Vec<u8> {
        param_id(params)
    }
    fn write_body(&self, w: &mut Writer) {
        w.u32s(&self.a);
        w.u32s(&self.b);
    }
    fn read_body(id: &[u8], r: &mut Reader<'_>, params: &Params) -> Result<Self, Error> {
        let p = expected_params(id, params)?;
        let a = r.u32s(p.n1, "TRLWE mask")?;
        let b = r.u32s(p.n1, "TRLWE body")?;
        Ok(Trlwe { a, b })
    }
}

/// The secret key: the 32-byte seed it expands from (saved 0600).
impl FileCodec for SecretKey {
    const FORMAT: &'static Format = &FORMAT;
    const KIND: u16 = 1;
    const ACCESS: Access = Access::Private;
    type Context = ();
    type Error = Error;
    fn param_id(&self, _: &()) -> Vec<u8> {
        param_id(&self.params)
    }
    fn write_body(&self, w: &mut Writer) {
        w.bytes(self.seed.as_bytes());
    }
    fn read_body(id: &[u8], r: &mut Reader<'_>, _: &()) -> Result<Self, Error> {
        SecretKey::from_seed(&params_of(id)?, seed(r)?)
    }
}

/// A compressed key's file: the key's parameters' id, then its mask seed and its bodies, each
/// `(field, the Writer/Reader method, its length under the parameters, what it is)`.
macro_rules! compressed_key_file {
    ($(#[$doc:meta])* $t:ident, $kind:literal, $(($field:ident, $words:ident, $len:expr, $what:literal)),+) => {
        $(#[$doc])*
        impl FileCodec for $t {
            const FORMAT: &'static Format = &FORMAT;
            const KIND: u16 = $kind;
            type Context = ();
            type Error = Error;
            fn param_id(&self, _: &()) -> Vec<u8> {
                param_id(&self.params)
            }
            fn write_body(&self, w: &mut Writer) {
                w.bytes(self.mask_seed.as_bytes());
                $(w.$words(&self.$field);)+
            }
            fn read_body(id: &[u8], r: &mut Reader<'_>, _: &()) -> Result<Self, Error> {
                let p = params_of(id)?;
                let mask_seed = seed(r)?;
                $(let $field = r.$words(($len)(&p), $what)?;)+
                Ok($t {
                    params: p,
                    mask_seed,
                    $($field),+
                })
            }
        }
    };
}

compressed_key_file!(
    /// The evaluation key, compressed: mask seed and bodies.
    CompressedEvalKey,
    2,
    (
        bk_bodies,
        u32s,
        |p: &Params| p.n0 * 2 * p.bk1.levels as usize * p.n1,
        "bootstrapping key bodies"
    ),
    (
        ks_bodies,
        u32s,
        |p: &Params| p.n1 * p.ks.levels as usize,
        "key-switching key bodies"
    )
);

compressed_key_file!(
    /// The circuit-bootstrapping key, compressed: mask seed and bodies.
    CompressedCircuitKey,
    3,
    (
        bk2_bodies,
        u64s,
        |p: &Params| p.n0 * 2 * p.bk2.levels as usize * p.n2,
        "level-2 bootstrapping key bodies"
    ),
    (
        privks_bodies,
        u32s,
        |p: &Params| 2 * (p.n2 + 1) * p.privks.levels as usize * p.n1,
        "private key-switching key bodies"
    )
);

// The crate's own names for the trait's methods (`to_bytes`/`from_bytes`, `save`/`load` without a
// context), kept for its callers.

/// `to_bytes`/`from_bytes` of the ciphertexts, written and read under the caller's parameters
/// (refusing other parameters, kinds, sizes and corrupt bytes).
macro_rules! ciphertext_files {
    ($($t:ty, $what:literal;)*) => {$(
        impl $t {
            #[doc = concat!("Framed bytes of a ", $what, " under `params`.")]
            pub fn to_bytes(&self, params: &Params) -> Vec<u8> {
                self.encode(params)
            }
            #[doc = concat!("Reads a ", $what, " made under `params`.")]
            pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<Self, Error> {
                Self::decode(bytes, params)
            }
        }
    )*};
}

ciphertext_files! {
    Tlwe<u32>, "level-0 gate ciphertext";
    Trlwe<u32>, "level-1 TRLWE";
}

impl SecretKey {
    /// Framed bytes (the 32-byte seed the key expands from); zeroized when dropped.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(self.encode(&()))
    }
    /// Reads a secret key file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SecretKey, Error> {
        Self::decode(bytes, &())
    }
    /// Saves atomically (0600).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        FileCodec::save(self, path, &())
    }
    /// Loads a secret key file.
    pub fn load(path: &Path) -> Result<SecretKey, Error> {
        <Self as FileCodec>::load(path, &())
    }
}

/// `to_bytes`/`from_bytes` and `save`/`load` of the keys whose file names their parameters.
macro_rules! key_files {
    ($($t:ty, $what:literal;)*) => {$(
        impl $t {
            #[doc = concat!("Framed bytes of the ", $what, " (seed + bodies).")]
            pub fn to_bytes(&self) -> Vec<u8> {
                self.encode(&())
            }
            #[doc = concat!("Reads a ", $what, " file's bytes.")]
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
                Self::decode(bytes, &())
            }
            /// Saves atomically.
            pub fn save(&self, path: &Path) -> Result<(), Error> {
                FileCodec::save(self, path, &())
            }
            #[doc = concat!("Loads a ", $what, " file (call `decompress` to use it).")]
            pub fn load(path: &Path) -> Result<Self, Error> {
                <Self as FileCodec>::load(path, &())
            }
        }
    )*};
}

key_files! {
    CompressedEvalKey, "evaluation key";
    CompressedCircuitKey, "circuit key";
}
