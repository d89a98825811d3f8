//! Register allocation: liveness, live intervals with holes, and a linear-scan assignment over
//! `x2..x15` with move hints (coalescing) and spill-everywhere retries.
//!
//! Positions: instruction `i` reads its operands at `2i` and writes its results at `2i+1`; "late"
//! uses are read at `2i+1` and "early" defs written at `2i`, which is how pseudo-instructions that
//! expand to several machine instructions keep their operands apart. A call writes every
//! caller-saved register, so intervals living across a call can only take callee-saved ones.

use std::collections::{HashMap, HashSet};

use crate::error::{CcError, Result};
use crate::mir::{FrameObj, MFunc, MInst, Off, Reg, Width, CALLEE_SAVED, FIRST_VREG, SP};

/// Allocation order: caller-saved first (free to use), then callee-saved (saved in the prologue).
const ORDER: [Reg; 14] = [8, 9, 10, 11, 12, 13, 14, 15, 3, 4, 5, 6, 7, 2];

type Segs = Vec<(u32, u32)>;

fn overlaps(a: &Segs, b: &Segs) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x.0 < y.1 && y.0 < x.1 {
            return true;
        }
        if x.1 <= y.1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

fn merge_into(dst: &mut Segs, src: &Segs) {
    dst.extend_from_slice(src);
    dst.sort_unstable();
    let mut out: Segs = Vec::with_capacity(dst.len());
    for s in dst.drain(..) {
        match out.last_mut() {
            Some(l) if s.0 <= l.1 => l.1 = l.1.max(s.1),
            _ => out.push(s),
        }
    }
    *dst = out;
}

/// Live intervals of every register of `f`.
fn intervals(f: &MFunc) -> Vec<Segs> {
    let nregs = f.next_vreg as usize;
    let words = nregs.div_ceil(64);
    let nb = f.blocks.len();
    let mut gen = vec![vec![0u64; words]; nb];
    let mut kill = vec![vec![0u64; words]; nb];
    let set = |v: &mut Vec<u64>, r: Reg| v[r as usize / 64] |= 1 << (r % 64);
    let get = |v: &Vec<u64>, r: usize| v[r / 64] >> (r % 64) & 1 == 1;
    for (b, blk) in f.blocks.iter().enumerate() {
        for i in &blk.insts {
            for (u, _) in i.uses() {
                if u != SP && !get(&kill[b], u as usize) {
                    set(&mut gen[b], u);
                }
            }
            for (d, _) in i.defs() {
                if d != SP {
                    set(&mut kill[b], d);
                }
            }
        }
    }
    let succs: Vec<Vec<usize>> = f.blocks.iter().map(|b| b.succs()).collect();
    let mut live_in = vec![vec![0u64; words]; nb];
    let mut live_out = vec![vec![0u64; words]; nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut out = vec![0u64; words];
            for s in &succs[b] {
                if let Some(li) = live_in.get(*s) {
                    for w in 0..words {
                        out[w] |= li[w];
                    }
                }
            }
            let mut inn = vec![0u64; words];
            for w in 0..words {
                inn[w] = gen[b][w] | (out[w] & !kill[b][w]);
            }
            if inn != live_in[b] || out != live_out[b] {
                live_in[b] = inn;
                live_out[b] = out;
                changed = true;
            }
        }
    }
    // Build segments backwards (Wimmer & Franz style).
    let mut segs: Vec<Segs> = vec![Vec::new(); nregs];
    let add = |segs: &mut Vec<Segs>, r: usize, from: u32, to: u32| {
        let s = &mut segs[r];
        match s.last_mut() {
            Some(l) if to >= l.0 => {
                l.0 = l.0.min(from);
                l.1 = l.1.max(to);
            }
            _ => s.push((from, to)),
        }
    };
    let mut starts = Vec::with_capacity(nb);
    let mut n = 0u32;
    for b in &f.blocks {
        starts.push(n);
        n += b.insts.len() as u32;
    }
    for b in (0..nb).rev() {
        let from = 2 * starts[b];
        let to = 2 * (starts[b] + f.blocks[b].insts.len() as u32);
        for r in 0..nregs {
            if get(&live_out[b], r) {
                add(&mut segs, r, from, to);
            }
        }
        for (k, i) in f.blocks[b].insts.iter().enumerate().rev() {
            let pos = 2 * (starts[b] + k as u32);
            for (d, early) in i.defs() {
                if d == SP {
                    continue;
                }
                let p = if early { pos } else { pos + 1 };
                let s = &mut segs[d as usize];
                match s.last_mut() {
                    Some(l) if l.0 <= p && p < l.1 => l.0 = p,
                    _ => s.push((p, p + 1)),
                }
            }
            for (u, late) in i.uses() {
                if u == SP {
                    continue;
                }
                let p = if late { pos + 1 } else { pos };
                add(&mut segs, u as usize, from, p + 1);
            }
        }
    }
    for s in &mut segs {
        s.reverse();
        let mut m = Vec::new();
        merge_into(&mut m, s);
        *s = m;
    }
    segs
}

