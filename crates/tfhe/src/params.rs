//! Named parameter sets, each with the rationale for its security and failure probability.
//!
//! Levels follow TFHEpp/VSP (seed 000): level 0 = TLWE (u32, dimension n, binary key) that gates take and
//! return; level 1 = TRLWE/TRGSW (u32, k = 1, degree N) of the gate bootstrapping key and of the CMUX
//! memory; level 2 = TRLWE/TRGSW (u64, k = 1, degree 2N) used only inside circuit bootstrapping.
//! Gates are computed in the "PBS then key switch" order (CGGI16 Alg. 3): linear combination at level 0,
//! blind rotation into level 1, sample extraction, identity key switch back to level 0.

use crate::torus::Gadget;
use crate::Error;

/// Distribution of a secret key's coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum KeyDist {
    /// Uniform in {0, 1}.
    Binary,
    /// Uniform in {-1, 0, 1}.
    Ternary,
}

/// Which named set a [`Params`] is (stored in every file header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u16)]
pub enum ParamId {
    /// [`Params::default_128`].
    Default128 = 1,
    /// [`Params::vsp2021`].
    Vsp2021 = 2,
    /// [`Params::cggi16_insecure`].
    Cggi16 = 3,
}

impl ParamId {
    /// Parses the on-disk id.
    pub fn from_u16(v: u16) -> Result<ParamId, Error> {
        match v {
            1 => Ok(ParamId::Default128),
            2 => Ok(ParamId::Vsp2021),
            3 => Ok(ParamId::Cggi16),
            _ => Err(Error::Format(format!("unknown parameter id {v}"))),
        }
    }
}

/// A complete TFHE parameter set (all three levels and all gadgets).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Params {
    /// Name of the set.
    pub id: ParamId,
    /// Level-0 LWE dimension n.
    pub n0: usize,
    /// Level-0 noise standard deviation (torus units).
    pub sigma0: f64,
    /// Level-1 ring degree N.
    pub n1: usize,
    /// Level-1 noise standard deviation.
    pub sigma1: f64,
    /// Level-1 key distribution.
    pub key1: KeyDist,
    /// Level-2 ring degree.
    pub n2: usize,
    /// Level-2 noise standard deviation.
    pub sigma2: f64,
    /// Level-2 key distribution.
    pub key2: KeyDist,
    /// Gadget of the level-0 → level-1 bootstrapping key.
    pub bk1: Gadget,
    /// Identity key switch level 1 → level 0 (levels = t, base_bits = basebit).
    pub ks: Gadget,
    /// Gadget of the level-0 → level-2 bootstrapping key (circuit bootstrapping).
    pub bk2: Gadget,
    /// Gadget of the TRGSW that circuit bootstrapping outputs (level 1) for CMUXes in the circuit and
    /// the ROM.
    pub cb: Gadget,
    /// Gadget of the TRGSWs that address a CMUX RAM (level 1): finer digits than `cb`, so that an
    /// external product adds less noise to cells that accumulate it over many writes. It changes no
    /// key (circuit bootstrapping's test polynomial and the TRGSW it assembles only), so it is not part
    /// of the key files' parameter fingerprint.
    pub cb_ram: Gadget,
    /// Private functional key switch level 2 → level 1.
    pub privks: Gadget,
}

const fn g(levels: u32, base_bits: u32) -> Gadget {
    Gadget { levels, base_bits }
}

