//! The CKKS canonical-embedding encoder and decoder (Cheon–Kim–Kim–Song, Asiacrypt 2017, §3.1),
//! with SEAL's slot order so that SEAL decodes what we encode and vice versa.
//!
//! Slot j holds m(ζ^{3^j mod 2N}) / Δ with ζ = e^{iπ/N} (SEAL's `CKKSEncoder`, generator 3). A real
//! polynomial is determined by its values at the N/2 points ζ^{4t+1}: exactly one of ±3^j is ≡ 1 mod 4,
//! so every slot is one of those values or its conjugate. Writing m(X) = Σ_{k<N/2} (m_k + i·m_{k+N/2})·X^k
//! at those points turns the embedding into one *N/2-point* complex FFT plus a twist by ζ^k, which is
//! what keeps the device's encoder buffer at N/2 complex numbers (8N bytes), half of SEAL's.
//!
//! Roots of unity are computed on the fly (`libm` sin/cos) or loaded from a table made by the very same
//! function, and the slot → FFT-position index map is computed on the fly or kept persistent: every
//! combination gives bit-identical coefficients.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::arith::bit_reverse;
use crate::error::{CkksError, Result};

/// A complex number in f64 (real and imaginary parts).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    /// Builds re + i·im.
    pub const fn new(re: f64, im: f64) -> Self {
        Self { re, im }
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Self::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.re + o.re, self.im + o.im)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::new(self.re - o.re, self.im - o.im)
    }
    /// Complex conjugate.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }
}

/// Where the FFT roots come from (SEAL-Embedded's `SE_IFFT_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftRoots {
    /// sin/cos evaluated when needed: no table.
    OnTheFly,
    /// A table of N/2 complex roots (8N bytes) built at setup.
    Loaded,
}

/// How slot j finds its FFT position (SEAL-Embedded's `SE_INDEX_MAP_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexMap {
    /// Recomputed while encoding (one multiplication by 3 per slot).
    OnTheFly,
    /// Computed once at setup into a table of N/2 16-bit entries kept in RAM (`SE_INDEX_MAP_PERSIST`).
    Persistent,
    /// Read from a table in storage (flash) at every encoding, not copied into RAM
    /// (`SE_INDEX_MAP_LOAD`). The table is made by [`fill_index_map`] (the server, or SEAL-Embedded's
    /// adapter) and checked entry by entry when the encryptor is set up.
    Loaded,
}

/// The encoder's algorithms over borrowed tables: what [`Encoder`] and the allocation-free
/// `BufferEncryptor` share. Tables, when given, must be exactly what [`fill_fft_roots`] and
/// [`fill_index_map`] produce (checked by [`EncoderView::new`]).
#[derive(Clone, Copy, Debug)]
pub struct EncoderView<'a> {
    n: usize,
    log_m: u32,
    roots: Option<&'a [Complex]>,
    index: Option<&'a [u16]>,
}

/// The encoder/decoder of one degree N, owning its tables.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct Encoder {
    n: usize,
    roots: Option<Vec<Complex>>,
    index: Option<Vec<u16>>,
}

const CONJ_FLAG: u16 = 1 << 15;

fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(8..=32768).contains(&n) {
        return Err(CkksError::InvalidParams(
            "encoder degree must be a power of two in 8..=32768",
        ));
    }
    Ok(())
}

/// Checks the degree and that a table for it has N/2 entries.
fn check_table(n: usize, len: usize) -> Result<()> {
    check_degree(n)?;
    if len != n / 2 {
        return Err(CkksError::LengthMismatch {
            expected: n / 2,
            got: len,
        });
    }
    Ok(())
}

/// Fills `out` (length N/2) with the FFT root table of degree `n` (what [`FftRoots::Loaded`] reads).
pub fn fill_fft_roots(n: usize, out: &mut [Complex]) -> Result<()> {
    check_table(n, out.len())?;
    for (k, r) in out.iter_mut().enumerate() {
        *r = base_root(k, n);
    }
    Ok(())
}

/// Fills `out` (length N/2) with the slot → FFT-position index map of degree `n` (bit 15 flags a
/// conjugated slot): the table [`IndexMap::Persistent`] keeps and [`IndexMap::Loaded`] reads.
pub fn fill_index_map(n: usize, out: &mut [u16]) -> Result<()> {
    check_table(n, out.len())?;
    let v = EncoderView::on_the_fly(n)?;
    v.for_each_slot(|j, pos, conj| out[j] = pos as u16 | if conj { CONJ_FLAG } else { 0 });
    Ok(())
}

