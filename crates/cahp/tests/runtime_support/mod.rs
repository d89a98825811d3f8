//! Shared by the runtime-helper tests of every width (asm.rs: 16 and 32 bits, runtime64.rs: 64).

/// Checks one width's multiply, divide and remainder helpers (`__mul<suffix>`, `__udiv…`,
/// `__umod…`, `__div…`, `__mod…`, called as `$call(name, a, b)`) against Rust's wrapping
/// arithmetic on every pair of `$vals` ($u unsigned, $i the signed type of that width). An unsigned
/// division by zero gives an all-ones quotient and the dividend as remainder.
macro_rules! check_mul_div {
    ($call:expr, $suffix:literal, $vals:expr, $u:ty, $i:ty) => {
        for &a in $vals {
            for &b in $vals {
                let f = |name: &str| $call(&format!("__{name}{}", $suffix), a, b);
                assert_eq!(f("mul"), a.wrapping_mul(b), "{a:#x} * {b:#x}");
                if b == 0 {
                    assert_eq!(f("udiv"), <$u>::MAX, "{a:#x} / 0");
                    assert_eq!(f("umod"), a, "{a:#x} % 0");
                    continue;
                }
                assert_eq!(f("udiv"), a / b, "{a:#x} / {b:#x}");
                assert_eq!(f("umod"), a % b, "{a:#x} % {b:#x}");
                let (x, y) = (a as $i, b as $i);
                assert_eq!(f("div"), x.wrapping_div(y) as $u, "{x} / {y}");
                assert_eq!(f("mod"), x.wrapping_rem(y) as $u, "{x} % {y}");
            }
        }
    };
}
pub(crate) use check_mul_div;