/// Move-related registers, used as allocation hints.
fn hints(f: &MFunc) -> HashMap<Reg, Vec<Reg>> {
    let mut h: HashMap<Reg, Vec<Reg>> = HashMap::new();
    let mut link = |a: Reg, b: Reg| {
        h.entry(a).or_default().push(b);
        h.entry(b).or_default().push(a);
    };
    for b in &f.blocks {
        for i in &b.insts {
            match i {
                MInst::Mov { rd, rs } => link(*rd, *rs),
                MInst::Alu { op, rd, rs1, rs2 } => {
                    link(*rd, *rs1);
                    if op.commutes() {
                        link(*rd, *rs2);
                    }
                }
                MInst::AluI { rd, rs1, .. } if *rs1 != SP => link(*rd, *rs1),
                MInst::Select { rd, t, .. } => link(*rd, *t),
                _ => {}
            }
        }
    }
    h
}

/// Allocates registers in place; spills to new frame objects as needed.
pub fn allocate(f: &mut MFunc) -> Result<()> {
    let mut temps: HashSet<Reg> = HashSet::new();
    // One value is spilled per round; large functions (unrolled -O3 loops, 64-bit code) may need
    // many rounds.
    for _round in 0..1024 {
        let segs = intervals(f);
        let hint = hints(f);
        let mut occupied: Vec<Segs> = (0..16)
            .map(|r| segs.get(r).cloned().unwrap_or_default())
            .collect();
        let mut owners: Vec<Vec<Reg>> = vec![Vec::new(); 16];
        let mut order: Vec<Reg> = (FIRST_VREG..f.next_vreg)
            .filter(|r| !segs[*r as usize].is_empty())
            .collect();
        order.sort_by_key(|r| segs[*r as usize][0].0);
        let mut assign: HashMap<Reg, Reg> = HashMap::new();
        let mut spill: Option<Reg> = None;
        let wanted: HashSet<Reg> = hint
            .iter()
            .filter(|(v, _)| **v >= FIRST_VREG)
            .flat_map(|(_, hs)| hs.iter().copied().filter(|h| *h < FIRST_VREG))
            .collect();
        for v in order {
            let s = &segs[v as usize];
            let mut cands: Vec<Reg> = Vec::new();
            for h in hint.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
                let p = if *h < FIRST_VREG {
                    Some(*h)
                } else {
                    assign.get(h).copied()
                };
                if let Some(p) = p {
                    if ORDER.contains(&p) && !cands.contains(&p) {
                        cands.push(p);
                    }
                }
            }
            // Then registers nobody asked for, then those another value wants (e.g. a0 for the
            // value returned), so that the other value can still have it.
            cands.extend(ORDER.iter().copied().filter(|p| !wanted.contains(p)));
            cands.extend(ORDER.iter().copied().filter(|p| wanted.contains(p)));
            match cands
                .into_iter()
                .find(|p| !overlaps(&occupied[*p as usize], s))
            {
                Some(p) => {
                    merge_into(&mut occupied[p as usize], s);
                    owners[p as usize].push(v);
                    assign.insert(v, p);
                }
                None => {
                    let len = |r: Reg| segs[r as usize].iter().map(|x| x.1 - x.0).sum::<u32>();
                    let victim = if temps.contains(&v) {
                        ORDER
                            .iter()
                            .flat_map(|p| owners[*p as usize].iter().copied())
                            .filter(|o| !temps.contains(o) && overlaps(&segs[*o as usize], s))
                            .max_by_key(|o| len(*o))
                    } else {
                        Some(v)
                    };
                    match victim {
                        Some(x) => spill = Some(x),
                        None => {
                            return Err(CcError::Program(format!(
                                "register allocation failed in {}: too many values live at once",
                                f.name
                            )))
                        }
                    }
                    break;
                }
            }
        }
        match spill {
            None => {
                for b in &mut f.blocks {
                    for i in &mut b.insts {
                        i.map_regs(|r| {
                            if r < FIRST_VREG {
                                r
                            } else {
                                assign.get(&r).copied().unwrap_or(r)
                            }
                        });
                    }
                    b.insts
                        .retain(|i| !matches!(i, MInst::Mov { rd, rs } if rd == rs));
                }
                return Ok(());
            }
            Some(v) => spill_everywhere(f, v, &mut temps),
        }
    }
    Err(CcError::Program(format!(
        "register allocation did not converge in {}",
        f.name
    )))
}

