//! Layout, relaxation and emission: assigns addresses, picks each instruction's form until
//! nothing changes, then writes ROM/RAM bytes and the symbol table.
//!
//! `.text` starts at ROM address 0. The RAM sections follow the cahp-rt linker script (§1.6):
//! `.data`, `.rodata`, `.bss` from RAM address 2 (address 0 stays unused so that NULL is never a
//! valid object), each section start aligned to 2.

use super::parse::{Def, Item, ItemKind, Program, BSS, DATA, RODATA, TEXT};
use super::select::{Form, InstItem};
use super::{AsmError, AsmErrorKind, AsmOptions, Pos};
use crate::image::{Image, Section, Symbol};
use crate::isa::imm_range;

struct State {
    /// Chosen form index per instruction item, per section.
    choice: [Vec<usize>; 4],
    /// Address of each item, plus the section end, per section.
    addr: [Vec<i64>; 4],
}

fn item_size(item: &Item, choice: usize, addr: i64) -> i64 {
    match &item.kind {
        ItemKind::Inst(i) => i.forms.get(choice).map(|f| f.size() as i64).unwrap_or(0),
        ItemKind::Bytes(b) => b.len() as i64,
        ItemKind::Data { width, .. } => i64::from(*width),
        ItemKind::Align { align, .. } => {
            let a = i64::from(*align);
            (a - addr.rem_euclid(a)) % a
        }
    }
}

fn lookup(prog: &Program, st: &State, name: &str) -> Option<i64> {
    match prog.defs.get(name)?.0 {
        Def::Abs(v) => Some(v),
        Def::Label { section, index } => st.addr[section].get(index).copied(),
    }
}

/// The value an instruction's operand has at address `pc` (before range checks).
fn operand_value(
    prog: &Program,
    st: &State,
    it: &InstItem,
    pc: i64,
) -> Result<i64, (u32, AsmErrorKind)> {
    let Some(e) = &it.expr else { return Ok(0) };
    let v = e
        .eval(&|s| lookup(prog, st, s), pc)
        .map_err(|(c, k)| (if c == 0 { it.expr_col } else { c }, k))?;
    if it.pcrel {
        return Ok(v - pc);
    }
    if it.wrap16 {
        if !(-32768..=65535).contains(&v) {
            return Err((
                it.expr_col,
                AsmErrorKind::ImmOutOfRange {
                    mnemonic: it.mnemonic.clone(),
                    value: v,
                    min: -32768,
                    max: 65535,
                    extra: "",
                },
            ));
        }
        return Ok(i64::from(v as u16 as i16));
    }
    Ok(v)
}

fn first_fit(it: &InstItem, from: usize, v: i64) -> Option<usize> {
    let symbolic = it.expr.as_ref().is_some_and(|e| e.is_symbolic());
    (from..it.forms.len()).find(|&k| !(symbolic && it.forms[k].const_only()) && it.forms[k].fits(v))
}

fn range_error(it: &InstItem, v: i64) -> AsmErrorKind {
    let last = it.forms.last();
    let op = match last {
        Some(Form::One { inst, .. }) => Some(inst.op),
        _ => None,
    };
    let (min, max, step) = op
        .and_then(imm_range)
        .map(|(a, b, s)| (i64::from(a), i64::from(b), s))
        .unwrap_or((-32768, 65535, 1));
    if it.pcrel {
        let what = if max > 511 { "jump" } else { "branch" };
        AsmErrorKind::BranchOutOfRange {
            what,
            mnemonic: it.mnemonic.clone(),
            offset: v,
            min,
            max,
        }
    } else {
        let extra = if step == 2 { ", even" } else { "" };
        AsmErrorKind::ImmOutOfRange {
            mnemonic: it.mnemonic.clone(),
            value: v,
            min,
            max,
            extra,
        }
    }
}

fn place(prog: &Program, st: &mut State) {
    let mut next_base = 2i64;
    for s in [TEXT, DATA, RODATA, BSS] {
        let mut a = if s == TEXT { 0 } else { next_base };
        let items = &prog.sections[s];
        st.addr[s].clear();
        for (k, item) in items.iter().enumerate() {
            st.addr[s].push(a);
            a += item_size(item, st.choice[s][k], a);
        }
        st.addr[s].push(a);
        if s != TEXT {
            next_base = (a + 1) & !1;
        }
    }
}

