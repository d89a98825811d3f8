//! Operand expressions: numbers, symbols, `.` (the current instruction's address), `hi(x)`/`lo(x)`
//! (also spelled `%hi(x)`/`%lo(x)`), unary `-`/`~`, and `* / + - << >> & ^ |` with C precedence.

use super::lex::{Tok, Token};
use super::AsmErrorKind;

/// An expression with the column of each symbol reference (for "undefined symbol" errors).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Num(i64),
    Sym(String, u32),
    Here,
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Hi(Box<Expr>),
    Lo(Box<Expr>),
    Bin(Tok, Box<Expr>, Box<Expr>),
}

/// `hi6` part of a 16-bit value for `lui` (R_CAHP_HI6, §1.4).
pub fn hi6(v: i64) -> i64 {
    (((v & 0xFFFF) + 0x200) >> 10) & 0x3F
}

/// `lo10` part of a 16-bit value for the `addi` after `lui` (R_CAHP_LO10), in -512..=511.
pub fn lo10(v: i64) -> i64 {
    let r = ((v & 0xFFFF) - (hi6(v) << 10)) & 0xFFFF;
    if r >= 0x8000 {
        r - 0x10000
    } else {
        r
    }
}

impl Expr {
    /// Whether the value depends on the layout (symbols or `.`).
    pub fn is_symbolic(&self) -> bool {
        match self {
            Expr::Num(_) => false,
            Expr::Sym(..) | Expr::Here => true,
            Expr::Neg(e) | Expr::Not(e) | Expr::Hi(e) | Expr::Lo(e) => e.is_symbolic(),
            Expr::Bin(_, a, b) => a.is_symbolic() || b.is_symbolic(),
        }
    }

    /// Calls `f` on every symbol reference.
    pub fn for_each_sym(&self, f: &mut dyn FnMut(&str, u32)) {
        match self {
            Expr::Sym(s, c) => f(s, *c),
            Expr::Num(_) | Expr::Here => {}
            Expr::Neg(e) | Expr::Not(e) | Expr::Hi(e) | Expr::Lo(e) => e.for_each_sym(f),
            Expr::Bin(_, a, b) => {
                a.for_each_sym(f);
                b.for_each_sym(f);
            }
        }
    }

    /// Evaluates with `sym` resolving names and `here` the current address.
    pub fn eval(
        &self,
        sym: &dyn Fn(&str) -> Option<i64>,
        here: i64,
    ) -> Result<i64, (u32, AsmErrorKind)> {
        Ok(match self {
            Expr::Num(v) => *v,
            Expr::Here => here,
            Expr::Sym(s, c) => {
                sym(s).ok_or_else(|| (*c, AsmErrorKind::UndefinedSymbol(s.clone())))?
            }
            Expr::Neg(e) => e.eval(sym, here)?.checked_neg().ok_or_else(overflow)?,
            Expr::Not(e) => !e.eval(sym, here)?,
            Expr::Hi(e) => hi6(e.eval(sym, here)?),
            Expr::Lo(e) => lo10(e.eval(sym, here)?),
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.eval(sym, here)?, b.eval(sym, here)?);
                match op {
                    Tok::Plus => x.checked_add(y).ok_or_else(overflow)?,
                    Tok::Minus => x.checked_sub(y).ok_or_else(overflow)?,
                    Tok::Star => x.checked_mul(y).ok_or_else(overflow)?,
                    Tok::Slash => {
                        if y == 0 {
                            return Err((
                                0,
                                AsmErrorKind::Syntax("division by zero in expression".into()),
                            ));
                        }
                        x.checked_div(y).ok_or_else(overflow)?
                    }
                    Tok::Shl | Tok::Shr => {
                        let Some(n) = u32::try_from(y).ok().filter(|&n| n < 64) else {
                            return Err((
                                0,
                                AsmErrorKind::Syntax(format!(
                                    "shift count {y} is out of range (0 to 63)"
                                )),
                            ));
                        };
                        if *op == Tok::Shr {
                            x >> n
                        } else if (x << n) >> n == x {
                            x << n
                        } else {
                            return Err(overflow());
                        }
                    }
                    Tok::Amp => x & y,
                    Tok::Pipe => x | y,
                    _ => x ^ y,
                }
            }
        })
    }
}

/// An expression whose value does not fit 64 bits (it used to wrap silently).
fn overflow() -> (u32, AsmErrorKind) {
    (
        0,
        AsmErrorKind::Syntax("expression overflows 64-bit arithmetic".into()),
    )
}

/// Recursive-descent parser over a token slice.
pub(crate) struct ExprParser<'a> {
    pub toks: &'a [Token],
    pub i: usize,
    /// Column to report when the line ends unexpectedly.
    pub eol_col: u32,
    /// Current nesting of unary operators and parentheses (bounded, so that a hostile line
    /// cannot overflow the stack).
    pub depth: u32,
}

const MAX_DEPTH: u32 = 64;
/// Longest expression accepted, in tokens (bounds the depth of left-leaning `a+b+c…` trees).
const MAX_TOKENS: usize = 512;