impl Params {
    /// `default`: ≥128-bit for every component, per-gate failure ≤ 2^-64 (see [`crate::noise`]).
    ///
    /// * Level 0: n = 770, binary key, σ = 1.0721931696480342e-5 (2^-16.5), q = 2^32 — exactly the LWE
    ///   of TFHE-rs 1.x boolean `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS`, whose sets are chosen for
    ///   132 bits with the lattice estimator (MATZOV cost model, min of primal uSVP and dual hybrid;
    ///   tfhe-rs `boolean/parameters`, checked in its CI). It replaced `DEFAULT_PARAMETERS`' n = 805,
    ///   σ = 5.86e-6 on 2026-12-04: 4.3 % fewer blind-rotation steps in every gate and circuit
    ///   bootstrap for a gate-output variance 6 % higher (2.37e-5 against 2.24e-5, dominated by the
    ///   bootstrapping key's noise), which admits exactly the same multi-input cells and refreshes in
    ///   both cores' plans (`vsp-bench plan`); n = 739, σ = 1.83e-5 (`DEFAULT_PARAMETERS_KS_PBS`) would
    ///   save 8 % per bootstrap but its 30 % noisier key switch costs Pearl 53 cell refreshes a cycle.
    ///   Small noise is what makes the PBS-then-KS order work: the key-switching noise is multiplied by 8
    ///   in XOR's 2a+2b.
    /// * Level 1: N = 1024, k = 1, ternary key, σ = 2^-25 on q = 2^32, i.e. α = 2^-25. The
    ///   HomomorphicEncryption.org security standard (Albrecht et al. 2018, Table 1, ternary secret,
    ///   classical 128 bits) allows log q = 27 at n = 1024 with σ = 3.2, i.e. α = 3.2/2^27 = 2^-25.3;
    ///   ours has more relative noise (2^-25 > 2^-25.3) at the same dimension, so it is at least as strong.
    /// * Level 2: N = 2048, k = 1, ternary key, σ = 2^-51 on q = 2^64. Same standard: n = 2048 allows
    ///   log q = 54 with σ = 3.2, α = 2^-52.3 < 2^-51. (TFHEpp's current 128-bit set uses the same value.)
    /// * Gadgets: BK1 Bg = 2^8 × 2 (two levels instead of TFHEpp's three: ⅓ fewer transforms and a ⅓
    ///   smaller key; the noise model gives a two-input gate a failure of 2^-121.6, `noise::predict`),
    ///   KS 2^3 × 5 signed digits (TFHE-rs DEFAULT), BK2 2^15 × 2 (⅓ fewer level-2 transforms per
    ///   step and a ⅓ smaller level-2 key than 2^10 × 3, for the same 30 bits: the level-2 rotation's
    ///   variance is 4.0e-14 of rounding plus 2.5e-14 of the level-2 FFT's own error, which grows with
    ///   the digits — `noise::level2_rotation_var`, measured by `tests/noise.rs` — against the private
    ///   key switch's 8.0e-11, so the CMUX and RAM budgets are unchanged; 2^14 × 2 rounds 16× more,
    ///   6.4e-13, enough to shorten the 8 × 16 RAM's refresh period from 55 to 54 cycles),
    ///   CB output TRGSW 2^3 × 4 (small digits keep CMUX noise low: a CMUX adds 7.0e-6, half of what
    ///   2^4 × 4 adds, for the same work; the 12-bit precision's rounding is the other half; ℓ stays 4
    ///   so the many-LUT stride, and the CB input's modulus-switch noise, stay at 4), CB output for RAM
    ///   addresses 2^2 × 7 (a CMUX adds 1.9e-6: RAM cells gain it on every write, so a word is refreshed
    ///   every 55 cycles instead of 14, for 1.6× dearer external products), privKS 2^3 × 8
    ///   signed digits with one key entry per digit position (gadget key switching), so the circuit key
    ///   is ≈ 0.38 GB in memory (0.27 GB private key-switching keys, 0.11 GB BK2).
    pub const fn default_128() -> Params {
        Params {
            id: ParamId::Default128,
            n0: 770,
            sigma0: 1.0721931696480342e-5,
            n1: 1024,
            sigma1: 2.9802322387695312e-8, // 2^-25
            key1: KeyDist::Ternary,
            n2: 2048,
            sigma2: 4.440892098500626e-16, // 2^-51
            key2: KeyDist::Ternary,
            bk1: g(2, 8),
            ks: g(5, 3),
            bk2: g(2, 15),
            cb: g(4, 3),
            cb_ram: g(7, 2),
            privks: g(8, 3),
        }
    }

    /// `vsp2021`: the TFHEpp 128-bit set of the VSP paper era (TFHEpp 9c44a4a, include/params/128bit.hpp):
    /// n = 635, α = 2^-15; N = 1024, ℓ = 3, Bg = 2^6, α = 2^-25; level 2 N = 2048, ℓ = 4, Bg = 2^9,
    /// α = 2^-44; KS 2^2 × 8; privKS 2^3 × 10. Binary keys everywhere, as then. Reproduces the paper;
    /// its level 0 is now estimated at ~120 bits (TFHE-rs's comment on the equivalent n = 630 set), and
    /// circuit bootstrapping is 111-bit (TFHEpp README of the time). Prefer [`Params::default_128`].
    pub const fn vsp2021() -> Params {
        Params {
            id: ParamId::Vsp2021,
            n0: 635,
            sigma0: 3.0517578125e-5, // 2^-15
            n1: 1024,
            sigma1: 2.9802322387695312e-8,
            key1: KeyDist::Binary,
            n2: 2048,
            sigma2: 5.684341886080802e-14, // 2^-44
            key2: KeyDist::Binary,
            bk1: g(3, 6),
            ks: g(8, 2),
            bk2: g(4, 9),
            cb: g(3, 6),
            cb_ram: g(8, 2),
            privks: g(10, 3),
        }
    }