/// Lays the program out and produces the image.
pub(crate) fn link(prog: &Program, opts: &AsmOptions) -> Result<Image, AsmError> {
    let err = |p: Pos, c: u32, k: AsmErrorKind| prog.error(Pos { col: c.max(1), ..p }, k);
    // Undefined symbols first, at their first use, so the message points at the reference.
    for item in prog.sections.iter().flatten() {
        let e = match &item.kind {
            ItemKind::Inst(i) => i.expr.as_ref(),
            ItemKind::Data { expr, .. } => Some(expr),
            _ => None,
        };
        let mut missing = None;
        if let Some(e) = e {
            e.for_each_sym(&mut |s, c| {
                if missing.is_none() && !prog.defs.contains_key(s) {
                    missing = Some((s.to_string(), c));
                }
            });
        }
        if let Some((s, c)) = missing {
            return Err(err(item.pos, c, AsmErrorKind::UndefinedSymbol(s)));
        }
    }
    let mut st = State {
        choice: std::array::from_fn(|s| vec![0; prog.sections[s].len()]),
        addr: Default::default(),
    };
    // Relaxation: indices only grow and are bounded by the chain lengths, so this terminates;
    // the iteration cap is a guard against a logic error, reported rather than looped on.
    let mut converged = false;
    for _ in 0..10_000 {
        place(prog, &mut st);
        let mut changed = false;
        for (k, item) in prog.sections[TEXT].iter().enumerate() {
            let ItemKind::Inst(it) = &item.kind else {
                continue;
            };
            let v = operand_value(prog, &st, it, st.addr[TEXT][k])
                .map_err(|(c, kind)| err(item.pos, c, kind))?;
            let cur = st.choice[TEXT][k];
            if let Some(n) = first_fit(it, cur, v) {
                if n != cur {
                    st.choice[TEXT][k] = n;
                    changed = true;
                }
            }
        }
        if !changed {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(prog.error(
            Pos {
                file: prog.main_file,
                line: 0,
                col: 0,
            },
            AsmErrorKind::NoConvergence,
        ));
    }
    // Programs beyond the 16-bit address space are refused before anything is allocated (a huge
    // `.space`); the machine's own limits are checked after emission, so that a more specific
    // error (a branch out of range) is reported first.
    for (what, s_idx) in [("ROM", TEXT), ("RAM", BSS)] {
        let end = st.addr[s_idx].last().copied().unwrap_or(0) as usize;
        if end > 65536 {
            let k = AsmErrorKind::TooLarge {
                what,
                used: end,
                limit: 65536,
            };
            return Err(prog.error(
                Pos {
                    file: prog.main_file,
                    line: 0,
                    col: 0,
                },
                k,
            ));
        }
    }
    let mut rom = Vec::new();
    let mut ram = vec![0u8; 2];
    for s in [TEXT, DATA, RODATA, BSS] {
        let out = if s == TEXT { &mut rom } else { &mut ram };
        for (k, item) in prog.sections[s].iter().enumerate() {
            let a = st.addr[s][k];
            let size = (st.addr[s][k + 1] - a) as usize;
            out.resize(a as usize, 0);
            match &item.kind {
                ItemKind::Inst(it) => {
                    let v = operand_value(prog, &st, it, a)
                        .map_err(|(c, kind)| err(item.pos, c, kind))?;
                    let form = &it.forms[st.choice[s][k]];
                    if !form.fits(v) {
                        return Err(err(item.pos, it.expr_col, range_error(it, v)));
                    }
                    for inst in form.emit(v, a) {
                        let bytes = inst.to_bytes().map_err(|e| {
                            err(item.pos, it.expr_col, AsmErrorKind::Syntax(e.to_string()))
                        })?;
                        out.extend_from_slice(&bytes);
                    }
                }
                ItemKind::Bytes(b) => out.extend_from_slice(b),
                ItemKind::Data {
                    width,
                    expr,
                    directive,
                } => {
                    let v = expr
                        .eval(&|n| lookup(prog, &st, n), a)
                        .map_err(|(c, kind)| err(item.pos, c, kind))?;
                    let (min, max) = if *width == 1 {
                        (-128, 255)
                    } else {
                        (-32768, 65535)
                    };
                    if !(min..=max).contains(&v) {
                        let mnemonic = (*directive).to_string();
                        return Err(err(
                            item.pos,
                            item.pos.col,
                            AsmErrorKind::ImmOutOfRange {
                                mnemonic,
                                value: v,
                                min,
                                max,
                                extra: "",
                            },
                        ));
                    }
                    out.extend_from_slice(&(v as u16).to_le_bytes()[..usize::from(*width)]);
                }
                ItemKind::Align { fill, .. } => out.resize(out.len() + size, *fill),
            }
        }
        let end = st.addr[s].last().copied().unwrap_or(0) as usize;
        out.resize(end.max(out.len()), 0);
    }
    let whole = |k| {
        prog.error(
            Pos {
                file: prog.main_file,
                line: 0,
                col: 0,
            },
            k,
        )
    };
    if rom.len() > opts.rom_size {
        return Err(whole(AsmErrorKind::TooLarge {
            what: "ROM",
            used: rom.len(),
            limit: opts.rom_size,
        }));
    }
    if ram.len() > opts.ram_size.saturating_sub(2) {
        return Err(whole(AsmErrorKind::TooLarge {
            what: "RAM",
            used: ram.len(),
            limit: opts.ram_size.saturating_sub(2),
        }));
    }
    if ram.len() == 2 {
        ram.clear(); // no static data: the initial RAM is all zero
    }
    let mut symbols: Vec<Symbol> = prog
        .order
        .iter()
        .filter_map(|name| {
            let (def, _) = prog.defs.get(name)?;
            let (section, value) = match *def {
                Def::Abs(v) => (Section::Abs, v),
                Def::Label { section, .. } => (
                    if section == TEXT {
                        Section::Rom
                    } else {
                        Section::Ram
                    },
                    lookup(prog, &st, name)?,
                ),
            };
            Some(Symbol {
                name: name.clone(),
                section,
                value: value as u16,
                global: prog.globals.contains(name),
            })
        })
        .collect();
    symbols.sort_by_key(|s| {
        (
            s.section != Section::Rom,
            s.section == Section::Abs,
            s.value,
        )
    });
    // The machine it was linked for travels with the image (sizes no machine has are not recorded).
    let machine = crate::MemConfig {
        rom_size: opts.rom_size,
        ram_size: opts.ram_size,
    };
    Ok(Image {
        rom,
        ram,
        symbols,
        memory: machine.validate().is_ok().then_some(machine),
    })
}