/// Rewrites `v` to live in a stack slot: a reload before each use, a store after each def. A
/// value defined once by `li` is rematerialised instead: the `li` is repeated before each use.
fn spill_everywhere(f: &mut MFunc, v: Reg, temps: &mut HashSet<Reg>) {
    let defs: Vec<&MInst> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter(|i| i.defs().iter().any(|(d, _)| *d == v))
        .collect();
    if let [MInst::Li { v: value, .. }] = defs[..] {
        let value = value.clone();
        let mut next = f.next_vreg;
        for b in &mut f.blocks {
            let old = std::mem::take(&mut b.insts);
            for mut i in old {
                if matches!(&i, MInst::Li { rd, .. } if *rd == v) {
                    continue;
                }
                if i.uses().iter().any(|(u, _)| *u == v) {
                    let t = next;
                    next += 1;
                    temps.insert(t);
                    b.insts.push(MInst::Li {
                        rd: t,
                        v: value.clone(),
                    });
                    i.map_regs(|r| if r == v { t } else { r });
                }
                b.insts.push(i);
            }
        }
        f.next_vreg = next;
        return;
    }
    f.frame.push(FrameObj {
        size: 2,
        align: 2,
        incoming: None,
    });
    let fi = f.frame.len() - 1;
    let slot = Off {
        fi: Some(fi),
        ..Off::default()
    };
    let mut next = f.next_vreg;
    for b in &mut f.blocks {
        let old = std::mem::take(&mut b.insts);
        for mut i in old {
            let used = i.uses().iter().any(|(u, _)| *u == v);
            let defd = i.defs().iter().any(|(d, _)| *d == v);
            if !used && !defd {
                b.insts.push(i);
                continue;
            }
            let tu = next;
            let td = next + 1;
            next += 2;
            temps.insert(tu);
            temps.insert(td);
            if used {
                b.insts.push(MInst::Load {
                    w: Width::Word,
                    rd: tu,
                    base: SP,
                    off: slot.clone(),
                });
            }
            // Uses and defs get different temporaries (early defs must not share with uses).
            replace_def_use(&mut i, v, td, tu);
            b.insts.push(i);
            if defd {
                b.insts.push(MInst::Store {
                    w: Width::Word,
                    rs: td,
                    base: SP,
                    off: slot.clone(),
                });
            }
        }
    }
    f.next_vreg = next;
}

/// Replaces `v` by `td` where it is written and by `tu` where it is read.
fn replace_def_use(i: &mut MInst, v: Reg, td: Reg, tu: Reg) {
    let rd_slot = match i {
        MInst::Li { rd, .. }
        | MInst::Mov { rd, .. }
        | MInst::Alu { rd, .. }
        | MInst::AluI { rd, .. }
        | MInst::Load { rd, .. }
        | MInst::SetCc { rd, .. }
        | MInst::Select { rd, .. } => Some(rd),
        _ => None,
    };
    if let Some(rd) = rd_slot {
        if *rd == v {
            *rd = td;
        }
    }
    // Remaining occurrences are reads.
    let fix = |r: &mut Reg| {
        if *r == v {
            *r = tu;
        }
    };
    match i {
        MInst::Mov { rs, .. } => fix(rs),
        MInst::Alu { rs1, rs2, .. } => {
            fix(rs1);
            fix(rs2);
        }
        MInst::AluI { rs1, .. } => fix(rs1),
        MInst::Load { base, .. } => fix(base),
        MInst::Store { rs, base, .. } => {
            fix(rs);
            fix(base);
        }
        MInst::SetCc { a, b, .. } | MInst::Br { a, b, .. } => {
            fix(a);
            fix(b);
        }
        MInst::Select { a, b, t, f, .. } => {
            fix(a);
            fix(b);
            fix(t);
            fix(f);
        }
        MInst::Call { callee, uses } => {
            if let crate::mir::Callee::Reg(r) = callee {
                fix(r);
            }
            uses.iter_mut().for_each(fix);
        }
        MInst::Ret { uses } => uses.iter_mut().for_each(fix),
        MInst::Li { .. } | MInst::Jmp { .. } => {}
    }
}

/// Callee-saved registers the allocated function writes.
pub fn used_callee_saved(f: &MFunc) -> Vec<Reg> {
    let mut used: Vec<Reg> = Vec::new();
    for b in &f.blocks {
        for i in &b.insts {
            for (d, _) in i.defs() {
                if CALLEE_SAVED.contains(&d)
                    && !used.contains(&d)
                    && !matches!(i, MInst::Call { .. })
                {
                    used.push(d);
                }
            }
        }
    }
    used.sort_unstable();
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_overlap_respects_holes() {
        let a = vec![(0, 4), (10, 12)];
        assert!(!overlaps(&a, &vec![(4, 10)]));
        assert!(overlaps(&a, &vec![(3, 5)]));
        assert!(overlaps(&a, &vec![(11, 20)]));
        let mut m = vec![(0, 2)];
        merge_into(&mut m, &vec![(2, 5), (7, 8)]);
        assert_eq!(m, vec![(0, 5), (7, 8)]);
    }
}
