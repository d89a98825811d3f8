//! Instruction selection of a whole function: parameters, control flow, calls and intrinsics, and
//! the placement of phi copies on edges.

use crate::error::{unsupported, Result};
use crate::ir::{Arg, Const, Function, Module, Op, Operand, Type, Value};
use crate::isel::{analyse, pieces, Addr, Ctx, Val};
use crate::mir::{Callee, Cond, FrameObj, MBlock, MFunc, MInst, Off, Reg, Width, A0, ARG_REGS};
use std::collections::BTreeSet;

/// Lowers `func` to machine IR; also returns the functions it calls. `data_end` bounds the
/// program's static data addresses (globals beyond 10-bit reach are addressed with `li`).
pub fn select_function(
    m: &Module,
    func: &Function,
    data_end: u64,
) -> Result<(MFunc, BTreeSet<String>)> {
    let mut cx = Ctx::new(m, func);
    cx.data_end = data_end;
    analyse(&mut cx, func);
    cx.cur = 0;
    // Parameters: the first six 16-bit pieces in a0..a5, the rest in the caller's outgoing area.
    let mut piece = 0usize;
    let mut entry = Vec::new();
    for p in &func.params {
        let n = pieces(m, &p.ty, func.line)?;
        let mut regs = Vec::new();
        for _ in 0..n {
            let rd = cx.vreg();
            if piece < ARG_REGS.len() {
                entry.push(MInst::Mov {
                    rd,
                    rs: ARG_REGS[piece],
                });
            } else {
                let k = (piece - ARG_REGS.len()) as u32;
                cx.f.frame.push(FrameObj {
                    size: 2,
                    align: 2,
                    incoming: Some(k),
                });
                let fi = cx.f.frame.len() - 1;
                entry.push(MInst::Load {
                    w: Width::Word,
                    rd,
                    base: crate::mir::SP,
                    off: Off {
                        fi: Some(fi),
                        ..Off::default()
                    },
                });
            }
            piece += 1;
            regs.push(rd);
        }
        if regs.is_empty() {
            continue;
        }
        cx.vals.insert(p.name.clone(), Ctx::val_of(regs));
    }
    cx.va_words = piece.saturating_sub(ARG_REGS.len()) as u32;
    cx.f.blocks[0].insts = entry;
    // Phis get their registers up front: incoming values are copied into them on the edges.
    for b in &func.blocks {
        for i in &b.insts {
            if let (Op::Phi(ty, _), Some(r)) = (&i.op, &i.result) {
                let n = pieces(m, ty, i.line)?.max(1);
                let regs: Vec<Reg> = (0..n).map(|_| cx.vreg()).collect();
                cx.vals.insert(r.clone(), Ctx::val_of(regs));
            }
        }
    }
    // Blocks are selected in reverse postorder of the control-flow graph, not in text order: a
    // value is then always selected before its uses (its definition dominates them), whatever
    // order clang printed the blocks in (a rotated loop's body may follow its exit block).
    // Unreachable blocks are not selected at all (they may use values no path defines).
    let order = reverse_postorder(&cx, func)?;
    let mut reachable = vec![false; func.blocks.len()];
    for &bi in &order {
        reachable[bi] = true;
    }
    for &bi in &order {
        cx.cur = bi;
        for i in &func.blocks[bi].insts {
            cx.line = i.line;
            lower_inst(&mut cx, &i.op, i.result.as_deref(), bi)?;
        }
    }
    // Unreachable predecessors contribute no phi copies (their blocks are never selected).
    cx.phi_copies
        .retain(|c| reachable.get(c.0).copied().unwrap_or(false));
    cx.f.edge_from = cx.f.blocks.len();
    place_phi_copies(&mut cx, func)?;
    let called = std::mem::take(&mut cx.called);
    Ok((cx.f, called))
}

