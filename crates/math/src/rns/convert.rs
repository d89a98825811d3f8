//! Base conversion between RNS bases, on polynomials stored limb-major (limb i of a k-limb
//! polynomial with n coefficients is `data[i·n .. (i+1)·n]`).
//!
//! * Fast (approximate) conversion, BEHZ 2016 §2.2: FastBconv(x) = Σ [x_i·(Q/q_i)^{-1}]_{q_i}·(Q/q_i)
//!   mod p_j, which equals x + u·Q for some 0 ≤ u < k.
//! * Exact conversion with the correction of Halevi–Polyakov–Shoup 2019 (HPS §2.4): u is recovered
//!   as round(Σ y_i/q_i) and subtracted, giving the centered representative of x. The sum is taken
//!   in 128-bit fixed point rather than HPS's doubles, so it stays exact for 62-bit moduli.
//! * Exact conversion with a redundant modulus m_sk, Shenoy–Kumaresan 1989 (as used by BEHZ §4.2):
//!   u = (FastBconv_{m_sk}(x) − x_{m_sk})·Q^{-1} mod m_sk, exact for x ∈ [0, Q).

use alloc::vec::Vec;

use num_bigint::BigUint;
use num_traits::ToPrimitive;

use crate::error::{MathError, Result};
use crate::modulus::{Modulus, ShoupConst};
use crate::rns::basis::RnsBasis;

/// Precomputed constants to convert polynomials from basis Q = {q_i} to basis P = {p_j}.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseConverter {
    from: RnsBasis,
    to: RnsBasis,
    /// (Q/q_i) mod p_j, row j.
    punctured_mod_to: Vec<u64>,
    /// Q mod p_j.
    product_mod_to: Vec<u64>,
    /// (−Q) mod p_j.
    neg_product_mod_to: Vec<u64>,
    /// 2^128/q_i as a 128-bit fixed-point number (hi, lo) for the HPS overflow estimate.
    inv_from_fixed: Vec<(u64, u64)>,
}

/// Products summed in u128 before a reduction: y_i·c < 2^124, so 15 of them stay below 2^128.
const LAZY_TERMS: usize = 15;

/// out[c] = (acc[c] + Σ_i column(i)[c]·row[i]) mod p, the inner product of every base conversion
/// and of scale-and-round: products are summed in u128 and reduced every [`LAZY_TERMS`] terms.
/// `acc` may come in holding `preloaded` terms (each below 2^124), which count toward the first
/// batch.
#[inline]
pub(crate) fn lazy_dot<'a>(
    acc: &mut [u128],
    preloaded: usize,
    row: &[u64],
    column: impl Fn(usize) -> &'a [u64],
    p: &Modulus,
    out: &mut [u64],
) {
    for (i, &r) in row.iter().enumerate() {
        for (a, &x) in acc.iter_mut().zip(column(i)) {
            *a += x as u128 * r as u128;
        }
        if (i + 1 + preloaded).is_multiple_of(LAZY_TERMS) {
            acc.iter_mut().for_each(|a| *a = p.reduce_u128(*a) as u128);
        }
    }
    for (o, &a) in out.iter_mut().zip(acc.iter()) {
        *o = p.reduce_u128(a);
    }
}

/// Coefficients per block of the range conversions: a block's scaled residues stay in L1.
pub(crate) const BLOCK: usize = 128;

/// ⌊2^128·r/q⌋ for r < q as a 128-bit fixed-point fraction (hi, lo); all ones if r ≥ q.
pub fn fixed_point_fraction(r: &BigUint, q: &BigUint) -> (u64, u64) {
    let f = ((r << 128u32) / q).to_u128().unwrap_or(u128::MAX);
    ((f >> 64) as u64, f as u64)
}

/// Adds y·(hi, lo)/2^128 to the split fixed-point accumulator (integer part, 128-bit fraction).
#[inline(always)]
pub(crate) fn fixed_mul_acc(int: &mut u64, frac: &mut u128, y: u64, (hi, lo): (u64, u64)) {
    let a = y as u128 * hi as u128;
    *int += (a >> 64) as u64;
    *frac += (a as u64) as u128 + ((y as u128 * lo as u128) >> 64);
}

/// The rounded value of the accumulator: int + round(frac/2^64).
#[inline(always)]
pub(crate) fn fixed_round(int: u64, frac: u128) -> u64 {
    int + ((frac + (1u128 << 63)) >> 64) as u64
}

