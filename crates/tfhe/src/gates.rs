//! Bootstrapped boolean gates on level-0 TLWE (CGGI16 §5, TFHE library `boot-gates`, TFHEpp `gate`).
//!
//! Bits are ±1/8. Each two-input gate is one linear combination followed by one gate bootstrapping
//! (blind rotation, sample extraction, identity key switch); NOT and constants are free; MUX costs two
//! blind rotations and one key switch; `mux_without_se` (seed 000's "HomMUX without SE and IKS") stops at a
//! level-1 TRLWE whose constant coefficient is the result.

use crate::bootstrap::{blind_rotate_many, key_switch, EvalKey};
use crate::tlwe::Tlwe;
use crate::trlwe::{check_trlwe_degree, Trlwe};
use crate::Error;

const MU: u32 = 1 << 29; // 1/8
const QUARTER: u32 = 1 << 30; // 1/4

/// A level-0 gate ciphertext.
pub type Bit = Tlwe<u32>;

/// The two-input gates, bootstrapped here and listed in vsp-circuit's netlists (as `GateKind`);
/// semantics as in Yosys' internal cell library (`ANDNOT = A & !B`, `ORNOT = A | !B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Gate2 {
    And,
    Nand,
    Or,
    Nor,
    Xor,
    Xnor,
    AndNot,
    OrNot,
}

impl Gate2 {
    /// All two-input gate kinds, in a fixed order (used for statistics tables).
    pub const ALL: [Gate2; 8] = [
        Gate2::And,
        Gate2::Nand,
        Gate2::Or,
        Gate2::Nor,
        Gate2::Xor,
        Gate2::Xnor,
        Gate2::AndNot,
        Gate2::OrNot,
    ];

    /// XOR and XNOR (their bootstrap input is 2a + 2b, margin 1/4).
    pub fn is_xor_like(self) -> bool {
        matches!(self, Gate2::Xor | Gate2::Xnor)
    }

    /// Evaluates the gate on 64 bit-sliced plaintext lanes at once.
    #[inline]
    pub fn eval_u64(self, a: u64, b: u64) -> u64 {
        match self {
            Gate2::And => a & b,
            Gate2::Nand => !(a & b),
            Gate2::Or => a | b,
            Gate2::Nor => !(a | b),
            Gate2::Xor => a ^ b,
            Gate2::Xnor => !(a ^ b),
            Gate2::AndNot => a & !b,
            Gate2::OrNot => a | !b,
        }
    }

    /// The upper-case name used in statistics and in Yosys cell names (`$_AND_` …).
    pub fn name(self) -> &'static str {
        match self {
            Gate2::And => "AND",
            Gate2::Nand => "NAND",
            Gate2::Or => "OR",
            Gate2::Nor => "NOR",
            Gate2::Xor => "XOR",
            Gate2::Xnor => "XNOR",
            Gate2::AndNot => "ANDNOT",
            Gate2::OrNot => "ORNOT",
        }
    }

    /// The gate as `ca·a + cb·b + k` before the bootstrap (inputs ±1/8; the sign decides).
    fn linear(self) -> ((i64, i64), u32) {
        match self {
            Gate2::Nand => ((-1, -1), MU),
            Gate2::And => ((1, 1), MU.wrapping_neg()),
            Gate2::Or => ((1, 1), MU),
            Gate2::Nor => ((-1, -1), MU.wrapping_neg()),
            Gate2::Xor => ((2, 2), QUARTER),
            Gate2::Xnor => ((-2, -2), QUARTER.wrapping_neg()),
            Gate2::AndNot => ((1, -1), MU.wrapping_neg()),
            Gate2::OrNot => ((1, -1), MU),
        }
    }
}

/// The named two-input gates: each method is [`EvalKey::gate2`] with its [`Gate2`].
macro_rules! gate2_methods {
    ($($(#[$doc:meta])* $name:ident => $gate:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self, a: &Bit, b: &Bit) -> Result<Bit, Error> {
                self.gate2(Gate2::$gate, a, b)
            }
        )*
    };
}

impl EvalKey {
    fn gate(&self, terms: &[(i64, &Bit)], constant: u32) -> Result<Bit, Error> {
        for (_, t) in terms {
            self.check0(t)?;
        }
        let lin = Tlwe::linear(terms, constant)?;
        self.bootstrap(&lin)
    }

    /// A trivial (public) constant bit of level 0.
    pub fn constant(&self, bit: bool) -> Bit {
        Tlwe::constant(self.params.n0, bit)
    }
    /// ¬a (no bootstrapping).
    pub fn not(&self, a: &Bit) -> Result<Bit, Error> {
        self.check0(a)?;
        Ok(a.neg())
    }
    /// A copy of a (no bootstrapping).
    pub fn copy(&self, a: &Bit) -> Result<Bit, Error> {
        self.check0(a)?;
        Ok(a.clone())
    }
    /// A two-input gate, bootstrapped (blind rotation, sample extraction, key switch).
    pub fn gate2(&self, g: Gate2, a: &Bit, b: &Bit) -> Result<Bit, Error> {
        let ((ca, cb), k) = g.linear();
        self.gate(&[(ca, a), (cb, b)], k)
    }

