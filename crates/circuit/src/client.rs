//! Client-side helpers (they need the secret key): encrypt `@` inputs and memory images in the layout the
//! engine uses, decrypt outputs and RAM contents. The memory layout is defined in [`crate::cmux`]: ROM
//! words are packed S = next_pow2(width) coefficients apart, N/S words per TRLWE; RAM holds one TRLWE per
//! bit with ±1/4 in coefficient 0; MUX memories are plain gate bits (word j bit i at `j·width + i`).

use vsp_tfhe::{SecretKey, Tlwe};

use crate::cmux::{TfheRam, TfheRom, QUARTER};
use crate::error::CircuitError;
use crate::noise::NoiseModel;

fn check_words(a: usize, w: usize, words: &[u64]) -> Result<(), CircuitError> {
    if a == 0
        || a > crate::blueprint::MAX_ADDR_WIDTH
        || w == 0
        || w > crate::blueprint::MAX_DATA_WIDTH
    {
        return Err(CircuitError::Usage(format!(
            "impossible memory shape {a}×{w}"
        )));
    }
    if words.len() > 1 << a {
        return Err(CircuitError::Usage(format!(
            "{} words do not fit 2^{a} words",
            words.len()
        )));
    }
    if let Some((j, v)) = words
        .iter()
        .enumerate()
        .find(|(_, &v)| w < 64 && v >> w != 0)
    {
        return Err(CircuitError::Usage(format!(
            "word {j} = {v:#x} does not fit {w} bits"
        )));
    }
    Ok(())
}

fn wide(bit: bool) -> u32 {
    if bit {
        QUARTER
    } else {
        QUARTER.wrapping_neg()
    }
}

/// Encrypts the `width` low bits of `value` as gate bits (LSB first), e.g. for [`crate::Engine::set_input`].
pub fn encrypt_value(sk: &SecretKey, value: u64, width: usize) -> Vec<Tlwe<u32>> {
    (0..width)
        .map(|i| sk.encrypt_bit(i < 64 && (value >> i) & 1 == 1))
        .collect()
}

/// Decrypts gate bits (LSB first) into an integer (bits beyond 64 are ignored).
pub fn decrypt_value(sk: &SecretKey, bits: &[Tlwe<u32>]) -> Result<u64, CircuitError> {
    let mut v = 0u64;
    for (i, b) in bits.iter().enumerate().take(64) {
        if sk.decrypt_bit(b).map_err(crate::cmux::tfhe_err)? {
            v |= 1 << i;
        }
    }
    Ok(v)
}

/// Encrypts a ROM image of `2^a` words of `w` bits (missing words are 0) for a CMUX ROM.
pub fn encrypt_rom(
    sk: &SecretKey,
    a: usize,
    w: usize,
    words: &[u64],
) -> Result<TfheRom, CircuitError> {
    check_words(a, w, words)?;
    let n = sk.params().n1;
    let (slot_log, low_bits, nblocks) = TfheRom::layout(a, w, n)?;
    let per_block = 1usize << low_bits;
    let blocks = (0..nblocks)
        .map(|b| {
            let mut m = vec![QUARTER.wrapping_neg(); n];
            for k in 0..per_block {
                let word = words.get(b * per_block + k).copied().unwrap_or(0);
                for i in 0..w {
                    m[(k << slot_log) + i] = wide((word >> i) & 1 == 1);
                }
            }
            sk.encrypt_trlwe(&m).map_err(crate::cmux::tfhe_err)
        })
        .collect::<Result<_, _>>()?;
    Ok(TfheRom {
        addr_width: a,
        data_width: w,
        slot_log,
        low_bits,
        blocks,
    })
}

/// Encrypts a RAM image of `2^a` words of `w` bits (missing words are 0) for a CMUX RAM.
pub fn encrypt_ram(
    sk: &SecretKey,
    a: usize,
    w: usize,
    words: &[u64],
) -> Result<TfheRam, CircuitError> {
    check_words(a, w, words)?;
    let n = sk.params().n1;
    let mut cells = Vec::with_capacity((1 << a) * w);
    for j in 0..1usize << a {
        let word = words.get(j).copied().unwrap_or(0);
        for i in 0..w {
            let mut m = vec![0u32; n];
            m[0] = wide((word >> i) & 1 == 1);
            cells.push(sk.encrypt_trlwe(&m).map_err(crate::cmux::tfhe_err)?);
        }
    }
    let v = NoiseModel::of(sk.params()).v_fresh;
    Ok(TfheRam {
        addr_width: a,
        data_width: w,
        cells,
        var: vec![v; 1 << a],
        next_refresh: 0,
        refreshes: 0,
    })
}

/// Decrypts a CMUX RAM into words.
pub fn decrypt_ram(sk: &SecretKey, ram: &TfheRam) -> Result<Vec<u64>, CircuitError> {
    let w = ram.data_width;
    (0..1usize << ram.addr_width)
        .map(|j| {
            let mut v = 0u64;
            for i in 0..w {
                let ph = sk
                    .phase_trlwe(&ram.cells[j * w + i])
                    .map_err(crate::cmux::tfhe_err)?;
                if (ph[0] as i32) > 0 {
                    v |= 1 << i;
                }
            }
            Ok(v)
        })
        .collect()
}

/// The largest |error| (torus units) among the RAM's cells: for noise measurements.
pub fn ram_max_error(sk: &SecretKey, ram: &TfheRam) -> Result<f64, CircuitError> {
    let mut worst = 0f64;
    for c in &ram.cells {
        let ph = sk.phase_trlwe(c).map_err(crate::cmux::tfhe_err)?[0] as i32 as f64 / 2f64.powi(32);
        worst = worst.max((ph.abs() - 0.25).abs());
    }
    Ok(worst)
}

/// Decrypts a CMUX ROM into words.
pub fn decrypt_rom(sk: &SecretKey, rom: &TfheRom) -> Result<Vec<u64>, CircuitError> {
    let per_block = 1usize << rom.low_bits;
    let mut out = Vec::with_capacity(1 << rom.addr_width);
    for b in &rom.blocks {
        let ph = sk.phase_trlwe(b).map_err(crate::cmux::tfhe_err)?;
        for k in 0..per_block {
            let mut v = 0u64;
            for i in 0..rom.data_width {
                if (ph[(k << rom.slot_log) + i] as i32) > 0 {
                    v |= 1 << i;
                }
            }
            out.push(v);
        }
    }
    out.truncate(1 << rom.addr_width);
    Ok(out)
}

/// Encrypts an image for a MUX memory (`mux-rom`/`mux-ram`): word j bit i at `j·w + i`.
pub fn encrypt_mux_memory(
    sk: &SecretKey,
    a: usize,
    w: usize,
    words: &[u64],
) -> Result<Vec<Tlwe<u32>>, CircuitError> {
    check_words(a, w, words)?;
    Ok((0..1usize << a)
        .flat_map(|j| {
            let word = words.get(j).copied().unwrap_or(0);
            (0..w).map(move |i| (word >> i) & 1 == 1)
        })
        .map(|b| sk.encrypt_bit(b))
        .collect())
}

/// Decrypts the cells of a MUX memory into words.
pub fn decrypt_mux_memory(
    sk: &SecretKey,
    w: usize,
    cells: &[Tlwe<u32>],
) -> Result<Vec<u64>, CircuitError> {
    cells.chunks(w).map(|c| decrypt_value(sk, c)).collect()
}
