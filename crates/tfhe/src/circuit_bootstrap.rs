//! Circuit bootstrapping TLWE level 0 → TRGSW level 1 (CGGI17 Alg. 3 / JoC 2020 §4.3; TFHEpp
//! `circuitbootstrapping`), with private functional key switching level 2 → level 1 (CGGI17 Alg. 2).
//!
//! 1. One many-LUT blind rotation (CLOT21, ePrint 2021/729) of the level-0 input into level 2: the test
//!    polynomial holds ±Bg^-(i+1)/2 at positions ≡ i (mod stride), the modulus switch rounds to multiples of
//!    the stride, so sample extraction at i = 0..ℓ gives every gadget level from one rotation; adding
//!    Bg^-(i+1)/2 turns the phase into m·Bg^-(i+1).
//! 2. For each level, two private functional key switches: with the secret function x ↦ −s1·x (mask row)
//!    and with the identity (body row), giving the 2ℓ rows of TRGSW(m). The key entries are
//!    TRLWE(P·s2_u·g_j) with one entry per digit position (gadget key switching: digits multiply entries),
//!    so the keys are t/2^(b−1) times smaller than TFHEpp's per-digit-value tables.
//! 3. FFT the rows. TRGSW(1 − m) is the gadget matrix minus TRGSW(m), computed in the Fourier domain.
//!
//! A batch runs its level-2 rotations step by step together (one read of BK2 per batch) and one private
//! key switch per function for all its samples over a blocked key (module `privks`);
//! [`CircuitKey::circuit_bootstrap_batch_par`] spreads a batch over threads, bit-identically.
//! BENCHMARKS.md "Circuit bootstrapping, by part" has the costs.

use crate::bootstrap::{blind_rotate, blind_rotate_many};
use crate::fft::{plan, Ahead, FftPlan, Kernel};
use crate::keygen::{bk_bodies, bk_from_bodies, trlwe_body, trlwe_from_seed, BkLevel};
use crate::params::Params;
use crate::privks::{PrivKsKey, BLOCK};
use crate::rng::{fresh_seed, stream, Domain, Seed};
use crate::secret_key::SecretKey;
use crate::tlwe::{check_tlwe_dim, Tlwe};
use crate::torus::{mod_switch, Gadget, Torus};
use crate::trgsw::{backward_add_words, TrgswFft};
use crate::trlwe::{mul_monomial, mul_monomial_minus_one, Trlwe};
use crate::Error;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The secret linear function a private key switch applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivFunction {
    /// x ↦ −s1·x (s1 the level-1 key polynomial): produces TRGSW mask rows.
    MinusKey = 0,
    /// x ↦ x: produces TRGSW body rows.
    Identity = 1,
}

/// Keys for circuit bootstrapping: level-0 → level-2 bootstrapping key (Fourier form) and the two private
/// key-switching keys level 2 → level 1. Separate from [`crate::EvalKey`] so gate-only users skip it.
#[derive(Debug)]
pub struct CircuitKey {
    pub(crate) params: Params,
    pub(crate) plan1: Arc<FftPlan>,
    pub(crate) plan2: Arc<FftPlan>,
    pub(crate) bk2: Vec<TrgswFft<u64>>,
    /// Per function: (N2+1)·t entries of 2·N1 words (mask then body), blocked for streaming
    /// ([`crate::privks`]).
    pub(crate) privks: [PrivKsKey; 2],
}

/// [`CircuitKey`] with masks replaced by a seed (half the size).
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedCircuitKey {
    pub(crate) params: Params,
    pub(crate) mask_seed: Seed,
    pub(crate) bk2_bodies: Vec<u64>,
    pub(crate) privks_bodies: Vec<u32>,
}

impl CompressedCircuitKey {
    /// Generates the compressed circuit key (multi-threaded).
    pub fn generate(sk: &SecretKey) -> CompressedCircuitKey {
        Self::generate_from_seeds(sk, fresh_seed(), &fresh_seed())
    }

