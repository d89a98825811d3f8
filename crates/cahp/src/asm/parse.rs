//! Line parser: labels, directives and instructions into per-section item lists.

use std::collections::HashMap;

use super::expr::{describe, Expr, ExprParser};
use super::lex::{tokenize, Tok, Token};
use super::select::{select, InstItem};
use super::{AsmError, AsmErrorKind, Pos};
use crate::isa::Reg;

/// Section indices: ROM `.text`, then the RAM sections in link order.
pub(crate) const TEXT: usize = 0;
pub(crate) const DATA: usize = 1;
pub(crate) const RODATA: usize = 2;
pub(crate) const BSS: usize = 3;
/// Bytes a 16-bit address reaches: no memory of the machine is larger.
const ADDRESS_SPACE: usize = 1 << 16;
pub(crate) const SECTION_NAMES: [&str; 4] = [".text", ".data", ".rodata", ".bss"];

/// Something that occupies bytes in a section.
#[derive(Clone, Debug)]
pub(crate) enum ItemKind {
    Inst(InstItem),
    Bytes(Vec<u8>),
    /// A 1- or 2-byte value computed at link time.
    Data {
        width: u8,
        expr: Expr,
        /// The directive as written (`.word`, `.half`, …), for messages.
        directive: &'static str,
    },
    /// Pad with `fill` to a multiple of `align`.
    Align {
        align: u32,
        fill: u8,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub kind: ItemKind,
    pub pos: Pos,
}

/// Where a symbol is defined.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Def {
    /// Address of item `index` of `section` (or the section end).
    Label { section: usize, index: usize },
    /// A constant from `.equ`.
    Abs(i64),
}

/// An operand as written.
#[derive(Clone, Debug)]
pub(crate) enum Operand {
    Reg(Reg),
    Expr(Expr),
    Mem(Expr, Reg),
}

/// The parsed program: items of every section and the symbol definitions.
pub(crate) struct Program {
    pub files: Vec<String>,
    pub sections: [Vec<Item>; 4],
    pub defs: HashMap<String, (Def, Pos)>,
    pub order: Vec<String>,
    pub globals: Vec<String>,
    /// File named in errors about the whole program (the first user source).
    pub main_file: usize,
    compress_default: bool,
    /// A lower bound of the ROM and RAM bytes the items parsed so far take (data and `.space`
    /// bytes; instructions and alignment not counted): a `.space` that cannot fit the 16-bit address
    /// space is refused before it is allocated. (The machine's own, smaller sizes are checked after
    /// layout, so that a more specific error such as a branch out of range is reported first.)
    used: [usize; 2],
}

type LResult<T> = Result<T, (u32, AsmErrorKind)>;

impl Program {
    pub fn new(compress: bool) -> Program {
        Program {
            files: Vec::new(),
            sections: Default::default(),
            defs: HashMap::new(),
            order: Vec::new(),
            globals: Vec::new(),
            main_file: 0,
            compress_default: compress,
            used: [0, 0],
        }
    }

