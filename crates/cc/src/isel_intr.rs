//! Instruction selection of intrinsics and of the library calls lowered inline (`llvm.memcpy`,
//! min/max, funnel shifts, `va_start`, …).

use crate::error::{unsupported, Result};
use crate::ir::{Arg, Const, Operand, Type, Value};
use crate::isel::{pieces, Addr, Ctx, Val};
use crate::mir::{Cond, FrameObj, MInst, Width};

/// Type of the first argument (the overloaded type of most intrinsics).
fn ret_ty(args: &[Arg]) -> Type {
    args.first()
        .map(|a| a.op.ty.clone())
        .unwrap_or(Type::Int(16))
}

fn const_len(o: &Operand) -> Option<u32> {
    match &o.val {
        Value::Const(Const::Int(v)) => u32::try_from(*v).ok(),
        _ => None,
    }
}

/// Intrinsics and library calls lowered inline; `Ok(None)` when `name` is an ordinary call.
pub(crate) fn lower_intrinsic(
    cx: &mut Ctx,
    name: &str,
    ret: &Type,
    args: &[Arg],
) -> Result<Option<Option<Val>>> {
    let base = name.split('.').take(2).collect::<Vec<_>>().join(".");
    let arg = |k: usize| args.get(k).map(|a| a.op.clone());
    Ok(Some(match base.as_str() {
        "llvm.lifetime" | "llvm.dbg" | "llvm.assume" | "llvm.va_end" | "llvm.experimental"
        | "llvm.donothing" | "llvm.sideeffect" | "llvm.invariant" => None,
        "llvm.va_start" => {
            let Some(list) = arg(0) else {
                return unsupported(cx.line, "va_start without a list");
            };
            cx.f.frame.push(FrameObj {
                size: 2,
                align: 2,
                incoming: Some(cx.va_words),
            });
            let fi = cx.f.frame.len() - 1;
            let p = cx.materialize(&Addr {
                fi: Some(fi),
                ..Addr::default()
            });
            let la = cx.addr(&list)?;
            let (b, o) = cx.mem(&la, 0);
            cx.emit(MInst::Store {
                w: Width::Word,
                rs: p,
                base: b,
                off: o,
            });
            None
        }
        "llvm.va_copy" => {
            let (Some(d), Some(s)) = (arg(0), arg(1)) else {
                return unsupported(cx.line, "va_copy");
            };
            let (da, sa) = (cx.addr(&d)?, cx.addr(&s)?);
            cx.copy_inline(&da, &sa, 2, true);
            None
        }
        "llvm.smax" | "llvm.smin" | "llvm.umax" | "llvm.umin" => {
            let (Some(a), Some(b)) = (arg(0), arg(1)) else {
                return unsupported(cx.line, name);
            };
            let p = match base.as_str() {
                "llvm.smax" => crate::ir::Pred::Sgt,
                "llvm.smin" => crate::ir::Pred::Slt,
                "llvm.umax" => crate::ir::Pred::Ugt,
                _ => crate::ir::Pred::Ult,
            };
            let n = pieces(cx.m, &a.ty, cx.line)?;
            if n >= 2 {
                // 32 and 64 bits: the compare's i1, then a select per word.
                let (cond, x, y) = cx.cmp(p, &a, &b)?;
                let t = cx.words(&a, n)?;
                let f = cx.words(&b, n)?;
                return Ok(Some(Some(Ctx::val_of(cx.select_words(
                    (cond, x, y),
                    &t,
                    &f,
                )))));
            }
            let (cond, x, y) = cx.cmp(p, &a, &b)?;
            // Selected values must have the compare's extension (i8 min/max).
            let e = crate::isel::pred_ext(p);
            let t = cx.norm(&a, e)?;
            let f = cx.norm(&b, e)?;
            let rd = cx.select_reg((cond, x, y), t, f);
            Some(Val::R(rd))
        }
        "llvm.fshl" | "llvm.fshr" => {
            let (Some(a), Some(b), Some(c)) = (arg(0), arg(1), arg(2)) else {
                return unsupported(cx.line, name);
            };
            Some(cx.funnel(base == "llvm.fshl", &a, &b, &c)?)
        }
        "llvm.abs" if pieces(cx.m, &ret_ty(args), cx.line)? > 2 => {
            let Some(a) = arg(0) else {
                return unsupported(cx.line, name);
            };
            let n = pieces(cx.m, &a.ty, cx.line)?;
            let w = cx.words(&a, n)?;
            let z = cx.li(0);
            let zeros = vec![z; n];
            let neg = cx.sub_words(&zeros, &w);
            let top = w[n - 1];
            Some(Val::W(cx.select_words((Cond::Lt, top, z), &neg, &w)))
        }
        "llvm.abs" if pieces(cx.m, &ret_ty(args), cx.line)? == 2 => {
            let Some(a) = arg(0) else {
                return unsupported(cx.line, name);
            };
            let (lo, hi) = cx.pair(&a)?;
            let z = cx.li(0);
            let nlo = cx.alu(crate::mir::Alu::Sub, z, lo);
            let borrow = cx.vreg();
            cx.emit(MInst::SetCc {
                cond: Cond::Ltu,
                rd: borrow,
                a: z,
                b: lo,
            });
            let nh = cx.alu(crate::mir::Alu::Sub, z, hi);
            let nhi = cx.alu(crate::mir::Alu::Sub, nh, borrow);
            let rl = cx.select_reg((Cond::Lt, hi, z), nlo, lo);
            let rh = cx.select_reg((Cond::Lt, hi, z), nhi, hi);
            Some(Val::P(rl, rh))
        }
        "llvm.abs" => {
            let Some(a) = arg(0) else {
                return unsupported(cx.line, name);
            };
            let x = cx.norm(&a, crate::isel::Ext::Sign)?;
            let z = cx.li(0);
            let neg = cx.alu(crate::mir::Alu::Sub, z, x);
            let rd = cx.select_reg((Cond::Lt, x, z), neg, x);
            Some(Val::R(rd))
        }
        "llvm.bitreverse" | "llvm.bswap" => {
            let Some(a) = arg(0) else {
                return unsupported(cx.line, name);
            };
            let w = crate::isel::bits(cx.m, &a.ty);
            let n = pieces(cx.m, &a.ty, cx.line)?;
            if !w.is_multiple_of(8) || w == 0 {
                return unsupported(cx.line, format!("{name} on {w}-bit values"));
            }
            let rev = base == "llvm.bitreverse";
            // Each 16-bit word reversed (bits or bytes), then the words in reverse order; an i8
            // is the upper byte of its reversed word.
            let words = cx.words(&a, n.max(1))?;
            let mut out: Vec<crate::mir::Reg> =
                words.iter().rev().map(|r| cx.reverse16(*r, rev)).collect();
            if w == 8 {
                out[0] = cx.alui(crate::mir::Alu::Lsr, out[0], 8);
            }
            Some(Ctx::val_of(out))
        }
        "llvm.usub" | "llvm.uadd" if name.contains(".sat.") => {
            let (Some(a), Some(b)) = (arg(0), arg(1)) else {
                return unsupported(cx.line, name);
            };
            let n = pieces(cx.m, &a.ty, cx.line)?;
            let w = crate::isel::bits(cx.m, &a.ty);
            if n == 0 {
                return unsupported(cx.line, format!("{name} on a value of no bits"));
            }
            let (x, y) = if n == 1 {
                let e = crate::isel::Ext::Zero;
                (vec![cx.norm(&a, e)?], vec![cx.norm(&b, e)?])
            } else {
                (cx.words(&a, n)?, cx.words(&b, n)?)
            };
            let sub = base == "llvm.usub";
            let r = if sub {
                cx.sub_words(&x, &y)
            } else {
                cx.add_words(&x, &y)
            };
            // usub.sat: x < y gives 0; uadd.sat: a wrapped sum (r < x) gives all ones.
            let over = if sub {
                cx.cmp_words(crate::ir::Pred::Ult, &x, &y)
            } else if n == 1 && w < 16 {
                // A narrow sum does not wrap in 16 bits: compare with the largest value.
                let m = cx.li((1i128 << w) - 1);
                cx.cmp_words(crate::ir::Pred::Ult, &[m], &r)
            } else {
                cx.cmp_words(crate::ir::Pred::Ult, &r, &x)
            };
            let z = cx.li(0);
            let sat_word = if sub {
                0
            } else if n == 1 && w < 16 {
                (1i128 << w) - 1
            } else {
                -1
            };
            let s = cx.li(sat_word);
            let sat = vec![s; r.len()];
            Some(Ctx::val_of(cx.select_words((Cond::Ne, over, z), &sat, &r)))
        }
        "llvm.ctpop" | "llvm.ctlz" | "llvm.cttz" => {
            let Some(a) = arg(0) else {
                return unsupported(cx.line, name);
            };
            let n = pieces(cx.m, &a.ty, cx.line)?;
            let w = crate::isel::bits(cx.m, &a.ty);
            if n == 0 {
                return unsupported(cx.line, format!("{name} on a value of no bits"));
            }
            if base != "llvm.ctpop" && w > 16 {
                return unsupported(cx.line, format!("{name} on {w}-bit values"));
            }
            let words = if n == 1 {
                vec![cx.norm(&a, crate::isel::Ext::Zero)?]
            } else {
                cx.words(&a, n)?
            };
            let r = match base.as_str() {
                "llvm.ctpop" => {
                    // The sum of the words' counts.
                    let mut acc: Option<crate::mir::Reg> = None;
                    for wd in words {
                        let c = cx.call_helper("__popcounthi2", &[wd], 1)[0];
                        acc = Some(match acc {
                            None => c,
                            Some(s) => cx.alu(crate::mir::Alu::Add, s, c),
                        });
                    }
                    acc.unwrap_or_else(|| cx.li(0))
                }
                "llvm.ctlz" => {
                    let c = cx.call_helper("__clzhi2", &[words[0]], 1)[0];
                    if w < 16 {
                        cx.alui(crate::mir::Alu::Add, c, w as i32 - 16)
                    } else {
                        c
                    }
                }
                _ => {
                    // A bit just above the width makes cttz(0) the width.
                    let x = if w < 16 {
                        cx.alui(crate::mir::Alu::Or, words[0], 1 << w)
                    } else {
                        words[0]
                    };
                    cx.call_helper("__ctzhi2", &[x], 1)[0]
                }
            };
            let mut out = vec![r];
            if n > 1 {
                let z = cx.li(0);
                out.resize(n, z);
            }
            Some(Ctx::val_of(out))
        }
        "llvm.memcpy" | "llvm.memmove" | "llvm.memset" | "memcpy" | "memset" | "memmove" => {
            let (Some(d), Some(s), Some(n)) = (arg(0), arg(1), arg(2)) else {
                return unsupported(cx.line, format!("{name} with missing arguments"));
            };
            let set = base.ends_with("memset");
            match const_len(&n) {
                Some(len) if len <= 8 && !set && !base.ends_with("memmove") => {
                    let (da, sa) = (cx.addr(&d)?, cx.addr(&s)?);
                    let aligned = cx.addr_even(&da, 0) && cx.addr_even(&sa, 0);
                    cx.copy_inline(&da, &sa, len, aligned);
                    if base.starts_with("llvm.") {
                        None
                    } else {
                        Some(Val::R(cx.materialize(&da)))
                    }
                }
                _ => {
                    let f = if set {
                        "memset"
                    } else if base.ends_with("memmove") {
                        "memmove"
                    } else {
                        "memcpy"
                    };
                    let dr = cx.reg(&d)?;
                    let sr = if set {
                        cx.norm(&s, crate::isel::Ext::Zero)?
                    } else {
                        cx.reg(&s)?
                    };
                    let nr = cx.reg(&n)?;
                    let r = cx.call_helper(f, &[dr, sr, nr], 1);
                    if base.starts_with("llvm.") {
                        None
                    } else {
                        Some(Val::R(r[0]))
                    }
                }
            }
        }
        _ if name.starts_with("llvm.") => {
            return unsupported(cx.line, format!("intrinsic @{name}"))
        }
        _ => {
            let _ = ret;
            return Ok(None);
        }
    }))
}
