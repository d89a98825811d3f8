//! From allocated machine IR to assembly text: block layout and branch peepholes, frame layout
//! (prologue/epilogue), expansion of the pseudo-instructions, and the data sections.
//!
//! Mnemonics are the generic ones of the vsp-cahp assembler (`docs/isa.md`), which picks the
//! 16-bit forms (`add2`, `addi2`, `lsi`, `lwsp`, `mov`, …) whenever the operands allow; the passes
//! here arrange operands so that it can (two-address shapes, commuted operands, fall-through
//! branches).

use std::collections::HashSet;
use std::fmt::Write;

use crate::data::sym;
use crate::error::{CcError, Result};
use crate::mir::{reg_name as rn, Callee, MFunc, MInst, Off, Reg, Width, RA};

/// Retargets jumps to empty blocks, drops unreachable blocks and turns jumps to the next block
/// into fall-throughs (inverting a conditional branch when that saves the jump).
pub fn layout(f: &mut MFunc) {
    duplicate_tiny_tails(f);
    let n = f.blocks.len();
    // Thread jumps through blocks that only jump.
    let fwd: Vec<Option<usize>> = f
        .blocks
        .iter()
        .map(|b| match b.insts.as_slice() {
            [MInst::Jmp { target }] => Some(*target),
            _ => None,
        })
        .collect();
    let resolve = |mut t: usize| {
        for _ in 0..n {
            match fwd.get(t).copied().flatten() {
                Some(u) if u != t => t = u,
                _ => break,
            }
        }
        t
    };
    for b in &mut f.blocks {
        for i in &mut b.insts {
            if let MInst::Br { target, .. } | MInst::Jmp { target } = i {
                *target = resolve(*target);
            }
        }
    }
    // Reachability from the entry.
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if b >= n || seen[b] {
            continue;
        }
        seen[b] = true;
        stack.extend(f.blocks[b].succs());
    }
    // Source order, with each edge block just before the block it jumps to.
    let mut source: Vec<usize> = Vec::with_capacity(n);
    for b in 0..f.edge_from.min(n) {
        for e in f.edge_from..n {
            if matches!(f.blocks[e].insts.last(), Some(MInst::Jmp { target }) if *target == b) {
                source.push(e);
            }
        }
        source.push(b);
    }
    for e in f.edge_from..n {
        if !source.contains(&e) {
            source.push(e);
        }
    }
    // Traces: a block's jump target follows it when still free; a conditional branch whose
    // fall-through side is already placed pulls its taken side in (the branch is inverted below).
    let mut placed = vec![false; n];
    let mut order: Vec<usize> = Vec::new();
    let mut next: Option<usize> = Some(0);
    loop {
        let b = match next {
            Some(b) if b < n && seen[b] && !placed[b] => b,
            _ => match source.iter().copied().find(|b| seen[*b] && !placed[*b]) {
                Some(b) => b,
                None => break,
            },
        };
        placed[b] = true;
        order.push(b);
        next = match f.blocks[b].insts.as_slice() {
            [.., MInst::Br { target: t, .. }, MInst::Jmp { target: fl }]
                if placed[*fl] && !placed[*t] =>
            {
                Some(*t)
            }
            [.., MInst::Jmp { target }] if !placed[*target] => Some(*target),
            _ => None,
        };
    }
    let mut newid = vec![usize::MAX; n];
    for (k, b) in order.iter().enumerate() {
        newid[*b] = k;
    }
    let mut blocks: Vec<_> = order
        .iter()
        .map(|b| std::mem::take(&mut f.blocks[*b]))
        .collect();
    for b in &mut blocks {
        for i in &mut b.insts {
            if let MInst::Br { target, .. } | MInst::Jmp { target } = i {
                *target = newid[*target];
            }
        }
    }
    // Fall-throughs.
    let count = blocks.len();
    for (k, b) in blocks.iter_mut().enumerate() {
        let next = k + 1;
        loop {
            let len = b.insts.len();
            match b.insts.as_slice() {
                [.., MInst::Jmp { target }] if *target == next && next < count => {
                    b.insts.pop();
                }
                [.., MInst::Br {
                    cond,
                    a,
                    b: rb,
                    target: t,
                }, MInst::Jmp { target: fl }]
                    if *t == next =>
                {
                    let (c, x, y) = cond.negate(*a, *rb);
                    let fl = *fl;
                    b.insts.truncate(len - 2);
                    b.insts.push(MInst::Br {
                        cond: c,
                        a: x,
                        b: y,
                        target: fl,
                    });
                    break;
                }
                [.., MInst::Br { target: t, .. }, MInst::Jmp { target: fl }] if t == fl => {
                    b.insts.remove(len - 2);
                }
                _ => break,
            }
        }
        // A branch to the fall-through block is a no-op.
        while let Some(MInst::Br { target, .. }) = b.insts.last() {
            if *target == next {
                b.insts.pop();
            } else {
                break;
            }
        }
    }
    f.blocks = blocks;
}