    pub fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f == name)
    }

    /// Formats a position as `file:line:col`.
    pub fn where_(&self, p: Pos) -> String {
        format!(
            "{}:{}:{}",
            self.files.get(p.file).map(String::as_str).unwrap_or("?"),
            p.line,
            p.col
        )
    }

    pub fn error(&self, p: Pos, kind: AsmErrorKind) -> AsmError {
        AsmError {
            file: self.files.get(p.file).cloned().unwrap_or_default(),
            line: p.line,
            col: p.col,
            kind,
        }
    }

    /// Symbols referenced somewhere but not defined.
    pub fn undefined(&self) -> Vec<String> {
        let mut out = Vec::new();
        for it in self.sections.iter().flatten() {
            let e = match &it.kind {
                ItemKind::Inst(i) => i.expr.as_ref(),
                ItemKind::Data { expr, .. } => Some(expr),
                _ => None,
            };
            if let Some(e) = e {
                e.for_each_sym(&mut |s, _| {
                    if !self.defs.contains_key(s) && !out.iter().any(|o| o == s) {
                        out.push(s.to_string());
                    }
                });
            }
        }
        out
    }

    pub fn parse_file(&mut self, name: &str, text: &str) -> Result<(), AsmError> {
        let file = self.files.len();
        self.files.push(name.to_string());
        let mut st = FileState {
            section: TEXT,
            compress: self.compress_default,
        };
        for (n, line) in text.lines().enumerate() {
            let line_no = (n + 1) as u32;
            let at = |col: u32| Pos {
                file,
                line: line_no,
                col: col.max(1),
            };
            let toks = tokenize(line).map_err(|(c, k)| self.error(at(c), k))?;
            let eol = (line.chars().count() + 1) as u32;
            self.parse_line(&toks, &mut st, &at, eol)
                .map_err(|(c, k)| self.error(at(c), k))?;
        }
        Ok(())
    }

    fn define(&mut self, name: &str, def: Def, pos: Pos) -> LResult<()> {
        if let Some((_, prev)) = self.defs.get(name) {
            let previous = self.where_(*prev);
            return Err((
                pos.col,
                AsmErrorKind::DuplicateSymbol {
                    name: name.to_string(),
                    previous,
                },
            ));
        }
        if Reg::parse(name).is_some() {
            return Err((
                pos.col,
                AsmErrorKind::Syntax(format!(
                    "`{name}` is a register name and cannot be a symbol"
                )),
            ));
        }
        self.defs.insert(name.to_string(), (def, pos));
        self.order.push(name.to_string());
        Ok(())
    }

    /// Checks that `n` more bytes in the current section can still fit the 16-bit address space.
    fn check_room(&self, st: &FileState, n: usize, col: u32) -> LResult<()> {
        let (mem, what) = if st.section == TEXT {
            (0, "ROM")
        } else {
            (1, "RAM")
        };
        let used = self.used[mem].saturating_add(n);
        if used > ADDRESS_SPACE {
            return Err((
                col,
                AsmErrorKind::TooLarge {
                    what,
                    used,
                    limit: ADDRESS_SPACE,
                },
            ));
        }
        Ok(())
    }

    fn push(&mut self, st: &FileState, kind: ItemKind, pos: Pos) -> LResult<()> {
        let is_inst = matches!(kind, ItemKind::Inst(_));
        if is_inst && st.section != TEXT {
            return Err((
                pos.col,
                AsmErrorKind::Section(format!(
                    "instructions belong in .text, not {}",
                    SECTION_NAMES[st.section]
                )),
            ));
        }
        if st.section == BSS {
            let zero = match &kind {
                ItemKind::Bytes(b) => b.iter().all(|&x| x == 0),
                ItemKind::Align { fill, .. } => *fill == 0,
                _ => false,
            };
            if !zero {
                return Err((
                    pos.col,
                    AsmErrorKind::Section(
                        ".bss holds only zeros (.space/.zero/.align/labels)".into(),
                    ),
                ));
            }
        }
        let size = match &kind {
            ItemKind::Bytes(b) => b.len(),
            ItemKind::Data { width, .. } => usize::from(*width),
            _ => 0,
        };
        self.check_room(st, size, pos.col)?;
        self.used[usize::from(st.section != TEXT)] += size;
        self.sections[st.section].push(Item { kind, pos });
        Ok(())
    }

    fn parse_line(
        &mut self,
        toks: &[Token],
        st: &mut FileState,
        at: &dyn Fn(u32) -> Pos,
        eol: u32,
    ) -> LResult<()> {
        let mut i = 0;
        // Labels: `name:` (several may share a line).
        while let (
            Some(Token {
                tok: Tok::Ident(name),
                col,
            }),
            Some(Token {
                tok: Tok::Colon, ..
            }),
        ) = (toks.get(i), toks.get(i + 1))
        {
            let section = st.section;
            let index = self.sections[section].len();
            self.define(name, Def::Label { section, index }, at(*col))?;
            i += 2;
        }
        let Some(first) = toks.get(i) else {
            return Ok(());
        };
        let Tok::Ident(word) = &first.tok else {
            return Err((
                first.col,
                AsmErrorKind::Syntax(format!(
                    "expected a label, directive or mnemonic, found {}",
                    describe(&first.tok)
                )),
            ));
        };
        let rest = &toks[i + 1..];
        if word.starts_with('.') {
            self.directive(word, first.col, rest, st, at, eol)
        } else {
            let ops = parse_operands(rest, eol)?;
            let item = select(word, &ops, st.compress, first.col)?;
            self.push(st, ItemKind::Inst(item), at(first.col))
        }
    }

    fn directive(
        &mut self,
        word: &str,
        col: u32,
        rest: &[Token],
        st: &mut FileState,
        at: &dyn Fn(u32) -> Pos,
        eol: u32,
    ) -> LResult<()> {
        let d = word.to_ascii_lowercase();
        let pos = at(col);
        let args = split_commas(rest);
        let p = |ts: &[Token]| -> LResult<Expr> {
            let mut ep = ExprParser::new(ts, eol)?;
            let e = ep.expr()?;
            if let Some(t) = ep.toks.get(ep.i) {
                return Err((
                    t.col,
                    AsmErrorKind::Syntax(format!(
                        "unexpected {} after expression",
                        describe(&t.tok)
                    )),
                ));
            }
            Ok(e)
        };
        let constant = |e: &Expr, c: u32, defs: &HashMap<String, (Def, Pos)>| -> LResult<i64> {
            e.eval(
                &|s| match defs.get(s) {
                    Some((Def::Abs(v), _)) => Some(*v),
                    _ => None,
                },
                0,
            )
            .map_err(|(_, k)| match k {
                AsmErrorKind::UndefinedSymbol(s) => (
                    c,
                    AsmErrorKind::Syntax(format!(
                        "`{s}` must be a constant defined earlier with .equ"
                    )),
                ),
                other => (c, other),
            })
        };
        let argc = |n: std::ops::RangeInclusive<usize>| -> LResult<()> {
            let count = if rest.is_empty() { 0 } else { args.len() };
            if n.contains(&count) {
                Ok(())
            } else {
                let (lo, hi) = (*n.start(), *n.end());
                let takes = match (lo, hi) {
                    (0, 0) => "no arguments".to_string(),
                    (1, 1) => "one argument".to_string(),
                    (l, h) if l == h => format!("{l} arguments"),
                    (1, usize::MAX) => "at least one argument".to_string(),
                    (l, usize::MAX) => format!("at least {l} arguments"),
                    (l, h) => format!("{l} to {h} arguments"),
                };
                Err((
                    col,
                    AsmErrorKind::Syntax(format!("`{word}` takes {takes}, found {count}")),
                ))
            }
        };
        let arg_col = |a: &[Token]| a.first().map(|t| t.col).unwrap_or(eol);
        match d.as_str() {
            ".text" | ".data" | ".rodata" | ".bss" => {
                argc(0..=0)?;
                st.section = section_index(&d).unwrap_or(TEXT);
            }
            ".section" => {
                let Some(Token {
                    tok: Tok::Ident(name),
                    col: c,
                }) = rest.first()
                else {
                    return Err((
                        col,
                        AsmErrorKind::Syntax("`.section` needs a section name".into()),
                    ));
                };
                st.section = section_index(name).ok_or((
                    *c,
                    AsmErrorKind::Section(format!(
                        "unknown section `{name}` (use .text, .data, .rodata or .bss)"
                    )),
                ))?;
            }
            ".byte" | ".half" | ".short" | ".word" | ".2byte" | ".hword" => {
                argc(1..=usize::MAX)?;
                let width = if d == ".byte" { 1 } else { 2 };
                for a in &args {
                    let expr = p(a)?;
                    let directive = data_directive(&d);
                    self.push(
                        st,
                        ItemKind::Data {
                            width,
                            expr,
                            directive,
                        },
                        at(arg_col(a)),
                    )?;
                }
            }
            ".ascii" | ".string" | ".asciz" => {
                argc(1..=usize::MAX)?;
                for a in &args {
                    let [Token {
                        tok: Tok::Str(s), ..
                    }] = a.as_slice()
                    else {
                        return Err((
                            arg_col(a),
                            AsmErrorKind::Syntax(format!("`{word}` takes string literals")),
                        ));
                    };
                    let mut b = s.clone();
                    if d != ".ascii" {
                        b.push(0);
                    }
                    self.push(st, ItemKind::Bytes(b), at(arg_col(a)))?;
                }
            }
            ".space" | ".zero" | ".skip" => {
                argc(1..=2)?;
                let n = constant(&p(&args[0])?, arg_col(&args[0]), &self.defs)?;
                if !(0..=65536).contains(&n) {
                    return Err((
                        arg_col(&args[0]),
                        AsmErrorKind::Syntax(format!("`{word}` size {n} not in 0..=65536")),
                    ));
                }
                let fill = match args.get(1) {
                    Some(a) => fill_byte(constant(&p(a)?, arg_col(a), &self.defs)?, arg_col(a))?,
                    None => 0,
                };
                // Before allocating: a run of `.space` lines must not grow past the memory.
                self.check_room(st, n as usize, arg_col(&args[0]))?;
                self.push(st, ItemKind::Bytes(vec![fill; n as usize]), pos)?;
            }
            ".align" | ".p2align" | ".balign" => {
                argc(1..=2)?;
                let n = constant(&p(&args[0])?, arg_col(&args[0]), &self.defs)?;
                let align = if d == ".balign" {
                    if !(1..=1024).contains(&n) || (n & (n - 1)) != 0 {
                        return Err((
                            arg_col(&args[0]),
                            AsmErrorKind::Syntax(format!(
                                ".balign {n}: must be a power of two up to 1024"
                            )),
                        ));
                    }
                    n as u32
                } else {
                    if !(0..=10).contains(&n) {
                        return Err((
                            arg_col(&args[0]),
                            AsmErrorKind::Syntax(format!("`{word} {n}`: exponent must be 0..=10")),
                        ));
                    }
                    1u32 << n
                };
                let fill = match args.get(1) {
                    Some(a) => fill_byte(constant(&p(a)?, arg_col(a), &self.defs)?, arg_col(a))?,
                    None => 0,
                };
                self.push(st, ItemKind::Align { align, fill }, pos)?;
            }
            ".globl" | ".global" => {
                argc(1..=usize::MAX)?;
                for a in &args {
                    let [Token {
                        tok: Tok::Ident(name),
                        ..
                    }] = a.as_slice()
                    else {
                        return Err((
                            arg_col(a),
                            AsmErrorKind::Syntax("`.globl` takes symbol names".into()),
                        ));
                    };
                    if !self.globals.contains(name) {
                        self.globals.push(name.clone());
                    }
                }
            }
            ".equ" | ".set" => {
                argc(2..=2)?;
                let [Token {
                    tok: Tok::Ident(name),
                    col: c,
                }] = args[0].as_slice()
                else {
                    return Err((
                        arg_col(&args[0]),
                        AsmErrorKind::Syntax(format!("`{word}` needs a symbol name first")),
                    ));
                };
                let v = constant(&p(&args[1])?, arg_col(&args[1]), &self.defs)?;
                self.define(name, Def::Abs(v), at(*c))?;
            }
            ".option" => {
                argc(1..=1)?;
                match rest.first().map(|t| &t.tok) {
                    Some(Tok::Ident(o)) if o == "compress" => st.compress = true,
                    Some(Tok::Ident(o)) if o == "nocompress" => st.compress = false,
                    _ => {
                        return Err((
                            arg_col(rest),
                            AsmErrorKind::Syntax(
                                "`.option` takes `compress` or `nocompress`".into(),
                            ),
                        ))
                    }
                }
            }
            // Accepted for compatibility with compiler output; they carry no meaning here.
            ".type" | ".size" | ".file" | ".ident" | ".local" | ".addrsig" | ".addrsig_sym" => {}
            _ if d.starts_with(".cfi_") => {}
            _ => return Err((col, AsmErrorKind::UnknownDirective(word.to_string()))),
        }
        Ok(())
    }
}

