//! Key generation (RLWE, as SEAL's `KeyGenerator`): a uniform ternary secret s, the public key
//! (−a·s + e, a) at the key level, and relinearisation keys in SEAL's form — for each data prime q_j,
//! an encryption of zero whose limb j additionally holds `[P]_{q_j}·s²`, P the special prime
//! (hybrid key switching with one special prime, SEAL `keygenerator.cpp`). Errors are CBD(21)
//! (σ ≈ 3.24, bounded by 21), the secret uniform ternary.

use rand_core::{CryptoRng, RngCore};
use std::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::ciphertext::Ciphertext;
use super::context::ServerContext;
use crate::device::keys::{DevicePublicKey, DeviceSecretKey};
use crate::error::{CkksError, Result};

/// The secret key: ternary coefficients and their NTT limbs at the key level.
/// Zeroized on drop; `Debug` prints no secret.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey {
    pub(crate) coeffs: Vec<i8>,
    pub(crate) ntt: Vec<u64>,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey {{ n: {}, <redacted> }}", self.coeffs.len())
    }
}

impl SecretKey {
    /// From ternary coefficients.
    pub fn from_ternary(ctx: &ServerContext, coeffs: Vec<i8>) -> Result<Self> {
        let n = ctx.n();
        if coeffs.len() != n || coeffs.iter().any(|c| !(-1..=1).contains(c)) {
            return Err(CkksError::Format(
                "secret key must have N coefficients in {-1, 0, 1}",
            ));
        }
        let mut ntt = vec![0u64; ctx.key_level() * n];
        for i in 0..ctx.key_level() {
            let mq = ctx.modulus(i);
            let limb = &mut ntt[i * n..(i + 1) * n];
            for (x, &c) in limb.iter_mut().zip(&coeffs) {
                *x = mq.reduce_i64(c as i64);
            }
            ctx.forward(i, limb)?;
        }
        Ok(Self { coeffs, ntt })
    }

    /// From SEAL's key-level NTT limbs (SEAL stores the secret key in NTT form); checks that the
    /// limbs describe one ternary polynomial.
    pub fn from_ntt_limbs(ctx: &ServerContext, limbs: &[u64]) -> Result<Self> {
        let n = ctx.n();
        if limbs.len() != ctx.key_level() * n {
            return Err(CkksError::LengthMismatch {
                expected: ctx.key_level() * n,
                got: limbs.len(),
            });
        }
        let q0 = ctx.q(0);
        let mut c = limbs[..n].to_vec();
        ctx.inverse(0, &mut c)?;
        let mut coeffs = Vec::with_capacity(n);
        for &x in &c {
            coeffs.push(match x {
                0 => 0i8,
                1 => 1,
                v if v == q0 - 1 => -1,
                _ => return Err(CkksError::Format("secret key is not ternary")),
            });
        }
        c.zeroize();
        let sk = Self::from_ternary(ctx, coeffs)?;
        if sk.ntt != limbs {
            return Err(CkksError::Format(
                "secret key limbs are inconsistent across primes",
            ));
        }
        Ok(sk)
    }

    /// NTT limb i (key level).
    pub fn ntt_limb(&self, i: usize) -> &[u64] {
        let n = self.coeffs.len();
        &self.ntt[i * n..(i + 1) * n]
    }

    /// The device's packed form.
    pub fn to_device(&self) -> Result<DeviceSecretKey> {
        DeviceSecretKey::from_ternary(&self.coeffs)
    }
}

/// The public key: an encryption of zero at the key level (NTT form).
#[derive(Clone, Debug, PartialEq)]
pub struct PublicKey(pub(crate) Ciphertext);

impl PublicKey {
    /// The underlying key-level ciphertext.
    pub fn as_ciphertext(&self) -> &Ciphertext {
        &self.0
    }
    /// Wraps a key-level, size-2 ciphertext (e.g. loaded from SEAL).
    pub fn from_ciphertext(ctx: &ServerContext, ct: Ciphertext) -> Result<Self> {
        if ct.size != 2 || ct.level != ctx.key_level() || ct.n != ctx.n() {
            return Err(CkksError::Mismatch(
                "public key must be a size-2 key-level ciphertext",
            ));
        }
        Ok(Self(ct))
    }
    /// The device's form: the data-level limbs.
    pub fn to_device(&self, ctx: &ServerContext) -> Result<DevicePublicKey> {
        let l = ctx.max_level();
        let limbs = |poly: usize| {
            (0..l)
                .map(|j| self.0.limb(poly, j).to_vec())
                .collect::<Vec<_>>()
        };
        DevicePublicKey::from_limbs(ctx.params(), &limbs(0), &limbs(1))
    }
}

