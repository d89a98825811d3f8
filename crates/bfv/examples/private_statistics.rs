//! Private dot product and statistics: a client encrypts a vector; a server holding plaintext
//! weights returns the encrypted dot product, and the encrypted sum and sum of squares from which the
//! client derives mean and variance. Uses batching, plaintext products, squaring and inner sums.
//!
//! Run: `cargo run --release -p vsp-bfv --example private_statistics`

use rand::{Rng, SeedableRng};
use vsp_bfv::*;

fn main() -> Result<()> {
    let n = 8192;
    let t = BfvParameters::batching_modulus(n, 40)?;
    let params = BfvParameters::default_128(n, t)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let sk = SecretKey::random(&params, &mut rng);
    let pk = PublicKey::new(&sk, &mut rng);
    let rk = RelinKey::new(&sk, &mut rng);
    let gk = GaloisKeys::power_of_two(&sk, &mut rng);
    let enc = Encoder::new(&params);
    let ev = Evaluator::with_threads(&params, 2)?;

    let data: Vec<u64> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
    let weights: Vec<u64> = (0..n).map(|_| rng.gen_range(0..100)).collect();
    let ct = pk.encrypt(&enc.encode_batch(&data)?, &mut rng)?;

    let dot = ev.inner_sum(&ev.mul_plain(&ct, &enc.encode_batch(&weights)?)?, &gk)?;
    let sum = ev.inner_sum(&ct, &gk)?;
    let sum_sq = ev.inner_sum(&ev.relinearize(&ev.square(&ct)?, &rk)?, &gk)?;

    let first = |c: &Ciphertext| -> Result<u64> { Ok(enc.decode_batch(&sk.decrypt(c)?)?[0]) };
    let (d, s, s2) = (first(&dot)?, first(&sum)?, first(&sum_sq)?);
    let want_d: u64 = data.iter().zip(&weights).map(|(a, b)| a * b).sum();
    let want_s: u64 = data.iter().sum();
    let want_s2: u64 = data.iter().map(|a| a * a).sum();
    if (d, s, s2) != (want_d, want_s, want_s2) {
        return Err(Error::InvalidInput(
            "homomorphic statistics differ from the plaintext ones".into(),
        ));
    }
    let mean = s as f64 / n as f64;
    let var = s2 as f64 / n as f64 - mean * mean;
    println!("dot product {d}, mean {mean:.3}, variance {var:.3} (all computed on encrypted data)");
    println!(
        "noise budget left after the sum of squares: {} bits",
        sk.noise_budget(&sum_sq)?
    );
    Ok(())
}
