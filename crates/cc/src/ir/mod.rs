//! The subset of LLVM IR that clang emits for a 16-bit target (`--target=msp430 -Oz`), as plain Rust
//! data: types with their CAHP layout, constants, instructions, functions and globals.
//!
//! The reader is hand written (see `parse`) so that the compiler needs only the `clang` binary, not
//! LLVM's development libraries; everything it does not understand is reported with its line.

mod constexpr;
mod decl;
mod lex;
pub mod parse;
mod parse_inst;

use std::collections::HashMap;

pub use parse::parse_module;

/// An IR type. Pointers are opaque (typed-pointer syntax `T*` is read as `ptr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// `void`.
    Void,
    /// `iN`.
    Int(u32),
    /// A 16-bit data pointer (or function pointer).
    Ptr,
    /// `[N x T]`.
    Array(u64, Box<Type>),
    /// `{ T, … }` or packed `<{ T, … }>`.
    Struct(Vec<Type>, bool),
    /// `%name` (resolved through [`Module::types`]).
    Named(String),
    /// A function type `R (P, …)`.
    Func(Box<Type>, Vec<Type>, bool),
    /// `label`.
    Label,
    /// `half`, `float`, `double`, vectors, `metadata`…: recognised to report them clearly.
    Other(String),
}

/// A constant operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    /// An integer (also `true`/`false`), sign-agnostic bits.
    Int(i128),
    /// `null`.
    Null,
    /// `undef` / `poison`.
    Undef,
    /// `zeroinitializer`.
    Zero,
    /// The address of a global or function plus a byte offset.
    Addr(String, i64),
    /// `c"…"`.
    Bytes(Vec<u8>),
    /// `[ T v, … ]` or `{ T v, … }` aggregates.
    Aggregate(Vec<(Type, Const)>),
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `%x`: an SSA value or a parameter.
    Local(String),
    /// A constant.
    Const(Const),
}

/// A typed operand.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    /// Its type.
    pub ty: Type,
    /// Its value.
    pub val: Value,
}

/// Binary integer operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
}

/// `icmp` predicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Pred {
    Eq,
    Ne,
    Ugt,
    Uge,
    Ult,
    Ule,
    Sgt,
    Sge,
    Slt,
    Sle,
}

/// Integer and pointer casts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CastOp {
    Trunc,
    ZExt,
    SExt,
    /// bitcast, ptrtoint, inttoptr, addrspacecast, freeze: no bits change (widths are checked).
    Same,
}

/// The operation of an instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `a op b`.
    Bin(BinOp, Operand, Operand),
    /// `icmp p a, b` → i1.
    Icmp(Pred, Operand, Operand),
    /// `select c, a, b`.
    Select(Operand, Operand, Operand),
    /// `phi T [v, %bb], …`.
    Phi(Type, Vec<(Value, String)>),
    /// `load T, ptr p, align A` (A in bytes; the type's ABI alignment when the IR gives none).
    Load(Type, Operand, u64),
    /// `store v, ptr p, align A`.
    Store(Operand, Operand, u64),
    /// `getelementptr T, ptr p, idx…`.
    Gep(Type, Operand, Vec<Operand>),
    /// A cast to the given type.
    Cast(CastOp, Operand, Type),
    /// `call R callee(args)`; `varargs_fixed` = number of fixed params if the callee type is variadic.
    Call {
        /// Return type.
        ret: Type,
        /// Callee (global name or pointer value).
        callee: Operand,
        /// Arguments (byval ones carry their pointee type in `byval`).
        args: Vec<Arg>,
        /// `Some(n)` when the call goes through a variadic function type with n fixed parameters.
        varargs_fixed: Option<usize>,
    },
    /// `alloca T, count` (count constant).
    Alloca(Type, u64),
    /// `va_arg ptr %list, T`.
    VaArg(Operand, Type),
    /// `br label %t`.
    Br(String),
    /// `br i1 c, label %t, label %f`.
    CondBr(Operand, String, String),
    /// `switch T v, label %default [ T k, label %l … ]`.
    Switch(Operand, String, Vec<(i128, String)>),
    /// `ret` / `ret T v`.
    Ret(Option<Operand>),
    /// `unreachable`.
    Unreachable,
}

/// A call argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// The value.
    pub op: Operand,
    /// `byval(T)`: the callee receives a pointer to a private copy of a T.
    pub byval: Option<Type>,
}

/// One instruction with its (optional) result name and source line.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    /// `%name = …`.
    pub result: Option<String>,
    /// The operation.
    pub op: Op,
    /// 1-based line in the IR text.
    pub line: usize,
}

/// A basic block.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Its label (numbered blocks get their number).
    pub name: String,
    /// Instructions; the last one is the terminator.
    pub insts: Vec<Inst>,
}

/// A function parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Type.
    pub ty: Type,
    /// Name (`%0`, `%x`).
    pub name: String,
    /// `byval(T)` pointee.
    pub byval: Option<Type>,
}

/// A function definition or declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// Name without `@`.
    pub name: String,
    /// Return type.
    pub ret: Type,
    /// Parameters.
    pub params: Vec<Param>,
    /// `...` in the signature.
    pub varargs: bool,
    /// Blocks (empty for a declaration).
    pub blocks: Vec<Block>,
    /// `internal`/`private` linkage.
    pub local: bool,
    /// Line of the `define`/`declare`.
    pub line: usize,
}