    /// The compressed circuit key whose masks come from `mask_seed` and noise from `noise_seed`
    /// (deterministic: the same seeds give the same key bytes).
    pub(crate) fn generate_from_seeds(
        sk: &SecretKey,
        mask_seed: Seed,
        noise_seed: &Seed,
    ) -> CompressedCircuitKey {
        let p = sk.params;
        let plan1 = plan(p.n1);
        let plan2 = plan(p.n2);
        let bk2_bodies = bk_bodies::<u64>(
            &bk2_level(&p, &plan2),
            &sk.s0,
            (&sk.s2, &sk.s2_fft),
            &mask_seed,
            noise_seed,
        );
        let t = p.privks.levels as usize;
        let inputs = p.n2 + 1;
        let privks_bodies: Vec<u32> = (0..2 * inputs)
            .into_par_iter()
            .flat_map_iter(|idx| {
                let (f, u) = (idx / inputs, idx % inputs);
                let mut mr = stream(&mask_seed, Domain::PrivKs, idx as u64);
                let mut nr = stream(noise_seed, Domain::PrivKs, idx as u64);
                let s2u = if u < p.n2 { sk.s2[u] as i64 } else { -1 };
                let mut out = Vec::with_capacity(t * p.n1);
                for j in 0..t {
                    let c = p.privks.g::<u32>(j).mul_i64(s2u);
                    let m: Vec<u32> = if f == PrivFunction::MinusKey as usize {
                        sk.s1.iter().map(|&s| c.mul_i64(-(s as i64))).collect()
                    } else {
                        let mut m = vec![0u32; p.n1];
                        m[0] = c;
                        m
                    };
                    out.extend(trlwe_body(
                        &plan1, &sk.s1_fft, &m, p.sigma1, &mut mr, &mut nr,
                    ));
                }
                out
            })
            .collect();
        CompressedCircuitKey {
            params: p,
            mask_seed,
            bk2_bodies,
            privks_bodies,
        }
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Regenerates masks and transforms the bootstrapping key (multi-threaded).
    pub fn decompress(&self) -> Result<CircuitKey, Error> {
        let p = self.params;
        p.validate()?;
        let l2 = 2 * p.bk2.levels as usize;
        let t = p.privks.levels as usize;
        let inputs = p.n2 + 1;
        if self.bk2_bodies.len() != p.n0 * l2 * p.n2
            || self.privks_bodies.len() != 2 * inputs * t * p.n1
        {
            return Err(Error::Format(
                "compressed circuit key has wrong lengths".into(),
            ));
        }
        let plan1 = plan(p.n1);
        let plan2 = plan(p.n2);
        let bk2 = bk_from_bodies(&bk2_level(&p, &plan2), &self.mask_seed, &self.bk2_bodies);
        let expand = |f: usize| -> PrivKsKey {
            PrivKsKey::build(inputs * t, 2 * p.n1, t, |u| {
                let idx = f * inputs + u;
                let mut mr = stream(&self.mask_seed, Domain::PrivKs, idx as u64);
                let mut out = Vec::with_capacity(t * 2 * p.n1);
                for j in 0..t {
                    let off = (idx * t + j) * p.n1;
                    let row = trlwe_from_seed(&mut mr, &self.privks_bodies[off..off + p.n1]);
                    out.extend_from_slice(&row.a);
                    out.extend_from_slice(&row.b);
                }
                out
            })
        };
        let privks = [expand(0), expand(1)];
        Ok(CircuitKey {
            params: p,
            plan1,
            plan2,
            bk2,
            privks,
        })
    }
}

/// BK2's level: level 2 under the `bk2` gadget.
fn bk2_level<'a>(p: &Params, plan2: &'a FftPlan) -> BkLevel<'a> {
    BkLevel {
        plan: plan2,
        gadget: p.bk2,
        sigma: p.sigma2,
        domain: Domain::Bk2,
    }
}

