//! Reader for function bodies: labels and instructions.

use super::lex::{lex, Tok};
use super::parse::{parse_type, parse_value, skip_attrs, starts_type, Cur};
use super::{Arg, BinOp, Block, CastOp, Const, Inst, Module, Op, Operand, Pred, Type, Value};
use crate::error::{parse_err, unsupported, Result};

/// Parses the logical lines of a function body into blocks.
pub(super) fn parse_body(lines: &[(usize, String)], m: &Module) -> Result<Vec<Block>> {
    let mut blocks: Vec<Block> = Vec::new();
    for (line, text) in lines {
        let toks = lex(text, *line)?;
        // A label: `name:`.
        if toks.len() == 2 && toks[1] == Tok::P(':') {
            let name = match &toks[0] {
                Tok::Int(v) => v.to_string(),
                Tok::Word(w) => w.clone(),
                Tok::Str(s) => s.clone(),
                t => return parse_err(*line, format!("bad label {t:?}")),
            };
            blocks.push(Block {
                name,
                insts: Vec::new(),
            });
            continue;
        }
        if blocks.is_empty() {
            blocks.push(Block {
                name: String::new(),
                insts: Vec::new(),
            });
        }
        let inst = parse_inst(&toks, *line, m)?;
        if let Some(b) = blocks.last_mut() {
            b.insts.push(inst);
        }
    }
    Ok(blocks)
}

fn operand(c: &mut Cur, m: &Module) -> Result<Operand> {
    let ty = parse_type(c)?;
    skip_attrs(c);
    let val = parse_value(c, m)?;
    Ok(Operand { ty, val })
}

fn label(c: &mut Cur) -> Result<String> {
    c.expect_word("label")?;
    c.local()
}

fn binop(w: &str) -> Option<BinOp> {
    Some(match w {
        "add" => BinOp::Add,
        "sub" => BinOp::Sub,
        "mul" => BinOp::Mul,
        "udiv" => BinOp::UDiv,
        "sdiv" => BinOp::SDiv,
        "urem" => BinOp::URem,
        "srem" => BinOp::SRem,
        "shl" => BinOp::Shl,
        "lshr" => BinOp::LShr,
        "ashr" => BinOp::AShr,
        "and" => BinOp::And,
        "or" => BinOp::Or,
        "xor" => BinOp::Xor,
        _ => return None,
    })
}

pub(super) fn pred(w: &str, line: usize) -> Result<Pred> {
    Ok(match w {
        "eq" => Pred::Eq,
        "ne" => Pred::Ne,
        "ugt" => Pred::Ugt,
        "uge" => Pred::Uge,
        "ult" => Pred::Ult,
        "ule" => Pred::Ule,
        "sgt" => Pred::Sgt,
        "sge" => Pred::Sge,
        "slt" => Pred::Slt,
        "sle" => Pred::Sle,
        _ => return parse_err(line, format!("unknown icmp predicate '{w}'")),
    })
}

