//! Reading and writing SEAL 4.x objects (needs `std`): ciphertexts (full and seeded), public keys
//! (a key-level ciphertext), secret keys (a key-level NTT `Plaintext`), relinearisation keys
//! (`KSwitchKeys`). Readers check every length against the input before allocating, refuse
//! compressed, foreign-parameter, unreduced or trailing data, and never panic.

use std::path::Path;

use super::header::{
    ciphertext_bytes, ciphertext_preamble, header, parms_id, parse_header, prng_info,
    seeded_ciphertext_bytes, ParmsId, HEADER_BYTES, PRNG_BLAKE2XB, PRNG_INFO_BYTES, PRNG_SHAKE256,
};
use crate::error::{CkksError, Result};
use crate::server::receive::expand_seed;
use crate::server::{Ciphertext, PublicKey, RelinKeys, SecretKey, ServerContext};

struct Cur<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, k: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(k)
            .ok_or(CkksError::Format("length overflow"))?;
        let s = self
            .b
            .get(self.pos..end)
            .ok_or(CkksError::Format("truncated SEAL data"))?;
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }
    /// Reads a header and returns the absolute end of the object it announces.
    fn object(&mut self) -> Result<usize> {
        let start = self.pos;
        let total = parse_header(self.take(HEADER_BYTES)?)?;
        let total =
            usize::try_from(total).map_err(|_| CkksError::Format("object size overflow"))?;
        let end = start
            .checked_add(total)
            .ok_or(CkksError::Format("object size overflow"))?;
        if total < HEADER_BYTES || end > self.b.len() {
            return Err(CkksError::Format(
                "SEAL object size does not match the data",
            ));
        }
        Ok(end)
    }
}

/// Which level a parms_id names: `Some(l)` for the first l data primes, or the key level.
fn level_of(ctx: &ServerContext, pid: &[u8], allow_key: bool) -> Result<usize> {
    let p = ctx.params();
    for l in (1..=ctx.max_level()).rev() {
        if parms_id(ctx.n(), &p.data_primes()[..l])?[..] == *pid {
            return Ok(l);
        }
    }
    if allow_key && parms_id(ctx.n(), &p.key_primes())?[..] == *pid {
        return Ok(ctx.key_level());
    }
    Err(CkksError::Format(
        "parms_id does not match these parameters (other N, primes or level)",
    ))
}

fn primes_of_level(ctx: &ServerContext, level: usize) -> Vec<u64> {
    (0..level).map(|i| ctx.q(i)).collect()
}

fn check_reduced(ctx: &ServerContext, ct: &Ciphertext) -> Result<()> {
    for p in 0..ct.size() {
        for i in 0..ct.level() {
            let q = ctx.q(i);
            if ct.limb(p, i).iter().any(|&x| x >= q) {
                return Err(CkksError::Format(
                    "coefficient not reduced modulo its prime",
                ));
            }
        }
    }
    Ok(())
}

fn parse_ciphertext(ctx: &ServerContext, c: &mut Cur<'_>, allow_key: bool) -> Result<Ciphertext> {
    let end = c.object()?;
    let level = level_of(ctx, c.take(32)?, allow_key)?;
    if c.u8()? != 1 {
        return Err(CkksError::Format("CKKS ciphertext must be in NTT form"));
    }
    let size = c.u64()?;
    let n = c.u64()?;
    let cms = c.u64()?;
    let scale = f64::from_bits(c.u64()?);
    let correction = c.u64()?;
    if !(2..=16).contains(&size) {
        return Err(CkksError::Format("ciphertext size must be 2..=16"));
    }
    if n != ctx.n() as u64 || cms != level as u64 {
        return Err(CkksError::Format(
            "ciphertext degree or prime count does not match its parms_id",
        ));
    }
    if !scale.is_finite() || scale <= 0.0 || correction != 1 {
        return Err(CkksError::Format("invalid scale or correction factor"));
    }
    let (size, n) = (size as usize, n as usize);
    let arr_end = c.object()?;
    let count = c.u64()?;
    let full = (size * n * level) as u64;
    let seeded = (n * level) as u64;
    if (count != full && !(count == seeded && size == 2))
        || arr_end.checked_sub(c.pos) != Some(8 * count as usize)
    {
        return Err(CkksError::Format(
            "ciphertext data length does not match its metadata",
        ));
    }
    let raw = c.take(8 * count as usize)?;
    let mut data: Vec<u64> = raw
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
        .collect();
    if count == seeded && count != full {
        let info_end = c.object()?;
        if info_end.checked_sub(c.pos) != Some(PRNG_INFO_BYTES - HEADER_BYTES) {
            return Err(CkksError::Format(
                "malformed PRNG info of a seeded ciphertext",
            ));
        }
        match c.u8()? {
            PRNG_SHAKE256 => {}
            PRNG_BLAKE2XB => {
                return Err(CkksError::Format(
                    "Blake2xb-seeded SEAL objects are not supported; save them unseeded or with SHAKE256",
                ))
            }
            _ => return Err(CkksError::Format("unknown PRNG type in seeded ciphertext")),
        }
        let mut seed = [0u8; 64];
        seed.copy_from_slice(c.take(64)?);
        for limb in expand_seed(ctx, &seed, level) {
            data.extend_from_slice(&limb);
        }
    }
    if c.pos != end {
        return Err(CkksError::Format("trailing bytes inside a SEAL ciphertext"));
    }
    let ct = Ciphertext::from_raw(n, level, size, scale, data)?;
    check_reduced(ctx, &ct)?;
    Ok(ct)
}