impl CircuitKey {
    /// Generates the circuit key (multi-threaded).
    pub fn generate(sk: &SecretKey) -> Result<CircuitKey, Error> {
        CompressedCircuitKey::generate(sk).decompress()
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Size of the key in memory (bytes).
    pub fn size_bytes(&self) -> usize {
        self.bk2.iter().map(|k| k.data.len() * 8).sum::<usize>()
            + self.privks.iter().map(|k| k.size_bytes()).sum::<usize>()
    }

    /// Private functional key switching of level-2 TLWEs (dimension N2) to level-1 TRLWEs under one
    /// function; all inputs share one pass over the key.
    pub fn private_key_switch(
        &self,
        inputs: &[Tlwe<u64>],
        f: PrivFunction,
    ) -> Result<Vec<Trlwe<u32>>, Error> {
        self.check_lvl2(inputs)?;
        let digits = self.pks_digits(inputs);
        let key = &self.privks[f as usize];
        let mut words = vec![0u32; key.width() * inputs.len()];
        key.apply(
            &digits,
            inputs.len(),
            0..key.blocks(),
            &mut words,
            Kernel::detect(),
        );
        Ok(self.pks_outputs(&words, inputs.len()))
    }

    fn check_lvl2(&self, inputs: &[Tlwe<u64>]) -> Result<(), Error> {
        inputs
            .iter()
            .try_for_each(|c| check_tlwe_dim(2, c.dim(), self.params.n2))
    }

    /// The private key switch's digits: per input, (N2+1)·t signed digits (coefficient u's digit j at
    /// u·t + j) as u32 words, zero-padded to the key's padded entry count.
    fn pks_digits(&self, inputs: &[Tlwe<u64>]) -> Vec<u32> {
        let p = &self.params;
        let t = p.privks.levels as usize;
        let ep = self.privks[0].padded_entries();
        let mut digits = vec![0u32; inputs.len() * ep];
        let mut d = vec![0i64; t];
        for (c, row) in inputs.iter().zip(digits.chunks_exact_mut(ep)) {
            for (u, &x) in c.words().iter().enumerate() {
                p.privks.decompose(x, &mut d);
                for (o, &v) in row[u * t..(u + 1) * t].iter_mut().zip(&d) {
                    *o = v as u32;
                }
            }
        }
        digits
    }

    /// The TRLWEs from a private key switch's block-major words (`k` outputs).
    fn pks_outputs(&self, words: &[u32], k: usize) -> Vec<Trlwe<u32>> {
        let n1 = self.params.n1;
        (0..k)
            .map(|i| {
                let word = |w: usize| words[(w / BLOCK) * k * BLOCK + i * BLOCK + w % BLOCK];
                Trlwe {
                    a: (0..n1).map(word).collect(),
                    b: (n1..2 * n1).map(word).collect(),
                }
            })
            .collect()
    }

    /// Both private key switches of `inputs` on `threads` threads: each function's output words are
    /// split into block ranges (so every thread streams its own part of the key), and every word is
    /// computed as [`Self::private_key_switch`] computes it.
    fn private_key_switch_par(
        &self,
        inputs: &[Tlwe<u64>],
        threads: usize,
    ) -> Result<[Vec<Trlwe<u32>>; 2], Error> {
        self.check_lvl2(inputs)?;
        let digits = self.pks_digits(inputs);
        let k = inputs.len();
        let nb = self.privks[0].blocks();
        let parts = threads.div_ceil(2).clamp(1, nb);
        let range = |i: usize| i * nb / parts..(i + 1) * nb / parts;
        let pieces = run_tasks(threads, 2 * parts, |task| {
            let (f, r) = (task / parts, range(task % parts));
            let mut words = vec![0u32; r.len() * k * BLOCK];
            self.privks[f].apply(&digits, k, r, &mut words, Kernel::detect());
            words
        });
        let mut whole = [Vec::new(), Vec::new()];
        for (task, piece) in pieces.into_iter().enumerate() {
            whole[task / parts].extend_from_slice(&piece);
        }
        Ok(whole.map(|w| self.pks_outputs(&w, k)))
    }

    /// The ℓ level-2 TLWEs of m·Bg^-(i+1) (i < ℓ) from one many-LUT blind rotation of a level-0 bit,
    /// for the circuit-bootstrapping gadget `Params::cb`.
    pub fn level2_gadget_samples(&self, c: &Tlwe<u32>) -> Result<Vec<Tlwe<u64>>, Error> {
        self.level2_gadget_samples_for(c, self.params.cb, 1)
    }

    /// [`Self::level2_gadget_samples`] of several bits (ℓ samples per bit, bit after bit), their
    /// rotations run step by step together, each BK2 TRGSW read once for all of them (what
    /// [`Self::circuit_bootstrap_batch`] does); the same samples as one bit at a time.
    pub fn level2_gadget_samples_batch(&self, cs: &[&Tlwe<u32>]) -> Result<Vec<Tlwe<u64>>, Error> {
        self.level2_samples_many(cs, self.params.cb)
    }

    /// The level-2 accumulator of [`Self::level2_gadget_samples`]'s rotation before extraction: a
    /// TRLWE whose coefficient j is ±Bg^-(j mod s + 1)/2 where j mod s < ℓ (s the many-LUT stride) and
    /// 0 elsewhere, plus the rotation's noise (for noise measurements).
    pub fn level2_rotation(&self, c: &Tlwe<u32>) -> Result<Trlwe<u64>, Error> {
        self.check_lvl0(c)?;
        Ok(self.level2_rotation_for(c, self.params.cb, 1))
    }

    fn check_lvl0(&self, c: &Tlwe<u32>) -> Result<(), Error> {
        check_tlwe_dim(0, c.dim(), self.params.n0)
    }

    /// Bg^-(i+1)/2 for output gadget `g`.
    fn half(g: Gadget, i: usize) -> u64 {
        u64::pow2_neg((i as u32 + 1) * g.base_bits + 1)
    }

    /// The many-LUT test polynomial for output gadget `g`.
    fn test_vector(&self, g: Gadget) -> Vec<u64> {
        let (l, stride) = (g.levels as usize, Params::stride_of(g));
        (0..self.params.n2)
            .map(|j| {
                if j % stride < l {
                    Self::half(g, j % stride)
                } else {
                    0
                }
            })
            .collect()
    }

    /// The level-2 samples of several bits (ℓ per bit, bit after bit), their rotations run step by
    /// step together ([`blind_rotate_many`]: each BK2 TRGSW read once for all of them).
    fn level2_samples_many(&self, cs: &[&Tlwe<u32>], g: Gadget) -> Result<Vec<Tlwe<u64>>, Error> {
        for c in cs {
            self.check_lvl0(c)?;
        }
        let tv = self.test_vector(g);
        let stride = Params::stride_of(g);
        let accs = blind_rotate_many(&self.plan2, &self.bk2, self.params.bk2, cs, &tv, stride);
        let mut out = Vec::with_capacity(cs.len() * g.levels as usize);
        for acc in &accs {
            for i in 0..g.levels as usize {
                let mut s = acc.sample_extract(i)?;
                s.add_const(Self::half(g, i));
                out.push(s);
            }
        }
        Ok(out)
    }

    /// The many-LUT rotation for output gadget `g`, on one thread or (`threads` ≥ 2) on two
    /// ([`rotate_two_threads`], the same result bit for bit).
    fn level2_rotation_for(&self, c: &Tlwe<u32>, g: Gadget, threads: usize) -> Trlwe<u64> {
        let p = &self.params;
        let stride = Params::stride_of(g);
        let tv = self.test_vector(g);
        if threads >= 2 {
            rotate_two_threads(&self.plan2, &self.bk2, p.bk2, c, &tv, stride)
        } else {
            blind_rotate(&self.plan2, &self.bk2, p.bk2, c, &tv, stride)
        }
    }

    /// [`Self::level2_gadget_samples`] for output gadget `g` (`Params::cb` or `Params::cb_ram`), its
    /// rotation on `threads` threads (1 or 2).
    fn level2_gadget_samples_for(
        &self,
        c: &Tlwe<u32>,
        g: Gadget,
        threads: usize,
    ) -> Result<Vec<Tlwe<u64>>, Error> {
        self.check_lvl0(c)?;
        let acc = self.level2_rotation_for(c, g, threads);
        (0..g.levels as usize)
            .map(|i| {
                let mut s = acc.sample_extract(i)?;
                s.add_const(Self::half(g, i));
                Ok(s)
            })
            .collect()
    }

    /// Circuit bootstrapping: level-0 bit m → (TRGSW(m), TRGSW(1 − m)) at level 1 in Fourier form, ready
    /// to drive CMUXes.
    pub fn circuit_bootstrap(
        &self,
        c: &Tlwe<u32>,
    ) -> Result<(TrgswFft<u32>, TrgswFft<u32>), Error> {
        let g = self.circuit_bootstrap_one(c)?;
        let inv = g.complement();
        Ok((g, inv))
    }

    /// Circuit bootstrapping without the complement.
    pub fn circuit_bootstrap_one(&self, c: &Tlwe<u32>) -> Result<TrgswFft<u32>, Error> {
        let mut out = self.circuit_bootstrap_batch(&[c])?;
        out.pop()
            .ok_or_else(|| Error::Dimension("empty circuit-bootstrapping batch".into()))
    }

    /// Circuit bootstrapping of several bits at once, each without the complement. The private key
    /// switch streams its (large) key once for the whole batch instead of once per bit, so a batch is
    /// cheaper than the same bits one at a time; the results are the same.
    pub fn circuit_bootstrap_batch(&self, cs: &[&Tlwe<u32>]) -> Result<Vec<TrgswFft<u32>>, Error> {
        self.circuit_bootstrap_batch_for(cs, self.params.cb)
    }

    /// [`Self::circuit_bootstrap_batch`] with the RAM address gadget `Params::cb_ram`: TRGSWs whose
    /// external products add less noise (finer digits) at a higher cost.
    pub fn circuit_bootstrap_batch_ram(
        &self,
        cs: &[&Tlwe<u32>],
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        self.circuit_bootstrap_batch_for(cs, self.params.cb_ram)
    }

    /// [`Self::circuit_bootstrap_batch`] on `threads` threads of its own (scoped OS threads, not the
    /// rayon pool), for a circuit bootstrap on the critical path while the caller's other threads are
    /// idle: lower latency, the same CPU work or a little more, and results bit-identical to
    /// [`Self::circuit_bootstrap_batch`]. The level-2 rotations go one per thread while there are at
    /// least as many bits as threads; otherwise each rotation runs on two threads (the mask's and the
    /// body's transforms, and halves of the Fourier points, two barriers per step). The two private key
    /// switches are split into `threads` parts (by function, then by ranges of output words, each part
    /// streaming its own share of the key). `threads` ≤ 1 is [`Self::circuit_bootstrap_batch`].
    pub fn circuit_bootstrap_batch_par(
        &self,
        cs: &[&Tlwe<u32>],
        threads: usize,
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        self.circuit_bootstrap_batch_par_for(cs, self.params.cb, threads)
    }

    /// [`Self::circuit_bootstrap_batch_par`] with the RAM address gadget (as
    /// [`Self::circuit_bootstrap_batch_ram`]).
    pub fn circuit_bootstrap_batch_ram_par(
        &self,
        cs: &[&Tlwe<u32>],
        threads: usize,
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        self.circuit_bootstrap_batch_par_for(cs, self.params.cb_ram, threads)
    }

    fn circuit_bootstrap_batch_for(
        &self,
        cs: &[&Tlwe<u32>],
        g: Gadget,
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        let lvl2 = self.level2_samples_many(cs, g)?;
        // Both private key switches from one decomposition of the samples (what
        // `private_key_switch` computes per function).
        self.check_lvl2(&lvl2)?;
        let digits = self.pks_digits(&lvl2);
        let [minus, ident] = [PrivFunction::MinusKey, PrivFunction::Identity].map(|f| {
            let key = &self.privks[f as usize];
            let mut words = vec![0u32; key.width() * lvl2.len()];
            key.apply(
                &digits,
                lvl2.len(),
                0..key.blocks(),
                &mut words,
                Kernel::detect(),
            );
            self.pks_outputs(&words, lvl2.len())
        });
        Ok(self.assemble(cs.len(), g, &minus, &ident))
    }

    /// The TRGSWs from the private key switches' rows (per bit: ℓ mask rows, then ℓ body rows).
    fn assemble(
        &self,
        bits: usize,
        g: Gadget,
        minus: &[Trlwe<u32>],
        ident: &[Trlwe<u32>],
    ) -> Vec<TrgswFft<u32>> {
        let l = g.levels as usize;
        (0..bits)
            .map(|k| {
                let mut rows = minus[k * l..(k + 1) * l].to_vec();
                rows.extend_from_slice(&ident[k * l..(k + 1) * l]);
                TrgswFft::from_rows(&self.plan1, g, &rows)
            })
            .collect()
    }

    fn circuit_bootstrap_batch_par_for(
        &self,
        cs: &[&Tlwe<u32>],
        g: Gadget,
        threads: usize,
    ) -> Result<Vec<TrgswFft<u32>>, Error> {
        if threads <= 1 || cs.is_empty() {
            return self.circuit_bootstrap_batch_for(cs, g);
        }
        for c in cs {
            self.check_lvl0(c)?;
        }
        // Rotations: the bits split into one group per thread (each group's rotations run together),
        // or (fewer bits than threads) each rotation on two threads.
        let samples = if cs.len() >= threads {
            let group = |i: usize| i * cs.len() / threads..(i + 1) * cs.len() / threads;
            run_tasks(threads, threads, |i| {
                self.level2_samples_many(&cs[group(i)], g)
            })
        } else {
            run_tasks((threads / 2).max(1), cs.len(), |i| {
                self.level2_gadget_samples_for(cs[i], g, 2)
            })
        };
        let mut lvl2 = Vec::with_capacity(cs.len() * g.levels as usize);
        for s in samples {
            lvl2.extend(s?);
        }
        let [minus, ident] = self.private_key_switch_par(&lvl2, threads)?;
        let l = g.levels as usize;
        Ok(run_tasks(threads, cs.len(), |k| {
            let mut rows = minus[k * l..(k + 1) * l].to_vec();
            rows.extend_from_slice(&ident[k * l..(k + 1) * l]);
            TrgswFft::from_rows(&self.plan1, g, &rows)
        }))
    }
}

/// Runs `f(0) … f(tasks − 1)` on up to `threads` scoped threads (the caller's among them), each
/// taking the next task as it finishes one; results in task order.
fn run_tasks<R: Send>(threads: usize, tasks: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= tasks {
                return done;
            }
            done.push((i, f(i)));
        }
    };
    let mut all: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads.clamp(1, tasks.max(1)))
            .map(|_| s.spawn(work))
            .collect();
        let mut all = work();
        for h in handles {
            match h.join() {
                Ok(v) => all.extend(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        all
    });
    all.sort_by_key(|x| x.0);
    all.into_iter().map(|x| x.1).collect()
}

