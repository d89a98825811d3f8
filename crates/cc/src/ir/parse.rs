//! Reader for the textual LLVM IR that `clang -S -emit-llvm` writes: module-level entities (named
//! types, globals, function headers) and a token cursor shared with `parse_inst`.

use super::lex::{lex, Tok};
use super::{Const, Module, Type, Value};
use crate::error::{parse_err, unsupported, Result};

/// A cursor over the tokens of one logical line.
pub(super) struct Cur<'a> {
    pub t: &'a [Tok],
    pub i: usize,
    pub line: usize,
}

impl<'a> Cur<'a> {
    pub fn new(t: &'a [Tok], line: usize) -> Self {
        Cur { t, i: 0, line }
    }
    pub fn peek(&self) -> Option<&'a Tok> {
        self.t.get(self.i)
    }
    pub fn peek_at(&self, k: usize) -> Option<&'a Tok> {
        self.t.get(self.i + k)
    }
    pub fn next(&mut self) -> Result<&'a Tok> {
        let t = self.t.get(self.i);
        self.i += 1;
        match t {
            Some(t) => Ok(t),
            None => parse_err(self.line, "unexpected end of line"),
        }
    }
    pub fn is_p(&self, c: char) -> bool {
        self.peek() == Some(&Tok::P(c))
    }
    pub fn eat_p(&mut self, c: char) -> bool {
        let hit = self.is_p(c);
        if hit {
            self.i += 1;
        }
        hit
    }
    pub fn expect_p(&mut self, c: char) -> Result<()> {
        let hit = self.eat_p(c);
        self.expected(hit, c)
    }
    /// Ok when the expected token `what` was there (`hit`), else the error naming what was found.
    fn expected(&self, hit: bool, what: impl std::fmt::Display) -> Result<()> {
        if hit {
            Ok(())
        } else {
            parse_err(
                self.line,
                format!("expected '{what}', found {:?}", self.peek()),
            )
        }
    }
    pub fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }
    pub fn eat_word(&mut self, w: &str) -> bool {
        let hit = self.is_word(w);
        if hit {
            self.i += 1;
        }
        hit
    }
    pub fn expect_word(&mut self, w: &str) -> Result<()> {
        let hit = self.eat_word(w);
        self.expected(hit, w)
    }
    pub fn int(&mut self) -> Result<i128> {
        match self.next()? {
            Tok::Int(v) => Ok(*v),
            t => parse_err(self.line, format!("expected an integer, found {t:?}")),
        }
    }
    pub fn local(&mut self) -> Result<String> {
        match self.next()? {
            Tok::Local(v) => Ok(v.clone()),
            t => parse_err(self.line, format!("expected a %name, found {t:?}")),
        }
    }
    /// Skips a balanced `( … )` group if one starts here.
    pub fn skip_parens(&mut self) {
        if !self.is_p('(') {
            return;
        }
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            self.i += 1;
            match t {
                Tok::P('(') => depth += 1,
                Tok::P(')') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether the word starts a type.
pub(super) fn is_type_word(w: &str) -> bool {
    matches!(
        w,
        "void"
            | "ptr"
            | "label"
            | "metadata"
            | "half"
            | "bfloat"
            | "float"
            | "double"
            | "x86_fp80"
            | "fp128"
            | "ppc_fp128"
            | "token"
            | "opaque"
    ) || (w.len() > 1 && w.starts_with('i') && w[1..].bytes().all(|c| c.is_ascii_digit()))
}

/// Whether the token can start a type.
pub(super) fn starts_type(t: Option<&Tok>) -> bool {
    match t {
        Some(Tok::Word(w)) => is_type_word(w),
        Some(Tok::P('[' | '{' | '<')) | Some(Tok::Local(_)) => true,
        _ => false,
    }
}

/// Parses a type, including pointer (`*`) and function-type suffixes.
pub(super) fn parse_type(c: &mut Cur) -> Result<Type> {
    let line = c.line;
    let mut ty = match c.next()? {
        Tok::Word(w) => match w.as_str() {
            "void" => Type::Void,
            "ptr" => Type::Ptr,
            "label" => Type::Label,
            w if w.starts_with('i') && w[1..].bytes().all(|b| b.is_ascii_digit()) => {
                match w[1..].parse::<u32>() {
                    Ok(b) if (1..=128).contains(&b) => Type::Int(b),
                    _ => return unsupported(line, format!("integer type {w}")),
                }
            }
            w if is_type_word(w) => Type::Other(w.to_string()),
            w => return parse_err(line, format!("expected a type, found '{w}'")),
        },
        Tok::Local(n) => Type::Named(n.clone()),
        Tok::P('[') => {
            let n = c.int()?;
            c.expect_word("x")?;
            let e = parse_type(c)?;
            c.expect_p(']')?;
            Type::Array(u64::try_from(n).map_err(|_| parse_bad(line))?, Box::new(e))
        }
        Tok::P('{') => Type::Struct(parse_type_list(c, '}')?, false),
        Tok::P('<') => {
            if c.eat_p('{') {
                let fs = parse_type_list(c, '}')?;
                c.expect_p('>')?;
                Type::Struct(fs, true)
            } else {
                // A vector type: recognised only to be refused by the lowering.
                while !c.eat_p('>') {
                    c.next()?;
                }
                Type::Other("vector".into())
            }
        }
        t => return parse_err(line, format!("expected a type, found {t:?}")),
    };
    loop {
        if c.is_word("addrspace") {
            c.i += 1;
            c.skip_parens();
        } else if c.eat_p('*') {
            ty = Type::Ptr;
        } else if c.is_p('(') && !matches!(ty, Type::Label) {
            c.i += 1;
            let mut params = Vec::new();
            let mut varargs = false;
            while !c.eat_p(')') {
                if matches!(c.peek(), Some(Tok::Ellipsis)) {
                    c.i += 1;
                    varargs = true;
                } else {
                    params.push(parse_type(c)?);
                    skip_attrs(c);
                }
                c.eat_p(',');
            }
            ty = Type::Func(Box::new(ty), params, varargs);
        } else {
            return Ok(ty);
        }
    }
}

pub(super) fn parse_bad(line: usize) -> crate::error::CcError {
    crate::error::CcError::Parse {
        line,
        msg: "number out of range".into(),
    }
}

fn parse_type_list(c: &mut Cur, close: char) -> Result<Vec<Type>> {
    let mut v = Vec::new();
    while !c.eat_p(close) {
        v.push(parse_type(c)?);
        c.eat_p(',');
    }
    Ok(v)
}

/// Skips parameter/return attributes (`noundef`, `align 2`, `dereferenceable(4)`, …) and returns the
/// `byval(T)` type if one was among them.
pub(super) fn skip_attrs(c: &mut Cur) -> Option<Type> {
    let mut byval = None;
    while let Some(Tok::Word(w)) = c.peek() {
        if is_value_word(w) || is_type_word(w) {
            break;
        }
        c.i += 1;
        if w == "align" || w == "addrspace" {
            if let Some(Tok::Int(_)) = c.peek() {
                c.i += 1;
            }
        }
        if (w == "byval" || w == "byref") && c.is_p('(') {
            let save = c.i;
            c.i += 1;
            if let Ok(t) = parse_type(c) {
                byval = Some(t);
            }
            c.i = save;
        }
        c.skip_parens();
    }
    byval
}

/// Words that begin a value (constants and constant expressions).
pub(super) fn is_value_word(w: &str) -> bool {
    matches!(
        w,
        "true"
            | "false"
            | "null"
            | "undef"
            | "poison"
            | "zeroinitializer"
            | "none"
            | "getelementptr"
            | "bitcast"
            | "ptrtoint"
            | "inttoptr"
            | "addrspacecast"
            | "blockaddress"
    ) || super::constexpr::is_constexpr_word(w)
}

/// Parses a value (the type has already been read).
pub(super) fn parse_value(c: &mut Cur, m: &Module) -> Result<Value> {
    let line = c.line;
    Ok(match c.next()? {
        Tok::Local(n) => Value::Local(n.clone()),
        Tok::Global(n) => Value::Const(Const::Addr(n.clone(), 0)),
        Tok::Int(v) => Value::Const(Const::Int(*v)),
        Tok::Bytes(b) => Value::Const(Const::Bytes(b.clone())),
        Tok::Float(f) => {
            return unsupported(
                line,
                format!(
                    "floating point (constant {f}): CAHPv3 has no FPU and vsp cc has no soft-float"
                ),
            )
        }
        Tok::Meta(_) => {
            // Metadata arguments (debug intrinsics): `!{…}` groups are skipped.
            if c.is_p('{') {
                while !c.eat_p('}') {
                    c.next()?;
                }
            }
            Value::Const(Const::Undef)
        }
        Tok::P(open @ ('[' | '{' | '<')) => {
            let close = match open {
                '[' => ']',
                '{' => '}',
                _ => {
                    if !c.eat_p('{') {
                        return unsupported(line, "vector constant");
                    }
                    '}'
                }
            };
            let mut elems = Vec::new();
            while !c.eat_p(close) {
                let t = parse_type(c)?;
                let v = parse_value(c, m)?;
                let k = match v {
                    Value::Const(k) => k,
                    Value::Local(_) => {
                        return parse_err(line, "non-constant in an aggregate constant")
                    }
                };
                elems.push((t, k));
                c.eat_p(',');
            }
            if *open == '<' {
                c.expect_p('>')?;
            }
            Value::Const(Const::Aggregate(elems))
        }
        Tok::Word(w) => match w.as_str() {
            "true" => Value::Const(Const::Int(1)),
            "false" => Value::Const(Const::Int(0)),
            "null" => Value::Const(Const::Null),
            "undef" | "poison" | "none" => Value::Const(Const::Undef),
            "zeroinitializer" => Value::Const(Const::Zero),
            "getelementptr" => {
                c.eat_word("inbounds");
                c.expect_p('(')?;
                let src = parse_type(c)?;
                c.expect_p(',')?;
                parse_type(c)?;
                let base = parse_value(c, m)?;
                let mut idx = Vec::new();
                while c.eat_p(',') {
                    c.eat_word("inrange");
                    let t = parse_type(c)?;
                    match parse_value(c, m)? {
                        Value::Const(Const::Int(v)) => idx.push((t, v)),
                        _ => {
                            return unsupported(
                                line,
                                "non-integer index in a constant getelementptr",
                            )
                        }
                    }
                }
                c.expect_p(')')?;
                let off = const_gep_offset(m, &src, &idx, line)?;
                match base {
                    Value::Const(Const::Addr(n, o)) => Value::Const(Const::Addr(n, o + off)),
                    Value::Const(Const::Null) => Value::Const(Const::Int(i128::from(off))),
                    _ => return unsupported(line, "constant getelementptr on a non-global"),
                }
            }
            "bitcast" | "ptrtoint" | "inttoptr" | "addrspacecast" => {
                c.expect_p('(')?;
                parse_type(c)?;
                let v = parse_value(c, m)?;
                c.expect_word("to")?;
                parse_type(c)?;
                c.expect_p(')')?;
                v
            }
            other if super::constexpr::is_constexpr_word(other) => {
                return super::constexpr::parse_constexpr(other, c, m)
            }
            other => return unsupported(line, format!("constant expression '{other}'")),
        },
        t => return parse_err(line, format!("expected a value, found {t:?}")),
    })
}

/// Byte offset of a constant getelementptr.
pub(super) fn const_gep_offset(
    m: &Module,
    src: &Type,
    idx: &[(Type, i128)],
    line: usize,
) -> Result<i64> {
    let mut off: i128 = 0;
    let mut cur = src.clone();
    for (k, (_, v)) in idx.iter().enumerate() {
        if k == 0 {
            off += v * i128::from(m.size_of(&cur).unwrap_or(0));
            continue;
        }
        match m.resolve(&cur).clone() {
            Type::Array(_, e) => {
                off += v * i128::from(m.size_of(&e).unwrap_or(0));
                cur = *e;
            }
            Type::Struct(fs, _) => {
                let i = usize::try_from(*v).map_err(|_| parse_bad(line))?;
                off += i128::from(m.field_offset(&cur, i).ok_or_else(|| parse_bad(line))?);
                cur = fs.get(i).cloned().ok_or_else(|| parse_bad(line))?;
            }
            _ => return unsupported(line, "getelementptr into a non-aggregate type"),
        }
    }
    i64::try_from(off).map_err(|_| parse_bad(line))
}

/// Removes a trailing comment, respecting string literals.
fn strip_comment(s: &str) -> &str {
    let mut in_str = false;
    for (i, ch) in s.char_indices() {
        match ch {
            '"' => in_str = !in_str,
            ';' if !in_str => return &s[..i],
            _ => {}
        }
    }
    s
}

/// Parses a whole module of textual LLVM IR.
pub fn parse_module(text: &str) -> Result<Module> {
    let mut m = Module::default();
    let lines: Vec<&str> = text.lines().map(strip_comment).collect();
    let mut i = 0;
    while i < lines.len() {
        let line_no = i + 1;
        let t = lines[i].trim();
        i += 1;
        if t.is_empty()
            || t.starts_with('!')
            || t.starts_with("attributes ")
            || t.starts_with("source_filename")
            || t.starts_with("target ")
            || t.starts_with("module asm")
            || t.starts_with("uselistorder")
        {
            continue;
        }
        if t.starts_with('%') {
            let toks = lex(t, line_no)?;
            let mut c = Cur::new(&toks, line_no);
            let name = c.local()?;
            c.expect_p('=')?;
            c.expect_word("type")?;
            let ty = if c.eat_word("opaque") {
                Type::Struct(vec![], false)
            } else {
                parse_type(&mut c)?
            };
            m.types.insert(name, ty);
        } else if t.starts_with('@') {
            let g = super::decl::parse_global(t, line_no, &m)?;
            m.globals.push(g);
        } else if t.starts_with("declare") {
            let toks = lex(t, line_no)?;
            let f = super::decl::parse_header(&toks, line_no)?;
            m.functions.push(f);
        } else if t.starts_with("define") {
            let toks = lex(t, line_no)?;
            let mut f = super::decl::parse_header(&toks, line_no)?;
            // Body: until a line that is just `}`.
            let mut body: Vec<(usize, String)> = Vec::new();
            let mut pending: Option<(usize, String)> = None;
            loop {
                let Some(l) = lines.get(i) else {
                    return parse_err(line_no, format!("function @{} has no closing '}}'", f.name));
                };
                let ln = i + 1;
                i += 1;
                let lt = l.trim();
                if lt == "}" && pending.is_none() {
                    break;
                }
                if lt.is_empty() {
                    continue;
                }
                let (start, mut acc) = pending.take().unwrap_or((ln, String::new()));
                acc.push(' ');
                acc.push_str(lt);
                // `switch … [` spans lines until its `]`.
                let open = acc.matches('[').count();
                let close = acc.matches(']').count();
                if open > close {
                    pending = Some((start, acc));
                } else {
                    body.push((start, acc));
                }
            }
            f.blocks = super::parse_inst::parse_body(&body, &m)?;
            // An unlabelled entry block takes the next unnamed value number after the parameters.
            if let Some(b) = f.blocks.first_mut() {
                if b.name.is_empty() {
                    let unnamed = f
                        .params
                        .iter()
                        .filter(|p| p.name.bytes().all(|c| c.is_ascii_digit()))
                        .count();
                    b.name = unnamed.to_string();
                }
            }
            m.functions.push(f);
        } else {
            return parse_err(line_no, format!("unknown top-level entity: {t}"));
        }
    }
    Ok(m)
}