    /// `cggi16`: the 2016 TFHE set (n = 500, σ = 2.44e-5; N = 1024, ℓ = 2, Bg = 2^10, σ = 3.73e-9),
    /// **about 80-bit secure** (TFHE library's 2020 re-estimate). For reproducing CGGI16 timings only:
    /// calling this prints a warning to stderr.
    pub fn cggi16_insecure() -> Params {
        eprintln!("WARNING: vsp-tfhe parameter set `cggi16` is ~80-bit secure; never use it for real data");
        Params::cggi16_quiet()
    }

    /// Looks a set up by name: `default`, `vsp2021`, or `cggi16` (only with `allow_insecure`).
    pub fn by_name(name: &str, allow_insecure: bool) -> Result<Params, Error> {
        match name {
            "default" | "default128" => Ok(Params::default_128()),
            "vsp2021" => Ok(Params::vsp2021()),
            "cggi16" if allow_insecure => Ok(Params::cggi16_insecure()),
            "cggi16" => Err(Error::Insecure(
                "cggi16 is ~80-bit; pass the insecure opt-in".into(),
            )),
            other => Err(Error::Params(format!("unknown parameter set {other:?}"))),
        }
    }

    /// The set for an on-disk id (no warning is printed for `cggi16` here: the file's creator opted in).
    pub fn from_id(id: ParamId) -> Params {
        match id {
            ParamId::Default128 => Params::default_128(),
            ParamId::Vsp2021 => Params::vsp2021(),
            ParamId::Cggi16 => Params::cggi16_quiet(),
        }
    }

    fn cggi16_quiet() -> Params {
        Params {
            id: ParamId::Cggi16,
            n0: 500,
            sigma0: 2.44e-5,
            n1: 1024,
            sigma1: 3.73e-9,
            key1: KeyDist::Binary,
            n2: 2048,
            sigma2: 5.684341886080802e-14,
            key2: KeyDist::Binary,
            bk1: g(2, 10),
            ks: g(8, 2),
            bk2: g(4, 9),
            cb: g(2, 8),
            cb_ram: g(8, 2),
            privks: g(10, 3),
        }
    }

    /// Many-LUT stride of circuit bootstrapping: the CB levels are interleaved in one test polynomial.
    pub fn cb_stride(&self) -> usize {
        Self::stride_of(self.cb)
    }

    /// Many-LUT stride of circuit bootstrapping with output gadget `g` (its levels, rounded up to a
    /// power of two).
    pub fn stride_of(g: Gadget) -> usize {
        (g.levels as usize).next_power_of_two()
    }

    /// Checks internal consistency (powers of two, gadget widths fit the torus).
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |m: &str| Err(Error::Params(m.to_string()));
        if !self.n1.is_power_of_two() || !self.n2.is_power_of_two() || self.n1 < 8 || self.n2 < 8 {
            return bad("ring degrees must be powers of two >= 8");
        }
        if self.n0 == 0 {
            return bad("level-0 dimension must be positive");
        }
        for (gd, bits, name) in [
            (self.bk1, 32, "bk1"),
            (self.ks, 32, "ks"),
            (self.bk2, 64, "bk2"),
            (self.cb, 32, "cb"),
            (self.cb_ram, 32, "cb_ram"),
            (self.privks, 32, "privks"),
        ] {
            if gd.levels == 0 || gd.base_bits == 0 || gd.precision_bits() >= bits {
                return bad(&format!("gadget {name} does not fit a {bits}-bit torus"));
            }
        }
        if Self::stride_of(self.cb).max(Self::stride_of(self.cb_ram)) * 2 > self.n2 {
            return bad("circuit bootstrapping stride too large");
        }
        Ok(())
    }
}