/// A global variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    /// Name without `@`.
    pub name: String,
    /// Value type.
    pub ty: Type,
    /// Initializer (`None` for an external declaration).
    pub init: Option<Const>,
    /// `constant` rather than `global`.
    pub constant: bool,
    /// Alignment (bytes).
    pub align: u64,
    /// `internal`/`private` linkage (C `static`, string literals).
    pub local: bool,
    /// Line of the definition.
    pub line: usize,
}

/// A parsed module.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Module {
    /// Named struct types.
    pub types: HashMap<String, Type>,
    /// Global variables in order.
    pub globals: Vec<Global>,
    /// Functions in order (definitions and declarations).
    pub functions: Vec<Function>,
}

impl Module {
    /// Resolves named types to their definition.
    pub fn resolve<'a>(&'a self, ty: &'a Type) -> &'a Type {
        let mut t = ty;
        for _ in 0..64 {
            match t {
                Type::Named(n) => match self.types.get(n) {
                    Some(d) => t = d,
                    None => return t,
                },
                _ => return t,
            }
        }
        t
    }

    /// Size in bytes under the CAHP/MSP430 data layout (i32/i64 are 2-byte aligned, pointers 16-bit).
    pub fn size_of(&self, ty: &Type) -> Option<u64> {
        Some(match self.resolve(ty) {
            Type::Int(1) | Type::Int(8) => 1,
            Type::Int(b) => u64::from(b.div_ceil(8)),
            Type::Ptr => 2,
            Type::Array(n, t) => n.checked_mul(self.size_of(t)?)?,
            Type::Struct(fs, packed) => {
                let (mut off, mut max_align) = (0u64, 1u64);
                for f in fs {
                    let a = if *packed { 1 } else { self.align_of(f)? };
                    max_align = max_align.max(a);
                    off = off.div_ceil(a) * a + self.size_of(f)?;
                }
                off.div_ceil(max_align) * max_align
            }
            _ => return None,
        })
    }

    /// Where global `g` is placed: its own alignment or its type's, whichever is larger.
    pub fn global_align(&self, g: &Global) -> u64 {
        g.align.max(self.align_of(&g.ty).unwrap_or(1))
    }

    /// ABI alignment in bytes (never more than 2 on this target).
    pub fn align_of(&self, ty: &Type) -> Option<u64> {
        Some(match self.resolve(ty) {
            Type::Int(1) | Type::Int(8) => 1,
            Type::Int(_) | Type::Ptr => 2,
            Type::Array(_, t) => self.align_of(t)?,
            Type::Struct(fs, packed) => {
                if *packed {
                    1
                } else {
                    let mut a = 1;
                    for f in fs {
                        a = a.max(self.align_of(f)?);
                    }
                    a
                }
            }
            _ => return None,
        })
    }

    /// Byte offset of field `i` of a struct type.
    pub fn field_offset(&self, ty: &Type, i: usize) -> Option<u64> {
        match self.resolve(ty) {
            Type::Struct(fs, packed) => {
                let mut off = 0u64;
                for (k, f) in fs.iter().enumerate() {
                    let a = if *packed { 1 } else { self.align_of(f)? };
                    off = off.div_ceil(a) * a;
                    if k == i {
                        return Some(off);
                    }
                    off += self.size_of(f)?;
                }
                None
            }
            _ => None,
        }
    }

    /// Looks a function up by name.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Renames functions and globals (definitions and every reference) by `map`.
    pub fn rename_symbols(&mut self, map: &HashMap<String, String>) {
        if map.is_empty() {
            return;
        }
        for g in &mut self.globals {
            if let Some(n) = map.get(&g.name) {
                g.name = n.clone();
            }
            if let Some(k) = &mut g.init {
                rename_const(k, map);
            }
        }
        for f in &mut self.functions {
            if let Some(n) = map.get(&f.name) {
                f.name = n.clone();
            }
            for b in &mut f.blocks {
                for i in &mut b.insts {
                    rename_op(&mut i.op, map);
                }
            }
        }
    }
}

fn rename_const(k: &mut Const, map: &HashMap<String, String>) {
    match k {
        Const::Addr(n, _) => {
            if let Some(x) = map.get(n) {
                *n = x.clone();
            }
        }
        Const::Aggregate(v) => v.iter_mut().for_each(|(_, c)| rename_const(c, map)),
        _ => {}
    }
}

fn rename_value(v: &mut Value, map: &HashMap<String, String>) {
    if let Value::Const(k) = v {
        rename_const(k, map);
    }
}

fn rename_op(op: &mut Op, map: &HashMap<String, String>) {
    let mut o = |x: &mut Operand| rename_value(&mut x.val, map);
    match op {
        Op::Bin(_, a, b) | Op::Icmp(_, a, b) | Op::Store(a, b, _) => {
            o(a);
            o(b);
        }
        Op::Select(c, a, b) => {
            o(c);
            o(a);
            o(b);
        }
        Op::Phi(_, inc) => inc.iter_mut().for_each(|(v, _)| rename_value(v, map)),
        Op::Load(_, p, _)
        | Op::Cast(_, p, _)
        | Op::VaArg(p, _)
        | Op::CondBr(p, _, _)
        | Op::Switch(p, _, _)
        | Op::Ret(Some(p)) => o(p),
        Op::Gep(_, base, idx) => {
            o(base);
            idx.iter_mut().for_each(&mut o);
        }
        Op::Call { callee, args, .. } => {
            o(callee);
            args.iter_mut().for_each(|a| o(&mut a.op));
        }
        Op::Alloca(..) | Op::Br(_) | Op::Ret(None) | Op::Unreachable => {}
    }
}