#[cfg(feature = "alloc")]
impl Encoder {
    /// An encoder for degree `n` (a power of two, 8 ≤ n ≤ 32768) with the given table choices.
    /// [`IndexMap::Loaded`] builds the table here too (the owned encoder has no storage to read).
    pub fn new(n: usize, roots: FftRoots, index: IndexMap) -> Result<Self> {
        check_degree(n)?;
        let mut e = Self {
            n,
            roots: None,
            index: None,
        };
        if roots == FftRoots::Loaded {
            let mut t = alloc::vec![Complex::default(); n / 2];
            fill_fft_roots(n, &mut t)?;
            e.roots = Some(t);
        }
        if index != IndexMap::OnTheFly {
            let mut t = alloc::vec![0u16; n / 2];
            fill_index_map(n, &mut t)?;
            e.index = Some(t);
        }
        Ok(e)
    }

    /// The borrowed view the algorithms run on.
    pub fn view(&self) -> EncoderView<'_> {
        EncoderView {
            n: self.n,
            log_m: self.n.trailing_zeros() - 1,
            roots: self.roots.as_deref(),
            index: self.index.as_deref(),
        }
    }

    /// Bytes of the tables this encoder holds (roots and index map).
    pub fn table_bytes(&self) -> usize {
        self.view().table_bytes()
    }

    /// Slot count N/2.
    pub fn slots(&self) -> usize {
        self.n / 2
    }

    /// See [`EncoderView::encode_real`].
    pub fn encode_real(&self, values: &[f64], scale: f64, out: &mut [f64]) -> Result<()> {
        self.view().encode_real(values, scale, out)
    }

    /// See [`EncoderView::encode_complex`].
    pub fn encode_complex(&self, values: &[Complex], scale: f64, out: &mut [f64]) -> Result<()> {
        self.view().encode_complex(values, scale, out)
    }

    /// See [`EncoderView::decode`].
    pub fn decode(
        &self,
        coeffs: &[f64],
        scratch: &mut [Complex],
        out: &mut [Complex],
    ) -> Result<()> {
        self.view().decode(coeffs, scratch, out)
    }
}

impl<'a> EncoderView<'a> {
    /// A view without tables (roots and index map computed on the fly).
    pub fn on_the_fly(n: usize) -> Result<Self> {
        check_degree(n)?;
        Ok(Self {
            n,
            log_m: n.trailing_zeros() - 1,
            roots: None,
            index: None,
        })
    }

    /// A view over tables this crate made itself (not checked again).
    #[cfg(feature = "alloc")]
    pub(crate) fn from_trusted(
        n: usize,
        roots: Option<&'a [Complex]>,
        index: Option<&'a [u16]>,
    ) -> Self {
        Self {
            n,
            log_m: n.trailing_zeros() - 1,
            roots,
            index,
        }
    }

    /// A view over caller tables (each optional). Every entry is checked against what
    /// [`fill_fft_roots`] / [`fill_index_map`] produce: a corrupted flash table is refused.
    pub fn new(n: usize, roots: Option<&'a [Complex]>, index: Option<&'a [u16]>) -> Result<Self> {
        let plain = Self::on_the_fly(n)?;
        if let Some(t) = roots {
            if t.len() != n / 2 {
                return Err(CkksError::LengthMismatch {
                    expected: n / 2,
                    got: t.len(),
                });
            }
            if t.iter().enumerate().any(|(k, r)| {
                let b = base_root(k, n);
                r.re.to_bits() != b.re.to_bits() || r.im.to_bits() != b.im.to_bits()
            }) {
                return Err(CkksError::Format(
                    "FFT root table does not match the degree",
                ));
            }
        }
        if let Some(t) = index {
            if t.len() != n / 2 {
                return Err(CkksError::LengthMismatch {
                    expected: n / 2,
                    got: t.len(),
                });
            }
            let mut ok = true;
            plain.for_each_slot(|j, pos, conj| {
                ok &= t[j] == pos as u16 | if conj { CONJ_FLAG } else { 0 };
            });
            if !ok {
                return Err(CkksError::Format(
                    "index map table does not match the degree",
                ));
            }
        }
        Ok(Self {
            roots,
            index,
            ..plain
        })
    }

