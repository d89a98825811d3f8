//! Mutation tests (issue 13): random edits of valid blueprints, Yosys JSON netlists and snapshots
//! give `Ok` or `Err` from the readers, never a panic or a runaway allocation. Bounded so each runs
//! in seconds; run longer with `PROPTEST_CASES=20000 cargo test --release -p vsp-circuit --test mutation`.

mod mutate;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::OnceLock;

use proptest::prelude::*;
use sha3::{Digest, Sha3_256};
use vsp_circuit::*;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

const BLUEPRINTS: [&str; 2] = [
    include_str!("../testdata/memuser.toml"),
    include_str!("../testdata/counter.toml"),
];
const NETLISTS: [&str; 3] = [
    include_str!("../testdata/adder.json"),
    include_str!("../testdata/lfsr.json"),
    include_str!("../testdata/counter.json"),
];

/// The memuser circuit (MUX memories) and a snapshot of it after a few cycles.
fn snapshot() -> &'static (Arc<Circuit>, Vec<u8>) {
    static S: OnceLock<(Arc<Circuit>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| {
        let text = BLUEPRINTS[0]
            .replace("type = \"rom\"", "type = \"mux-rom\"")
            .replace("type = \"ram\"", "type = \"mux-ram\"");
        let c = Arc::new(
            Circuit::compile(&Blueprint::from_str_with_base(&text, &testdata()).unwrap()).unwrap(),
        );
        let mut e = Engine::new(PlainBackend, c.clone());
        let opts = RunOptions {
            max_cycles: 5,
            ..Default::default()
        };
        e.run(&opts, &mut |_| {}).unwrap();
        (c, e.snapshot_bytes())
    })
}

/// Replaces the trailing SHA3-256 so that the reader gets past its checksum.
fn reseal(mut b: Vec<u8>) -> Vec<u8> {
    if b.len() >= 32 {
        let k = b.len() - 32;
        let sum = Sha3_256::digest(&b[..k]);
        b[k..].copy_from_slice(&sum);
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(1000), ..ProptestConfig::default() })]

    #[test]
    fn mutated_blueprints_never_panic(k in 0..BLUEPRINTS.len(), ops in mutate::ops()) {
        let text = mutate::apply(BLUEPRINTS[k].as_bytes(), &ops, true);
        if let Ok(bp) = Blueprint::from_str_with_base(&String::from_utf8_lossy(&text), &testdata()) {
            let _ = Circuit::compile(&bp);
        }
    }

    #[test]
    fn mutated_yosys_json_never_panics(k in 0..NETLISTS.len(), ops in mutate::ops()) {
        let text = mutate::apply(NETLISTS[k].as_bytes(), &ops, true);
        if let Ok(n) = parse_yosys_json(&String::from_utf8_lossy(&text)) {
            let _ = Circuit::compile(&Blueprint::single("m", n));
        }
    }

    #[test]
    fn mutated_snapshots_never_panic(ops in mutate::ops(), sealed in any::<bool>()) {
        let (c, base) = snapshot();
        let mut bytes = mutate::apply(base, &ops, false);
        if sealed {
            bytes = reseal(bytes);
        }
        let mut e = Engine::new(PlainBackend, c.clone());
        let _ = e.restore_snapshot(&bytes);
    }

    /// Edits inside the re-sealed envelope, so they reach the snapshot body reader (and the plain
    /// backend's memory decoder); an accepted state must encode and decode again.
    #[test]
    fn mutated_snapshot_bodies_never_panic(ops in mutate::ops()) {
        let (c, base) = snapshot();
        let bytes = mutate::mutate_body(&snapshot::FORMAT, snapshot::KIND_SNAPSHOT, base, &ops);
        let e = Engine::new(PlainBackend, c.clone());
        mutate::reread::<EngineSnapshot<PlainBackend>>(&bytes, &e.snapshot_context());
    }
}