/// Checks a range conversion's shapes: `input` is `limbs` limbs of n words, [start, end) lies in
/// [0, n], and `out` holds `out_limbs` limbs at distance `stride` of at least end − start words.
pub(crate) fn check_range(
    what: &'static str,
    input: usize,
    limbs: usize,
    n: usize,
    (start, end): (usize, usize),
    out: usize,
    (out_limbs, stride): (usize, usize),
) -> Result<()> {
    if Some(input) != limbs.checked_mul(n) {
        return Err(MathError::LengthMismatch {
            what,
            expected: limbs.saturating_mul(n),
            got: input,
        });
    }
    if start > end || end > n || stride < end - start {
        return Err(MathError::Incompatible(
            "coefficient range outside the polynomial",
        ));
    }
    let need = match out_limbs {
        0 => 0,
        l => (l - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(end - start))
            .unwrap_or(usize::MAX),
    };
    if out < need {
        return Err(MathError::LengthMismatch {
            what,
            expected: need,
            got: out,
        });
    }
    Ok(())
}

impl BaseConverter {
    /// Constants for converting from `from` to `to`.
    pub fn new(from: &RnsBasis, to: &RnsBasis) -> Result<Self> {
        let mut punctured_mod_to = Vec::with_capacity(from.len() * to.len());
        let mut product_mod_to = Vec::with_capacity(to.len());
        let mut neg_product_mod_to = Vec::with_capacity(to.len());
        for p in to.moduli() {
            for i in 0..from.len() {
                let qi_hat = from.punctured_product(i).ok_or(MathError::EmptyBasis)?;
                punctured_mod_to.push((qi_hat % p.value()).to_u64().unwrap_or(0));
            }
            let q_mod = (from.product() % p.value()).to_u64().unwrap_or(0);
            product_mod_to.push(q_mod);
            neg_product_mod_to.push(p.neg(q_mod));
        }
        let one = BigUint::from(1u8);
        let inv_from_fixed = from
            .moduli()
            .iter()
            .map(|q| fixed_point_fraction(&one, &BigUint::from(q.value())))
            .collect();
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            punctured_mod_to,
            product_mod_to,
            neg_product_mod_to,
            inv_from_fixed,
        })
    }

    /// The source basis Q.
    pub fn from_basis(&self) -> &RnsBasis {
        &self.from
    }

    /// The target basis P.
    pub fn to_basis(&self) -> &RnsBasis {
        &self.to
    }

    fn check(&self, input: usize, output: usize, n: usize) -> Result<()> {
        if input != self.from.len() * n {
            return Err(MathError::LengthMismatch {
                what: "base conversion input",
                expected: self.from.len() * n,
                got: input,
            });
        }
        if output != self.to.len() * n {
            return Err(MathError::LengthMismatch {
                what: "base conversion output",
                expected: self.to.len() * n,
                got: output,
            });
        }
        Ok(())
    }

    /// y_i = [x_i · (Q/q_i)^{-1}]_{q_i}, limb-major.
    fn scaled_residues(&self, input: &[u64], n: usize) -> Vec<u64> {
        let mut y = Vec::with_capacity(input.len());
        for (i, (limb, q)) in input.chunks_exact(n).zip(self.from.moduli()).enumerate() {
            let inv = self.from.inv_punctured_product(i).unwrap_or_default();
            y.extend(limb.iter().map(|&x| q.mul_shoup(x, inv)));
        }
        y
    }

    /// output_j = Σ_i y_i·(Q/q_i) mod p_j.
    fn accumulate(&self, y: &[u64], output: &mut [u64], n: usize) {
        let k = self.from.len();
        let mut acc = alloc::vec![0u128; n];
        for (j, (out, p)) in output.chunks_exact_mut(n).zip(self.to.moduli()).enumerate() {
            acc.iter_mut().for_each(|a| *a = 0);
            let row = &self.punctured_mod_to[j * k..(j + 1) * k];
            lazy_dot(&mut acc, 0, row, |i| &y[i * n..(i + 1) * n], p, out);
        }
    }

    /// Fast base conversion: output ≡ x + u·Q (mod p_j) for some 0 ≤ u < k (BEHZ FastBconv).
    /// `input` has k·n words, `output` l·n words, both limb-major.
    pub fn fast_convert(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check(input.len(), output.len(), n)?;
        if n == 0 {
            return Ok(());
        }
        let y = self.scaled_residues(input, n);
        self.accumulate(&y, output, n);
        Ok(())
    }

    /// Exact conversion of the centered representative x ∈ [−Q/2, Q/2) (HPS §2.4): the overflow
    /// count of the CRT sum, round(Σ y_i/q_i), is computed with 128-bit fixed-point fractions
    /// instead of doubles, so it is exact unless the fractional part of x/Q lies within
    /// k·2^−64 of 1/2 (never, for |x| < Q/2 − k·Q·2^−64, which holds whenever x comes from a
    /// value bounded well inside the basis).
    pub fn exact_convert(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check(input.len(), output.len(), n)?;
        self.exact_convert_range(input, n, 0, n, output, n)
    }

    /// [`Self::exact_convert`] of coefficients [start, end) of `input` (k limbs of n words):
    /// coefficient c of target limb j goes to `out[j·stride + c − start]`. The pieces of a split
    /// range are bit-identical to one call over the whole range, so the caller may thread it.
    pub fn exact_convert_range(
        &self,
        input: &[u64],
        n: usize,
        start: usize,
        end: usize,
        out: &mut [u64],
        stride: usize,
    ) -> Result<()> {
        let k = self.from.len();
        let l = self.to.len();
        check_range(
            "exact conversion",
            input.len(),
            k,
            n,
            (start, end),
            out.len(),
            (l, stride),
        )?;
        let mut y = alloc::vec![0u64; k * BLOCK];
        let mut v = [0u64; BLOCK];
        let mut acc = [0u128; BLOCK];
        let mut b0 = start;
        while b0 < end {
            let w = BLOCK.min(end - b0);
            for (i, q) in self.from.moduli().iter().enumerate() {
                let inv = self.from.inv_punctured_product(i).unwrap_or_default();
                let src = &input[i * n + b0..i * n + b0 + w];
                for (d, &x) in y[i * BLOCK..i * BLOCK + w].iter_mut().zip(src) {
                    *d = q.mul_shoup(x, inv);
                }
            }
            // v = round(Σ y_i/q_i): the multiple of Q to subtract for the centered value.
            for (c, vc) in v[..w].iter_mut().enumerate() {
                let (mut int, mut frac) = (0u64, 0u128);
                for (i, &f) in self.inv_from_fixed.iter().enumerate() {
                    fixed_mul_acc(&mut int, &mut frac, y[i * BLOCK + c], f);
                }
                *vc = fixed_round(int, frac);
            }
            for (j, p) in self.to.moduli().iter().enumerate() {
                let row = &self.punctured_mod_to[j * k..(j + 1) * k];
                let neg_q = self.neg_product_mod_to[j] as u128;
                // v ≤ k: v·(−Q mod p_j) < 2^68 leaves room for LAZY_TERMS − 1 more products.
                for (a, &vc) in acc[..w].iter_mut().zip(&v[..w]) {
                    *a = vc as u128 * neg_q;
                }
                let dst = &mut out[j * stride + b0 - start..j * stride + b0 - start + w];
                let column = |i: usize| &y[i * BLOCK..i * BLOCK + w];
                lazy_dot(&mut acc[..w], 1, row, column, p, dst);
            }
            b0 += w;
        }
        Ok(())
    }
}

