//! The allocation-free encryptor (`BufferEncryptor`), as built by `cargo test -p vsp-ckks
//! --no-default-features` (CI runs it so; the library then has no allocator at all) and by the default
//! build. Buffers and tables come from the test; a counting global allocator checks that setup and
//! encryption allocate nothing; ciphertexts are decrypted here by hand (c0 + c1·s per prime, the
//! test's own arithmetic) and decoded, in every memory mode and secret-key form.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

use common::{configs, CallerMemory, SECRET_KEYS};
use vsp_ckks::arith::{minimal_primitive_root, mul_mod};
use vsp_ckks::device::ntt::{forward_otf, inverse_otf, NttPrime};
use vsp_ckks::encoding::coeff_index;
use vsp_ckks::{
    CkksParams, Complex, EncoderView, EncryptionSeeds, FftRoots, IndexMap, PackedSecretKey, Part,
    PublicKeyView, SinkError,
};

struct Counting;
static COUNT: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTED.with(Cell::get) {
            COUNT.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: forwarding the caller's layout to the system allocator.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: p was allocated by System with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns how many allocations this thread made meanwhile.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = COUNT.load(Ordering::SeqCst);
    COUNTED.with(|c| c.set(true));
    let r = f();
    COUNTED.with(|c| c.set(false));
    (r, COUNT.load(Ordering::SeqCst) - before)
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Per prime: NTT(s) (the test's own transform of s mod q).
fn ntt_of(params: &CkksParams, s: &[i8]) -> Vec<Vec<u32>> {
    let n = params.n();
    params
        .data_primes()
        .iter()
        .map(|&q| {
            let psi = minimal_primitive_root(2 * n as u64, q).unwrap();
            let p = NttPrime::new(q as u32, psi as u32, params.log_n()).unwrap();
            let mut v: Vec<u32> = s
                .iter()
                .map(|&c| (c as i64).rem_euclid(q as i64) as u32)
                .collect();
            forward_otf(&mut v, &p);
            v
        })
        .collect()
}

/// c0 + c1·s, back to coefficients, centered with respect to the first prime; checks that every
/// prime agrees (the phase is small) and returns it.
fn phase(params: &CkksParams, c0: &[Vec<u32>], c1: &[Vec<u32>], s_ntt: &[Vec<u32>]) -> Vec<i64> {
    let n = params.n();
    let mut out: Option<Vec<i64>> = None;
    for (j, &q) in params.data_primes().iter().enumerate() {
        let psi = minimal_primitive_root(2 * n as u64, q).unwrap();
        let p = NttPrime::new(q as u32, psi as u32, params.log_n()).unwrap();
        let mut x: Vec<u32> = (0..n)
            .map(|i| {
                ((c0[j][i] as u64 + mul_mod(c1[j][i] as u64, s_ntt[j][i] as u64, q)) % q) as u32
            })
            .collect();
        inverse_otf(&mut x, &p);
        let centered: Vec<i64> = x
            .iter()
            .map(|&v| {
                if (v as u64) > q / 2 {
                    v as i64 - q as i64
                } else {
                    v as i64
                }
            })
            .collect();
        match &out {
            None => out = Some(centered),
            Some(o) => assert!(
                o == &centered,
                "prime {j} disagrees with prime 0 (the phase is not small): {:?} vs {:?}",
                &o[..4],
                &centered[..4]
            ),
        }
    }
    out.unwrap()
}

fn decode(params: &CkksParams, phase: &[i64]) -> Vec<Complex> {
    let n = params.n();
    let coeffs: Vec<f64> = phase.iter().map(|&c| c as f64 / params.scale()).collect();
    let mut scratch = vec![Complex::default(); n];
    let mut out = vec![Complex::default(); n / 2];
    EncoderView::on_the_fly(n)
        .unwrap()
        .decode(&coeffs, &mut scratch, &mut out)
        .unwrap();
    out
}

#[test]
fn buffer_encryptor_encrypts_without_allocating_in_every_mode() {
    let params = CkksParams::default();
    let (n, l) = (params.n(), params.data_primes().len());
    let mut rng = 0x1234_5678_9abc_def1u64;
    let s: Vec<i8> = (0..n).map(|_| (xorshift(&mut rng) % 3) as i8 - 1).collect();
    let mut packed = vec![0u8; n / 4];
    for (i, &c) in s.iter().enumerate() {
        packed[i / 4] |= (if c == 1 {
            1
        } else if c == -1 {
            2
        } else {
            0
        }) << (2 * (i % 4));
    }
    let sk = PackedSecretKey::new(n, &packed).unwrap();
    let s_ntt = ntt_of(&params, &s);
    // A public key (pk0, pk1) = (−a·s + e, a) in NTT form, made by the test.
    let mut pk_words = vec![0u32; 2 * l * n];
    let e_int: Vec<i64> = (0..n)
        .map(|_| (xorshift(&mut rng) % 7) as i64 - 3)
        .collect();
    for (j, &q) in params.data_primes().iter().enumerate() {
        let psi = minimal_primitive_root(2 * n as u64, q).unwrap();
        let p = NttPrime::new(q as u32, psi as u32, params.log_n()).unwrap();
        let mut e: Vec<u32> = e_int
            .iter()
            .map(|&x| x.rem_euclid(q as i64) as u32)
            .collect();
        forward_otf(&mut e, &p);
        for i in 0..n {
            let a = xorshift(&mut rng) % q;
            let as_ = mul_mod(a, s_ntt[j][i] as u64, q);
            pk_words[j * n + i] = ((e[i] as u64 + q - as_) % q) as u32;
            pk_words[(l + j) * n + i] = a as u32;
        }
    }
    let pk = PublicKeyView::new(&params, &pk_words).unwrap();
    let values: Vec<f64> = (0..n / 2)
        .map(|i| ((i * 37) % 101) as f64 / 10.0 - 5.0)
        .collect();
    let seeds = EncryptionSeeds {
        shareable: [7; 64],
        private: [9; 32],
    };
    let mut expected_msg = vec![0.0; n];
    EncoderView::on_the_fly(n)
        .unwrap()
        .encode_real(&values, params.scale(), &mut expected_msg)
        .unwrap();

    let mut checked = 0;
    for cfg in configs(
        &params,
        &[FftRoots::OnTheFly, FftRoots::Loaded],
        &[IndexMap::OnTheFly, IndexMap::Loaded],
        &SECRET_KEYS,
    ) {
        // The caller's memory: RAM buffers and (flash) tables.
        let mut mem = CallerMemory::new(&cfg);
        let mut c = [vec![vec![0u32; n]; l], vec![vec![0u32; n]; l]];
        let mut c_asym = [vec![vec![0u32; n]; l], vec![vec![0u32; n]; l]];
        let mut seed_seen = false;
        let (_, allocs) = allocations(|| {
            let mut enc = mem.encryptor(cfg.clone());
            let mut sink = |p: Part<'_>| -> Result<(), SinkError> {
                match p {
                    Part::Seed(_) => seed_seen = true,
                    Part::Limb {
                        poly,
                        prime,
                        coeffs,
                    } => c[poly][prime].copy_from_slice(coeffs),
                }
                Ok(())
            };
            // The key from storage (the packed slice stands for flash), full form.
            enc.encrypt_symmetric_stored(&values[..], &sk, &seeds, false, &mut sink)
                .unwrap();
            let mut sink2 = |p: Part<'_>| -> Result<(), SinkError> {
                if let Part::Limb {
                    poly,
                    prime,
                    coeffs,
                } = p
                {
                    c_asym[poly][prime].copy_from_slice(coeffs);
                }
                Ok(())
            };
            enc.encrypt_asymmetric(&values[..], &pk, &seeds, &mut sink2)
                .unwrap();
        });
        assert_eq!(allocs, 0, "{cfg:?}: allocated");
        assert!(!seed_seen, "full form sends no seed");
        // Symmetric: the phase is the encoded message plus CBD(21) noise.
        let ph = phase(&params, &c[0], &c[1], &s_ntt);
        let mut noisy = 0;
        for (i, &v) in ph.iter().enumerate() {
            let d = v - expected_msg[coeff_index(i, n)] as i64;
            assert!(d.abs() <= 21, "{cfg:?}: coefficient {i} off by {d}");
            noisy += (d != 0) as usize;
        }
        assert!(noisy > n / 2, "{cfg:?}: no noise");
        // Public key: decodes to the values.
        let ph = phase(&params, &c_asym[0], &c_asym[1], &s_ntt);
        let slots = decode(&params, &ph);
        for (z, v) in slots.iter().zip(&values) {
            assert!(
                (z.re - v).abs() < 1e-2 && z.im.abs() < 1e-2,
                "{cfg:?}: {z:?} vs {v}"
            );
        }
        // Everything was wiped (the key slot keeps only a persistent key).
        assert!(mem.wiped());
        checked += 1;
    }
    assert_eq!(checked, 2 * 2 * 4 * 2 * 3);
}
