//! Textbook FV (Fan–Vercauteren, "Somewhat Practical Fully Homomorphic Encryption", ePrint 2012/144)
//! over one big modulus q with exact big-integer scaling — the reference implementation seed 001
//! describes, with both of its relinearisation versions:
//! * **version 1** (§3.1.1): c2 is written in base T and each digit multiplies a key encrypting
//!   T^i·s²; smaller T means more keys but less noise;
//! * **version 2** (§3.1.2): one key modulo p·q encrypting p·s², applied as ⌊c2·rlk/p⌉; noise stays
//!   small when p ≥ q³, which makes the key modulus about q⁴ (checked against the security table).
//!
//! It is slow by design (every product is exact over Z) and serves as the oracle for the RNS
//! methods; seed 001's n = 1024, 1200-bit q set is accepted only with the insecure opt-in.

mod ring;

pub use ring::BigPoly;

use crate::error::{Error, Result};
use crate::params::max_log_q_128;
use crate::sampling::{ternary, ErrorDistribution};
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::{CryptoRng, RngCore};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Parameters of textbook FV: degree n, modulus q (any integer > t), plaintext modulus t.
#[derive(Clone, Debug)]
pub struct TextbookFv {
    n: usize,
    q: BigInt,
    t: BigInt,
    delta: BigInt,
    error: ErrorDistribution,
    insecure: bool,
}

/// Secret key s (ternary). Zeroized on drop, never printed.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct TbSecretKey(Vec<i64>);

impl core::fmt::Debug for TbSecretKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("TbSecretKey(<redacted>)")
    }
}

/// Public key (b, a) = ([−(a·s + e)]_q, a).
#[derive(Clone, Debug)]
pub struct TbPublicKey(BigPoly, BigPoly);

/// A ciphertext (c0, c1[, c2]) with coefficients in [0, q).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TbCiphertext(pub Vec<BigPoly>);

/// Relinearisation key version 1: base T and keys ([−(a_i·s + e_i) + T^i·s²]_q, a_i), i = 0..ℓ.
#[derive(Clone, Debug)]
pub struct RelinKeyV1 {
    base: BigInt,
    keys: Vec<(BigPoly, BigPoly)>,
}

/// Relinearisation key version 2: special modulus p and ([−(a·s + e) + p·s²]_{pq}, a).
#[derive(Clone, Debug)]
pub struct RelinKeyV2 {
    p: BigInt,
    b: BigPoly,
    a: BigPoly,
}

impl RelinKeyV1 {
    /// Number of digit keys ℓ + 1 (key size grows as log q / log T).
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// Whether there are no keys (never for a generated key).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl TextbookFv {
    /// Parameters; refuses log2 q above the 128-bit table unless `insecure`.
    pub fn new(
        n: usize,
        q: BigUint,
        t: u64,
        error: ErrorDistribution,
        insecure: bool,
    ) -> Result<Self> {
        if !n.is_power_of_two() || !(4..=32768).contains(&n) {
            return Err(Error::InvalidParameters(format!(
                "degree {n} must be a power of two in [4, 32768]"
            )));
        }
        if t < 2 || q <= BigUint::from(t) {
            return Err(Error::InvalidParameters("need 2 ≤ t < q".into()));
        }
        check_security(n, q.bits() as u32, insecure)?;
        let q = BigInt::from_biguint(Sign::Plus, q);
        let t = BigInt::from(t);
        let delta = &q / &t;
        Ok(Self {
            n,
            q,
            t,
            delta,
            error,
            insecure,
        })
    }

    /// The textbook view of RNS parameters (same n, Q, t, error distribution).
    pub fn from_rns(p: &crate::BfvParameters) -> Result<Self> {
        Self::new(
            p.degree(),
            p.ciphertext_modulus().clone(),
            p.plaintext_modulus(),
            p.error_distribution(),
            p.is_insecure(),
        )
    }

    /// The modulus q.
    pub fn modulus(&self) -> &BigInt {
        &self.q
    }

    fn error_poly<R: RngCore>(&self, rng: &mut R) -> BigPoly {
        ring::from_i64(&self.error.sample_vec(self.n, rng))
    }

    fn uniform<R: RngCore>(&self, m: &BigInt, rng: &mut R) -> BigPoly {
        (0..self.n).map(|_| uniform_below(m, rng)).collect()
    }

    /// A fresh ternary secret key.
    pub fn secret_key<R: RngCore + CryptoRng>(&self, rng: &mut R) -> TbSecretKey {
        TbSecretKey(ternary(self.n, rng))
    }