fn parse_inst(toks: &[Tok], line: usize, m: &Module) -> Result<Inst> {
    let mut c = Cur::new(toks, line);
    let result = if let (Some(Tok::Local(n)), Some(Tok::P('='))) = (c.peek(), c.peek_at(1)) {
        c.i += 2;
        Some(n.clone())
    } else {
        None
    };
    let opw = match c.next()? {
        Tok::Word(w) => w.clone(),
        t => return parse_err(line, format!("expected an instruction, found {t:?}")),
    };
    let op = match opw.as_str() {
        w if binop(w).is_some() => {
            while c.eat_word("nuw")
                || c.eat_word("nsw")
                || c.eat_word("exact")
                || c.eat_word("disjoint")
            {}
            let ty = parse_type(&mut c)?;
            let a = parse_value(&mut c, m)?;
            c.expect_p(',')?;
            let b = parse_value(&mut c, m)?;
            let k = binop(w).unwrap_or(BinOp::Add);
            Op::Bin(
                k,
                Operand {
                    ty: ty.clone(),
                    val: a,
                },
                Operand { ty, val: b },
            )
        }
        "icmp" => {
            let p = match c.next()? {
                Tok::Word(w) => pred(w, line)?,
                t => return parse_err(line, format!("bad icmp predicate {t:?}")),
            };
            let ty = parse_type(&mut c)?;
            let a = parse_value(&mut c, m)?;
            c.expect_p(',')?;
            let b = parse_value(&mut c, m)?;
            Op::Icmp(
                p,
                Operand {
                    ty: ty.clone(),
                    val: a,
                },
                Operand { ty, val: b },
            )
        }
        "select" => {
            let cnd = operand(&mut c, m)?;
            c.expect_p(',')?;
            let a = operand(&mut c, m)?;
            c.expect_p(',')?;
            let b = operand(&mut c, m)?;
            Op::Select(cnd, a, b)
        }
        "phi" => {
            let ty = parse_type(&mut c)?;
            let mut inc = Vec::new();
            while c.eat_p('[') {
                let v = parse_value(&mut c, m)?;
                c.expect_p(',')?;
                let b = c.local()?;
                c.expect_p(']')?;
                inc.push((v, b));
                if !c.eat_p(',') {
                    break;
                }
            }
            Op::Phi(ty, inc)
        }
        "load" => {
            c.eat_word("atomic");
            c.eat_word("volatile");
            let ty = parse_type(&mut c)?;
            c.expect_p(',')?;
            let p = operand(&mut c, m)?;
            let align = access_align(&mut c, m, &ty)?;
            Op::Load(ty, p, align)
        }
        "store" => {
            c.eat_word("atomic");
            c.eat_word("volatile");
            let v = operand(&mut c, m)?;
            c.expect_p(',')?;
            let p = operand(&mut c, m)?;
            let align = access_align(&mut c, m, &v.ty)?;
            Op::Store(v, p, align)
        }
        "getelementptr" => {
            c.eat_word("inbounds");
            let ty = parse_type(&mut c)?;
            c.expect_p(',')?;
            let base = operand(&mut c, m)?;
            let mut idx = Vec::new();
            while c.is_p(',') && starts_type(c.peek_at(1)) {
                c.i += 1;
                c.eat_word("inrange");
                idx.push(operand(&mut c, m)?);
            }
            Op::Gep(ty, base, idx)
        }
        "trunc" | "zext" | "sext" | "bitcast" | "ptrtoint" | "inttoptr" | "addrspacecast" => {
            let kind = match opw.as_str() {
                "trunc" => CastOp::Trunc,
                "zext" => CastOp::ZExt,
                "sext" => CastOp::SExt,
                _ => CastOp::Same,
            };
            let v = operand(&mut c, m)?;
            c.expect_word("to")?;
            let to = parse_type(&mut c)?;
            Op::Cast(kind, v, to)
        }
        "freeze" => {
            let v = operand(&mut c, m)?;
            let ty = v.ty.clone();
            Op::Cast(CastOp::Same, v, ty)
        }
        "call" | "tail" | "musttail" | "notail" => {
            if opw != "call" {
                c.expect_word("call")?;
            }
            parse_call(&mut c, m)?
        }
        "alloca" => {
            let ty = parse_type(&mut c)?;
            let mut n = 1u64;
            if c.is_p(',') && starts_type(c.peek_at(1)) {
                c.i += 1;
                let cnt = operand(&mut c, m)?;
                match cnt.val {
                    Value::Const(Const::Int(v)) => n = u64::try_from(v).unwrap_or(0),
                    _ => return unsupported(line, "alloca with a variable size (VLA / alloca())"),
                }
            }
            Op::Alloca(ty, n)
        }
        "va_arg" => {
            let list = operand(&mut c, m)?;
            c.expect_p(',')?;
            let ty = parse_type(&mut c)?;
            Op::VaArg(list, ty)
        }
        "br" => {
            if c.is_word("label") {
                Op::Br(label(&mut c)?)
            } else {
                let cnd = operand(&mut c, m)?;
                c.expect_p(',')?;
                let t = label(&mut c)?;
                c.expect_p(',')?;
                let f = label(&mut c)?;
                Op::CondBr(cnd, t, f)
            }
        }
        "switch" => {
            let v = operand(&mut c, m)?;
            c.expect_p(',')?;
            let d = label(&mut c)?;
            c.expect_p('[')?;
            let mut cases = Vec::new();
            while !c.eat_p(']') {
                parse_type(&mut c)?;
                let k = match parse_value(&mut c, m)? {
                    Value::Const(Const::Int(k)) => k,
                    _ => return parse_err(line, "switch case is not an integer"),
                };
                c.expect_p(',')?;
                cases.push((k, label(&mut c)?));
            }
            Op::Switch(v, d, cases)
        }
        "ret" => {
            if c.eat_word("void") {
                Op::Ret(None)
            } else {
                Op::Ret(Some(operand(&mut c, m)?))
            }
        }
        "unreachable" => Op::Unreachable,
        "fneg" | "fadd" | "fsub" | "fmul" | "fdiv" | "frem" | "fcmp" | "fptrunc" | "fpext"
        | "fptoui" | "fptosi" | "uitofp" | "sitofp" => {
            return unsupported(
                line,
                format!("floating point ('{opw}'): CAHPv3 has no FPU and vsp cc has no soft-float"),
            )
        }
        other => return unsupported(line, format!("instruction '{other}'")),
    };
    Ok(Inst { result, op, line })
}

