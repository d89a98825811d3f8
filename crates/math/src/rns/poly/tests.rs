//! RNS polynomial tests: ring operations against big-integer schoolbook arithmetic.

use super::*;
use crate::prime::generate_ntt_primes;
use crate::sampler::ternary_vec;
use num_bigint::BigInt;
use num_traits::Zero;
use rand::SeedableRng;

fn schoolbook_big(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
    let n = a.len();
    let mut out = alloc::vec![BigInt::zero(); n];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            if i + j < n {
                out[i + j] += x * y;
            } else {
                out[i + j - n] -= x * y;
            }
        }
    }
    out
}

#[test]
fn products_match_big_integer_schoolbook() {
    let n = 64;
    let ctx = RnsContext::new(n, &generate_ntt_primes(40, n, 3).unwrap()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let a: Vec<i64> = (0..n as i64).map(|i| i * 1_000_003 - 31_000_000).collect();
    let s = ternary_vec(&mut rng, n);
    let pa = RnsPoly::from_signed(&ctx, &a).unwrap();
    let ps = RnsPoly::from_signed(&ctx, &s).unwrap();
    let (mut fa, mut fs) = (pa.clone(), ps.clone());
    fa.to_ntt().unwrap();
    fs.to_ntt().unwrap();
    let mut prod = fa.mul(&fs).unwrap();
    prod.to_coeff().unwrap();
    let big = |v: &[i64]| v.iter().map(|&x| BigInt::from(x)).collect::<Vec<_>>();
    assert_eq!(
        prod.to_bigint_centered().unwrap(),
        schoolbook_big(&big(&a), &big(&s))
    );
    // Ring axioms on the RNS side: (a + s) − s = a, a + (−a) = 0, 3·a = a + a + a.
    assert_eq!(pa.add(&ps).unwrap().sub(&ps).unwrap(), pa);
    assert!(pa
        .add(&pa.neg())
        .unwrap()
        .as_slice()
        .iter()
        .all(|&x| x == 0));
    let mut three = pa.clone();
    three.mul_scalar_assign(3);
    assert_eq!(three, pa.add(&pa).unwrap().add(&pa).unwrap());
    let mut acc = RnsPoly::zero(&ctx, Representation::Ntt);
    acc.mul_add_assign(&fa, &fs).unwrap();
    acc.mul_add_assign(&fa, &fs).unwrap();
    let mut twice = fa.mul(&fs).unwrap();
    twice.mul_rns_scalar_assign(&[2, 2, 2]).unwrap();
    assert_eq!(acc, twice);
    // Big coefficients survive the round trip through RNS.
    let bigs: Vec<BigInt> = (0..n)
        .map(|i| BigInt::from(i as i64 - 32) << 90usize)
        .collect();
    assert_eq!(
        RnsPoly::from_bigint(&ctx, &bigs)
            .unwrap()
            .to_bigint_centered()
            .unwrap(),
        bigs
    );
}

#[test]
fn mismatches_are_errors() {
    let n = 16;
    let ctx = RnsContext::new(n, &generate_ntt_primes(30, n, 2).unwrap()).unwrap();
    let other = RnsContext::new(n, &generate_ntt_primes(31, n, 2).unwrap()).unwrap();
    let a = RnsPoly::zero(&ctx, Representation::Coefficient);
    let b = RnsPoly::zero(&other, Representation::Coefficient);
    let c = RnsPoly::zero(&ctx, Representation::Ntt);
    assert!(a.add(&b).is_err());
    assert!(a.add(&c).is_err());
    assert!(a.mul(&a).is_err());
    assert!(c.to_bigint_centered().is_err());
    assert!(RnsPoly::from_signed(&ctx, &[1, 2]).is_err());
    assert!(RnsPoly::from_limbs(&ctx, Representation::Ntt, alloc::vec![u64::MAX; 2 * n]).is_err());
    assert!(RnsPoly::from_limbs(&ctx, Representation::Ntt, alloc::vec![0; n]).is_err());
    assert!(RnsContext::new(n, &[101]).is_err());
    assert!(RnsContext::new(12, &generate_ntt_primes(30, n, 2).unwrap()).is_err());
    assert!(a.limb(2).is_none() && a.limb(1).is_some());
    let text = std::format!("{a:?}");
    assert!(text.contains("redacted") && !text.contains("[0"));
}

#[test]
fn uniform_masks_are_reduced() {
    let n = 256;
    let ctx = RnsContext::new(n, &generate_ntt_primes(50, n, 2).unwrap()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let p = RnsPoly::uniform(&ctx, Representation::Ntt, &mut rng);
    for (i, q) in ctx.moduli().iter().enumerate() {
        assert!(p.limb(i).unwrap().iter().all(|&x| x < q.value()));
    }
    assert!(p.as_slice().iter().any(|&x| x > 1 << 40));
}
