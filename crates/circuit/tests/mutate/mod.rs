//! Mutations of a valid file for the reader robustness tests: random bit flips, byte edits,
//! truncations, insertions, deletions and huge numbers (issue 13), of a whole file or of the body
//! inside its [`vsp_codec`] envelope (issue 14). The one copy: vsp-cahp's, vsp-tfhe's, vsp-bfv's
//! and the vsp binary's reader tests include this file by path.

#![allow(dead_code)]

use proptest::prelude::*;

/// One edit of a valid file.
#[derive(Clone, Debug)]
pub enum Op {
    Flip(usize, u8),
    Set(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    /// Writes a big number at a position: decimal in text, little-endian u64 in binary.
    Number(usize, u64),
}

/// One to five random edits.
pub fn ops() -> impl Strategy<Value = Vec<Op>> {
    let num = prop_oneof![
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(1u64 << 32),
        Just(4_000_000_000),
        any::<u64>()
    ];
    let op = prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(p, b)| Op::Flip(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, v)| Op::Set(p, v)),
        any::<usize>().prop_map(Op::Truncate),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(p, v)| Op::Insert(p, v)),
        (any::<usize>(), 1usize..16).prop_map(|(p, n)| Op::Delete(p, n)),
        (any::<usize>(), num).prop_map(|(p, n)| Op::Number(p, n)),
    ];
    prop::collection::vec(op, 1..6)
}

/// `base` with `ops` applied (positions taken modulo the length).
pub fn apply(base: &[u8], ops: &[Op], text: bool) -> Vec<u8> {
    let mut b = base.to_vec();
    for op in ops {
        let len = b.len().max(1);
        match op {
            Op::Flip(p, bit) => {
                if let Some(x) = b.get_mut(p % len) {
                    *x ^= 1 << bit;
                }
            }
            Op::Set(p, v) => {
                if let Some(x) = b.get_mut(p % len) {
                    *x = *v;
                }
            }
            Op::Truncate(p) => b.truncate(p % len),
            Op::Insert(p, v) => {
                let at = (p % len).min(b.len());
                b.splice(at..at, v.iter().copied());
            }
            Op::Delete(p, n) => {
                let at = (p % len).min(b.len());
                let end = (at + n).min(b.len());
                b.drain(at..end);
            }
            Op::Number(p, n) => {
                let at = (p % len).min(b.len());
                if text {
                    b.splice(at..at, n.to_string().into_bytes());
                } else {
                    let end = (at + 8).min(b.len());
                    b.splice(at..end, n.to_le_bytes());
                }
            }
        }
    }
    b
}

/// `file`, a valid [`vsp_codec`] envelope of `format` holding `kind`, with its body edited by `ops`
/// and the envelope sealed again (right length and checksum), so that the edits reach the format's
/// body reader instead of stopping at the envelope's checksum.
pub fn mutate_body(format: &vsp_codec::Format, kind: u16, file: &[u8], ops: &[Op]) -> Vec<u8> {
    let o = vsp_codec::open(format, file, kind).expect("mutate_body needs a valid file");
    vsp_codec::seal(format, kind, o.param, &apply(o.body, ops, false))
}

/// Cases per property: `default`, or `PROPTEST_CASES` when set (a longer fuzzing run).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Reads `bytes` as a `T`; an accepted object must serialize back to a file that reads again.
pub fn reread<T: vsp_codec::FileCodec>(bytes: &[u8], ctx: &T::Context)
where
    T::Error: std::fmt::Debug,
{
    if let Ok(v) = T::decode(bytes, ctx) {
        T::decode(&v.encode(ctx), ctx).unwrap();
    }
}

/// The two properties of a format's object files (`$files`: a slice of (kind, valid file)):
/// mutated whole files, and mutated bodies in a re-sealed `$format` envelope, read by `$read`
/// (kind, bytes) without a panic, `$cases` cases each by default.
#[allow(unused_macros)]
macro_rules! file_properties {
    ($files:expr, $format:expr, $read:path, $cases:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: mutate::cases($cases), ..ProptestConfig::default() })]

            #[test]
            fn mutated_files_never_panic(k in 0..$files.len(), ops in mutate::ops()) {
                let (kind, file) = &$files[k];
                $read(*kind, &mutate::apply(file, &ops, false));
            }

            #[test]
            fn mutated_bodies_never_panic(k in 0..$files.len(), ops in mutate::ops()) {
                let (kind, file) = &$files[k];
                $read(*kind, &mutate::mutate_body(&$format, *kind, file, &ops));
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use file_properties;
