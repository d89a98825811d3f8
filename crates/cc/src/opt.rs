//! Machine-IR clean-ups before register allocation: dead-code elimination.

use std::collections::HashSet;

use crate::mir::{MFunc, MInst, FIRST_VREG};

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
