//! Logistic-regression inference on encrypted features, as in seed 001: the client encrypts its
//! feature vectors (one sample per slot, one ciphertext per feature), the server computes
//! z = w·x + b with plaintext weights and the cubic approximation of the sigmoid
//! Y = −0.004·z³ + 0.197·z + 0.5 in fixed point, and the client decrypts the scores.
//!
//! Run: `cargo run --release -p vsp-bfv --example logistic_regression`

use rand::{Rng, SeedableRng};
use vsp_bfv::*;

fn main() -> Result<()> {
    let n = 8192;
    // Fixed point: features and weights at scale 10, so z is at scale 100 and z³ at 10^6; the cubic's
    // coefficients at scale 1000 put every term at scale 10^9, which a 40-bit t holds with margin.
    let t = BfvParameters::batching_modulus(n, 40)?;
    let params = BfvParameters::default_128(n, t)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
    let sk = SecretKey::random(&params, &mut rng);
    let pk = PublicKey::new(&sk, &mut rng);
    let rk = RelinKey::new(&sk, &mut rng);
    let enc = Encoder::new(&params);
    let ev = Evaluator::new(&params);

    let features = 4;
    let samples = 1000;
    let weights = [0.8, -1.2, 0.5, 0.3];
    let bias = 0.1;
    let x: Vec<Vec<f64>> = (0..features)
        .map(|_| {
            (0..samples)
                .map(|_| (rng.gen_range(-20..=20) as f64) / 10.0)
                .collect()
        })
        .collect();

    // Client: encrypt each feature column at scale 10.
    let cts = x
        .iter()
        .map(|col| {
            let v: Vec<i64> = col.iter().map(|f| (f * 10.0).round() as i64).collect();
            pk.encrypt(&enc.encode_batch_signed(&v)?, &mut rng)
        })
        .collect::<Result<Vec<_>>>()?;

    // Server: z = Σ w_i·x_i + b at scale 100.
    let constant = |v: i64| enc.encode_batch_signed(&vec![v; n]);
    let mut z = ev.mul_plain(&cts[0], &constant((weights[0] * 10.0_f64).round() as i64)?)?;
    for i in 1..features {
        let term = ev.mul_plain(&cts[i], &constant((weights[i] * 10.0_f64).round() as i64)?)?;
        z = ev.add(&z, &term)?;
    }
    z = ev.add_plain(&z, &constant((bias * 100.0_f64).round() as i64)?)?;
    // Y·10^9 = −4·z³ + 197·10^4·z + 500·10^6 (z at scale 100: z³ at 10^6, z at 10^2).
    let z2 = ev.multiply_relin(&z, &z, &rk)?;
    let z3 = ev.multiply_relin(&z2, &z, &rk)?;
    let cubic = ev.mul_plain(&z3, &constant(-4)?)?;
    let linear = ev.mul_plain(&z, &constant(197 * 10_000)?)?;
    let y = ev.add_plain(&ev.add(&cubic, &linear)?, &constant(500_000_000)?)?;
    println!("noise budget left: {} bits", sk.noise_budget(&y)?);

    // Client: decrypt and compare with the same fixed-point computation in the clear.
    let got = enc.decode_batch_signed(&sk.decrypt(&y)?)?;
    let mut max_err: f64 = 0.0;
    for s in 0..samples {
        let xs: Vec<i64> = (0..features)
            .map(|i| (x[i][s] * 10.0).round() as i64)
            .collect();
        let zi: i64 = (0..features)
            .map(|i| xs[i] * (weights[i] * 10.0_f64).round() as i64)
            .sum::<i64>()
            + (bias * 100.0_f64).round() as i64;
        let want = -4 * zi * zi * zi + 197 * 10_000 * zi + 500_000_000;
        if got[s] != want {
            return Err(Error::InvalidInput(format!(
                "sample {s}: {} ≠ {want}",
                got[s]
            )));
        }
        let zf: f64 = (0..features).map(|i| weights[i] * x[i][s]).sum::<f64>() + bias;
        let exact = -0.004 * zf.powi(3) + 0.197 * zf + 0.5;
        max_err = max_err.max((got[s] as f64 / 1e9 - exact).abs());
    }
    println!("{samples} encrypted scores equal the fixed-point plaintext computation");
    println!("max deviation from the real-valued cubic: {max_err:.2e}");
    Ok(())
}