    /// Bytes of the tables this view reads.
    pub fn table_bytes(&self) -> usize {
        self.roots.map_or(0, |r| r.len() * 16) + self.index.map_or(0, |t| t.len() * 2)
    }

    /// Slot count N/2.
    pub fn slots(&self) -> usize {
        self.n / 2
    }

    /// Calls f(j, fft_position, conjugated) for every slot j in order.
    fn for_each_slot(&self, mut f: impl FnMut(usize, usize, bool)) {
        if let Some(t) = self.index {
            for (j, &e) in t.iter().enumerate() {
                f(j, (e & !CONJ_FLAG) as usize, e & CONJ_FLAG != 0);
            }
            return;
        }
        let two_n = 2 * self.n;
        let mut g = 1usize;
        for j in 0..self.n / 2 {
            let (h, conj) = if g % 4 == 1 {
                (g, false)
            } else {
                (two_n - g, true)
            };
            f(j, bit_reverse((h - 1) / 4, self.log_m), conj);
            g = (g * 3) % two_n;
        }
    }

    /// ζ^e for any e (ζ = e^{iπ/N}); identical values whether the table is loaded or not.
    #[inline]
    fn zeta(&self, e: usize) -> Complex {
        let half = self.n / 2;
        let e = e % (2 * self.n);
        let r = e % half;
        let b = match self.roots {
            Some(t) => t[r],
            None => base_root(r, self.n),
        };
        // ζ^{N/2} = i: rotate by whole quadrants exactly.
        match e / half {
            0 => b,
            1 => Complex::new(-b.im, b.re),
            2 => Complex::new(-b.re, -b.im),
            _ => Complex::new(b.im, -b.re),
        }
    }

    /// Encodes up to N/2 real values at `scale` into rounded integer coefficients.
    /// `out` (length N) receives coefficient k at `out[2k]` and k + N/2 at `out[2k+1]` for k < N/2,
    /// the layout the device keeps to avoid a second buffer; see [`coeff_index`].
    pub fn encode_real(&self, values: &[f64], scale: f64, out: &mut [f64]) -> Result<()> {
        self.encode_with(values.len(), |j| Complex::new(values[j], 0.0), scale, out)
    }

    /// Encodes up to N/2 complex values (same output layout as [`Encoder::encode_real`]).
    pub fn encode_complex(&self, values: &[Complex], scale: f64, out: &mut [f64]) -> Result<()> {
        self.encode_with(values.len(), |j| values[j], scale, out)
    }

    fn encode_with(
        &self,
        count: usize,
        get: impl Fn(usize) -> Complex,
        scale: f64,
        out: &mut [f64],
    ) -> Result<()> {
        let m = self.n / 2;
        if count > m {
            return Err(CkksError::TooManyValues {
                given: count,
                slots: m,
            });
        }
        if out.len() != self.n {
            return Err(CkksError::LengthMismatch {
                expected: self.n,
                got: out.len(),
            });
        }
        if !scale.is_finite() || scale <= 0.0 {
            return Err(CkksError::ValueOutOfRange(
                "scale must be positive and finite",
            ));
        }
        out.fill(0.0);
        let mut bad = false;
        self.for_each_slot(|j, pos, conj| {
            if j < count {
                let v = get(j);
                bad |= !v.re.is_finite() || !v.im.is_finite();
                let v = if conj { v.conj() } else { v };
                out[2 * pos] = v.re;
                out[2 * pos + 1] = v.im;
            }
        });
        if bad {
            return Err(CkksError::ValueOutOfRange("values must be finite"));
        }
        // Inverse DFT of size M (bit-reversed input, natural output), twiddles ω^{-j} = ζ^{-4j}.
        let mut len = 2;
        while len <= m {
            let half = len / 2;
            let stride = m / len;
            for j in 0..half {
                let w = self.zeta(4 * j * stride).conj();
                let mut s = 0;
                while s < m {
                    let (a, b) = (s + j, s + j + half);
                    let u = Complex::new(out[2 * a], out[2 * a + 1]);
                    let v = Complex::new(out[2 * b], out[2 * b + 1]).mul(w);
                    let (x, y) = (u.add(v), u.sub(v));
                    out[2 * a] = x.re;
                    out[2 * a + 1] = x.im;
                    out[2 * b] = y.re;
                    out[2 * b + 1] = y.im;
                    s += len;
                }
            }
            len <<= 1;
        }
        // Twist by ζ^{-k}, scale by Δ/M and round (half away from zero, as SEAL's std::round).
        let fix = scale / m as f64;
        let mut max = 0.0f64;
        for k in 0..m {
            let w = self.zeta(k).conj();
            let u = Complex::new(out[2 * k], out[2 * k + 1]).mul(w);
            let (re, im) = (libm::round(u.re * fix), libm::round(u.im * fix));
            max = max.max(libm::fabs(re)).max(libm::fabs(im));
            out[2 * k] = re;
            out[2 * k + 1] = im;
        }
        // Coefficients must stay exact integers in f64 with room for the error term.
        if max >= (1u64 << 52) as f64 {
            return Err(CkksError::ValueOutOfRange("value × scale exceeds 2^52"));
        }
        Ok(())
    }

