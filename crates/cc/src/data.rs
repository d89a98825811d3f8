//! Global variables and constants as assembler data directives (`.data`, `.rodata`, `.bss`).

use std::fmt::Write;

use crate::error::{unsupported, Result};
use crate::ir::{Const, Global, Module, Type};

/// An assembler-safe symbol name: LLVM's private names (`.str.1`) become `$str$1`.
pub fn sym(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '$'
                }
            })
            .collect()
    }
}

fn is_zero(k: &Const) -> bool {
    match k {
        Const::Zero | Const::Null | Const::Undef | Const::Int(0) => true,
        Const::Bytes(b) => b.iter().all(|x| *x == 0),
        Const::Aggregate(v) => v.iter().all(|(_, k)| is_zero(k)),
        _ => false,
    }
}

/// Emits the directives for `k` of type `ty`.
fn items(m: &Module, ty: &Type, k: &Const, line: usize, out: &mut String) -> Result<()> {
    let size = m.size_of(ty).unwrap_or(0);
    if matches!(k, Const::Zero | Const::Undef) {
        if size > 0 {
            let _ = writeln!(out, "    .space {size}");
        }
        return Ok(());
    }
    match (m.resolve(ty), k) {
        (Type::Int(b), Const::Int(v)) => {
            let mut v = *v;
            let bytes = b.div_ceil(8);
            if bytes == 1 {
                let _ = writeln!(out, "    .byte {}", v & 0xFF);
            } else {
                for _ in 0..bytes.div_ceil(2) {
                    let _ = writeln!(out, "    .half {}", v & 0xFFFF);
                    v >>= 16;
                }
            }
        }
        (Type::Int(_) | Type::Ptr, Const::Null) => {
            let _ = writeln!(out, "    .space {size}");
        }
        (Type::Ptr | Type::Int(16), Const::Addr(s, o)) => {
            let o = *o as i16;
            let sign = if o < 0 { "-" } else { "+" };
            let _ = writeln!(out, "    .half {}{}{}", sym(s), sign, o.unsigned_abs());
        }
        (Type::Ptr, Const::Int(v)) => {
            let _ = writeln!(out, "    .half {}", v & 0xFFFF);
        }
        (Type::Array(_, _), Const::Bytes(b)) => {
            let list: Vec<String> = b.iter().map(|x| x.to_string()).collect();
            for chunk in list.chunks(16) {
                let _ = writeln!(out, "    .byte {}", chunk.join(", "));
            }
        }
        (Type::Array(_, e), Const::Aggregate(v)) => {
            for (t, k) in v {
                let _ = e;
                items(m, t, k, line, out)?;
            }
        }
        (Type::Struct(fs, _), Const::Aggregate(v)) => {
            let mut off = 0u64;
            for (i, (t, k)) in v.iter().enumerate() {
                let fo = m.field_offset(ty, i).unwrap_or(off);
                if fo > off {
                    let _ = writeln!(out, "    .space {}", fo - off);
                }
                items(m, t, k, line, out)?;
                off = fo + m.size_of(t).unwrap_or(0);
                let _ = fs;
            }
            if size > off {
                let _ = writeln!(out, "    .space {}", size - off);
            }
        }
        (t, k) => return unsupported(line, format!("global initializer {k:?} of type {t:?}")),
    }
    Ok(())
}

/// Emits one global variable.
pub fn emit_global(m: &Module, g: &Global, out: &mut String) -> Result<()> {
    let Some(init) = &g.init else { return Ok(()) };
    let section = if is_zero(init) {
        ".bss"
    } else if g.constant {
        ".rodata"
    } else {
        ".data"
    };
    let align = m.global_align(g);
    let _ = writeln!(out, "\n    {section}");
    if align > 1 {
        let _ = writeln!(out, "    .balign {align}");
    }
    let _ = writeln!(out, "{}:", sym(&g.name));
    if section == ".bss" {
        let size = m.size_of(&g.ty).unwrap_or(0).max(1);
        let _ = writeln!(out, "    .space {size}");
        return Ok(());
    }
    items(m, &g.ty, init, g.line, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangles_private_names_and_lays_out_structs() {
        assert_eq!(sym("main"), "main");
        assert_eq!(sym(".str.1"), "$str$1");
        let src = "%struct.P = type { i8, i16 }\n@p = global %struct.P { i8 1, i16 258 }, align 2\n@s = private constant [3 x i8] c\"hi\\00\"\n@q = global i8* getelementptr inbounds ([3 x i8], [3 x i8]* @s, i16 0, i16 1), align 2\n";
        let m = crate::ir::parse_module(src).unwrap();
        let mut out = String::new();
        for g in &m.globals {
            emit_global(&m, g, &mut out).unwrap();
        }
        assert!(
            out.contains(".byte 1\n    .space 1\n    .half 258"),
            "{out}"
        );
        assert!(out.lines().any(|l| l == "s:"), "{out}");
        assert!(out.contains(".half s+1"), "{out}");
    }
}