/// Exact base conversion with a redundant modulus m_sk (Shenoy–Kumaresan), for x ∈ [0, Q).
#[derive(Clone, Debug, PartialEq)]
pub struct ShenoyKumaresan {
    to_target: BaseConverter,
    to_msk: BaseConverter,
    m_sk: Modulus,
    /// −Q^{-1} mod m_sk.
    neg_inv_product_msk: ShoupConst,
}

impl ShenoyKumaresan {
    /// Constants to convert from `from` to `to` with redundant modulus `m_sk`, which must be coprime
    /// to Q and larger than the number of moduli of `from`.
    pub fn new(from: &RnsBasis, to: &RnsBasis, m_sk: Modulus) -> Result<Self> {
        if m_sk.value() <= from.len() as u64 {
            return Err(MathError::ModulusOutOfRange {
                value: m_sk.value(),
                reason: "m_sk must exceed the basis size",
            });
        }
        let msk_basis = RnsBasis::from_moduli(alloc::vec![m_sk])?;
        let to_msk = BaseConverter::new(from, &msk_basis)?;
        let q_mod = to_msk.product_mod_to[0];
        let inv = m_sk.inv(q_mod).map_err(|_| MathError::NotCoprime {
            a: m_sk.value(),
            b: 0,
        })?;
        Ok(Self {
            to_target: BaseConverter::new(from, to)?,
            to_msk,
            m_sk,
            neg_inv_product_msk: m_sk.shoup(m_sk.neg(inv)),
        })
    }