/// A barrier for a few threads that spins briefly, then parks: a blind-rotation step is tens of
/// microseconds, so with both threads on a core the spin usually ends the wait, and when the other
/// thread is not running (a loaded machine) the waiter sleeps instead of burning its time slice.
///
/// The list of parked threads and the generation change together, under the list's lock: a waiter
/// registers only while its own generation is current, and a release takes exactly the threads
/// waiting for it. (When the release bumped the generation first and took the list afterwards, a
/// thread released by the bump could run on to the next barrier and register there before the take,
/// which then consumed its entry: the next release found the list empty and the thread slept forever.
/// `spin_barrier_never_loses_a_waiter` reproduces that interleaving.)
struct SpinBarrier {
    count: AtomicUsize,
    generation: AtomicUsize,
    n: usize,
    /// Threads parked at the barrier, all waiting for the current generation to end.
    parked: Mutex<Vec<std::thread::Thread>>,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        SpinBarrier {
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            n,
            parked: Mutex::new(Vec::new()),
        }
    }

    fn parked(&self) -> std::sync::MutexGuard<'_, Vec<std::thread::Thread>> {
        self.parked.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            let woken = {
                let mut parked = self.parked();
                self.count.store(0, Ordering::Relaxed);
                self.generation.fetch_add(1, Ordering::AcqRel);
                std::mem::take(&mut *parked)
            };
            for t in woken {
                t.unpark();
            }
            return;
        }
        for _ in 0..256 {
            if self.generation.load(Ordering::Acquire) != gen {
                return;
            }
            std::hint::spin_loop();
        }
        {
            let mut parked = self.parked();
            if self.generation.load(Ordering::Acquire) != gen {
                return;
            }
            parked.push(std::thread::current());
        }
        // Unparked by this generation's release; a token left by an earlier release only makes one
        // park return early, and the loop parks again.
        while self.generation.load(Ordering::Acquire) == gen {
            std::thread::park();
        }
    }
}