    /// The textbook view of an RNS secret key.
    pub fn secret_key_from_rns(&self, sk: &crate::SecretKey) -> TbSecretKey {
        TbSecretKey(sk.coeffs.clone())
    }

    fn s(&self, sk: &TbSecretKey) -> BigPoly {
        ring::from_i64(&sk.0)
    }

    /// ([−(a·s + e) + extra]_m, a) with a uniform modulo m.
    fn rlwe<R: RngCore>(
        &self,
        sk: &TbSecretKey,
        m: &BigInt,
        extra: &[BigInt],
        rng: &mut R,
    ) -> Result<(BigPoly, BigPoly)> {
        let a = self.uniform(m, rng);
        let as_ = ring::mul_exact(&a, &self.s(sk))?;
        let e = self.error_poly(rng);
        let mut b: BigPoly = as_
            .iter()
            .zip(&e)
            .zip(extra)
            .map(|((x, y), z)| z - x - y)
            .collect();
        ring::reduce(&mut b, m);
        Ok((b, a))
    }

    /// Public key of `sk`.
    pub fn public_key<R: RngCore + CryptoRng>(
        &self,
        sk: &TbSecretKey,
        rng: &mut R,
    ) -> Result<TbPublicKey> {
        let (b, a) = self.rlwe(sk, &self.q, &ring::zero(self.n), rng)?;
        Ok(TbPublicKey(b, a))
    }

    fn check_msg(&self, m: &[u64]) -> Result<BigPoly> {
        if m.len() > self.n || m.iter().any(|&v| BigInt::from(v) >= self.t) {
            return Err(Error::InvalidInput(
                "message longer than n or a value ≥ t".into(),
            ));
        }
        let mut p: BigPoly = m.iter().map(|&v| BigInt::from(v)).collect();
        p.resize(self.n, BigInt::zero());
        Ok(p)
    }