/// Replaces a jump to a block that is just a compare-and-branch plus a jump (a loop header) by a
/// copy of that block: loops then test at the bottom and run one jump less per iteration, for
/// three bytes of code.
fn duplicate_tiny_tails(f: &mut MFunc) {
    for b in 0..f.blocks.len() {
        let Some(MInst::Jmp { target: h }) = f.blocks[b].insts.last().cloned() else {
            continue;
        };
        if h == b || h == 0 {
            continue;
        }
        let tail = f.blocks[h].insts.clone();
        let tiny = matches!(tail.as_slice(), [MInst::Br { target: t, .. }, MInst::Jmp { target: e }] if *t != h && *e != h);
        if tiny {
            let blk = &mut f.blocks[b].insts;
            blk.pop();
            blk.extend(tail);
        }
    }
}

/// Caller-saved registers a long jump may load its target into, in order of preference.
const JUMP_SCRATCH: [Reg; 8] = [14, 15, 13, 12, 11, 10, 9, 8];

/// For every block of an allocated, laid-out function: a register that is not live on entry to it
/// (a jump to the block may then load the block's address into it), if any. Candidates are the
/// caller-saved registers, then `more` (registers the epilogue restores or need not keep).
fn free_on_entry(f: &MFunc, more: &[Reg]) -> Vec<Option<Reg>> {
    let n = f.blocks.len();
    let bit = |r: Reg| 1u16 << (r & 15);
    let mut gen = vec![0u16; n];
    let mut kill = vec![0u16; n];
    let mut succs: Vec<Vec<usize>> = Vec::with_capacity(n);
    for (b, blk) in f.blocks.iter().enumerate() {
        for i in &blk.insts {
            for (u, _) in i.uses() {
                if u < 16 && kill[b] & bit(u) == 0 {
                    gen[b] |= bit(u);
                }
            }
            for (d, _) in i.defs() {
                if d < 16 {
                    kill[b] |= bit(d);
                }
            }
        }
        let mut s = blk.succs();
        if !matches!(
            blk.insts.last(),
            Some(MInst::Jmp { .. } | MInst::Ret { .. })
        ) && b + 1 < n
        {
            s.push(b + 1);
        }
        succs.push(s);
    }
    let mut live_in = vec![0u16; n];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let out = succs[b]
                .iter()
                .fold(0u16, |acc, s| acc | live_in.get(*s).copied().unwrap_or(0));
            let inn = gen[b] | (out & !kill[b]);
            if inn != live_in[b] {
                live_in[b] = inn;
                changed = true;
            }
        }
    }
    live_in
        .iter()
        .map(|l| {
            JUMP_SCRATCH
                .iter()
                .chain(more)
                .copied()
                .find(|r| l & bit(*r) == 0)
        })
        .collect()
}

/// Frame layout of an allocated function.
struct Frame {
    size: i32,
    obj_off: Vec<i32>,
    saves: Vec<(Reg, i32)>,
}