struct FileState {
    section: usize,
    compress: bool,
}

fn section_index(name: &str) -> Option<usize> {
    let n = name.to_ascii_lowercase();
    let base = |p: &str| n == p || n.starts_with(&format!("{p}."));
    if base(".text") {
        Some(TEXT)
    } else if base(".data") || base(".sdata") {
        Some(DATA)
    } else if base(".rodata") || base(".srodata") {
        Some(RODATA)
    } else if base(".bss") || base(".sbss") {
        Some(BSS)
    } else {
        None
    }
}

fn fill_byte(v: i64, col: u32) -> LResult<u8> {
    if (-128..=255).contains(&v) {
        Ok(v as u8)
    } else {
        Err((
            col,
            AsmErrorKind::Syntax(format!("fill value {v} does not fit in a byte")),
        ))
    }
}

/// Splits tokens at top-level commas.
fn split_commas(toks: &[Token]) -> Vec<Vec<Token>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0i32;
    for t in toks {
        match t.tok {
            Tok::LParen => depth += 1,
            Tok::RParen => depth -= 1,
            Tok::Comma if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(t.clone());
        }
    }
    out
}

/// Parses instruction operands: registers, `expr(reg)` memory operands, expressions.
/// Returns each operand with its starting column.
fn parse_operands(toks: &[Token], eol: u32) -> LResult<Vec<(Operand, u32)>> {
    if toks.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for part in split_commas(toks) {
        let Some(first) = part.first() else {
            return Err((eol, AsmErrorKind::Syntax("empty operand".into())));
        };
        let col = first.col;
        if let [Token {
            tok: Tok::Ident(name),
            ..
        }] = part.as_slice()
        {
            if let Some(r) = Reg::parse(name) {
                out.push((Operand::Reg(r), col));
                continue;
            }
        }
        // `expr(reg)` or `(reg)`: the last three tokens are `( ident )` and the `(` is not the
        // argument list of hi/lo.
        let n = part.len();
        if let [.., Token {
            tok: Tok::LParen,
            col: pcol,
        }, Token {
            tok: Tok::Ident(rname),
            col: rcol,
        }, Token {
            tok: Tok::RParen, ..
        }] = part.as_slice()
        {
            let hi_lo_call =
                n >= 4 && matches!(&part[n - 4].tok, Tok::Ident(f) if f == "hi" || f == "lo");
            if !hi_lo_call {
                let base =
                    Reg::parse(rname).ok_or((*rcol, AsmErrorKind::BadRegister(rname.clone())))?;
                let off = if n == 3 {
                    Expr::Num(0)
                } else {
                    full_expr(&part[..n - 3], *pcol)?
                };
                out.push((Operand::Mem(off, base), col));
                continue;
            }
        }
        out.push((Operand::Expr(full_expr(&part, eol)?), col));
    }
    Ok(out)
}

fn full_expr(toks: &[Token], eol: u32) -> LResult<Expr> {
    let mut ep = ExprParser::new(toks, eol)?;
    let e = ep.expr()?;
    if let Some(t) = toks.get(ep.i) {
        return Err((
            t.col,
            AsmErrorKind::Syntax(format!("unexpected {} in operand", describe(&t.tok))),
        ));
    }
    Ok(e)
}

/// The data directive `d` (lower-cased) as a static name, for messages.
fn data_directive(d: &str) -> &'static str {
    match d {
        ".byte" => ".byte",
        ".short" => ".short",
        ".word" => ".word",
        ".2byte" => ".2byte",
        ".hword" => ".hword",
        _ => ".half",
    }
}