/// The `, align N` of a load or store (after its pointer operand); without one, LLVM takes the
/// type's ABI alignment. The lowering trusts it: a 16-bit access below 2 is done bytewise.
fn access_align(c: &mut Cur, m: &Module, ty: &Type) -> Result<u64> {
    if c.is_p(',') && matches!(c.peek_at(1), Some(Tok::Word(w)) if w == "align") {
        c.i += 2;
        let line = c.line;
        return match u64::try_from(c.int()?) {
            Ok(a) if a.is_power_of_two() => Ok(a),
            _ => parse_err(line, "alignment is not a power of two"),
        };
    }
    Ok(m.align_of(ty).unwrap_or(1))
}

fn parse_call(c: &mut Cur, m: &Module) -> Result<Op> {
    let line = c.line;
    // Calling convention, fast-math flags and return attributes.
    while let Some(Tok::Word(w)) = c.peek() {
        if super::parse::is_type_word(w) {
            break;
        }
        c.i += 1;
        if w == "cc" || w == "align" {
            c.int()?;
        }
        c.skip_parens();
    }
    let ty = parse_type(c)?;
    let (ret, varargs_fixed) = match ty {
        Type::Func(r, ps, true) => (*r, Some(ps.len())),
        Type::Func(r, _, false) => (*r, None),
        t => (t, None),
    };
    if matches!(c.peek(), Some(Tok::Word(w)) if w == "asm") {
        return unsupported(line, "inline assembly");
    }
    let callee_val = parse_value(c, m)?;
    c.expect_p('(')?;
    let mut args = Vec::new();
    while !c.eat_p(')') {
        let ty = parse_type(c)?;
        let byval = skip_attrs(c);
        let val = parse_value(c, m)?;
        args.push(Arg {
            op: Operand { ty, val },
            byval,
        });
        if !c.eat_p(',') && !c.is_p(')') {
            return parse_err(line, "bad call argument list");
        }
    }
    Ok(Op::Call {
        ret,
        callee: Operand {
            ty: Type::Ptr,
            val: callee_val,
        },
        args,
        varargs_fixed,
    })
}

#[cfg(test)]
mod tests {
    use crate::ir::{parse_module, Const, Op, Type, Value};

    const FIB: &str = r#"
target datalayout = "e-m:e-p:16:16-i32:16-i64:16-f32:16-f64:16-a:8-n8:16-S16"
%struct.P = type { i16, i8, i32 }
@msg = internal constant [3 x i8] c"hi\00", align 1
@gp = dso_local global i8* getelementptr inbounds ([3 x i8], [3 x i8]* @msg, i16 0, i16 1), align 2

define dso_local i16 @main(i16 noundef %0, i8** nocapture noundef readonly %1) local_unnamed_addr #0 {
  %3 = getelementptr inbounds i8*, i8** %1, i16 1
  %4 = load i8*, i8** %3, align 2, !tbaa !2
  switch i16 %0, label %9 [
    i16 43, label %9
    i16 45, label %9
  ]

9:                                                ; preds = %15, %2
  %10 = phi i16 [ 1, %2 ], [ %10, %9 ]
  %11 = tail call i16 (i16, ...) @va(i16 noundef 3, i16 noundef 1)
  br label %9, !llvm.loop !7
}
declare i16 @va(i16, ...)
"#;

    #[test]
    fn parses_globals_types_and_bodies() {
        let m = parse_module(FIB).unwrap();
        assert_eq!(m.size_of(&Type::Named("struct.P".into())), Some(8));
        assert_eq!(m.field_offset(&Type::Named("struct.P".into()), 2), Some(4));
        assert_eq!(m.globals[1].init, Some(Const::Addr("msg".into(), 1)));
        let f = m.function("main").unwrap();
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.blocks.len(), 2);
        assert!(
            matches!(&f.blocks[0].insts[2].op, Op::Switch(_, d, cases) if d == "9" && cases.len() == 2)
        );
        match &f.blocks[1].insts[1].op {
            Op::Call {
                varargs_fixed,
                args,
                ..
            } => {
                assert_eq!(*varargs_fixed, Some(1));
                assert_eq!(args[1].op.val, Value::Const(Const::Int(1)));
            }
            other => panic!("not a call: {other:?}"),
        }
        assert!(m.function("va").unwrap().varargs);
    }

    #[test]
    fn reports_floating_point_with_its_line() {
        let src = "define float @f(float %0) {\n  %2 = fadd float %0, %0\n  ret float %2\n}\n";
        let e = parse_module(src).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("floating point"), "{e}");
    }
}