    /// Encryption: ([b·u + e1 + Δ·m]_q, [a·u + e2]_q).
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        pk: &TbPublicKey,
        m: &[u64],
        rng: &mut R,
    ) -> Result<TbCiphertext> {
        let m = self.check_msg(m)?;
        let u = ring::from_i64(&ternary(self.n, rng));
        let mut c0 = ring::add(&ring::mul_exact(&pk.0, &u)?, &self.error_poly(rng));
        c0 = c0
            .iter()
            .zip(&m)
            .map(|(x, v)| x + &self.delta * v)
            .collect();
        let mut c1 = ring::add(&ring::mul_exact(&pk.1, &u)?, &self.error_poly(rng));
        ring::reduce(&mut c0, &self.q);
        ring::reduce(&mut c1, &self.q);
        Ok(TbCiphertext(vec![c0, c1]))
    }

    fn phase(&self, sk: &TbSecretKey, ct: &TbCiphertext) -> Result<BigPoly> {
        let s = self.s(sk);
        let mut acc = ct.0.first().cloned().ok_or(Error::CiphertextSize(0))?;
        let mut s_pow = s.clone();
        for (i, c) in ct.0.iter().enumerate().skip(1) {
            acc = ring::add(&acc, &ring::mul_exact(c, &s_pow)?);
            if i + 1 < ct.0.len() {
                s_pow = ring::mul_exact(&s_pow, &s)?;
            }
        }
        Ok(ring::center(&acc, &self.q))
    }

    /// Decryption: [⌊t·[c0 + c1·s + c2·s²]_q / q⌉]_t.
    pub fn decrypt(&self, sk: &TbSecretKey, ct: &TbCiphertext) -> Result<Vec<u64>> {
        let x = self.phase(sk, ct)?;
        let mut m = ring::scale_round(&x, &self.t, &self.q);
        ring::reduce(&mut m, &self.t);
        Ok(m.iter().map(|v| v.to_u64().unwrap_or(0)).collect())
    }

    /// Invariant noise budget in bits, as for the RNS scheme.
    pub fn noise_budget(&self, sk: &TbSecretKey, ct: &TbCiphertext) -> Result<u32> {
        let x = self.phase(sk, ct)?;
        let v = ring::center(&x.iter().map(|c| c * &self.t).collect::<Vec<_>>(), &self.q);
        let max = v.iter().map(|c| c.abs()).max().unwrap_or_default();
        let budget = self.q.bits() as i64 - 2 - max.bits() as i64;
        Ok(budget.max(0) as u32)
    }

    /// Multiplication by an integer constant k (|k| < t/2 keeps the noise growth at |k|):
    /// every polynomial times k, reduced mod q. Decrypts to k·m mod t.
    pub fn mul_scalar(&self, ct: &TbCiphertext, k: i64) -> TbCiphertext {
        let k = BigInt::from(k);
        TbCiphertext(
            ct.0.iter()
                .map(|c| {
                    let mut p: BigPoly = c.iter().map(|x| x * &k).collect();
                    ring::reduce(&mut p, &self.q);
                    p
                })
                .collect(),
        )
    }

    /// Addition of a plaintext polynomial (coefficients < t): c0 + Δ·m.
    pub fn add_plain(&self, ct: &TbCiphertext, m: &[u64]) -> Result<TbCiphertext> {
        let m = self.check_msg(m)?;
        let mut out = ct.clone();
        let c0 = out.0.first_mut().ok_or(Error::CiphertextSize(0))?;
        for (x, v) in c0.iter_mut().zip(&m) {
            *x = (&*x + &self.delta * v).mod_floor(&self.q);
        }
        Ok(out)
    }

    /// Addition.
    pub fn add(&self, a: &TbCiphertext, b: &TbCiphertext) -> TbCiphertext {
        let len = a.0.len().max(b.0.len());
        let z = ring::zero(self.n);
        TbCiphertext(
            (0..len)
                .map(|i| {
                    let mut p = ring::add(a.0.get(i).unwrap_or(&z), b.0.get(i).unwrap_or(&z));
                    ring::reduce(&mut p, &self.q);
                    p
                })
                .collect(),
        )
    }

    /// Multiplication (§4): c_i = [⌊t/q · (tensor product over Z of the centered inputs)⌉]_q.
    pub fn multiply(&self, a: &TbCiphertext, b: &TbCiphertext) -> Result<TbCiphertext> {
        if a.0.len() != 2 || b.0.len() != 2 {
            return Err(Error::CiphertextSize(a.0.len().max(b.0.len())));
        }
        let (a0, a1) = (
            ring::center(&a.0[0], &self.q),
            ring::center(&a.0[1], &self.q),
        );
        let (b0, b1) = (
            ring::center(&b.0[0], &self.q),
            ring::center(&b.0[1], &self.q),
        );
        let e0 = ring::mul_exact(&a0, &b0)?;
        let e1 = ring::add(&ring::mul_exact(&a0, &b1)?, &ring::mul_exact(&a1, &b0)?);
        let e2 = ring::mul_exact(&a1, &b1)?;
        Ok(TbCiphertext(
            [e0, e1, e2]
                .iter()
                .map(|e| {
                    let mut s = ring::scale_round(e, &self.t, &self.q);
                    ring::reduce(&mut s, &self.q);
                    s
                })
                .collect(),
        ))
    }

    /// Relinearisation key version 1 with digit base T ≥ 2.
    pub fn relin_key_v1<R: RngCore + CryptoRng>(
        &self,
        sk: &TbSecretKey,
        base: u64,
        rng: &mut R,
    ) -> Result<RelinKeyV1> {
        if base < 2 {
            return Err(Error::InvalidParameters(
                "relinearisation base T must be ≥ 2".into(),
            ));
        }
        let t_big = BigInt::from(base);
        let s = self.s(sk);
        let s2 = ring::mul_exact(&s, &s)?;
        let mut keys = Vec::new();
        let mut pow = BigInt::one();
        // ℓ = ⌊log_T q⌋, keys for i = 0..=ℓ.
        while pow < self.q {
            let extra: BigPoly = s2.iter().map(|c| c * &pow).collect();
            keys.push(self.rlwe(sk, &self.q, &extra, rng)?);
            pow *= &t_big;
        }
        Ok(RelinKeyV1 { base: t_big, keys })
    }

    /// Relinearisation version 1: `c0 + Σ rlk_i[0]·c2^(i)`, `c1 + Σ rlk_i[1]·c2^(i)`.
    pub fn relinearize_v1(&self, ct: &TbCiphertext, rk: &RelinKeyV1) -> Result<TbCiphertext> {
        if ct.0.len() != 3 {
            return Err(Error::CiphertextSize(ct.0.len()));
        }
        let mut c0 = ct.0[0].clone();
        let mut c1 = ct.0[1].clone();
        let mut rest = ct.0[2].clone();
        for (b, a) in &rk.keys {
            let digit: BigPoly = rest.iter().map(|x| x.mod_floor(&rk.base)).collect();
            rest = rest.iter().map(|x| x.div_floor(&rk.base)).collect();
            c0 = ring::add(&c0, &ring::mul_exact(b, &digit)?);
            c1 = ring::add(&c1, &ring::mul_exact(a, &digit)?);
        }
        ring::reduce(&mut c0, &self.q);
        ring::reduce(&mut c1, &self.q);
        Ok(TbCiphertext(vec![c0, c1]))
    }

    /// Relinearisation key version 2 with special modulus p (seed 001 asks p ≥ q³); the key lives
    /// modulo p·q, whose size is checked against the security table.
    pub fn relin_key_v2<R: RngCore + CryptoRng>(
        &self,
        sk: &TbSecretKey,
        p: BigUint,
        rng: &mut R,
    ) -> Result<RelinKeyV2> {
        if p < BigUint::from(2u32) {
            return Err(Error::InvalidParameters(
                "special modulus p must be ≥ 2".into(),
            ));
        }
        let p = BigInt::from_biguint(Sign::Plus, p);
        let pq = &p * &self.q;
        check_security(self.n, pq.bits() as u32, self.insecure)?;
        let s = self.s(sk);
        let s2 = ring::mul_exact(&s, &s)?;
        let extra: BigPoly = s2.iter().map(|c| c * &p).collect();
        let (b, a) = self.rlwe(sk, &pq, &extra, rng)?;
        Ok(RelinKeyV2 {
            p,
            b: ring::center(&b, &pq),
            a: ring::center(&a, &pq),
        })
    }

    /// The special modulus p = q³ (rounded up to the next integer of that size) seed 001 recommends.
    pub fn default_v2_modulus(&self) -> BigUint {
        (&self.q * &self.q * &self.q)
            .to_biguint()
            .unwrap_or_default()
    }

    /// Relinearisation version 2: c0 + ⌊c2·rlk0/p⌉, c1 + ⌊c2·rlk1/p⌉ (c2 centered).
    pub fn relinearize_v2(&self, ct: &TbCiphertext, rk: &RelinKeyV2) -> Result<TbCiphertext> {
        if ct.0.len() != 3 {
            return Err(Error::CiphertextSize(ct.0.len()));
        }
        let c2 = ring::center(&ct.0[2], &self.q);
        let one = BigInt::one();
        let d0 = ring::scale_round(&ring::mul_exact(&c2, &rk.b)?, &one, &rk.p);
        let d1 = ring::scale_round(&ring::mul_exact(&c2, &rk.a)?, &one, &rk.p);
        let mut c0 = ring::add(&ct.0[0], &d0);
        let mut c1 = ring::add(&ct.0[1], &d1);
        ring::reduce(&mut c0, &self.q);
        ring::reduce(&mut c1, &self.q);
        Ok(TbCiphertext(vec![c0, c1]))
    }

    /// The textbook view of an RNS ciphertext (CRT reconstruction of every coefficient).
    pub fn from_rns_ciphertext(&self, ct: &crate::Ciphertext) -> TbCiphertext {
        let p = ct.parameters();
        TbCiphertext(
            ct.polys
                .iter()
                .map(|poly| {
                    (0..p.degree())
                        .map(|j| BigInt::from_biguint(Sign::Plus, p.q.reconstruct(poly, j)))
                        .collect()
                })
                .collect(),
        )
    }
}

/// Uniform integer in [0, m) by rejection on bits(m) random bits.
fn uniform_below<R: RngCore>(m: &BigInt, rng: &mut R) -> BigInt {
    let bits = m.bits();
    let bytes = bits.div_ceil(8) as usize;
    let mut buf = vec![0u8; bytes];
    loop {
        rng.fill_bytes(&mut buf);
        if bits & 7 != 0 {
            if let Some(top) = buf.last_mut() {
                *top &= (1u8 << (bits % 8)) - 1;
            }
        }
        let v = BigInt::from_bytes_le(Sign::Plus, &buf);
        if &v < m {
            return v;
        }
    }
}

fn check_security(n: usize, log_q: u32, insecure: bool) -> Result<()> {
    match max_log_q_128(n) {
        Some(max) if log_q <= max => Ok(()),
        _ if insecure => {
            eprintln!(
                "vsp-bfv WARNING: insecure textbook parameters (n = {n}, log2 modulus = {log_q})"
            );
            Ok(())
        }
        Some(max) => Err(Error::Insecure {
            degree: n,
            log_q,
            max,
        }),
        None => Err(Error::InvalidParameters(format!(
            "degree {n} not in the security table"
        ))),
    }
}