    /// A two-input gate stopped after the blind rotation: a level-1 TRLWE whose constant coefficient
    /// is the result (±1/8), ready to be a CMUX data input. [`EvalKey::extract_bit`] of it equals
    /// [`EvalKey::gate2`] (same rotation, same key switch).
    pub fn gate2_trlwe(&self, g: Gate2, a: &Bit, b: &Bit) -> Result<Trlwe<u32>, Error> {
        let lin = self.gate2_input(g, a, b)?;
        self.bootstrap_to_trlwe(&lin, MU)
    }

    /// The level-0 sample a two-input gate bootstraps (its linear combination; inputs checked): its
    /// phase is in (0, 1/2) exactly when the gate is 1, so a circuit bootstrap of it gives the
    /// gate's TRGSW without the gate's own bootstrap.
    pub fn gate2_input(&self, g: Gate2, a: &Bit, b: &Bit) -> Result<Tlwe<u32>, Error> {
        for t in [a, b] {
            self.check0(t)?;
        }
        let ((ca, cb), k) = g.linear();
        Tlwe::linear(&[(ca, a), (cb, b)], k)
    }

    gate2_methods! {
        /// ¬(a ∧ b).
        nand => Nand;
        /// a ∧ b.
        and => And;
        /// a ∨ b.
        or => Or;
        /// ¬(a ∨ b).
        nor => Nor;
        /// a ⊕ b.
        xor => Xor;
        /// ¬(a ⊕ b).
        xnor => Xnor;
        /// a ∧ ¬b (Yosys ANDNOT).
        andnot => AndNot;
        /// a ∨ ¬b (Yosys ORNOT).
        ornot => OrNot;
    }

    /// The two level-0 samples a MUX `c ? a : b` bootstraps: c ∧ a and ¬c ∧ b (inputs checked).
    pub(crate) fn mux_inputs(
        &self,
        c: &Bit,
        a: &Bit,
        b: &Bit,
    ) -> Result<(Tlwe<u32>, Tlwe<u32>), Error> {
        for t in [c, a, b] {
            self.check0(t)?;
        }
        let x = Tlwe::linear(&[(1, c), (1, a)], MU.wrapping_neg())?; // c ∧ a
        let y = Tlwe::linear(&[(-1, c), (1, b)], MU.wrapping_neg())?; // ¬c ∧ b
        Ok((x, y))
    }

    /// The MUX's two blind rotations, step by step together (one read of the bootstrapping key
    /// for both; each the same as its own rotation, bit for bit).
    fn mux_halves(&self, c: &Bit, a: &Bit, b: &Bit) -> Result<(Trlwe<u32>, Trlwe<u32>), Error> {
        let (x, y) = self.mux_inputs(c, a, b)?;
        let tv = vec![MU; self.params.n1];
        let mut both = blind_rotate_many(&self.plan1, &self.bk, self.params.bk1, &[&x, &y], &tv, 1)
            .into_iter();
        match (both.next(), both.next()) {
            (Some(bx), Some(by)) => Ok((bx, by)),
            _ => Err(Error::Dimension("MUX rotation lost a half".into())),
        }
    }

    /// c ? a : b (two blind rotations, one key switch).
    pub fn mux(&self, c: &Bit, a: &Bit, b: &Bit) -> Result<Bit, Error> {
        let (x, y) = self.mux_halves(c, a, b)?;
        let mut u = x.sample_extract(0)?;
        u.add_assign(&y.sample_extract(0)?)?;
        u.add_const(MU);
        Ok(key_switch(&self.params, &self.ks, &u))
    }

    /// c ? a : b as a level-1 TRLWE whose constant coefficient holds the result ("HomMUX without SE
    /// and IKS", seed 000): what a CMUX RAM write stores.
    pub fn mux_without_se(&self, c: &Bit, a: &Bit, b: &Bit) -> Result<Trlwe<u32>, Error> {
        let (mut x, y) = self.mux_halves(c, a, b)?;
        x.add_assign(&y)?;
        x.add_const(0, MU)?;
        Ok(x)
    }

    /// Refreshes a bit into a level-1 TRLWE (constant coefficient ±1/8): gate bootstrapping without
    /// sample extraction, used to re-encrypt CMUX RAM cells.
    pub fn bit_to_trlwe(&self, a: &Bit) -> Result<Trlwe<u32>, Error> {
        self.bootstrap_to_trlwe(a, MU)
    }

    /// Sample-extracts coefficient `i` of a level-1 TRLWE and key-switches it to a level-0 bit.
    pub fn extract_bit(&self, c: &Trlwe<u32>, i: usize) -> Result<Bit, Error> {
        self.check1(c)?;
        Ok(key_switch(&self.params, &self.ks, &c.sample_extract(i)?))
    }

    /// Checks that `c` is a level-1 TRLWE of these parameters' degree.
    pub(crate) fn check1(&self, c: &Trlwe<u32>) -> Result<(), Error> {
        check_trlwe_degree(c.degree(), self.params.n1)
    }
}
