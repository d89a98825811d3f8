//! Primality testing, NTT-friendly prime generation and primitive roots of unity.
//!
//! A negacyclic NTT of size N modulo q needs a primitive 2N-th root of unity ψ, which exists exactly
//! when q ≡ 1 (mod 2N). Primes are searched downwards from 2^bits like SEAL's `CoeffModulus::Create`,
//! and the root chosen by [`minimal_primitive_root`] is the smallest one, as SEAL chooses it, so that
//! transforms agree with SEAL's bit for bit (needed by the SEAL-compatible CKKS encryptor, seed 003).

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::error::{MathError, Result};
use crate::modulus::{square_and_multiply, Modulus, MAX_MODULUS_BITS};

/// Deterministic Miller–Rabin for all 64-bit integers (the first 12 primes are a witness set that
/// is exact below 3.3·10^24).
pub fn is_prime(n: u64) -> bool {
    const WITNESSES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for &p in &WITNESSES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mut d = n - 1;
    let s = d.trailing_zeros();
    d >>= s;
    let mulmod = |a: u64, b: u64| (a as u128 * b as u128 % n as u128) as u64;
    let powmod = |b: u64, e: u64| square_and_multiply(1, b, e, mulmod);
    'witness: for &a in &WITNESSES {
        let mut x = powmod(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// Checks that n is a power of two in [2, 2^20] (larger rings are not meaningful for word-size NTTs).
pub fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() {
        return Err(MathError::InvalidDegree {
            n,
            reason: "must be a power of two",
        });
    }
    if !(2..=1 << 20).contains(&n) {
        return Err(MathError::InvalidDegree {
            n,
            reason: "must be in [2, 2^20]",
        });
    }
    Ok(())
}

/// `count` distinct primes of exactly `bits` bits with q ≡ 1 (mod 2n), largest first.
///
/// `bits` must be in [2 + log2(2n), 62]: smaller sizes cannot hold a prime of the right shape.
#[cfg(feature = "alloc")]
pub fn generate_ntt_primes(bits: u32, n: usize, count: usize) -> Result<Vec<u64>> {
    check_degree(n)?;
    let two_n = 2 * n as u64;
    let min_bits = two_n.trailing_zeros() + 2;
    if !(min_bits..=MAX_MODULUS_BITS).contains(&bits) {
        return Err(MathError::BitSizeOutOfRange {
            bits,
            min: min_bits,
            max: MAX_MODULUS_BITS,
        });
    }
    let lower = 1u64 << (bits - 1);
    // Largest candidate ≡ 1 mod 2n below 2^bits.
    let mut candidate = (1u64 << bits) - two_n + 1;
    let mut primes = Vec::with_capacity(count);
    while primes.len() < count && candidate > lower {
        if is_prime(candidate) {
            primes.push(candidate);
        }
        candidate -= two_n;
    }
    if primes.len() < count {
        return Err(MathError::NotEnoughPrimes {
            bits,
            two_n,
            wanted: count,
            found: primes.len(),
        });
    }
    Ok(primes)
}

/// The largest prime q < `bound` with q ≡ 1 (mod 2n), if any.
pub fn previous_ntt_prime(bound: u64, n: usize) -> Result<u64> {
    check_degree(n)?;
    let two_n = 2 * n as u64;
    if bound <= two_n + 1 {
        return Err(MathError::NotEnoughPrimes {
            bits: 64 - bound.leading_zeros(),
            two_n,
            wanted: 1,
            found: 0,
        });
    }
    let mut candidate = ((bound - 2) / two_n) * two_n + 1;
    while candidate > 1 {
        if is_prime(candidate) && candidate >> MAX_MODULUS_BITS == 0 {
            return Ok(candidate);
        }
        candidate -= two_n;
    }
    Err(MathError::NotEnoughPrimes {
        bits: 64 - bound.leading_zeros(),
        two_n,
        wanted: 1,
        found: 0,
    })
}

/// Checks that q is a prime below 2^62 with q ≡ 1 (mod 2n).
pub fn check_ntt_prime(q: &Modulus, n: usize) -> Result<()> {
    check_degree(n)?;
    if !q.is_prime() {
        return Err(MathError::NotPrime(q.value()));
    }
    let two_n = 2 * n as u64;
    if q.value() % two_n != 1 {
        return Err(MathError::NotNttFriendly {
            q: q.value(),
            two_n,
        });
    }
    Ok(())
}

/// Whether `root` is a primitive `order`-th root of unity mod q, for `order` a power of two.
pub fn is_primitive_root(root: u64, order: u64, q: &Modulus) -> bool {
    order.is_power_of_two()
        && order >= 2
        && root < q.value()
        && q.pow(root, order / 2) == q.value() - 1
}

/// Some primitive `order`-th root of unity mod the prime q (`order` a power of two dividing q − 1).
pub fn primitive_root(order: u64, q: &Modulus) -> Result<u64> {
    if !order.is_power_of_two() || order < 2 || !(q.value() - 1).is_multiple_of(order) {
        return Err(MathError::NotNttFriendly {
            q: q.value(),
            two_n: order,
        });
    }
    if !q.is_prime() {
        return Err(MathError::NotPrime(q.value()));
    }
    let cofactor = (q.value() - 1) / order;
    // Half of all x are non-residues, so this ends after a few tries; the bound only guards q = 2.
    for x in 2..q.value().min(1 << 20) {
        let g = q.pow(x, cofactor);
        if is_primitive_root(g, order, q) {
            return Ok(g);
        }
    }
    Err(MathError::NotNttFriendly {
        q: q.value(),
        two_n: order,
    })
}

/// The smallest primitive `order`-th root of unity mod q (SEAL's choice for its NTT tables).
pub fn minimal_primitive_root(order: u64, q: &Modulus) -> Result<u64> {
    let g = primitive_root(order, q)?;
    // The primitive roots are exactly g^k for odd k.
    let g2 = q.mul(g, g);
    let mut current = g;
    let mut best = g;
    for _ in 0..order / 2 {
        best = best.min(current);
        current = q.mul(current, g2);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miller_rabin_matches_trial_division() {
        let trial = |n: u64| {
            n >= 2
                && (2..)
                    .take_while(|d| d * d <= n)
                    .all(|d| !n.is_multiple_of(d))
        };
        for n in 0..5000u64 {
            assert_eq!(is_prime(n), trial(n), "n = {n}");
        }
        // Strong pseudoprimes to several bases and known large primes.
        assert!(!is_prime(3_215_031_751));
        assert!(!is_prime(3_825_123_056_546_413_051));
        assert!(is_prime((1u64 << 62) - 57));
        assert!(is_prime(18_446_744_073_709_551_557)); // 2^64 − 59
        assert!(!is_prime((1u64 << 61) + 1));
    }

    #[test]
    fn generated_primes_have_the_right_shape() {
        for (bits, n) in [(30u32, 1024usize), (50, 4096), (62, 1 << 17), (20, 2048)] {
            let ps = generate_ntt_primes(bits, n, 3).unwrap();
            assert_eq!(ps.len(), 3);
            for (i, &p) in ps.iter().enumerate() {
                assert!(is_prime(p));
                assert_eq!(64 - p.leading_zeros(), bits);
                assert_eq!(p % (2 * n as u64), 1);
                if i > 0 {
                    assert!(p < ps[i - 1]);
                }
            }
        }
        // No prime of the right shape is skipped between consecutive results.
        let ps = generate_ntt_primes(30, 1024, 2).unwrap();
        let mut c = ps[0] - 2048;
        while c > ps[1] {
            assert!(!is_prime(c));
            c -= 2048;
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        type Check = fn(&Result<Vec<u64>>) -> bool;
        let bad_bits: Check = |r| matches!(r, Err(MathError::BitSizeOutOfRange { .. }));
        let bad_degree: Check = |r| matches!(r, Err(MathError::InvalidDegree { .. }));
        let too_few: Check = |r| matches!(r, Err(MathError::NotEnoughPrimes { .. }));
        let cases: [(u32, usize, usize, Check); 4] = [
            (63, 1024, 1, bad_bits),
            (30, 1000, 1, bad_degree),
            (13, 2048, 1, bad_bits),
            (14, 2048, 100, too_few),
        ];
        for (bits, n, count, expected) in cases {
            let r = generate_ntt_primes(bits, n, count);
            assert!(expected(&r), "({bits}, {n}, {count}) gave {r:?}");
        }
        let q = Modulus::new(97).unwrap();
        assert!(check_ntt_prime(&q, 64).is_err());
        assert!(check_ntt_prime(&Modulus::new(91).unwrap(), 2).is_err());
        assert!(primitive_root(256, &q).is_err());
    }

    #[test]
    fn roots_are_primitive_and_minimal() {
        let n = 4096usize;
        let q = Modulus::new(generate_ntt_primes(40, n, 1).unwrap()[0]).unwrap();
        let psi = minimal_primitive_root(2 * n as u64, &q).unwrap();
        assert!(is_primitive_root(psi, 2 * n as u64, &q));
        for x in 1..psi.min(100_000) {
            assert!(!is_primitive_root(x, 2 * n as u64, &q));
        }
        let small = Modulus::new(7681).unwrap();
        let r = minimal_primitive_root(512, &small).unwrap();
        assert!(is_primitive_root(r, 512, &small));
        assert_eq!(previous_ntt_prime(7682, 256).unwrap(), 7681);
    }
}
