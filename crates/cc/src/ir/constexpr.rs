//! Integer constant expressions (`icmp`, `zext`/`sext`/`trunc`, binary operators, `select`), folded
//! while reading: clang leaves them in the IR at -O0 when C compares the addresses of globals, e.g.
//! `zext (i1 icmp ne (i8* getelementptr (…, @g, 0, 1), i8* @h) to i32)`.

use super::parse::{parse_type, parse_value, Cur};
use super::parse_inst::pred;
use super::{Const, Module, Pred, Type, Value};
use crate::error::{parse_err, unsupported, Result};

/// Words that begin a constant expression folded here.
pub(super) fn is_constexpr_word(w: &str) -> bool {
    matches!(
        w,
        "icmp"
            | "zext"
            | "sext"
            | "trunc"
            | "select"
            | "add"
            | "sub"
            | "mul"
            | "sdiv"
            | "udiv"
            | "srem"
            | "urem"
            | "and"
            | "or"
            | "xor"
            | "shl"
            | "lshr"
            | "ashr"
    )
}

/// The bits of an integer (or pointer) type.
fn width(m: &Module, t: &Type, line: usize) -> Result<u32> {
    match m.resolve(t) {
        Type::Int(b) if (1..=64).contains(b) => Ok(*b),
        Type::Ptr => Ok(16),
        other => unsupported(line, format!("constant expression on type {other:?}")),
    }
}

/// `v` reduced to `bits`, sign-extended (the form the reader gives negative literals).
fn norm(v: i128, bits: u32) -> i128 {
    let s = 128 - bits;
    (v << s) >> s
}

fn unsigned(v: i128, bits: u32) -> u128 {
    (v as u128) & ((1u128 << bits) - 1)
}

/// A typed operand whose value must be a constant.
fn operand(c: &mut Cur, m: &Module) -> Result<(Type, Const)> {
    let t = parse_type(c)?;
    match parse_value(c, m)? {
        Value::Const(k) => Ok((t, k)),
        Value::Local(_) => parse_err(c.line, "non-constant in a constant expression"),
    }
}

fn int(k: &Const, line: usize) -> Result<i128> {
    match k {
        Const::Int(v) => Ok(*v),
        Const::Null | Const::Zero | Const::Undef => Ok(0),
        other => unsupported(
            line,
            format!("constant expression on a non-integer ({other:?})"),
        ),
    }
}