    /// Decodes real coefficients (natural order, already divided by the scale and centered) into
    /// N/2 complex slots. `scratch` must have length N.
    pub fn decode(
        &self,
        coeffs: &[f64],
        scratch: &mut [Complex],
        out: &mut [Complex],
    ) -> Result<()> {
        let m = self.n / 2;
        if coeffs.len() != self.n || scratch.len() < m || out.len() < m {
            return Err(CkksError::LengthMismatch {
                expected: self.n,
                got: coeffs.len(),
            });
        }
        for k in 0..m {
            scratch[k] = Complex::new(coeffs[k], coeffs[k + m]).mul(self.zeta(k));
        }
        // Forward DFT of size M (natural input, bit-reversed output), twiddles ω^{j} = ζ^{4j}.
        let mut len = m;
        while len >= 2 {
            let half = len / 2;
            let stride = m / len;
            for j in 0..half {
                let w = self.zeta(4 * j * stride);
                let mut s = 0;
                while s < m {
                    let (u, v) = (scratch[s + j], scratch[s + j + half]);
                    scratch[s + j] = u.add(v);
                    scratch[s + j + half] = u.sub(v).mul(w);
                    s += len;
                }
            }
            len >>= 1;
        }
        self.for_each_slot(|j, pos, conj| {
            out[j] = if conj {
                scratch[pos].conj()
            } else {
                scratch[pos]
            };
        });
        Ok(())
    }
}

/// Where coefficient `c` of an encoded polynomial of degree `n` sits in the encoder's output buffer.
#[inline(always)]
pub fn coeff_index(c: usize, n: usize) -> usize {
    let m = n / 2;
    if c < m {
        2 * c
    } else {
        2 * (c - m) + 1
    }
}