/// The blocks reachable from the entry, in reverse postorder (every block after its dominators).
pub(crate) fn reverse_postorder(cx: &Ctx, func: &Function) -> Result<Vec<usize>> {
    let n = func.blocks.len();
    let mut succs: Vec<Vec<usize>> = Vec::with_capacity(n);
    for b in &func.blocks {
        let mut v = Vec::new();
        if let Some(t) = b.insts.last() {
            match &t.op {
                Op::Br(l) => v.push(cx.block(l)?),
                Op::CondBr(_, l1, l2) => {
                    v.push(cx.block(l1)?);
                    v.push(cx.block(l2)?);
                }
                Op::Switch(_, d, cases) => {
                    v.push(cx.block(d)?);
                    for (_, l) in cases {
                        v.push(cx.block(l)?);
                    }
                }
                _ => {}
            }
        }
        succs.push(v);
    }
    let mut post = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    if n == 0 {
        return Ok(post);
    }
    // Iterative depth-first search: (block, next successor to visit).
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some(top) = stack.last_mut() {
        let (b, k) = *top;
        if let Some(&s) = succs[b].get(k) {
            top.1 += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    Ok(post)
}

fn lower_inst(cx: &mut Ctx, op: &Op, result: Option<&str>, bi: usize) -> Result<()> {
    let v = match op {
        Op::Bin(k, a, b) => Some(cx.binop(*k, a, b)?),
        Op::Icmp(p, a, b) => match result {
            Some(r) if cx.fused.contains_key(r) => None,
            _ => Some(cx.icmp_value(*p, a, b)?),
        },
        Op::Select(c, a, b) => Some(cx.select(c, a, b)?),
        Op::Phi(_, inc) => {
            let dst = result.and_then(|r| cx.vals.get(r).cloned());
            if let Some(dst) = dst {
                for (val, pred) in inc {
                    let p = cx.block(pred)?;
                    let ty = match op {
                        Op::Phi(t, _) => t.clone(),
                        _ => Type::Int(16),
                    };
                    cx.phi_copies.push((p, bi, dst.clone(), val.clone(), ty));
                }
            }
            None
        }
        Op::Load(ty, p, align) => {
            let signed = result.is_some_and(|r| cx.signed_loads.contains(r));
            Some(cx.load(ty, p, *align, signed)?)
        }
        Op::Store(v, p, align) => {
            cx.store(v, p, *align)?;
            None
        }
        Op::Gep(ty, base, idx) => {
            let a = cx.gep(ty, base, idx)?;
            Some(keep_or_materialize(cx, result, a))
        }
        Op::Cast(k, v, to) => {
            let val = cx.cast(*k, v, to)?;
            Some(match val {
                Val::A(a) => keep_or_materialize(cx, result, a),
                other => other,
            })
        }
        Op::Alloca(ty, n) => {
            let size = cx.m.size_of(ty).unwrap_or(0).saturating_mul(*n);
            let align = cx.m.align_of(ty).unwrap_or(2);
            let Ok(size) = u32::try_from(size) else {
                return unsupported(cx.line, "alloca larger than memory");
            };
            // Objects of two bytes or more get a 2-aligned slot even when their type needs only 1,
            // so word accesses that clang merges into them (memset/memcpy) can be proven even.
            let align = if size >= 2 { align.max(2) } else { align };
            let fi = cx.frame_obj(size.max(1), align as u32);
            let a = cx.frame_addr(fi);
            Some(keep_or_materialize(cx, result, a))
        }
        Op::VaArg(list, ty) => {
            let la = cx.addr(list)?;
            let (lb, lo) = cx.mem(&la, 0);
            let p = cx.vreg();
            cx.emit(MInst::Load {
                w: Width::Word,
                rd: p,
                base: lb,
                off: lo.clone(),
            });
            let n = pieces(cx.m, ty, cx.line)?;
            let mut regs = Vec::new();
            for k in 0..n {
                let rd = cx.vreg();
                cx.emit(MInst::Load {
                    w: Width::Word,
                    rd,
                    base: p,
                    off: Off::imm(2 * k as i32),
                });
                regs.push(rd);
            }
            let next = cx.alui(crate::mir::Alu::Add, p, 2 * n as i32);
            cx.emit(MInst::Store {
                w: Width::Word,
                rs: next,
                base: lb,
                off: lo,
            });
            if regs.is_empty() {
                return unsupported(cx.line, "va_arg of this type");
            }
            Some(Ctx::val_of(regs))
        }
        Op::Call {
            ret,
            callee,
            args,
            varargs_fixed,
        } => lower_call(cx, ret, callee, args, *varargs_fixed)?,
        Op::Br(t) => {
            let target = cx.block(t)?;
            cx.emit(MInst::Jmp { target });
            None
        }
        Op::CondBr(c, t, f) => {
            let cond = cx.cond_of(c)?;
            let (t, f) = (cx.block(t)?, cx.block(f)?);
            cx.branch(cond, t);
            cx.emit(MInst::Jmp { target: f });
            None
        }
        Op::Switch(v, d, cases) => {
            let n = pieces(cx.m, &v.ty, cx.line)?;
            if n >= 2 {
                // 32 bits or more: a case matches when the OR of (word ^ case word) is zero.
                let ws = cx.words(v, n)?;
                let zero = cx.li(0);
                for (k, l) in cases {
                    let mut t: Option<Reg> = None;
                    for (j, w) in ws.iter().enumerate() {
                        let kw = cx.li((k >> (16 * j)) & 0xFFFF);
                        let x = cx.alu(crate::mir::Alu::Xor, *w, kw);
                        t = Some(match t {
                            None => x,
                            Some(acc) => cx.alu(crate::mir::Alu::Or, acc, x),
                        });
                    }
                    let t = t.unwrap_or(zero);
                    let target = cx.block(l)?;
                    cx.branch((Cond::Eq, t, zero), target);
                }
                let target = cx.block(d)?;
                cx.emit(MInst::Jmp { target });
                return Ok(());
            }
            let e = crate::isel::Ext::Zero;
            let r = cx.norm(v, e)?;
            let b = crate::isel::bits(cx.m, &v.ty);
            for (k, l) in cases {
                let kv = if b < 16 { k & ((1 << b) - 1) } else { *k };
                let kr = cx.li(kv);
                let target = cx.block(l)?;
                cx.branch((Cond::Eq, r, kr), target);
            }
            let target = cx.block(d)?;
            cx.emit(MInst::Jmp { target });
            None
        }
        Op::Ret(v) => {
            let mut uses = Vec::new();
            if let Some(v) = v {
                match pieces(cx.m, &v.ty, cx.line)? {
                    0 => {}
                    1 => {
                        let r = cx.reg(v)?;
                        cx.emit(MInst::Mov { rd: A0, rs: r });
                        uses = vec![A0];
                    }
                    n if n <= ARG_REGS.len() => {
                        let ws = cx.words(v, n)?;
                        for (k, w) in ws.into_iter().enumerate() {
                            cx.emit(MInst::Mov {
                                rd: A0 + k as Reg,
                                rs: w,
                            });
                            uses.push(A0 + k as Reg);
                        }
                    }
                    _ => return unsupported(cx.line, "a return value of more than six words"),
                }
            }
            cx.emit(MInst::Ret { uses });
            None
        }
        Op::Unreachable => {
            cx.emit(MInst::Ret { uses: vec![] });
            None
        }
    };
    let _ = bi;
    if let (Some(r), Some(v)) = (result, v) {
        cx.vals.insert(r.to_string(), v);
    }
    Ok(())
}

/// Pointer values used only as addresses stay symbolic; others get a register now.
fn keep_or_materialize(cx: &mut Ctx, result: Option<&str>, a: Addr) -> Val {
    match result {
        Some(r) if cx.addr_only.contains(r) => Val::A(a),
        _ => Val::R(cx.materialize(&a)),
    }
}

fn lower_call(
    cx: &mut Ctx,
    ret: &Type,
    callee: &Operand,
    args: &[Arg],
    varargs_fixed: Option<usize>,
) -> Result<Option<Val>> {
    let name = match &callee.val {
        Value::Const(Const::Addr(n, 0)) => Some(n.clone()),
        _ => None,
    };
    if let Some(n) = &name {
        if let Some(v) = crate::isel_intr::lower_intrinsic(cx, n, ret, args)? {
            return Ok(v);
        }
    }
    cx.f.has_calls = true;
    // Byval aggregates: the callee gets a pointer to a private copy in our frame.
    let mut regs: Vec<Reg> = Vec::new();
    let mut stack_from = usize::MAX;
    for (k, a) in args.iter().enumerate() {
        if varargs_fixed == Some(k) {
            stack_from = regs.len();
        }
        if let Some(t) = &a.byval {
            let size = cx.m.size_of(t).unwrap_or(0) as u32;
            let align = cx.m.align_of(t).unwrap_or(1) as u32;
            let fi = cx.frame_obj(size.max(1), align.max(2));
            let src = cx.addr(&a.op)?;
            let dst = cx.frame_addr(fi);
            cx.copy_inline(&dst, &src, size, align >= 2);
            regs.push(cx.materialize(&dst));
            continue;
        }
        match cx.val(&a.op)? {
            Val::P(lo, hi) => regs.extend([lo, hi]),
            Val::R(r) => regs.push(r),
            Val::A(ad) => regs.push(cx.materialize(&ad)),
            Val::W(ws) => regs.extend(ws),
        }
    }
    if varargs_fixed == Some(args.len()) {
        stack_from = regs.len();
    }
    let in_regs = regs.len().min(ARG_REGS.len()).min(stack_from);
    cx.pass_args(&regs, in_regs);
    let target = match name {
        Some(n) => {
            cx.called.insert(n.clone());
            Callee::Sym(n)
        }
        None => Callee::Reg(cx.reg(callee)?),
    };
    cx.emit(MInst::Call {
        callee: target,
        uses: ARG_REGS[..in_regs].to_vec(),
    });
    let n = pieces(cx.m, ret, cx.line)?;
    if n > ARG_REGS.len() {
        return unsupported(cx.line, "a return value of more than six words");
    }
    let mut out = Vec::new();
    for k in 0..n {
        let rd = cx.vreg();
        cx.emit(MInst::Mov {
            rd,
            rs: A0 + k as Reg,
        });
        out.push(rd);
    }
    Ok(if out.is_empty() {
        None
    } else {
        Some(Ctx::val_of(out))
    })
}

/// Inserts the parallel copies of phis at the end of predecessors, splitting critical edges.
fn place_phi_copies(cx: &mut Ctx, func: &Function) -> Result<()> {
    let _ = func;
    let copies = std::mem::take(&mut cx.phi_copies);
    // Group by edge.
    let mut edges: Vec<(usize, usize)> = copies.iter().map(|c| (c.0, c.1)).collect();
    edges.sort_unstable();
    edges.dedup();
    for (pred, succ) in edges {
        let succs = cx.f.blocks[pred].succs();
        let at_end = succs.len() == 1
            && !cx.f.blocks[pred]
                .insts
                .iter()
                .any(|i| matches!(i, MInst::Br { .. }));
        let block = if at_end {
            pred
        } else {
            cx.f.blocks.push(MBlock {
                insts: vec![MInst::Jmp { target: succ }],
            });
            let e = cx.f.blocks.len() - 1;
            for i in &mut cx.f.blocks[pred].insts {
                match i {
                    MInst::Br { target, .. } | MInst::Jmp { target } if *target == succ => {
                        *target = e
                    }
                    _ => {}
                }
            }
            e
        };
        // Values into fresh temporaries first is not needed: copies are sequentialised below.
        cx.cur = block;
        let saved = std::mem::take(&mut cx.f.blocks[block].insts);
        let split = saved
            .iter()
            .position(|i| matches!(i, MInst::Br { .. } | MInst::Jmp { .. } | MInst::Ret { .. }))
            .unwrap_or(saved.len());
        cx.f.blocks[block].insts = saved[..split].to_vec();
        let mut moves: Vec<(Reg, Reg)> = Vec::new();
        let mut consts: Vec<(Reg, MInst)> = Vec::new();
        for (_, _, dst, val, ty) in copies.iter().filter(|c| c.0 == pred && c.1 == succ) {
            if matches!(val, Value::Const(Const::Undef)) {
                continue;
            }
            let src_is_const = matches!(val, Value::Const(_));
            let op = Operand {
                ty: ty.clone(),
                val: val.clone(),
            };
            let dsts: Vec<Reg> = match dst {
                Val::R(r) => vec![*r],
                Val::P(l, h) => vec![*l, *h],
                Val::W(ws) => ws.clone(),
                Val::A(_) => continue,
            };
            if src_is_const || matches!(cx.val(&op)?, Val::A(_)) {
                // Constants and addresses are written straight into the phi registers, after the
                // moves (which may still read the old values).
                let words: Vec<Off> = match val {
                    Value::Const(Const::Int(v)) => (0..dsts.len())
                        .map(|k| Off::imm(((*v >> (16 * k)) & 0xFFFF) as u16 as i16 as i32))
                        .collect(),
                    Value::Const(Const::Null | Const::Zero) => vec![Off::imm(0); dsts.len()],
                    _ => match cx.val(&op)? {
                        Val::A(a) if a.reg.is_none() && a.fi.is_none() => {
                            let mut v = vec![Off {
                                imm: a.imm,
                                sym: a.sym.clone(),
                                fi: None,
                            }];
                            v.resize(dsts.len(), Off::imm(0));
                            v
                        }
                        _ => {
                            let r = cx.reg(&op)?;
                            for (k, d) in dsts.iter().enumerate() {
                                if k == 0 {
                                    consts.push((*d, MInst::Mov { rd: *d, rs: r }));
                                } else {
                                    consts.push((
                                        *d,
                                        MInst::Li {
                                            rd: *d,
                                            v: Off::imm(0),
                                        },
                                    ));
                                }
                            }
                            continue;
                        }
                    },
                };
                for (d, w) in dsts.iter().zip(words) {
                    consts.push((*d, MInst::Li { rd: *d, v: w }));
                }
            } else {
                let srcs: Vec<Reg> = match cx.val(&op)? {
                    Val::R(r) => vec![r],
                    Val::P(l, h) => vec![l, h],
                    Val::W(ws) => ws,
                    Val::A(_) => continue,
                };
                for (d, s) in dsts.iter().zip(srcs) {
                    if *d != s {
                        moves.push((*d, s));
                    }
                }
            }
        }
        sequentialize(cx, moves);
        for (_, i) in consts {
            cx.emit(i);
        }
        cx.f.blocks[block].insts.extend_from_slice(&saved[split..]);
    }
    Ok(())
}

/// Emits a parallel copy as a sequence of moves, breaking cycles with a temporary.
fn sequentialize(cx: &mut Ctx, mut moves: Vec<(Reg, Reg)>) {
    while !moves.is_empty() {
        let ready = moves
            .iter()
            .position(|(d, _)| !moves.iter().any(|(_, s)| s == d));
        match ready {
            Some(k) => {
                let (d, s) = moves.remove(k);
                cx.emit(MInst::Mov { rd: d, rs: s });
            }
            None => {
                let (d, _) = moves[0];
                let t = cx.vreg();
                cx.emit(MInst::Mov { rd: t, rs: d });
                for m in &mut moves {
                    if m.1 == d {
                        m.1 = t;
                    }
                }
            }
        }
    }
}
