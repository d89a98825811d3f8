//! Small modular-arithmetic helpers private to vsp-ckks.
//!
//! Primality and SEAL's *minimal* primitive 2N-th root come from vsp-math (the workspace's arithmetic
//! core), as does the server's NTT. What stays here is device-specific: a 32-bit word modulus with
//! Barrett (⌊2^64/q⌋, as SEAL-Embedded's `modulo.h`) *and* 32-bit Shoup products for lazy Harvey
//! butterflies in 32-bit words, which vsp-math's `Modulus32` does not offer, plus tiny u64 helpers.

/// (a · b) mod q for q < 2^63.
#[inline]
pub fn mul_mod(a: u64, b: u64, q: u64) -> u64 {
    ((a as u128 * b as u128) % q as u128) as u64
}

/// a^e mod q.
pub fn pow_mod(mut a: u64, mut e: u64, q: u64) -> u64 {
    let mut r = 1 % q;
    a %= q;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, a, q);
        }
        a = mul_mod(a, a, q);
        e >>= 1;
    }
    r
}

/// Inverse of a modulo a prime q (Fermat).
pub fn inv_mod(a: u64, q: u64) -> u64 {
    pow_mod(a, q - 2, q)
}

/// Whether q is prime (vsp-math's deterministic Miller–Rabin; the crate's own without `alloc`).
pub fn is_prime_u64(q: u64) -> bool {
    #[cfg(feature = "alloc")]
    {
        vsp_math::is_prime(q)
    }
    #[cfg(not(feature = "alloc"))]
    {
        is_prime_local(q)
    }
}

/// SEAL's minimal primitive 2N-th root of unity mod q (vsp-math; the crate's own without `alloc`),
/// or None if q is unsuitable.
pub fn minimal_primitive_root(two_n: u64, q: u64) -> Option<u64> {
    #[cfg(feature = "alloc")]
    {
        let m = vsp_math::Modulus::new(q).ok()?;
        vsp_math::minimal_primitive_root(two_n, &m).ok()
    }
    #[cfg(not(feature = "alloc"))]
    {
        minimal_primitive_root_local(two_n, q)
    }
}

