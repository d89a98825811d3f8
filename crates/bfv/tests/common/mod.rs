//! What the bfv integration tests share: the small insecure parameter sets and fresh keys.
#![allow(dead_code)]

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use vsp_bfv::*;

/// An insecure small ring (N = 256, t = 65537) over primes of the given bit sizes, so that the
/// tests stay fast; the arithmetic is identical.
pub fn small_params(moduli_sizes: &[u32]) -> Arc<BfvParameters> {
    BfvParameters::builder()
        .degree(256)
        .plaintext_modulus(65537)
        .moduli_sizes(moduli_sizes)
        .insecure()
        .build()
        .unwrap()
}

/// A fresh secret key, its public key and an encoder for `params`.
pub fn keys(params: &Arc<BfvParameters>, r: &mut ChaCha20Rng) -> (SecretKey, PublicKey, Encoder) {
    let sk = SecretKey::random(params, r);
    let pk = PublicKey::new(&sk, r);
    (sk, pk, Encoder::new(params))
}

/// `n` uniformly random plaintext values mod t.
pub fn random_values(r: &mut ChaCha20Rng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| r.gen_range(0..t)).collect()
}