/// Opens the SEAL object in `bytes` that must be at the key level of `ctx`: the cursor after its
/// parms id, and where the object ends.
fn key_object<'a>(ctx: &ServerContext, bytes: &'a [u8]) -> Result<(Cur<'a>, usize)> {
    let mut c = Cur { b: bytes, pos: 0 };
    let end = c.object()?;
    level_of(ctx, c.take(32)?, true)?;
    Ok((c, end))
}

fn finish<T>(c: &Cur<'_>, v: T) -> Result<T> {
    if c.pos != c.b.len() {
        return Err(CkksError::Format("trailing bytes after the SEAL object"));
    }
    Ok(v)
}

/// Reads a ciphertext saved by SEAL's `Ciphertext::save` (uncompressed; full or SHAKE256-seeded).
pub fn read_ciphertext(ctx: &ServerContext, bytes: &[u8]) -> Result<Ciphertext> {
    let mut c = Cur { b: bytes, pos: 0 };
    let ct = parse_ciphertext(ctx, &mut c, false)?;
    finish(&c, ct)
}

/// Reads a public key saved by SEAL's `PublicKey::save`.
pub fn read_public_key(ctx: &ServerContext, bytes: &[u8]) -> Result<PublicKey> {
    let mut c = Cur { b: bytes, pos: 0 };
    let ct = parse_ciphertext(ctx, &mut c, true)?;
    let pk = PublicKey::from_ciphertext(ctx, ct)?;
    finish(&c, pk)
}

/// Reads relinearisation keys saved by SEAL's `RelinKeys::save`.
pub fn read_relin_keys(ctx: &ServerContext, bytes: &[u8]) -> Result<RelinKeys> {
    let (mut c, end) = key_object(ctx, bytes)?;
    if c.u64()? != 1 {
        return Err(CkksError::Format(
            "relinearisation keys must hold exactly the key of power 2",
        ));
    }
    let count = c.u64()?;
    if count != ctx.max_level() as u64 {
        return Err(CkksError::Format(
            "relinearisation key count differs from the data prime count",
        ));
    }
    let mut keys = Vec::new();
    for _ in 0..count {
        keys.push(parse_ciphertext(ctx, &mut c, true)?);
    }
    if c.pos != end {
        return Err(CkksError::Format(
            "trailing bytes inside SEAL relinearisation keys",
        ));
    }
    let rk = RelinKeys::from_ciphertexts(ctx, keys)?;
    finish(&c, rk)
}

/// Reads a secret key saved by SEAL's `SecretKey::save` (a key-level NTT plaintext).
pub fn read_secret_key(ctx: &ServerContext, bytes: &[u8]) -> Result<SecretKey> {
    let (mut c, end) = key_object(ctx, bytes)?;
    let count = (ctx.n() * ctx.key_level()) as u64;
    if c.u64()? != count {
        return Err(CkksError::Format(
            "secret key coefficient count does not match the key level",
        ));
    }
    let _scale = c.u64()?;
    let arr_end = c.object()?;
    if c.u64()? != count || arr_end.checked_sub(c.pos) != Some(8 * count as usize) {
        return Err(CkksError::Format("secret key data length mismatch"));
    }
    let raw = c.take(8 * count as usize)?;
    let limbs: Vec<u64> = raw
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
        .collect();
    if c.pos != end {
        return Err(CkksError::Format("trailing bytes inside a SEAL secret key"));
    }
    let sk = SecretKey::from_ntt_limbs(ctx, &limbs)?;
    finish(&c, sk)
}

