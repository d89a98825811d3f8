//! Keys shared by the tests of one test binary (key generation is the expensive part).
#![allow(dead_code)]

use std::sync::OnceLock;
use std::time::Duration;
use vsp_tfhe::{EvalKey, Params, SecretKey};

/// CPU time of this thread (`/proc/thread-self/schedstat`, ns): the examples time with it, since
/// wall-clock time is meaningless on a shared, loaded machine.
pub fn thread_cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(
        s.split_whitespace()
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0),
    )
}

/// The example's command-line argument `n`, or `default` when it is absent or does not parse.
pub fn arg<T: std::str::FromStr>(n: usize, default: T) -> T {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// Checks a multiplexer on all eight inputs: `mux(c, a, b)` (encrypt, evaluate, decrypt) must be
/// `if c { a } else { b }`.
pub fn check_mux(mux: impl Fn(bool, bool, bool) -> bool) {
    for bits in 0..8u8 {
        let (c, a, b) = (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4);
        assert_eq!(mux(c, a, b), if c { a } else { b }, "mux({c},{a},{b})");
    }
}

pub fn keys() -> &'static (SecretKey, EvalKey) {
    static K: OnceLock<(SecretKey, EvalKey)> = OnceLock::new();
    K.get_or_init(|| {
        let sk = SecretKey::generate(&Params::default_128()).expect("keygen");
        let ek = EvalKey::generate(&sk).expect("eval key");
        (sk, ek)
    })
}