/// ζ^k = e^{iπk/N} for 0 ≤ k < N/2 (first quadrant).
fn base_root(k: usize, n: usize) -> Complex {
    let angle = core::f64::consts::PI * k as f64 / n as f64;
    Complex::new(libm::cos(angle), libm::sin(angle))
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    /// m(ζ^{3^j}) evaluated directly from the coefficients.
    fn naive_slot(coeffs: &[f64], j: usize, n: usize) -> Complex {
        let mut g = 1usize;
        for _ in 0..j {
            g = g * 3 % (2 * n);
        }
        let mut acc = Complex::default();
        for (k, &c) in coeffs.iter().enumerate() {
            let a = core::f64::consts::PI * ((g * k) % (2 * n)) as f64 / n as f64;
            acc = acc.add(Complex::new(c * libm::cos(a), c * libm::sin(a)));
        }
        acc
    }

    #[test]
    fn encode_matches_the_canonical_embedding() {
        let n = 32;
        let enc = Encoder::new(n, FftRoots::OnTheFly, IndexMap::OnTheFly).unwrap();
        let vals: Vec<Complex> = (0..16)
            .map(|i| Complex::new(i as f64 * 0.25 - 1.0, 0.5 - i as f64 * 0.1))
            .collect();
        let mut buf = alloc::vec![0.0; n];
        let scale = (1u64 << 30) as f64;
        enc.encode_complex(&vals, scale, &mut buf).unwrap();
        let coeffs: Vec<f64> = (0..n).map(|c| buf[coeff_index(c, n)] / scale).collect();
        for (j, v) in vals.iter().enumerate() {
            let s = naive_slot(&coeffs, j, n);
            assert!(
                (s.re - v.re).abs() < 1e-6 && (s.im - v.im).abs() < 1e-6,
                "slot {j}: {s:?} vs {v:?}"
            );
        }
        let mut scratch = alloc::vec![Complex::default(); n];
        let mut out = alloc::vec![Complex::default(); n / 2];
        enc.decode(&coeffs, &mut scratch, &mut out).unwrap();
        for (a, b) in out.iter().zip(&vals) {
            assert!((a.re - b.re).abs() < 1e-6 && (a.im - b.im).abs() < 1e-6);
        }
    }

    #[test]
    fn encode_decode_precision_at_each_degree() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0
        };
        for n in [1024usize, 2048, 4096, 8192, 16384] {
            let enc = Encoder::new(n, FftRoots::Loaded, IndexMap::Persistent).unwrap();
            let vals: Vec<Complex> = (0..n / 2).map(|_| Complex::new(next(), next())).collect();
            let scale = 2f64.powi(40);
            let mut buf = alloc::vec![0.0; n];
            enc.encode_complex(&vals, scale, &mut buf).unwrap();
            let coeffs: Vec<f64> = (0..n).map(|c| buf[coeff_index(c, n)] / scale).collect();
            let mut scratch = alloc::vec![Complex::default(); n];
            let mut out = alloc::vec![Complex::default(); n / 2];
            enc.decode(&coeffs, &mut scratch, &mut out).unwrap();
            // Rounding to integers costs ≤ 0.5·√N/Δ per slot; the FFTs add ~1e-12.
            let err = out
                .iter()
                .zip(&vals)
                .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
                .fold(0.0, f64::max);
            assert!(err < 1e-9, "n = {n}: {err}");
        }
    }

    #[test]
    fn all_table_modes_are_bit_identical() {
        let n = 4096;
        let vals: Vec<f64> = (0..2048).map(|i| libm::sin(i as f64) * 3.0).collect();
        let mut reference: Option<Vec<f64>> = None;
        for r in [FftRoots::OnTheFly, FftRoots::Loaded] {
            for i in [IndexMap::OnTheFly, IndexMap::Persistent, IndexMap::Loaded] {
                let enc = Encoder::new(n, r, i).unwrap();
                let mut buf = alloc::vec![0.0; n];
                enc.encode_real(&vals, 2f64.powi(25), &mut buf).unwrap();
                match &reference {
                    None => reference = Some(buf),
                    Some(x) => assert!(x.iter().zip(&buf).all(|(a, b)| a.to_bits() == b.to_bits())),
                }
            }
        }
    }

    #[test]
    fn views_check_their_tables() {
        let n = 256;
        let mut roots = alloc::vec![Complex::default(); n / 2];
        let mut index = alloc::vec![0u16; n / 2];
        fill_fft_roots(n, &mut roots).unwrap();
        fill_index_map(n, &mut index).unwrap();
        let vals: Vec<f64> = (0..n / 2).map(|i| i as f64 * 0.5 - 3.0).collect();
        let (mut a, mut b) = (alloc::vec![0.0; n], alloc::vec![0.0; n]);
        EncoderView::new(n, Some(&roots), Some(&index))
            .unwrap()
            .encode_real(&vals, 1024.0, &mut a)
            .unwrap();
        EncoderView::on_the_fly(n)
            .unwrap()
            .encode_real(&vals, 1024.0, &mut b)
            .unwrap();
        assert_eq!(a, b);
        index[7] ^= 1;
        assert!(matches!(
            EncoderView::new(n, None, Some(&index)),
            Err(CkksError::Format(_))
        ));
        roots[3].im += 1e-15;
        assert!(EncoderView::new(n, Some(&roots), None).is_err());
        assert!(EncoderView::new(n, Some(&roots[..10]), None).is_err());
    }

    #[test]
    fn rejects_bad_input() {
        let enc = Encoder::new(64, FftRoots::OnTheFly, IndexMap::OnTheFly).unwrap();
        let mut buf = alloc::vec![0.0; 64];
        assert!(matches!(
            enc.encode_real(&[0.0; 33], 1.0, &mut buf),
            Err(CkksError::TooManyValues { .. })
        ));
        assert!(enc.encode_real(&[f64::NAN], 1.0, &mut buf).is_err());
        assert!(enc.encode_real(&[1e10], 2f64.powi(50), &mut buf).is_err());
        assert!(enc.encode_real(&[1.0], 1.0, &mut buf[..10]).is_err());
    }
}