fn frame_layout(f: &MFunc, callee_saved: &[Reg]) -> Frame {
    let mut off = f.out_args as i32;
    let mut obj_off = vec![0; f.frame.len()];
    // Small objects (spill slots, scalars) first so they stay in reach of the 16-bit lwsp/swsp.
    let mut idx: Vec<usize> = (0..f.frame.len())
        .filter(|i| f.frame[*i].incoming.is_none())
        .collect();
    idx.sort_by_key(|i| f.frame[*i].size);
    for i in idx {
        let o = &f.frame[i];
        let a = o.align.max(1) as i32;
        off = (off + a - 1) / a * a;
        obj_off[i] = off;
        off += o.size as i32;
    }
    off = (off + 1) & !1;
    let mut saves = Vec::new();
    if f.has_calls {
        saves.push((RA, off));
        off += 2;
    }
    if !f.no_callee_saves {
        for r in callee_saved {
            saves.push((*r, off));
            off += 2;
        }
    }
    for (i, o) in f.frame.iter().enumerate() {
        if let Some(k) = o.incoming {
            obj_off[i] = off + 2 * k as i32;
        }
    }
    Frame {
        size: off,
        obj_off,
        saves,
    }
}

fn off_text(fr: &Frame, o: &Off) -> String {
    let imm = o.imm + o.fi.and_then(|i| fr.obj_off.get(i).copied()).unwrap_or(0);
    match &o.sym {
        Some(s) if imm > 0 => format!("{}+{imm}", sym(s)),
        Some(s) if imm < 0 => format!("{}-{}", sym(s), -imm),
        Some(s) => sym(s),
        None => imm.to_string(),
    }
}

