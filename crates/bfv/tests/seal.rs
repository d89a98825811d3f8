//! Agreement with Microsoft SEAL (through the optional `seal-python` module): the same slot vector
//! batch-encodes to the same plaintext polynomial, so slot layouts and rotations match SEAL's.
//! Needs seal-python (`pip install seal-python numpy`): `#[ignore = "needs seal-python"]`, run with
//! `cargo test -- --include-ignored` (what `.ci/run` does); fails, never skips, when it is missing.

#[path = "../../circuit/tests/tool/mod.rs"]
mod tool;

use std::process::Command;
use vsp_bfv::*;

const SCRIPT: &str = r#"
import seal, sys
n, t = int(sys.argv[1]), int(sys.argv[2])
p = seal.EncryptionParameters(seal.scheme_type.bfv)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus(seal.CoeffModulus.BFVDefault(n))
p.set_plain_modulus(t)
be = seal.BatchEncoder(seal.SEALContext(p))
print(be.encode([(i * i + 7) % (t // 2) for i in range(n)]).to_string())
"#;

/// Parses SEAL's "HEXx^D + … + HEX" plaintext string into n coefficients.
fn parse(s: &str, n: usize) -> Vec<u64> {
    let mut out = vec![0u64; n];
    for term in s.trim().split(" + ") {
        let (coef, deg) = match term.split_once("x^") {
            Some((c, d)) => (c, d.parse::<usize>().unwrap()),
            None => (term, 0),
        };
        out[deg] = u64::from_str_radix(coef, 16).unwrap();
    }
    out
}

#[test]
#[ignore = "needs seal-python"]
fn batch_encoding_matches_seal() {
    let (n, t) = (1024usize, 12289u64);
    tool::require(
        "python3",
        &["-c", "import seal, numpy"],
        "pip install seal-python numpy",
    );
    let out =
        tool::run(Command::new("python3").args(["-c", SCRIPT, &n.to_string(), &t.to_string()]));
    let seal = parse(&out, n);
    let params = BfvParameters::default_128(n, t).unwrap();
    let slots: Vec<u64> = (0..n as u64).map(|i| (i * i + 7) % (t / 2)).collect();
    let ours = Encoder::new(&params).encode_batch(&slots).unwrap();
    assert_eq!(
        ours.coefficients(),
        &seal[..],
        "batch layout differs from SEAL's"
    );
}
