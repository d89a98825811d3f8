//! Rough single-thread timings of the TFHE building blocks (a printout, not a benchmark against the
//! peers, which is `vsp-bench tfhe`): `cargo run --release -p vsp-tfhe --example timing`.
//! Every timed result is checked after the timed loop.
#[path = "../tests/common/mod.rs"]
mod common;

use common::thread_cpu as cpu;

fn time_gates() {
    let t = cpu();
    let (sk, ek) = common::keys();
    println!(
        "keygen {:?}, eval key {} MB",
        (cpu() - t),
        ek.size_bytes() >> 20
    );
    let (a, b) = (sk.encrypt_bit(true), sk.encrypt_bit(false));
    let t = cpu();
    let mut out = Vec::with_capacity(20);
    for _ in 0..20 {
        out.push(ek.nand(&a, &b).unwrap());
    }
    println!("nand {:?}", (cpu() - t) / 20);
    assert!(
        out.iter().all(|c| sk.decrypt_bit(c).unwrap()),
        "NAND(1, 0) must be 1"
    );
}

fn time_fft() {
    let p = vsp_tfhe::fft::plan(1024);
    let mut buf = vec![1.0f64; 1024];
    let t = cpu();
    for _ in 0..10000 {
        let (r, i) = buf.split_at_mut(512);
        p.forward_in_place(r, i);
        buf.iter_mut().for_each(|x| *x *= 1e-3);
    }
    println!(
        "fft512 fwd {:?} kernel {:?}",
        (cpu() - t) / 10000,
        p.kernel()
    );
    let t = cpu();
    for _ in 0..10000 {
        p.backward_in_place(&mut buf);
    }
    println!("fft512 inv {:?}", (cpu() - t) / 10000);
}

fn time_cb_cmux() {
    let (sk, _) = common::keys();
    let t = cpu();
    let ck = vsp_tfhe::CircuitKey::generate(sk).unwrap();
    println!(
        "circuit keygen (this thread) {:?}, {} MB",
        cpu() - t,
        ck.size_bytes() >> 20
    );
    let c = sk.encrypt_bit(true);
    let t = cpu();
    let (g, _) = ck.circuit_bootstrap(&c).unwrap();
    println!("circuit bootstrap {:?}", cpu() - t);
    let d0 = sk.encrypt_trlwe_bits(&[true]).unwrap();
    let d1 = sk.encrypt_trlwe_bits(&[false]).unwrap();
    let mut s = vsp_tfhe::ExtScratch::new(1024, g.gadget());
    let t = cpu();
    let mut last = None;
    for _ in 0..1000 {
        last = Some(g.cmux_with(&d1, &d0, &mut s).unwrap());
    }
    println!("cmux {:?}", (cpu() - t) / 1000);
    // The select is 1: the CMUX picks d1 (false).
    let bits = sk.decrypt_trlwe_bits(&last.unwrap()).unwrap();
    assert!(!bits[0], "CMUX(1, d1 = 0, d0 = 1) must be 0");
}

fn main() {
    time_gates();
    time_fft();
    time_cb_cmux();
}