/// [`blind_rotate`] on two threads, bit-identical to it: thread p owns polynomial p of the
/// accumulator (p = 0 the mask, 1 the body). Per step: (1) each thread forms X^ā·acc_p − acc_p, its
/// digits and their forward transforms (one fused kernel on the 64-bit torus where the plan has it,
/// as the one-thread step); barrier; (2) each thread
/// computes half of the Fourier points of both products (every point summed over all rows in the
/// same order as the one-thread MAC); barrier; (3) each thread gathers its polynomial's points from
/// both halves, transforms back and adds the product to acc_p.
pub(crate) fn rotate_two_threads<T: Torus>(
    plan: &FftPlan,
    bk: &[TrgswFft<T>],
    gadget: Gadget,
    c: &Tlwe<u32>,
    tv: &[T],
    stride: usize,
) -> Trlwe<T> {
    let n = tv.len();
    let (m, l) = (n / 2, gadget.levels as usize);
    let log2_2n = (2 * n).trailing_zeros();
    let log2_stride = stride.trailing_zeros();
    let ms = |x: u32| mod_switch(x, log2_2n - log2_stride) << log2_stride;
    let bbar = ms(c.b());
    let mut body = vec![T::zero(); n];
    mul_monomial(&mut body, tv, (2 * n - bbar) % (2 * n));
    let abar: Vec<usize> = c.a().iter().map(|&a| ms(a)).collect();
    // Each part's transformed digits (ℓ rows of n), and per thread the two products' Fourier values
    // (only that thread's points are written).
    let dec = [RwLock::new(vec![0.0; l * n]), RwLock::new(vec![0.0; l * n])];
    let prods = [
        [Mutex::new(vec![0.0; n]), Mutex::new(vec![0.0; n])],
        [Mutex::new(vec![0.0; n]), Mutex::new(vec![0.0; n])],
    ];
    // Points per thread: a multiple of 4 (the MAC kernels' block) unless n/2 is smaller.
    let half = if m >= 8 { (m / 2) & !3 } else { m };
    let points = [(0, half), (half, m)];
    let barrier = SpinBarrier::new(2);
    let worker = |p: usize, mut poly: Vec<T>| -> Vec<T> {
        let mut diff = vec![T::zero(); n];
        let mut full = vec![0.0; n];
        for (key, &a) in bk.iter().zip(&abar) {
            if a == 0 {
                continue;
            }
            // (1) This part's digits, transformed (prefetching the key shares that
            // external_product_into's transforms of this part prefetch): on the 64-bit torus
            // rotation, decomposition and first forward pass in one kernel where the plan has it
            // (`FftPlan::rot_dec_forward_u64`, the same values bit for bit).
            {
                let mut d = dec[p].write().unwrap_or_else(|e| e.into_inner());
                let share = key.data.len().div_ceil(2 * l).max(1);
                let mine = key.data.get(p * l * share..).unwrap_or(&[]);
                let mut ahead =
                    Ahead::new(&mine[..mine.len().min(l * share)], l * plan.ahead_steps());
                let any: &dyn std::any::Any = &poly;
                let fused = any.downcast_ref::<Vec<u64>>().is_some_and(|words| {
                    plan.rot_dec_forward_u64(gadget, words, a % (2 * n), &mut d, n, &mut ahead)
                });
                if !fused {
                    mul_monomial_minus_one(&mut diff, &poly, a);
                    gadget.decompose_poly_f64(&diff, &mut d);
                    let mut shares = key.data.chunks(share);
                    let mut shares = shares.by_ref().skip(p * l);
                    for buf in d.chunks_exact_mut(n) {
                        let (re, im) = buf.split_at_mut(m);
                        plan.forward_in_place_ahead(re, im, shares.next().unwrap_or(&[]));
                    }
                }
            }
            barrier.wait();
            // (2) This thread's points of both products.
            {
                let xa = dec[0].read().unwrap_or_else(|e| e.into_inner());
                let xb = dec[1].read().unwrap_or_else(|e| e.into_inner());
                let mut pa = prods[p][0].lock().unwrap_or_else(|e| e.into_inner());
                let mut pb = prods[p][1].lock().unwrap_or_else(|e| e.into_inner());
                plan.mul_acc_rows_points(&mut pa, &mut pb, [&xa, &xb], &key.data, points[p]);
            }
            barrier.wait();
            // (3) Polynomial p's points from both threads, back to the torus, added to acc_p.
            for (t, &(j0, j1)) in points.iter().enumerate() {
                let src = prods[t][p].lock().unwrap_or_else(|e| e.into_inner());
                full[j0..j1].copy_from_slice(&src[j0..j1]);
                full[m + j0..m + j1].copy_from_slice(&src[m + j0..m + j1]);
            }
            // Rounded and added in the inverse transform's last pass where the kernel has that.
            backward_add_words(plan, &mut poly, &mut full, &mut Ahead::new(&[], 1));
        }
        poly
    };
    let (a, b) = std::thread::scope(|s| {
        let h = s.spawn(|| worker(1, body));
        let a = worker(0, vec![T::zero(); n]);
        match h.join() {
            Ok(b) => (a, b),
            Err(e) => std::panic::resume_unwind(e),
        }
    });
    Trlwe { a, b }
}