fn pid_of_level(ctx: &ServerContext, level: usize) -> Result<ParmsId> {
    parms_id(ctx.n(), &primes_of_level(ctx, level))
}

fn push_ciphertext(ctx: &ServerContext, ct: &Ciphertext, out: &mut Vec<u8>) -> Result<()> {
    if ct.n() != ctx.n() || ct.level() == 0 || ct.level() > ctx.key_level() {
        return Err(CkksError::Mismatch(
            "ciphertext does not match the parameters",
        ));
    }
    let total = ciphertext_bytes(ct.n(), ct.level(), ct.size());
    let pid = pid_of_level(ctx, ct.level())?;
    out.extend_from_slice(&ciphertext_preamble(
        &pid,
        ct.n(),
        ct.level(),
        ct.size(),
        ct.size(),
        ct.scale(),
        total,
    ));
    for &w in ct.data() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    Ok(())
}

/// SEAL's `Ciphertext::save` bytes (uncompressed).
pub fn write_ciphertext(ctx: &ServerContext, ct: &Ciphertext) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(ciphertext_bytes(ct.n(), ct.level(), ct.size()) as usize);
    push_ciphertext(ctx, ct, &mut out)?;
    Ok(out)
}

/// SEAL's seeded ciphertext bytes from c0 limbs and a SHAKE256 seed (SEAL expands c1 on load).
pub fn write_seeded_ciphertext(
    ctx: &ServerContext,
    c0: &[Vec<u64>],
    seed: &[u8; 64],
    scale: f64,
) -> Result<Vec<u8>> {
    let level = c0.len();
    if level == 0 || level > ctx.max_level() || c0.iter().any(|l| l.len() != ctx.n()) {
        return Err(CkksError::Mismatch(
            "seeded ciphertext does not match the parameters",
        ));
    }
    let total = seeded_ciphertext_bytes(ctx.n(), level);
    let pid = pid_of_level(ctx, level)?;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&ciphertext_preamble(
        &pid,
        ctx.n(),
        level,
        2,
        1,
        scale,
        total,
    ));
    for limb in c0 {
        for &w in limb {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out.extend_from_slice(&prng_info(seed));
    Ok(out)
}

/// SEAL's `PublicKey::save` bytes.
pub fn write_public_key(ctx: &ServerContext, pk: &PublicKey) -> Result<Vec<u8>> {
    write_ciphertext(ctx, pk.as_ciphertext())
}

/// SEAL's `RelinKeys::save` bytes.
pub fn write_relin_keys(ctx: &ServerContext, rk: &RelinKeys) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    body.extend_from_slice(&pid_of_level(ctx, ctx.key_level())?);
    body.extend_from_slice(&1u64.to_le_bytes());
    body.extend_from_slice(&(rk.keys().len() as u64).to_le_bytes());
    for k in rk.keys() {
        push_ciphertext(ctx, k, &mut body)?;
    }
    let mut out = header((HEADER_BYTES + body.len()) as u64).to_vec();
    out.extend_from_slice(&body);
    Ok(out)
}

/// SEAL's `SecretKey::save` bytes (handle with care: this is the secret).
pub fn write_secret_key(ctx: &ServerContext, sk: &SecretKey) -> Result<Vec<u8>> {
    let count = ctx.n() * ctx.key_level();
    let mut out = Vec::with_capacity(HEADER_BYTES + 48 + HEADER_BYTES + 8 + 8 * count);
    out.extend_from_slice(&header(
        (HEADER_BYTES + 48 + HEADER_BYTES + 8 + 8 * count) as u64,
    ));
    out.extend_from_slice(&pid_of_level(ctx, ctx.key_level())?);
    out.extend_from_slice(&(count as u64).to_le_bytes());
    out.extend_from_slice(&1f64.to_bits().to_le_bytes());
    out.extend_from_slice(&header((HEADER_BYTES + 8 + 8 * count) as u64));
    out.extend_from_slice(&(count as u64).to_le_bytes());
    for i in 0..ctx.key_level() {
        for &w in sk.ntt_limb(i) {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    Ok(out)
}

/// Writes `bytes` to `path` with the project's one atomic write ([`vsp_codec::write_atomic`]),
/// created 0600 (a SEAL object may be a secret key). The bytes stay in SEAL's own format.
pub fn save_atomic(path: &Path, bytes: &[u8]) -> core::result::Result<(), vsp_codec::Error> {
    vsp_codec::write_atomic(path, bytes, vsp_codec::Access::Private)
}
