//! `circuit` suite: the vsp-circuit engine on TFHE (`Params::default_128`).
//!
//! 1. A random DAG of 2,000 two-input gates (64 inputs, each gate reads two of the previous 256 wires):
//!    seconds per cycle with 1 and 2 worker threads and the parallel efficiency t1 / (2·t2); the
//!    encrypted outputs are checked against the plain backend.
//! 2. A 256 × 16-bit CMUX RAM, one read + write cycle (address, enable and data encrypted), with the
//!    noise-budget refresh policy and with Iyokan's refresh-every-cell-every-cycle policy.
//!
//! Ends with `ram_speedup_vs_full_refresh=<full / ours>`. Optional argument: the number of gates.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use rand::{Rng, SeedableRng};
use vsp_circuit::client::{decrypt_ram, decrypt_value, encrypt_ram, encrypt_value};
use vsp_circuit::{
    Blueprint, Circuit, Engine, GateKind, MemState, NetlistBuilder, NoiseModel, PlainBackend,
    RefreshPolicy, TfheBackend,
};
use vsp_tfhe::{CircuitKey, EvalKey, Params, SecretKey};

fn random_dag(gates: usize, seed: u64) -> anyhow::Result<vsp_circuit::Netlist> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut b = NetlistBuilder::new();
    let mut wires = b.input("x", 64);
    for _ in 0..gates {
        let lo = wires.len().saturating_sub(256);
        let x = wires[rng.gen_range(lo..wires.len())];
        let y = wires[rng.gen_range(lo..wires.len())];
        let k = GateKind::ALL[rng.gen_range(0..GateKind::ALL.len())];
        wires.push(b.gate(k, x, y));
    }
    let outs: Vec<_> = wires[wires.len() - 64..].to_vec();
    b.output("y", &outs);
    Ok(b.build()?)
}

const RAM: &str = r#"
[[builtin]]
type = "ram"
name = "ram"
in_addr_width = 8
in_wdata_width = 16
out_rdata_width = 16
[connect]
"ram/addr" = "@addr"
"ram/wren" = "@wren"
"ram/wdata" = "@wdata"
"@rdata" = "ram/rdata"
"#;

/// Runs the suite.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let gates: usize = match args.first() {
        Some(s) => s.parse().context("the gate count must be a number")?,
        None => 2000,
    };
    let t = Instant::now();
    let sk = SecretKey::generate(&Params::default_128())?;
    let ek = Arc::new(EvalKey::generate(&sk)?);
    let ck = Arc::new(CircuitKey::generate(&sk)?);
    println!(
        "keys: {:.1} s (params default_128)",
        t.elapsed().as_secs_f64()
    );

    // 1. Random DAG.
    let net = random_dag(gates, 1)?;
    println!("random DAG: {}", net.stats());
    let c = Arc::new(Circuit::compile(&Blueprint::single("dag", net))?);
    let x: u64 = 0x0123_4567_89ab_cdef;
    let mut plain = Engine::new(PlainBackend, c.clone());
    plain.set_input_value("x", x)?;
    plain.step()?;
    let want = plain.output_value("y", 0)?;
    let mut secs = Vec::new();
    for threads in [1usize, 2] {
        let mut e = Engine::new(TfheBackend::new(ek.clone(), None)?, c.clone());
        e.set_threads(threads);
        e.set_input("x", encrypt_value(&sk, x, 64))?;
        let st = e.step()?;
        let got = decrypt_value(&sk, &e.output("y")?)?;
        anyhow::ensure!(
            got == want,
            "encrypted DAG output {got:#x} != plain {want:#x}"
        );
        let s = st.eval_seconds + st.latch_seconds;
        println!(
            "dag {gates} gates, {threads} thread(s): {s:.2} s/cycle (workers busy {:.0}%)",
            100.0 * st.efficiency()
        );
        secs.push(s);
    }
    println!(
        "parallel efficiency (2 threads) = {:.2}",
        secs[0] / (2.0 * secs[1])
    );

    // 2. CMUX RAM 256 x 16.
    let bp = Blueprint::from_str_with_resolver(RAM, |p| {
        Err(vsp_circuit::CircuitError::Usage(format!(
            "no file {p} in this blueprint"
        )))
    })?;
    let c = Arc::new(Circuit::compile(&bp)?);
    let noise = NoiseModel::of(ek.params());
    let k = noise
        .refresh_period(8, 16, -40.0)
        .context("no refresh period")?;
    println!(
        "noise model: V_ext = {:.2e} (RAM address selectors {:.2e}), V_br = {:.2e}; refresh period K = {k} \
         cycles ({} of 256 words per cycle), failure bound 2^{:.1} per cycle",
        noise.v_ext,
        noise.v_ext_ram,
        noise.v_br,
        256usize.div_ceil(k as usize),
        noise.failure_log2(8, 16, noise.bound_after(8, k))
    );
    let words: Vec<u64> = (0..256u64).map(|i| (i * 0x3F1D) & 0xffff).collect();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut ram_secs = Vec::new();
    for (name, policy) in [
        ("noise budget", RefreshPolicy::default()),
        ("every cycle (Iyokan)", RefreshPolicy::EveryCycle),
    ] {
        let b = TfheBackend::new(ek.clone(), Some(ck.clone()))?.with_policy(policy);
        let mut e = Engine::new(b, c.clone());
        e.set_threads(threads);
        e.set_ram("ram", encrypt_ram(&sk, 8, 16, &words)?)?;
        e.set_input("addr", encrypt_value(&sk, 0xA5, 8))?;
        e.set_input("wren", encrypt_value(&sk, 1, 1))?;
        e.set_input("wdata", encrypt_value(&sk, 0xBEEF, 16))?;
        let st = e.step()?;
        let rd = decrypt_value(&sk, &e.output("rdata")?)?;
        anyhow::ensure!(rd == words[0xA5], "RAM read {rd:#x} != {:#x}", words[0xA5]);
        let MemState::Ram(r) = e.memory("ram")? else {
            anyhow::bail!("not a CMUX RAM")
        };
        let after = decrypt_ram(&sk, r)?;
        anyhow::ensure!(
            after[0xA5] == 0xBEEF && after[0xA4] == words[0xA4],
            "RAM write went wrong"
        );
        let s = st.eval_seconds + st.latch_seconds;
        println!(
            "ram 256x16 read+write, {name}, {threads} threads: {s:.2} s/cycle (read {:.2} s, write+refresh {:.2} s, {} cells refreshed)",
            st.eval_seconds,
            st.latch_seconds,
            r.refresh_count()
        );
        ram_secs.push(s);
    }
    println!(
        "ram_speedup_vs_full_refresh={:.2}",
        ram_secs[1] / ram_secs[0]
    );
    Ok(())
}