type PResult<T> = Result<T, (u32, AsmErrorKind)>;

impl<'a> ExprParser<'a> {
    /// A parser over `toks`, refusing overlong expressions.
    pub fn new(toks: &'a [Token], eol_col: u32) -> PResult<ExprParser<'a>> {
        if toks.len() > MAX_TOKENS {
            let col = toks.first().map(|t| t.col).unwrap_or(eol_col);
            return Err((
                col,
                AsmErrorKind::Syntax(format!("expression longer than {MAX_TOKENS} tokens")),
            ));
        }
        Ok(ExprParser {
            toks,
            i: 0,
            eol_col,
            depth: 0,
        })
    }

    pub fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.i).map(|t| &t.tok)
    }

    pub fn col(&self) -> u32 {
        self.toks.get(self.i).map(|t| t.col).unwrap_or(self.eol_col)
    }

    fn bin_level(&mut self, level: usize) -> PResult<Expr> {
        const LEVELS: [&[Tok]; 6] = [
            &[Tok::Pipe],
            &[Tok::Caret],
            &[Tok::Amp],
            &[Tok::Shl, Tok::Shr],
            &[Tok::Plus, Tok::Minus],
            &[Tok::Star, Tok::Slash],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.bin_level(level + 1)?;
        while let Some(t) = self.peek() {
            if !LEVELS[level].contains(t) {
                break;
            }
            let op = t.clone();
            self.i += 1;
            let rhs = self.bin_level(level + 1)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    /// Parses one expression.
    pub fn expr(&mut self) -> PResult<Expr> {
        self.bin_level(0)
    }

    fn unary(&mut self) -> PResult<Expr> {
        if self.depth >= MAX_DEPTH {
            return Err((
                self.col(),
                AsmErrorKind::Syntax("expression nested too deeply".into()),
            ));
        }
        self.depth += 1;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        let col = self.col();
        match self.peek() {
            Some(Tok::Minus) => {
                self.i += 1;
                Ok(Expr::Neg(Box::new(self.unary()?)))
            }
            Some(Tok::Plus) => {
                self.i += 1;
                self.unary()
            }
            Some(Tok::Tilde) => {
                self.i += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Num(v)) => {
                self.i += 1;
                Ok(Expr::Num(*v))
            }
            Some(Tok::Percent) => {
                self.i += 1;
                match self.peek() {
                    Some(Tok::Ident(name)) if name == "hi" || name == "lo" => self.unary(),
                    _ => Err((
                        col,
                        AsmErrorKind::Syntax("expected `hi` or `lo` after `%`".into()),
                    )),
                }
            }
            Some(Tok::LParen) => {
                self.i += 1;
                let e = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(e)
            }
            Some(Tok::Ident(name)) => {
                self.i += 1;
                if name == "." {
                    return Ok(Expr::Here);
                }
                if (name == "hi" || name == "lo") && self.peek() == Some(&Tok::LParen) {
                    self.i += 1;
                    let e = self.expr()?;
                    self.expect(Tok::RParen, "`)`")?;
                    return Ok(if name == "hi" {
                        Expr::Hi(Box::new(e))
                    } else {
                        Expr::Lo(Box::new(e))
                    });
                }
                Ok(Expr::Sym(name.clone(), col))
            }
            Some(t) => Err((
                col,
                AsmErrorKind::Syntax(format!("expected an expression, found {}", describe(t))),
            )),
            None => Err((
                col,
                AsmErrorKind::Syntax("expected an expression, found end of line".into()),
            )),
        }
    }

    /// Consumes `t` or fails with "expected `what`".
    pub fn expect(&mut self, t: Tok, what: &str) -> PResult<()> {
        if self.peek() == Some(&t) {
            self.i += 1;
            Ok(())
        } else {
            let found = self
                .peek()
                .map(describe)
                .unwrap_or_else(|| "end of line".into());
            Err((
                self.col(),
                AsmErrorKind::Syntax(format!("expected {what}, found {found}")),
            ))
        }
    }
}

/// Human description of a token for messages.
pub(crate) fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Num(v) => format!("`{v}`"),
        Tok::Str(_) => "a string".into(),
        Tok::Comma => "`,`".into(),
        Tok::Colon => "`:`".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Plus => "`+`".into(),
        Tok::Minus => "`-`".into(),
        Tok::Star => "`*`".into(),
        Tok::Slash => "`/`".into(),
        Tok::Tilde => "`~`".into(),
        Tok::Amp => "`&`".into(),
        Tok::Pipe => "`|`".into(),
        Tok::Caret => "`^`".into(),
        Tok::Shl => "`<<`".into(),
        Tok::Shr => "`>>`".into(),
        Tok::Percent => "`%`".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hi_lo_reassemble_every_value() {
        for v in 0..=0xFFFFi64 {
            let (h, l) = (hi6(v), lo10(v));
            assert!((0..64).contains(&h) && (-512..512).contains(&l), "{v}");
            assert_eq!(((h << 10) + l) & 0xFFFF, v);
        }
    }
}