/// Deterministic Miller–Rabin for every u64 (the first 12 prime bases suffice below 3.3·10^24).
/// Allocation-free; the default build checks it against vsp-math.
pub fn is_prime_local(q: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if q < 2 {
        return false;
    }
    for &p in &BASES {
        if q.is_multiple_of(p) {
            return q == p;
        }
    }
    let (mut d, mut r) = (q - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        r += 1;
    }
    'bases: for &a in &BASES {
        let mut x = pow_mod(a, d, q);
        if x == 1 || x == q - 1 {
            continue;
        }
        for _ in 1..r {
            x = mul_mod(x, x, q);
            if x == q - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// The smallest primitive `two_n`-th root of unity mod prime q (SEAL's choice): finds one root ψ,
/// then takes the least of its odd powers (the primitive roots). Allocation-free, O(two_n) products.
pub fn minimal_primitive_root_local(two_n: u64, q: u64) -> Option<u64> {
    if two_n < 2
        || !two_n.is_power_of_two()
        || q < 3
        || !(q - 1).is_multiple_of(two_n)
        || !is_prime_local(q)
    {
        return None;
    }
    let half = two_n / 2;
    // A quadratic non-residue x gives ψ = x^((q−1)/2N) of order exactly 2N.
    let psi = (2..q.min(1 << 20))
        .map(|x| pow_mod(x, (q - 1) / two_n, q))
        .find(|&r| pow_mod(r, half, q) == q - 1)?;
    let sq = mul_mod(psi, psi, q);
    let (mut cur, mut best) = (psi, psi);
    for _ in 1..half {
        cur = mul_mod(cur, sq, q);
        best = best.min(cur);
    }
    Some(best)
}

/// Reverses the low `bits` bits of `x`.
#[inline]
pub fn bit_reverse(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// A prime modulus q < 2^30 held in 32-bit words, with SEAL-Embedded's Barrett constant ⌊2^64/q⌋.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mod32 {
    /// The prime.
    pub q: u32,
    /// ⌊2^64 / q⌋.
    pub ratio: u64,
}

impl Mod32 {
    /// Wraps a prime q < 2^30.
    pub fn new(q: u32) -> Self {
        Self {
            q,
            ratio: ((1u128 << 64) / q as u128) as u64,
        }
    }
    /// x mod q for any 64-bit x (Barrett; the estimate is short by at most 2).
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u32 {
        let qhat = ((x as u128 * self.ratio as u128) >> 64) as u64;
        let q = self.q as u64;
        let mut r = x.wrapping_sub(qhat.wrapping_mul(q));
        if r >= q {
            r -= q;
        }
        if r >= q {
            r -= q;
        }
        r as u32
    }
    /// a · b mod q for a, b < 2^30 (product < 2^60: one correction suffices).
    #[inline(always)]
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        let x = a as u64 * b as u64;
        let qhat = ((x as u128 * self.ratio as u128) >> 64) as u64;
        let r = x.wrapping_sub(qhat.wrapping_mul(self.q as u64)) as u32;
        if r >= self.q {
            r - self.q
        } else {
            r
        }
    }
    /// a + b mod q for reduced inputs.
    #[inline(always)]
    pub fn add(&self, a: u32, b: u32) -> u32 {
        let s = a + b;
        if s >= self.q {
            s - self.q
        } else {
            s
        }
    }
    /// a − b mod q for reduced inputs.
    #[inline(always)]
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        if a >= b {
            a - b
        } else {
            a + self.q - b
        }
    }
    /// A signed integer reduced into [0, q).
    #[inline(always)]
    pub fn from_i64(&self, x: i64) -> u32 {
        let r = self.reduce(x.unsigned_abs());
        if x < 0 && r != 0 {
            self.q - r
        } else {
            r
        }
    }
    /// Shoup constant ⌊w · 2^32 / q⌋ of a reduced w.
    #[inline(always)]
    pub fn shoup(&self, w: u32) -> u32 {
        (((w as u64) << 32) / self.q as u64) as u32
    }
    /// x · w mod q lazily in [0, 2q), for any x < 2^32, given w' = shoup(w).
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, x: u32, w: u32, w_shoup: u32) -> u32 {
        let qhat = ((x as u64 * w_shoup as u64) >> 32) as u32;
        x.wrapping_mul(w).wrapping_sub(qhat.wrapping_mul(self.q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primality_and_roots() {
        assert!(is_prime_u64(1053818881));
        assert!(is_prime_u64(281474976546817));
        assert!(!is_prime_u64(1053818881 * 3));
        let q = 1053818881;
        let r = minimal_primitive_root(8192, q).unwrap();
        assert_eq!(pow_mod(r, 4096, q), q - 1);
        // No smaller primitive root exists.
        for x in 2..r.min(5000) {
            assert_ne!(pow_mod(x, 4096, q), q - 1, "{x}");
        }
    }

    #[test]
    fn local_primality_and_roots_match_vsp_math() {
        for &q in crate::params::PRIMES_30
            .iter()
            .chain(&crate::params::PRIMES_27)
            .chain(&[417793, 274877562881, 281474976546817, 12289])
        {
            assert!(is_prime_local(q), "{q}");
            for two_n in [2048u64, 4096, 8192, 16384, 32768] {
                assert_eq!(
                    minimal_primitive_root_local(two_n, q),
                    minimal_primitive_root(two_n, q),
                    "q = {q}, 2N = {two_n}"
                );
            }
        }
        let mut x: u64 = 0x243F_6A88_85A3_08D3;
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let c = x >> (x % 40);
            assert_eq!(is_prime_local(c), is_prime_u64(c), "{c}");
        }
        // Carmichael number and a strong pseudoprime to several small bases.
        assert!(!is_prime_local(561));
        assert!(!is_prime_local(3_215_031_751));
    }

    #[test]
    fn mod32_ops_agree_with_u128() {
        let m = Mod32::new(1062535169);
        let q = m.q as u64;
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            assert_eq!(m.reduce(x) as u64, x % q);
            let (a, b) = ((x % q) as u32, ((x >> 17) % q) as u32);
            assert_eq!(m.mul(a, b) as u64, mul_mod(a as u64, b as u64, q));
            let lazy = m.mul_shoup_lazy((x >> 32) as u32, b, m.shoup(b));
            assert!(lazy < 2 * m.q);
            assert_eq!(lazy as u64 % q, mul_mod(x >> 32, b as u64, q));
            assert_eq!(m.from_i64(-(a as i64)) as u64, (q - a as u64) % q);
        }
    }
}