    /// The redundant modulus.
    pub fn m_sk(&self) -> Modulus {
        self.m_sk
    }

    /// Converts x ∈ [0, Q), given by its residues in `from` (k·n words) and mod m_sk (n words), to
    /// the target basis (l·n words).
    pub fn convert(
        &self,
        input: &[u64],
        input_msk: &[u64],
        output: &mut [u64],
        n: usize,
    ) -> Result<()> {
        self.to_target.check(input.len(), output.len(), n)?;
        if input_msk.len() != n {
            return Err(MathError::LengthMismatch {
                what: "m_sk residues",
                expected: n,
                got: input_msk.len(),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let y = self.to_target.scaled_residues(input, n);
        self.to_target.accumulate(&y, output, n);
        let mut fast_msk = alloc::vec![0u64; n];
        self.to_msk.accumulate(&y, &mut fast_msk, n);
        let m = &self.m_sk;
        // α = (FastBconv_msk(x) − x_msk)·Q^{-1} = (x_msk − FastBconv_msk(x))·(−Q^{-1}) mod m_sk.
        let alpha: Vec<u64> = fast_msk
            .iter()
            .zip(input_msk)
            .map(|(&f, &x)| m.mul_shoup(m.sub(m.reduce(x), f), self.neg_inv_product_msk))
            .collect();
        let to = &self.to_target;
        for (out, (p, &q_mod)) in output
            .chunks_exact_mut(n)
            .zip(to.to.moduli().iter().zip(&to.product_mod_to))
        {
            let q_mod_s = p.shoup(q_mod);
            for (o, &a) in out.iter_mut().zip(&alpha) {
                *o = p.sub(*o, p.mul_shoup(a, q_mod_s));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;
    use num_bigint::{BigInt, BigUint, Sign};
    use rand::{Rng, SeedableRng};

    fn setup() -> (RnsBasis, RnsBasis, Vec<BigUint>, Vec<u64>, usize) {
        let qs = generate_ntt_primes(50, 1024, 4).unwrap();
        let ps = generate_ntt_primes(61, 1024, 5).unwrap();
        let from = RnsBasis::new(&qs).unwrap();
        let to = RnsBasis::new(&ps).unwrap();
        let n = 64;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let xs: Vec<BigUint> = (0..n)
            .map(|_| {
                let digits: Vec<u32> = (0..8).map(|_| rng.gen()).collect();
                BigUint::new(digits) % from.product()
            })
            .collect();
        let mut input = alloc::vec![0u64; 4 * n];
        for (c, x) in xs.iter().enumerate() {
            for (i, r) in from.decompose(x).into_iter().enumerate() {
                input[i * n + c] = r;
            }
        }
        (from, to, xs, input, n)
    }

    /// The residues over the target base of each coefficient of `setup`'s input, converted fast
    /// or exactly.
    #[allow(clippy::type_complexity)]
    fn converted(exact: bool) -> (RnsBasis, RnsBasis, Vec<BigUint>, Vec<Vec<u64>>) {
        let (from, to, xs, input, n) = setup();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let mut out = alloc::vec![0u64; to.len() * n];
        if exact {
            conv.exact_convert(&input, &mut out, n).unwrap();
        } else {
            conv.fast_convert(&input, &mut out, n).unwrap();
        }
        let columns = (0..n).map(|c| column(&out, to.len(), n, c)).collect();
        (from, to, xs, columns)
    }

    /// Coefficient c's residues in `out` (`limbs` limbs of n words).
    fn column(out: &[u64], limbs: usize, n: usize, c: usize) -> Vec<u64> {
        (0..limbs).map(|j| out[j * n + c]).collect()
    }

    #[test]
    fn fast_conversion_is_off_by_a_small_multiple_of_q() {
        let (from, to, xs, columns) = converted(false);
        for (x, got) in xs.iter().zip(&columns) {
            let value = to.reconstruct(got).unwrap();
            let diff = (value + to.product() - x) % to.product();
            let u = &diff / from.product();
            assert_eq!(&u * from.product(), diff, "difference is a multiple of Q");
            assert!(u < BigUint::from(from.len()));
        }
    }

    #[test]
    fn hps_exact_conversion_gives_the_centered_value() {
        let (from, to, xs, columns) = converted(true);
        let half = from.product() >> 1usize;
        for (x, got) in xs.iter().zip(&columns) {
            let centered = if x > &half {
                BigInt::from_biguint(Sign::Plus, x.clone())
                    - BigInt::from_biguint(Sign::Plus, from.product().clone())
            } else {
                BigInt::from_biguint(Sign::Plus, x.clone())
            };
            assert_eq!(to.reconstruct_centered(got).unwrap(), centered);
        }
    }

    #[test]
    fn range_conversion_pieces_equal_the_whole_and_bad_ranges_are_errors() {
        let (from, to, _, input, n) = setup();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let l = to.len();
        let mut whole = alloc::vec![0u64; l * n];
        conv.exact_convert(&input, &mut whole, n).unwrap();
        // Two pieces written with a stride equal to their width, as a threaded caller does.
        for (s, e) in [(0, 17), (17, n)] {
            let w = e - s;
            let mut part = alloc::vec![0u64; l * w];
            conv.exact_convert_range(&input, n, s, e, &mut part, w)
                .unwrap();
            for j in 0..l {
                assert_eq!(&part[j * w..(j + 1) * w], &whole[j * n + s..j * n + e]);
            }
        }
        let mut out = alloc::vec![0u64; l * n];
        assert!(conv
            .exact_convert_range(&input, n, 5, 4, &mut out, n)
            .is_err());
        assert!(conv
            .exact_convert_range(&input, n, 0, n + 1, &mut out, n)
            .is_err());
        assert!(conv
            .exact_convert_range(&input, n, 0, n, &mut out, n - 1)
            .is_err());
        assert!(conv
            .exact_convert_range(&input, n, 0, n, &mut out[1..], n)
            .is_err());
        assert!(conv
            .exact_convert_range(&input[1..], n, 0, n, &mut out, n)
            .is_err());
        assert!(conv
            .exact_convert_range(&input, usize::MAX, 0, 0, &mut out, 0)
            .is_err());
        assert!(conv
            .exact_convert_range(&input, n, 3, 3, &mut [], 0)
            .is_ok());
    }

    #[test]
    fn shenoy_kumaresan_is_exact() {
        let (from, to, xs, input, n) = setup();
        let m_sk = Modulus::new(generate_ntt_primes(40, 1024, 1).unwrap()[0]).unwrap();
        let sk = ShenoyKumaresan::new(&from, &to, m_sk).unwrap();
        let msk: Vec<u64> = xs
            .iter()
            .map(|x| (x % m_sk.value()).to_u64().unwrap())
            .collect();
        let mut out = alloc::vec![0u64; to.len() * n];
        sk.convert(&input, &msk, &mut out, n).unwrap();
        for (c, x) in xs.iter().enumerate() {
            let got = column(&out, to.len(), n, c);
            assert_eq!(&to.reconstruct(&got).unwrap(), x);
        }
        assert!(sk.convert(&input, &msk[1..], &mut out, n).is_err());
        assert!(ShenoyKumaresan::new(&from, &to, Modulus::new(3).unwrap()).is_err());
        assert!(ShenoyKumaresan::new(&from, &to, from.moduli()[0]).is_err());
    }

    #[test]
    fn length_errors() {
        let (from, to, _, input, n) = setup();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let mut out = alloc::vec![0u64; to.len() * n - 1];
        assert!(conv.fast_convert(&input, &mut out, n).is_err());
        assert!(conv.exact_convert(&input[1..], &mut out, n).is_err());
    }

    #[test]
    fn many_moduli_exercise_lazy_reduction() {
        // 40 × 30-bit source moduli: more than LAZY_TERMS products per output.
        let from = RnsBasis::new(&generate_ntt_primes(30, 1024, 40).unwrap()).unwrap();
        let to = RnsBasis::new(&generate_ntt_primes(62, 1024, 2).unwrap()).unwrap();
        let conv = BaseConverter::new(&from, &to).unwrap();
        let x = BigInt::from(-123_456_789_012_345i64);
        let input = from.decompose_signed(&x);
        let mut out = [0u64; 2];
        conv.exact_convert(&input, &mut out, 1).unwrap();
        assert_eq!(to.reconstruct_centered(&out).unwrap(), x);
    }
}
