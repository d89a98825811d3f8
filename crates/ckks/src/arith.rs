//! Small modular-arithmetic helpers of vsp-ckks.
//!
//! The modular arithmetic itself is vsp-math's, in every build (its allocation-free core needs no
//! allocator): the device's 32-bit word modulus is [`vsp_math::Modulus32`] (Barrett with
//! SEAL-Embedded's ⌊2^64/q⌋, and 32-bit Shoup products for lazy Harvey butterflies), primality and
//! SEAL's *minimal* primitive 2N-th root are vsp-math's. What stays here are tiny u64 helpers on a
//! bare q and the bit reversal of SEAL's index order.

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

/// Whether q is prime (vsp-math's deterministic Miller–Rabin).
pub fn is_prime_u64(q: u64) -> bool {
    vsp_math::is_prime(q)
}

/// SEAL's minimal primitive 2N-th root of unity mod q (vsp-math's), or None if q is unsuitable.
pub fn minimal_primitive_root(two_n: u64, q: u64) -> Option<u64> {
    let m = vsp_math::Modulus::new(q).ok()?;
    vsp_math::minimal_primitive_root(two_n, &m).ok()
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
}
