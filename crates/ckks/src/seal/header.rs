//! SEAL's 16-byte `SEALHeader` and `parms_id`, usable without `std` or allocation.
//!
//! Header layout (little endian): magic u16 = 0xA15E, header size u8 = 16, version major u8,
//! version minor u8, compression mode u8 (0 none, 1 zlib, 2 zstd), reserved u16 = 0, total size u64
//! (header included). parms_id = BLAKE2b-256 over the u64 words [scheme (CKKS = 2), N, q_0 … q_k,
//! plain modulus (0 for CKKS)] — SEAL's `EncryptionParameters::compute_parms_id`.

use super::blake2b::blake2b;
use crate::error::{CkksError, Result};

/// SEAL's magic number.
pub const SEAL_MAGIC: u16 = 0xA15E;
/// Header bytes.
pub const HEADER_BYTES: usize = 16;
/// The SEAL version we write (4.4, as SEAL 4.4 / seal-python 4.4 writes; every 4.x shares the format).
pub const VERSION: (u8, u8) = (4, 4);
/// SEAL's `scheme_type::ckks`.
pub const SCHEME_CKKS: u64 = 2;
/// `prng_type::shake256` in `UniformRandomGeneratorInfo`.
pub const PRNG_SHAKE256: u8 = 2;
/// `prng_type::blake2xb`.
pub const PRNG_BLAKE2XB: u8 = 1;
/// Bytes of a saved `UniformRandomGeneratorInfo`: header + type + 64-byte seed.
pub const PRNG_INFO_BYTES: usize = HEADER_BYTES + 1 + 64;

/// A 32-byte parms_id.
pub type ParmsId = [u8; 32];

/// The header bytes for a body of `total` bytes (header included).
pub fn header(total: u64) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[..2].copy_from_slice(&SEAL_MAGIC.to_le_bytes());
    h[2] = HEADER_BYTES as u8;
    h[3] = VERSION.0;
    h[4] = VERSION.1;
    h[5] = 0; // compression: none
    h[8..].copy_from_slice(&total.to_le_bytes());
    h
}

/// Parses and checks a header; returns the declared total size.
pub fn parse_header(b: &[u8]) -> Result<u64> {
    if b.len() < HEADER_BYTES {
        return Err(CkksError::Format("truncated SEAL header"));
    }
    if u16::from_le_bytes([b[0], b[1]]) != SEAL_MAGIC {
        return Err(CkksError::Format("not SEAL data (bad magic)"));
    }
    if b[2] as usize != HEADER_BYTES {
        return Err(CkksError::Format("unsupported SEAL header size"));
    }
    if b[3] != 4 {
        return Err(CkksError::Format("unsupported SEAL version (need 4.x)"));
    }
    match b[5] {
        0 => {}
        1 | 2 => {
            return Err(CkksError::Format(
                "compressed SEAL data (zlib/zstd) is not supported; save with compr_mode_type.none",
            ))
        }
        _ => return Err(CkksError::Format("unknown SEAL compression mode")),
    }
    if b[6] != 0 || b[7] != 0 {
        return Err(CkksError::Format("SEAL header reserved bytes are not zero"));
    }
    let mut s = [0u8; 8];
    s.copy_from_slice(&b[8..16]);
    Ok(u64::from_le_bytes(s))
}

/// SEAL's parms_id of CKKS parameters with degree `n` and coefficient modulus `primes` (at most 64).
pub fn parms_id(n: usize, primes: &[u64]) -> Result<ParmsId> {
    if primes.len() > 64 {
        return Err(CkksError::InvalidParams("at most 64 primes"));
    }
    let mut buf = [0u8; 8 * 67];
    let words = 3 + primes.len();
    let mut put = |i: usize, w: u64| buf[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    put(0, SCHEME_CKKS);
    put(1, n as u64);
    for (i, &q) in primes.iter().enumerate() {
        put(2 + i, q);
    }
    put(2 + primes.len(), 0);
    Ok(blake2b::<32>(&buf[..8 * words]))
}

/// Bytes of a saved ciphertext body (without the seeded trick): outer header, metadata, DynArray.
pub fn ciphertext_bytes(n: usize, level: usize, size: usize) -> u64 {
    (HEADER_BYTES + 32 + 1 + 8 * 5 + HEADER_BYTES + 8 + 8 * n * level * size) as u64
}

/// Bytes of a saved seeded ciphertext (c0 plus the PRNG info).
pub fn seeded_ciphertext_bytes(n: usize, level: usize) -> u64 {
    ciphertext_bytes(n, level, 1) + PRNG_INFO_BYTES as u64
}

/// The metadata and DynArray preamble of a ciphertext: everything before the coefficients.
/// `stored_polys` is 1 for a seeded ciphertext (c0 only), else `size`.
pub fn ciphertext_preamble(
    pid: &ParmsId,
    n: usize,
    level: usize,
    size: usize,
    stored_polys: usize,
    scale: f64,
    total: u64,
) -> [u8; HEADER_BYTES + 32 + 1 + 40 + HEADER_BYTES + 8] {
    let mut out = [0u8; HEADER_BYTES + 32 + 1 + 40 + HEADER_BYTES + 8];
    out[..16].copy_from_slice(&header(total));
    out[16..48].copy_from_slice(pid);
    out[48] = 1; // is_ntt_form
    let mut o = 49;
    for w in [size as u64, n as u64, level as u64, scale.to_bits(), 1u64] {
        out[o..o + 8].copy_from_slice(&w.to_le_bytes());
        o += 8;
    }
    let count = (n * level * stored_polys) as u64;
    out[o..o + 16].copy_from_slice(&header((HEADER_BYTES + 8) as u64 + 8 * count));
    out[o + 16..o + 24].copy_from_slice(&count.to_le_bytes());
    out
}

/// A saved `UniformRandomGeneratorInfo` for SHAKE256 and `seed`.
pub fn prng_info(seed: &[u8; 64]) -> [u8; PRNG_INFO_BYTES] {
    let mut out = [0u8; PRNG_INFO_BYTES];
    out[..16].copy_from_slice(&header(PRNG_INFO_BYTES as u64));
    out[16] = PRNG_SHAKE256;
    out[17..].copy_from_slice(seed);
    out
}
