//! What the ckks integration tests share: the device configurations they sweep and the caller's
//! memory (RAM buffers and filled tables) of a `BufferEncryptor`. Every test binary uses a part.
#![allow(dead_code)]

use vsp_ckks::{
    fill_tables, BufferEncryptor, CkksParams, Complex, DeviceConfig, DeviceMemory, FftRoots,
    IndexMap, MemoryMode, NttRoots, SecretKeyForm,
};

/// Every NTT-root option.
pub const NTT_ROOTS: [NttRoots; 4] = [
    NttRoots::OnTheFly,
    NttRoots::OneShot,
    NttRoots::LoadedPlain,
    NttRoots::Loaded,
];

/// Every index-map option.
pub const INDEX_MAPS: [IndexMap; 3] = [IndexMap::OnTheFly, IndexMap::Persistent, IndexMap::Loaded];

/// Every secret-key form.
pub const SECRET_KEYS: [SecretKeyForm; 3] = [
    SecretKeyForm::NotPersistent,
    SecretKeyForm::PersistentAcrossPrimes,
    SecretKeyForm::Persistent,
];

/// One device configuration from its (FFT roots, index map, NTT roots, memory) choice.
pub fn config(
    params: &CkksParams,
    (fft_roots, index_map, ntt_roots, memory): (FftRoots, IndexMap, NttRoots, MemoryMode),
    secret_key: SecretKeyForm,
) -> DeviceConfig {
    DeviceConfig {
        params: params.clone(),
        fft_roots,
        index_map,
        ntt_roots,
        memory,
        secret_key,
    }
}

/// Every configuration with one of `fft_roots`, one of `index_maps`, each NTT-root option, each
/// memory mode and one of `secret_keys`, nested in that order.
pub fn configs(
    params: &CkksParams,
    fft_roots: &[FftRoots],
    index_maps: &[IndexMap],
    secret_keys: &[SecretKeyForm],
) -> Vec<DeviceConfig> {
    let mut out = Vec::new();
    for &fft in fft_roots {
        for &index in index_maps {
            for ntt in NTT_ROOTS {
                for memory in [MemoryMode::Low, MemoryMode::Fast] {
                    for &sk in secret_keys {
                        out.push(config(params, (fft, index, ntt, memory), sk));
                    }
                }
            }
        }
    }
    out
}

/// The caller's memory of a `BufferEncryptor` for one configuration: RAM buffers (zeroed) and the
/// (flash) tables, filled.
pub struct CallerMemory {
    pub msg: Vec<f64>,
    pub a: Vec<u32>,
    pub b: Vec<u32>,
    pub roots: Vec<u32>,
    pub key: Vec<u8>,
    pub fft: Vec<Complex>,
    pub index: Vec<u16>,
    pub ntt: Vec<u32>,
}

impl CallerMemory {
    pub fn new(cfg: &DeviceConfig) -> Self {
        let s = cfg.buffer_sizes();
        let mut mem = CallerMemory {
            msg: vec![0.0; s.msg],
            a: vec![0u32; s.a],
            b: vec![0u32; s.b],
            roots: vec![0u32; s.roots],
            key: vec![0u8; s.key],
            fft: vec![Complex::default(); s.fft_roots],
            index: vec![0u16; s.index_map],
            ntt: vec![0u32; s.ntt_tables],
        };
        fill_tables(cfg, &mut mem.fft, &mut mem.index, &mut mem.ntt).unwrap();
        mem
    }

    /// An encryptor over this memory (allocates nothing).
    pub fn encryptor(&mut self, cfg: DeviceConfig) -> BufferEncryptor<'_> {
        BufferEncryptor::new(
            cfg,
            DeviceMemory {
                msg: &mut self.msg,
                a: &mut self.a,
                b: &mut self.b,
                roots: &mut self.roots,
                key: &mut self.key,
                fft_roots: &self.fft,
                index_map: &self.index,
                ntt_tables: &self.ntt,
            },
        )
        .unwrap()
    }

    /// Whether the message, `a` and key buffers hold only zeros (wiped).
    pub fn wiped(&self) -> bool {
        self.msg.iter().all(|&v| v == 0.0)
            && self.a.iter().all(|&v| v == 0)
            && self.key.iter().all(|&v| v == 0)
    }
}
