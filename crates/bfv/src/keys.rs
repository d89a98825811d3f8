//! Keys of RNS-BFV: the ternary secret key, the public key, and RNS-digit key-switching keys
//! (relinearisation and Galois keys). Key-switching keys follow the "one digit per RNS limb, no
//! special prime" design of fhe.rs (BV/GHS decomposition): digit i is `[c]_{q_i}` and its key encrypts
//! `s'·(Q/q_i)·[(Q/q_i)^{-1}]_{q_i}`. The uniform halves of public and switching keys expand from a
//! 32-byte ChaCha20 seed, which is what their compressed serialized form stores.

use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::params::BfvParameters;
use crate::poly;
use crate::sampling::{ternary, uniform_into};
use rand::{CryptoRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;
use std::sync::Arc;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The secret key: ternary coefficients and their NTT form over Q. Zeroized on drop, never printed.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey {
    #[zeroize(skip)]
    pub(crate) params: Arc<BfvParameters>,
    pub(crate) coeffs: Vec<i64>,
    pub(crate) ntt: Vec<u64>,
}

impl core::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

impl SecretKey {
    /// A uniformly ternary secret key.
    pub fn random<R: RngCore + CryptoRng>(params: &Arc<BfvParameters>, rng: &mut R) -> Self {
        let coeffs = ternary(params.degree(), rng);
        Self::from_coefficients(params, coeffs)
    }

    pub(crate) fn from_coefficients(params: &Arc<BfvParameters>, coeffs: Vec<i64>) -> Self {
        let mut ntt = poly::from_signed(params.q.moduli(), &coeffs);
        poly::forward(
            params.q.ntt(),
            &mut ntt,
            params.degree(),
            &Exec::sequential(),
        );
        Self {
            params: params.clone(),
            coeffs,
            ntt,
        }
    }

    /// The parameters of this key.
    pub fn parameters(&self) -> &Arc<BfvParameters> {
        &self.params
    }
}

/// Expands the uniform polynomial (NTT domain over Q) number `index` of a seed.
pub(crate) fn expand_uniform(params: &BfvParameters, seed: &[u8; 32], index: u64) -> Vec<u64> {
    let n = params.degree();
    let mut rng = ChaCha20Rng::from_seed(*seed);
    rng.set_stream(index);
    let mut out = vec![0u64; n * params.q.len()];
    for (i, m) in params.q.moduli().iter().enumerate() {
        uniform_into(m, &mut out[i * n..(i + 1) * n], &mut rng);
    }
    out
}

/// An RLWE sample (−a·s + e, a) in the NTT domain, a expanded from (seed, index).
fn rlwe_sample<R: RngCore + CryptoRng>(
    sk: &SecretKey,
    seed: &[u8; 32],
    index: u64,
    rng: &mut R,
) -> (Vec<u64>, Vec<u64>) {
    let p = &sk.params;
    let n = p.degree();
    let a = expand_uniform(p, seed, index);
    let mut e = poly::from_signed(p.q.moduli(), &p.error_distribution().sample_vec(n, rng));
    poly::forward(p.q.ntt(), &mut e, n, &Exec::sequential());
    let mut b = poly::mul(p.q.moduli(), &a, &sk.ntt, n);
    poly::sub_assign(p.q.moduli(), &mut e, &b, n);
    b = e;
    (b, a)
}

/// The public key (−a·s + e, a), NTT domain over Q.
#[derive(Clone, Debug)]
pub struct PublicKey {
    pub(crate) params: Arc<BfvParameters>,
    pub(crate) seed: [u8; 32],
    pub(crate) b: Vec<u64>,
    pub(crate) a: Vec<u64>,
}

impl PublicKey {
    /// Generates the public key of `sk`.
    pub fn new<R: RngCore + CryptoRng>(sk: &SecretKey, rng: &mut R) -> Self {
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let (b, a) = rlwe_sample(sk, &seed, 0, rng);
        Self {
            params: sk.params.clone(),
            seed,
            b,
            a,
        }
    }
}

/// Switches a polynomial from key s' to key s: digit i = `[c]_{q_i}` times key i.
#[derive(Clone, Debug)]
pub struct KeySwitchingKey {
    pub(crate) params: Arc<BfvParameters>,
    pub(crate) seed: [u8; 32],
    /// (b_i, a_i) per digit, NTT domain over Q.
    pub(crate) keys: Vec<(Vec<u64>, Vec<u64>)>,
}

impl KeySwitchingKey {
    /// Key from `from_ntt` (s' in the NTT domain over Q) to the secret `sk`.
    pub(crate) fn new<R: RngCore + CryptoRng>(
        sk: &SecretKey,
        from_ntt: &[u64],
        rng: &mut R,
    ) -> Self {
        let p = &sk.params;
        let n = p.degree();
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let keys = (0..p.q.len())
            .map(|i| {
                let (mut b, a) = rlwe_sample(sk, &seed, i as u64, rng);
                // (Q/q_i)·[(Q/q_i)^{-1}]_{q_i} is 1 mod q_i and 0 mod the other limbs.
                let m = &p.q.moduli()[i];
                for (x, y) in b[i * n..(i + 1) * n]
                    .iter_mut()
                    .zip(&from_ntt[i * n..(i + 1) * n])
                {
                    *x = m.add(*x, *y);
                }
                (b, a)
            })
            .collect();
        Self {
            params: p.clone(),
            seed,
            keys,
        }
    }

    /// Switches `c` (coefficient form over Q) and returns (u0, u1) in coefficient form, with
    /// u0 + u1·s ≈ c·s'.
    pub(crate) fn switch(&self, c: &[u64], exec: &Exec) -> (Vec<u64>, Vec<u64>) {
        let p = &self.params;
        let n = p.degree();
        let k = p.q.len();
        let mut u0 = poly::take(k * n);
        let mut u1 = poly::take(k * n);
        let mut limbs: Vec<(&mut [u64], &mut [u64])> =
            u0.chunks_mut(n).zip(u1.chunks_mut(n)).collect();
        exec.per_item(&mut limbs, |j, (o0, o1)| {
            let m = &p.q.moduli()[j];
            let table = &p.q.ntt()[j];
            let mut acc0 = vec![0u128; n];
            let mut acc1 = vec![0u128; n];
            let mut digit = poly::take(n);
            for (i, (b, a)) in self.keys.iter().enumerate() {
                // Digit i = [c]_{q_i} read modulo q_j, in the NTT domain of q_j.
                for (d, &x) in digit.iter_mut().zip(&c[i * n..(i + 1) * n]) {
                    *d = m.reduce(x);
                }
                table.forward(&mut digit);
                let (bj, aj) = (&b[j * n..(j + 1) * n], &a[j * n..(j + 1) * n]);
                for c_idx in 0..n {
                    acc0[c_idx] += digit[c_idx] as u128 * bj[c_idx] as u128;
                    acc1[c_idx] += digit[c_idx] as u128 * aj[c_idx] as u128;
                }
                // Keep the u128 sums far from overflow (each term < 2^122).
                if i % 32 == 31 {
                    acc0.iter_mut().for_each(|v| *v = m.reduce_u128(*v) as u128);
                    acc1.iter_mut().for_each(|v| *v = m.reduce_u128(*v) as u128);
                }
            }
            poly::give(digit);
            for (o, &v) in o0.iter_mut().zip(&acc0) {
                *o = m.reduce_u128(v);
            }
            for (o, &v) in o1.iter_mut().zip(&acc1) {
                *o = m.reduce_u128(v);
            }
            table.inverse(o0);
            table.inverse(o1);
        });
        drop(limbs);
        (u0, u1)
    }
}

/// Relinearisation key: switches s² to s.
#[derive(Clone, Debug)]
pub struct RelinKey(pub(crate) KeySwitchingKey);

impl RelinKey {
    /// Generates the relinearisation key of `sk`.
    pub fn new<R: RngCore + CryptoRng>(sk: &SecretKey, rng: &mut R) -> Self {
        let mut s2 = poly::mul(sk.params.q.moduli(), &sk.ntt, &sk.ntt, sk.params.degree());
        let key = KeySwitchingKey::new(sk, &s2, rng);
        zeroize::Zeroize::zeroize(&mut s2);
        RelinKey(key)
    }
}

/// Galois keys, one key-switching key per Galois element g (switching σ_g(s) to s).
#[derive(Clone, Debug)]
pub struct GaloisKeys {
    pub(crate) keys: BTreeMap<usize, KeySwitchingKey>,
}

/// The Galois element of a column rotation by `step` (left for positive steps): 3^step mod 2N.
pub fn galois_element_for_step(n: usize, step: i64) -> usize {
    let two_n = 2 * n as u64;
    let half = (n / 2) as i64;
    let s = step.rem_euclid(half) as u64;
    let mut g = 1u64;
    for _ in 0..s {
        g = g * 3 % two_n;
    }
    g as usize
}

impl GaloisKeys {
    /// Keys for column rotations by each of `steps`, and the row swap when `row_swap`.
    pub fn new<R: RngCore + CryptoRng>(
        sk: &SecretKey,
        steps: &[i64],
        row_swap: bool,
        rng: &mut R,
    ) -> Self {
        let n = sk.params.degree();
        let mut elements: Vec<usize> = steps
            .iter()
            .map(|&s| galois_element_for_step(n, s))
            .collect();
        if row_swap {
            elements.push(2 * n - 1);
        }
        Self::for_elements(sk, &elements, rng)
    }

    /// Keys for power-of-two rotations and the row swap: enough for any rotation and inner sums.
    pub fn power_of_two<R: RngCore + CryptoRng>(sk: &SecretKey, rng: &mut R) -> Self {
        let half = sk.params.degree() as i64 / 2;
        let mut steps = Vec::new();
        let mut s = 1;
        while s < half {
            steps.push(s);
            steps.push(-s);
            s *= 2;
        }
        Self::new(sk, &steps, true, rng)
    }

    /// Keys for explicit Galois elements (odd, < 2N).
    pub fn for_elements<R: RngCore + CryptoRng>(
        sk: &SecretKey,
        elements: &[usize],
        rng: &mut R,
    ) -> Self {
        let p = &sk.params;
        let n = p.degree();
        let mut keys = BTreeMap::new();
        for &g in elements {
            if g == 1 || g % 2 == 0 || g >= 2 * n || keys.contains_key(&g) {
                continue;
            }
            let mut s = poly::from_signed(p.q.moduli(), &sk.coeffs);
            s = poly::automorphism(p.q.moduli(), &s, n, g);
            poly::forward(p.q.ntt(), &mut s, n, &Exec::sequential());
            keys.insert(g, KeySwitchingKey::new(sk, &s, rng));
            zeroize::Zeroize::zeroize(&mut s);
        }
        Self { keys }
    }

    pub(crate) fn get(&self, g: usize) -> Result<&KeySwitchingKey> {
        self.keys
            .get(&g)
            .ok_or_else(|| Error::MissingKey(format!("Galois element {g}")))
    }

    /// The Galois elements present.
    pub fn elements(&self) -> Vec<usize> {
        self.keys.keys().copied().collect()
    }
}