#[cfg(test)]
mod tests {
    use super::SpinBarrier;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Pairs of threads pass a fresh barrier many times with little work between (more threads than
    /// cores, so a releaser is often descheduled inside its release). A lost waiter never returns, so
    /// the check is that every pair finishes (the generous deadline only turns a hang into a
    /// failure). The barrier that took its list after the generation bump hung in 2 of 6 runs of
    /// this test at half its length on a loaded 2-core Zen 4, and `circuit_bootstrap_batch_par` with
    /// one bit on two threads hung within 50 calls there.
    #[test]
    fn spin_barrier_never_loses_a_waiter() {
        let (tx, rx) = mpsc::channel();
        for pair in 0..8u64 {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut total = 0u64;
                for _ in 0..600 {
                    let b = SpinBarrier::new(2);
                    let work = |p: u64| {
                        let mut x = p + pair;
                        for s in 0..400u64 {
                            for i in 0..(s * 7 + p * 13) % 64 {
                                x = x.wrapping_mul(31).wrapping_add(i);
                            }
                            b.wait();
                        }
                        x
                    };
                    total += std::thread::scope(|s| {
                        let h = s.spawn(|| work(1));
                        let a = work(0);
                        a.wrapping_add(h.join().expect("barrier thread panicked"))
                    });
                }
                let _ = tx.send(total);
            });
        }
        drop(tx);
        for _ in 0..8 {
            rx.recv_timeout(Duration::from_secs(600))
                .expect("a thread never returned from the barrier (lost wake-up)");
        }
    }
}
