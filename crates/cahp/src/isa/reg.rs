//! The sixteen general registers and their ABI names (`shared/reference/vsp.md` §1.1, §1.8).

use std::fmt;

/// One of the sixteen 16-bit general registers. `x0` is the (writable) link register `ra`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Reg(pub(crate) u8);

/// ABI names of x0..x15 (§1.8): ra, sp, fp, s0–s4, a0–a5, t0–t1.
pub const ABI_NAMES: [&str; 16] = [
    "ra", "sp", "fp", "s0", "s1", "s2", "s3", "s4", "a0", "a1", "a2", "a3", "a4", "a5", "t0", "t1",
];

impl Reg {
    /// The link register (x0, `ra`), written by `jsal`/`jalr`.
    pub const RA: Reg = Reg(0);
    /// The stack pointer (x1, `sp`), base of `lwsp`/`swsp`.
    pub const SP: Reg = Reg(1);
    /// The first argument and return-value register (x8, `a0`).
    pub const A0: Reg = Reg(8);

    /// Register `x<n>`; `None` if `n > 15`.
    pub fn new(n: u8) -> Option<Reg> {
        (n < 16).then_some(Reg(n))
    }

    /// Register number 0..=15.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Register number as stored in an encoding field.
    pub fn num(self) -> u8 {
        self.0
    }

    /// The ABI name (`ra`, `sp`, `a0`, …).
    pub fn abi_name(self) -> &'static str {
        ABI_NAMES[self.index()]
    }

    /// Parses `x0`..`x15` or an ABI name (case-insensitive).
    pub fn parse(name: &str) -> Option<Reg> {
        let lower = name.to_ascii_lowercase();
        if let Some(n) = lower.strip_prefix('x') {
            if !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()) {
                // "x01" is not a register name; reject leading zeros for clarity.
                if n.len() == 2 && n.starts_with('0') {
                    return None;
                }
                return n.parse::<u8>().ok().and_then(Reg::new);
            }
        }
        ABI_NAMES
            .iter()
            .position(|a| *a == lower)
            .map(|i| Reg(i as u8))
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.abi_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_names() {
        assert_eq!(Reg::parse("x15"), Reg::new(15));
        assert_eq!(Reg::parse("A0"), Some(Reg::A0));
        assert_eq!(Reg::parse("fp"), Reg::new(2));
        assert_eq!(Reg::parse("s0"), Reg::new(3));
        assert_eq!(Reg::parse("t1"), Reg::new(15));
        assert_eq!(Reg::parse("x16"), None);
        assert_eq!(Reg::parse("x01"), None);
        assert_eq!(Reg::parse("a6"), None);
    }
}
