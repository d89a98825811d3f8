//! Machine-IR clean-ups before register allocation: dead-code elimination and hoisting of loop
//! constants (CAHPv3 has no zero register and compares only registers, so loops otherwise reload
//! their constants every iteration).

use std::collections::{HashMap, HashSet};

use crate::mir::{MFunc, MInst, Off, Reg, FIRST_VREG};

/// Removes side-effect-free instructions whose virtual results are never read.
pub fn dce(f: &mut MFunc) {
    loop {
        let used: HashSet<u32> = f
            .blocks
            .iter()
            .flat_map(|b| {
                b.insts
                    .iter()
                    .flat_map(|i| i.uses().into_iter().map(|u| u.0))
            })
            .collect();
        let mut changed = false;
        for b in &mut f.blocks {
            b.insts.retain(|i| {
                let pure = matches!(
                    i,
                    MInst::Li { .. }
                        | MInst::Mov { .. }
                        | MInst::Alu { .. }
                        | MInst::AluI { .. }
                        | MInst::Load { .. }
                        | MInst::SetCc { .. }
                        | MInst::Select { .. }
                );
                let dead = pure
                    && i.defs()
                        .iter()
                        .all(|(d, _)| *d >= FIRST_VREG && !used.contains(d));
                if dead {
                    changed = true;
                }
                !dead
            });
        }
        if !changed {
            return;
        }
    }
}

/// Blocks that lie on a cycle of the control-flow graph.
fn loop_blocks(f: &MFunc) -> Vec<bool> {
    let n = f.blocks.len();
    let succs: Vec<Vec<usize>> = f.blocks.iter().map(|b| b.succs()).collect();
    (0..n)
        .map(|b| {
            let mut seen = vec![false; n];
            let mut stack: Vec<usize> = succs[b].clone();
            while let Some(x) = stack.pop() {
                if x == b {
                    return true;
                }
                if x < n && !seen[x] {
                    seen[x] = true;
                    stack.extend(succs[x].iter().copied());
                }
            }
            false
        })
        .collect()
}

/// Constants materialised inside loops (by single-definition `li`s), most frequent first.
pub fn loop_constants(f: &MFunc) -> Vec<Off> {
    let in_loop = loop_blocks(f);
    let mut defs: HashMap<Reg, usize> = HashMap::new();
    for b in &f.blocks {
        for i in &b.insts {
            for (d, _) in i.defs() {
                *defs.entry(d).or_default() += 1;
            }
        }
    }
    let mut count: Vec<(Off, usize)> = Vec::new();
    for (bi, b) in f.blocks.iter().enumerate() {
        if !in_loop[bi] {
            continue;
        }
        for i in &b.insts {
            if let MInst::Li { rd, v } = i {
                if v.fi.is_none() && defs.get(rd) == Some(&1) {
                    match count.iter_mut().find(|(o, _)| o == v) {
                        Some(e) => e.1 += 1,
                        None => count.push((v.clone(), 1)),
                    }
                }
            }
        }
    }
    count.sort_by_key(|c| std::cmp::Reverse(c.1));
    count.into_iter().map(|(o, _)| o).collect()
}

/// Materialises each constant of `consts` once in the entry block and lets the loops use it.
pub fn hoist_constants(f: &mut MFunc, consts: &[Off]) {
    if consts.is_empty() {
        return;
    }
    let in_loop = loop_blocks(f);
    let mut defs: HashMap<Reg, usize> = HashMap::new();
    for b in &f.blocks {
        for i in &b.insts {
            for (d, _) in i.defs() {
                *defs.entry(d).or_default() += 1;
            }
        }
    }
    let regs: Vec<Reg> = consts.iter().map(|_| f.vreg()).collect();
    let mut rename: HashMap<Reg, Reg> = HashMap::new();
    for (bi, b) in f.blocks.iter_mut().enumerate() {
        if !in_loop[bi] {
            continue;
        }
        b.insts.retain(|i| {
            if let MInst::Li { rd, v } = i {
                if let Some(k) = consts.iter().position(|c| c == v) {
                    if defs.get(rd) == Some(&1) {
                        rename.insert(*rd, regs[k]);
                        return false;
                    }
                }
            }
            true
        });
    }
    for b in &mut f.blocks {
        for i in &mut b.insts {
            i.map_regs(|r| rename.get(&r).copied().unwrap_or(r));
        }
    }
    if let Some(entry) = f.blocks.first_mut() {
        for (k, c) in consts.iter().enumerate() {
            entry.insts.insert(
                0,
                MInst::Li {
                    rd: regs[k],
                    v: c.clone(),
                },
            );
        }
    }
}
