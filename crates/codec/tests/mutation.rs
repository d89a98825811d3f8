//! Mutation tests of the shared envelope and reader (issue 14): random edits of a valid file are
//! refused or, when the envelope is sealed again, read back field by field without a panic or a
//! runaway allocation.

#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;

use proptest::prelude::*;
use vsp_codec::{open, seal, Error, Format, Reader, Writer};

const F: Format = Format {
    name: "test",
    magic: b"TESTFMT\0",
    version: 1,
    kinds: &[(1, "record")],
};

fn body() -> Vec<u8> {
    let mut w = Writer::new();
    w.str("a name");
    w.u32s(&[1, 2, 3, 4]);
    w.u64s(&[u64::MAX, 0]);
    w.blob(&[9; 40]);
    w.bool(true);
    w.into_bytes()
}

/// Reads the body's fields as a format would.
fn read(body: &[u8]) -> Result<(), Error> {
    let mut r = Reader::new(body);
    r.str(64, "name")?;
    r.u32s(4, "words")?;
    let n = r.count(8, 1 << 20, "longs")?;
    r.u64_words(n, "longs")?;
    r.blob(1 << 20, "blob")?;
    r.bool("flag")?;
    r.end()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn a_mutated_envelope_is_refused_or_unchanged(ops in mutate::ops()) {
        let file = seal(&F, 1, b"params", &body());
        let m = mutate::apply(&file, &ops, false);
        if let Ok(o) = open(&F, &m, 1) {
            // Only an edit that changed nothing (or was undone) gets through the checksum.
            prop_assert_eq!(o.body, &body()[..]);
        }
    }

    #[test]
    fn mutated_bodies_never_panic(ops in mutate::ops()) {
        let file = seal(&F, 1, b"params", &body());
        let m = mutate::mutate_body(&F, 1, &file, &ops);
        let _ = read(open(&F, &m, 1).unwrap().body);
    }
}