/// Parses and folds the constant expression begun by `w` (already read).
pub(super) fn parse_constexpr(w: &str, c: &mut Cur, m: &Module) -> Result<Value> {
    let line = c.line;
    let folded = match w {
        "icmp" => {
            let p = match c.next()? {
                super::lex::Tok::Word(p) => pred(p, line)?,
                t => return parse_err(line, format!("bad icmp predicate {t:?}")),
            };
            c.expect_p('(')?;
            let (t, a) = operand(c, m)?;
            c.expect_p(',')?;
            let (_, b) = operand(c, m)?;
            c.expect_p(')')?;
            Const::Int(i128::from(icmp(m, p, &t, &a, &b, line)?))
        }
        "zext" | "sext" | "trunc" => {
            c.expect_p('(')?;
            let (t, k) = operand(c, m)?;
            c.expect_word("to")?;
            let to = parse_type(c)?;
            c.expect_p(')')?;
            let (from, to) = (width(m, &t, line)?, width(m, &to, line)?);
            let v = int(&k, line)?;
            Const::Int(match w {
                "zext" => unsigned(v, from) as i128,
                "sext" => norm(v, from),
                _ => norm(v, to),
            })
        }
        "select" => {
            c.expect_p('(')?;
            let (_, k) = operand(c, m)?;
            c.expect_p(',')?;
            let (_, a) = operand(c, m)?;
            c.expect_p(',')?;
            let (_, b) = operand(c, m)?;
            c.expect_p(')')?;
            if int(&k, line)? & 1 != 0 {
                a
            } else {
                b
            }
        }
        op => {
            while c.eat_word("nuw") || c.eat_word("nsw") || c.eat_word("exact") {}
            c.expect_p('(')?;
            let (t, a) = operand(c, m)?;
            c.expect_p(',')?;
            let (_, b) = operand(c, m)?;
            c.expect_p(')')?;
            let bits = width(m, &t, line)?;
            match (op, &a, &b) {
                // An address plus or minus a constant stays an address.
                ("add", Const::Addr(n, o), k) | ("add", k, Const::Addr(n, o)) => {
                    let d =
                        i64::try_from(int(k, line)?).map_err(|_| super::parse::parse_bad(line))?;
                    Const::Addr(n.clone(), o + d)
                }
                // The distance between two addresses in one object.
                ("sub", Const::Addr(n, o), Const::Addr(n2, o2)) if n == n2 => {
                    Const::Int(norm(i128::from(o - o2), bits))
                }
                ("sub", Const::Addr(n, o), k) if !matches!(k, Const::Addr(..)) => {
                    let d =
                        i64::try_from(int(k, line)?).map_err(|_| super::parse::parse_bad(line))?;
                    Const::Addr(n.clone(), o - d)
                }
                _ => {
                    let (x, y) = (int(&a, line)?, int(&b, line)?);
                    let (ux, sh) = (unsigned(x, bits), unsigned(y, bits) as u32);
                    let v = match op {
                        "add" => x.wrapping_add(y),
                        "sub" => x.wrapping_sub(y),
                        "mul" => x.wrapping_mul(y),
                        "sdiv" | "udiv" | "srem" | "urem" if unsigned(y, bits) == 0 => {
                            return unsupported(line, "a constant division by zero");
                        }
                        "sdiv" => norm(x, bits).wrapping_div(norm(y, bits)),
                        "srem" => norm(x, bits).wrapping_rem(norm(y, bits)),
                        "udiv" => (ux / unsigned(y, bits)) as i128,
                        "urem" => (ux % unsigned(y, bits)) as i128,
                        "and" => x & y,
                        "or" => x | y,
                        "xor" => x ^ y,
                        // Shifts by the width or more are poison: any value will do.
                        "shl" => (ux << (sh % bits)) as i128,
                        "lshr" => (ux >> (sh % bits)) as i128,
                        _ => norm(x, bits) >> (sh % bits),
                    };
                    Const::Int(norm(v, bits))
                }
            }
        }
    };
    Ok(Value::Const(folded))
}

/// The size of a global data object, when it is one of this module's.
fn object_size(m: &Module, name: &str) -> Option<u64> {
    let g = m.globals.iter().find(|g| g.name == name)?;
    m.size_of(&g.ty)
}

/// Folds `icmp p a, b` on integers or on addresses of globals.
fn icmp(m: &Module, p: Pred, t: &Type, a: &Const, b: &Const, line: usize) -> Result<bool> {
    let bits = width(m, t, line)?;
    let addr = |k: &Const| match k {
        Const::Addr(n, o) => Some((Some(n.clone()), *o)),
        Const::Null | Const::Zero => Some((None, 0)),
        _ => None,
    };
    let (x, y) = match (addr(a), addr(b)) {
        (Some((na, oa)), Some((nb, ob))) if na == nb => (i128::from(oa), i128::from(ob)),
        (Some((na, oa)), Some((nb, ob))) => {
            // Different objects: unequal as long as each address points inside its object (a
            // one-past-the-end address may equal the next object's) and data never sits at 0.
            let inside = |n: &Option<String>, o: i64| match n {
                None => true,
                Some(n) => object_size(m, n).is_some_and(|s| o >= 0 && (o as u64) < s),
            };
            if inside(&na, oa) && inside(&nb, ob) && matches!(p, Pred::Eq | Pred::Ne) {
                return Ok(p == Pred::Ne);
            }
            return unsupported(
                line,
                "a constant comparison of addresses that depends on the data layout",
            );
        }
        _ => (int(a, line)?, int(b, line)?),
    };
    let (ux, uy) = (unsigned(x, bits), unsigned(y, bits));
    let (sx, sy) = (norm(x, bits), norm(y, bits));
    Ok(match p {
        Pred::Eq => ux == uy,
        Pred::Ne => ux != uy,
        Pred::Ugt => ux > uy,
        Pred::Uge => ux >= uy,
        Pred::Ult => ux < uy,
        Pred::Ule => ux <= uy,
        Pred::Sgt => sx > sy,
        Pred::Sge => sx >= sy,
        Pred::Slt => sx < sy,
        Pred::Sle => sx <= sy,
    })
}
