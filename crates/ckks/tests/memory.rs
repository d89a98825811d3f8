//! Measured memory of the device side: a counting allocator records the heap peak of setup plus one
//! encryption at N = 4096, checks that encryption allocates nothing, and that the measured peak
//! equals what `working_memory` predicts for the heap part.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod common;

use common::config;
use vsp_ckks::device::memory::STATE_BYTES;
use vsp_ckks::{
    working_memory, CkksParams, DeviceConfig, DeviceEncryptor, DevicePublicKey, DeviceSecretKey,
    EncryptionKind, EncryptionSeeds, FftRoots, IndexMap, MemoryMode, NttRoots, Part, SecretKeyForm,
    SinkError,
};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static LOCK: Mutex<()> = Mutex::new(());

thread_local! {
    /// Set on the measuring thread: allocations by other threads (the test harness's) do not count
    /// as allocations during encryption (they made this test fail now and then).
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), Ordering::SeqCst) + l.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        if COUNTED.with(std::cell::Cell::get) {
            COUNT.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: forwarding the caller's layout to the system allocator.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), Ordering::SeqCst);
        // SAFETY: p was allocated by System with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (heap peak of setup + encryption above the baseline, allocations during encryption).
fn measure(
    cfg: &DeviceConfig,
    kind: EncryptionKind,
    sk: &DeviceSecretKey,
    pk: &DevicePublicKey,
) -> (usize, usize) {
    let values: Vec<f64> = (0..2048).map(|i| (i % 17) as f64 - 8.0).collect();
    let seeds = EncryptionSeeds {
        shareable: [3; 64],
        private: [4; 32],
    };
    let mut checksum = 0u64;
    let mut sink = |p: Part<'_>| -> Result<(), SinkError> {
        if let Part::Limb { coeffs, .. } = p {
            checksum = checksum.wrapping_add(coeffs[0] as u64);
        }
        Ok(())
    };
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let mut enc = DeviceEncryptor::new(cfg.clone()).unwrap();
    let before = COUNT.load(Ordering::SeqCst);
    COUNTED.with(|c| c.set(true));
    match kind {
        EncryptionKind::Symmetric => enc
            .encrypt_symmetric_seeded(&values, sk, &seeds, &mut sink)
            .unwrap(),
        EncryptionKind::Asymmetric => enc
            .encrypt_asymmetric(&values, pk, &seeds, &mut sink)
            .unwrap(),
    }
    COUNTED.with(|c| c.set(false));
    let allocs = COUNT.load(Ordering::SeqCst) - before;
    let peak = PEAK.load(Ordering::SeqCst) - base;
    drop(enc);
    assert_ne!(checksum, 0);
    (peak, allocs)
}

#[test]
fn measured_peak_matches_accounting_and_encryption_does_not_allocate() {
    let _g = LOCK.lock().unwrap();
    let params = CkksParams::default();
    let n = params.n();
    let sk = DeviceSecretKey::from_ternary(&(0..n).map(|i| (i % 3) as i8 - 1).collect::<Vec<_>>())
        .unwrap();
    let limbs: Vec<Vec<u64>> = params
        .data_primes()
        .iter()
        .map(|&q| (0..n as u64).map(|i| i * 7 % q).collect())
        .collect();
    let pk = DevicePublicKey::from_limbs(&params, &limbs, &limbs).unwrap();
    let mut rows = Vec::new();
    for choice in [
        (
            FftRoots::OnTheFly,
            IndexMap::OnTheFly,
            NttRoots::OnTheFly,
            MemoryMode::Low,
        ),
        (
            FftRoots::OnTheFly,
            IndexMap::OnTheFly,
            NttRoots::OneShot,
            MemoryMode::Low,
        ),
        (
            FftRoots::OnTheFly,
            IndexMap::Persistent,
            NttRoots::OnTheFly,
            MemoryMode::Fast,
        ),
        (
            FftRoots::Loaded,
            IndexMap::Persistent,
            NttRoots::Loaded,
            MemoryMode::Fast,
        ),
        (
            FftRoots::Loaded,
            IndexMap::Persistent,
            NttRoots::Loaded,
            MemoryMode::Low,
        ),
        (
            FftRoots::OnTheFly,
            IndexMap::OnTheFly,
            NttRoots::LoadedPlain,
            MemoryMode::Low,
        ),
        (
            FftRoots::OnTheFly,
            IndexMap::Persistent,
            NttRoots::LoadedPlain,
            MemoryMode::Fast,
        ),
    ] {
        let cfg = config(&params, choice, SecretKeyForm::Persistent);
        for kind in [EncryptionKind::Symmetric, EncryptionKind::Asymmetric] {
            let (peak, allocs) = measure(&cfg, kind, &sk, &pk);
            assert_eq!(allocs, 0, "{cfg:?} {kind:?} allocated during encryption");
            let r = working_memory(&cfg, kind);
            // The heap holds the working buffers and the tables; the SHAKE state and the keys
            // (held by the caller) are not part of the encryptor's heap, except the encryptor's own
            // N/4-byte slot for a persistent secret key. Small allocations add at most 1 KiB.
            let predicted = r.working - STATE_BYTES + r.tables + n / 4;
            assert!(
                peak >= predicted && peak <= predicted + 1024,
                "{cfg:?} {kind:?}: measured {peak}, predicted {predicted}"
            );
            rows.push((cfg.clone(), kind, peak, r));
        }
    }
    // The headline: symmetric, everything on the fly, one buffer: ≤ 64 KiB including the secret key.
    let (_, _, peak, r) = &rows[0];
    let sym_total = peak + r.keys + STATE_BYTES;
    assert!(
        sym_total <= 64 * 1024,
        "low-memory symmetric needs {sym_total} bytes"
    );
    for (cfg, kind, peak, r) in &rows {
        println!(
            "{:?}/{:?}/{:?}/{:?} {:?}: heap peak {} B, predicted working {} B + tables {} B + keys {} B",
            cfg.fft_roots, cfg.index_map, cfg.ntt_roots, cfg.memory, kind, peak, r.working, r.tables, r.keys
        );
    }
}
