//! Reader for module-level declarations: global variables and function headers.

use super::lex::{lex, Tok};
use super::parse::{parse_type, parse_value, skip_attrs, starts_type, Cur};
use super::{Block, Function, Global, Module, Param, Value};
use crate::error::{parse_err, unsupported, Result};

pub(super) fn parse_global(t: &str, line: usize, m: &Module) -> Result<Global> {
    let toks = lex(t, line)?;
    let mut c = Cur::new(&toks, line);
    let name = match c.next()? {
        Tok::Global(n) => n.clone(),
        _ => return parse_err(line, "expected a global name"),
    };
    c.expect_p('=')?;
    let mut external = false;
    let mut local = false;
    let constant;
    loop {
        match c.next()? {
            Tok::Word(w) if w == "global" => {
                constant = false;
                break;
            }
            Tok::Word(w) if w == "constant" => {
                constant = true;
                break;
            }
            Tok::Word(w) if w == "alias" || w == "ifunc" => {
                return unsupported(line, format!("global {w}"))
            }
            Tok::Word(w) => {
                if w == "external" || w == "extern_weak" {
                    external = true;
                }
                if w == "internal" || w == "private" {
                    local = true;
                }
                if w == "thread_local" || w == "addrspace" {
                    c.skip_parens();
                }
            }
            other => return parse_err(line, format!("unexpected {other:?} in global @{name}")),
        }
    }
    let ty = parse_type(&mut c)?;
    let init = if external || matches!(c.peek(), None | Some(Tok::P(','))) {
        None
    } else {
        match parse_value(&mut c, m)? {
            Value::Const(k) => Some(k),
            Value::Local(_) => return parse_err(line, "global initializer is not a constant"),
        }
    };
    let mut align = 1;
    while let Some(tok) = c.peek() {
        c.i += 1;
        if tok == &Tok::Word("align".into()) {
            align = u64::try_from(c.int()?).unwrap_or(1);
        }
    }
    Ok(Global {
        name,
        ty,
        init,
        constant,
        align,
        local,
        line,
    })
}

/// Parses `define|declare <linkage/attrs> RetTy @name(params) …`.
pub(super) fn parse_header(toks: &[Tok], line: usize) -> Result<Function> {
    let gi = toks
        .iter()
        .position(|t| matches!(t, Tok::Global(_)))
        .ok_or(crate::error::CcError::Parse {
            line,
            msg: "function without a name".into(),
        })?;
    let name = match &toks[gi] {
        Tok::Global(n) => n.clone(),
        _ => String::new(),
    };
    let local = toks[..gi]
        .iter()
        .any(|t| matches!(t, Tok::Word(w) if w == "internal" || w == "private"));
    // The return type is the type that ends exactly at the name.
    let mut ret = None;
    for s in 1..gi {
        let mut c = Cur::new(&toks[..gi], line);
        c.i = s;
        if !starts_type(c.peek()) {
            continue;
        }
        if let Ok(t) = parse_type(&mut c) {
            if c.i == gi {
                ret = Some(t);
                break;
            }
        }
    }
    let Some(ret) = ret else {
        return parse_err(line, format!("no return type for @{name}"));
    };
    let mut c = Cur::new(toks, line);
    c.i = gi + 1;
    c.expect_p('(')?;
    let mut params = Vec::new();
    let mut varargs = false;
    let mut k = 0;
    while !c.eat_p(')') {
        if matches!(c.peek(), Some(Tok::Ellipsis)) {
            c.i += 1;
            varargs = true;
        } else {
            let ty = parse_type(&mut c)?;
            let byval = skip_attrs(&mut c);
            let pname = match c.peek() {
                Some(Tok::Local(n)) => {
                    c.i += 1;
                    n.clone()
                }
                _ => k.to_string(),
            };
            params.push(Param {
                ty,
                name: pname,
                byval,
            });
            k += 1;
        }
        if !c.eat_p(',') && !c.is_p(')') {
            return parse_err(line, format!("bad parameter list of @{name}"));
        }
    }
    Ok(Function {
        name,
        ret,
        params,
        varargs,
        blocks: Vec::<Block>::new(),
        local,
        line,
    })
}
