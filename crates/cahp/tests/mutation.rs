//! Mutation tests (issue 13): random edits of valid assembly sources and program images give `Ok`
//! or `Err` from the readers, never a panic or a runaway allocation. Bounded so each runs in seconds;
//! run longer with `PROPTEST_CASES=100000 cargo test --release -p vsp-cahp --test mutation`.

// One copy of the mutation helpers for every crate's reader tests.
#[path = "../../circuit/tests/mutate/mod.rs"]
mod mutate;

use proptest::prelude::*;
use vsp_cahp::{assemble, Image};

const SOURCES: [&str; 3] = [
    include_str!("../asm/programs/fib.s"),
    include_str!("../asm/programs/hamming.s"),
    include_str!("../asm/programs/bf.s"),
];

fn image_bytes(k: usize) -> Vec<u8> {
    assemble(SOURCES[k], "p.s").unwrap().to_bytes().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn mutated_assembly_never_panics(k in 0..SOURCES.len(), ops in mutate::ops()) {
        let text = mutate::apply(SOURCES[k].as_bytes(), &ops, true);
        let _ = assemble(&String::from_utf8_lossy(&text), "m.s");
    }

    #[test]
    fn mutated_images_never_panic(k in 0..SOURCES.len(), ops in mutate::ops()) {
        let bytes = mutate::apply(&image_bytes(k), &ops, false);
        if let Ok(img) = Image::from_bytes(&bytes) {
            // Whatever is accepted round-trips.
            prop_assert_eq!(Image::from_bytes(&img.to_bytes().unwrap()).unwrap(), img);
        }
    }

    /// Edits inside the envelope (re-sealed), so they reach the image body reader.
    #[test]
    fn mutated_image_bodies_never_panic(k in 0..SOURCES.len(), ops in mutate::ops()) {
        let bytes = mutate::mutate_body(&vsp_cahp::image::FORMAT, 1, &image_bytes(k), &ops);
        if let Ok(img) = Image::from_bytes(&bytes) {
            prop_assert_eq!(Image::from_bytes(&img.to_bytes().unwrap()).unwrap(), img);
        }
    }
}