/// Writes the assembly of one allocated function.
pub fn emit_function(f: &MFunc, callee_saved: &[Reg], out: &mut String) -> Result<()> {
    let fr = frame_layout(f, callee_saved);
    if fr.size > 511 {
        return Err(CcError::Program(format!(
            "stack frame of {} is {} bytes: too large for 512 B RAM",
            f.name, fr.size
        )));
    }
    let name = sym(&f.name);
    let label = |b: usize| format!(".L{name}_{b}");
    let mut tmp = 0usize;
    let w = |out: &mut String, s: String| {
        out.push_str("    ");
        out.push_str(&s);
        out.push('\n');
    };
    out.push_str("\n    .text\n");
    if f.global {
        let _ = writeln!(out, "    .globl {name}");
    }
    let _ = writeln!(out, "{name}:");
    if fr.size > 0 {
        w(out, format!("addi sp, sp, -{}", fr.size));
    }
    for (r, o) in &fr.saves {
        w(out, format!("sw {}, {}(sp)", rn(*r), o));
    }
    // Each jump and branch says which register is free at its target (`# t0`): the assembly step
    // uses it for the long form of a jump beyond reach (`li t0, target; jr t0`).
    // Besides the caller-saved registers: those the epilogue restores (`ra` when saved), or all
    // callee-saved ones in `main`, which need not keep them.
    let mut more: Vec<Reg> = fr.saves.iter().map(|(r, _)| *r).collect();
    if f.no_callee_saves {
        more.extend(crate::mir::CALLEE_SAVED);
    }
    let free = free_on_entry(f, &more);
    let hint = |t: usize| match free.get(t).copied().flatten() {
        Some(r) => format!(" # {}", rn(r)),
        None => String::new(),
    };
    let used_labels: HashSet<usize> = f
        .blocks
        .iter()
        .flat_map(|b| b.insts.iter().filter_map(MInst::targets))
        .collect();
    for (bi, b) in f.blocks.iter().enumerate() {
        if used_labels.contains(&bi) {
            let _ = writeln!(out, "{}:", label(bi));
        }
        for i in &b.insts {
            match i {
                MInst::Li { rd, v } => {
                    if v.fi.is_some() {
                        w(out, format!("addi {}, sp, {}", rn(*rd), off_text(&fr, v)));
                    } else {
                        w(out, format!("li {}, {}", rn(*rd), off_text(&fr, v)));
                    }
                }
                MInst::Mov { rd, rs } => {
                    if rd != rs {
                        w(out, format!("mov {}, {}", rn(*rd), rn(*rs)));
                    }
                }
                MInst::Alu { op, rd, rs1, rs2 } => {
                    let (a, b) = if rd == rs2 && op.commutes() {
                        (rs2, rs1)
                    } else {
                        (rs1, rs2)
                    };
                    w(
                        out,
                        format!("{} {}, {}, {}", op.name(), rn(*rd), rn(*a), rn(*b)),
                    );
                }
                MInst::AluI { op, rd, rs1, imm } => {
                    let t = off_text(&fr, imm);
                    if t == "0"
                        && matches!(
                            op,
                            crate::mir::Alu::Add | crate::mir::Alu::Or | crate::mir::Alu::Xor
                        )
                    {
                        if rd != rs1 {
                            w(out, format!("mov {}, {}", rn(*rd), rn(*rs1)));
                        }
                    } else {
                        w(
                            out,
                            format!("{}i {}, {}, {}", op.name(), rn(*rd), rn(*rs1), t),
                        );
                    }
                }
                MInst::Load {
                    w: wd,
                    rd,
                    base,
                    off,
                } => {
                    let m = match wd {
                        Width::Word => "lw",
                        Width::ByteS => "lb",
                        Width::ByteU => "lbu",
                    };
                    w(
                        out,
                        format!("{m} {}, {}({})", rn(*rd), off_text(&fr, off), rn(*base)),
                    );
                }
                MInst::Store {
                    w: wd,
                    rs,
                    base,
                    off,
                } => {
                    let m = if *wd == Width::Word { "sw" } else { "sb" };
                    w(
                        out,
                        format!("{m} {}, {}({})", rn(*rs), off_text(&fr, off), rn(*base)),
                    );
                }
                MInst::SetCc { cond, rd, a, b } => {
                    let l = format!(".L{name}_s{tmp}");
                    tmp += 1;
                    w(out, format!("li {}, 1", rn(*rd)));
                    w(
                        out,
                        format!("{} {}, {}, {l}", cond.branch(), rn(*a), rn(*b)),
                    );
                    w(out, format!("li {}, 0", rn(*rd)));
                    let _ = writeln!(out, "{l}:");
                }
                MInst::Select {
                    cond,
                    rd,
                    a,
                    b,
                    t,
                    f: fv,
                } => {
                    if t == fv {
                        if rd != t {
                            w(out, format!("mov {}, {}", rn(*rd), rn(*t)));
                        }
                        continue;
                    }
                    let l = format!(".L{name}_s{tmp}");
                    tmp += 1;
                    if rd != t {
                        w(out, format!("mov {}, {}", rn(*rd), rn(*t)));
                    }
                    w(
                        out,
                        format!("{} {}, {}, {l}", cond.branch(), rn(*a), rn(*b)),
                    );
                    w(out, format!("mov {}, {}", rn(*rd), rn(*fv)));
                    let _ = writeln!(out, "{l}:");
                }
                MInst::Call { callee, .. } => match callee {
                    Callee::Sym(s) => w(out, format!("call {}", sym(s))),
                    Callee::Reg(r) => w(out, format!("jalr {}", rn(*r))),
                },
                MInst::Br { cond, a, b, target } => {
                    w(
                        out,
                        format!(
                            "{} {}, {}, {}{}",
                            cond.branch(),
                            rn(*a),
                            rn(*b),
                            label(*target),
                            hint(*target)
                        ),
                    );
                }
                MInst::Jmp { target } => w(out, format!("j {}{}", label(*target), hint(*target))),
                MInst::Ret { .. } => {
                    for (r, o) in &fr.saves {
                        w(out, format!("lw {}, {}(sp)", rn(*r), o));
                    }
                    if fr.size > 0 {
                        w(out, format!("addi sp, sp, {}", fr.size));
                    }
                    w(out, "ret".to_string());
                }
            }
        }
    }
    Ok(())
}