/// Relinearisation keys: one key-level ciphertext per data prime.
#[derive(Clone, Debug, PartialEq)]
pub struct RelinKeys(pub(crate) Vec<Ciphertext>);

impl RelinKeys {
    /// The per-prime key ciphertexts.
    pub fn keys(&self) -> &[Ciphertext] {
        &self.0
    }
    /// Wraps SEAL-loaded keys after checking their shape.
    pub fn from_ciphertexts(ctx: &ServerContext, keys: Vec<Ciphertext>) -> Result<Self> {
        if keys.len() != ctx.max_level()
            || keys
                .iter()
                .any(|k| k.size != 2 || k.level != ctx.key_level() || k.n != ctx.n())
        {
            return Err(CkksError::Mismatch(
                "relinearisation keys do not match the parameters",
            ));
        }
        Ok(Self(keys))
    }
}

/// Generates keys from a cryptographic RNG.
pub struct KeyGenerator<'a> {
    ctx: &'a ServerContext,
    sk: SecretKey,
}

impl<'a> KeyGenerator<'a> {
    /// A fresh uniform ternary secret.
    pub fn new<R: RngCore + CryptoRng>(ctx: &'a ServerContext, rng: &mut R) -> Result<Self> {
        let mut coeffs = Vec::with_capacity(ctx.n());
        while coeffs.len() < ctx.n() {
            let b = (rng.next_u32() & 0xFF) as u8;
            if b < 255 {
                coeffs.push((b % 3) as i8 - 1);
            }
        }
        Ok(Self {
            ctx,
            sk: SecretKey::from_ternary(ctx, coeffs)?,
        })
    }
    /// Uses an existing secret key.
    pub fn from_secret_key(ctx: &'a ServerContext, sk: SecretKey) -> Self {
        Self { ctx, sk }
    }
    /// The secret key.
    pub fn secret_key(&self) -> &SecretKey {
        &self.sk
    }
    /// The public key (−a·s + e, a).
    pub fn public_key<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Result<PublicKey> {
        Ok(PublicKey(encrypt_zero_key_level(self.ctx, &self.sk, rng)?))
    }
    /// Relinearisation keys (needs a special prime).
    pub fn relin_keys<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Result<RelinKeys> {
        let ctx = self.ctx;
        let sp = ctx.params().special_prime().ok_or(CkksError::NotPossible(
            "relinearisation needs a special prime in the parameters",
        ))?;
        let mut keys = Vec::with_capacity(ctx.max_level());
        for j in 0..ctx.max_level() {
            let mut k = encrypt_zero_key_level(ctx, &self.sk, rng)?;
            let q = ctx.q(j);
            let mq = ctx.modulus(j);
            let factor = sp % q;
            let s = self.sk.ntt_limb(j);
            for (x, &si) in k.limb_mut(0, j).iter_mut().zip(s) {
                let s2 = mq.mul(si, si);
                *x = mq.add(*x, mq.mul(s2, factor));
            }
            keys.push(k);
        }
        Ok(RelinKeys(keys))
    }
}

/// Uniform value mod q by rejection.
pub(crate) fn uniform_mod<R: RngCore>(rng: &mut R, q: u64) -> u64 {
    let bound = u64::MAX - (u64::MAX % q);
    loop {
        let v = rng.next_u64();
        if v < bound {
            return v % q;
        }
    }
}

/// CBD(21) sample.
pub(crate) fn cbd21_rng<R: RngCore>(rng: &mut R) -> i64 {
    let r = rng.next_u64();
    ((r & 0x1F_FFFF).count_ones() as i64) - (((r >> 21) & 0x1F_FFFF).count_ones() as i64)
}

/// (−a·s + e, a) over all key-level primes, NTT form.
fn encrypt_zero_key_level<R: RngCore + CryptoRng>(
    ctx: &ServerContext,
    sk: &SecretKey,
    rng: &mut R,
) -> Result<Ciphertext> {
    let n = ctx.n();
    let kl = ctx.key_level();
    let mut ct = Ciphertext::zero(n, kl, 2, 1.0);
    let e: Vec<i64> = (0..n).map(|_| cbd21_rng(rng)).collect();
    for i in 0..kl {
        let q = ctx.q(i);
        let mq = ctx.modulus(i);
        let mut ei: Vec<u64> = e.iter().map(|&x| mq.reduce_i64(x)).collect();
        ctx.forward(i, &mut ei)?;
        let a: Vec<u64> = (0..n).map(|_| uniform_mod(rng, q)).collect();
        let s = sk.ntt_limb(i);
        let c0: Vec<u64> = (0..n).map(|k| mq.sub(ei[k], mq.mul(a[k], s[k]))).collect();
        ct.limb_mut(0, i).copy_from_slice(&c0);
        ct.limb_mut(1, i).copy_from_slice(&a);
    }
    Ok(ct)
}
