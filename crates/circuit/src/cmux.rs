//! CMUX memory over TFHE (VSP paper seed 000, "CMUX Memory"; CGGI17 vertical packing).
//!
//! * ROM: bits packed into level-1 TRLWEs — bit i of word k sits in coefficient `(k mod P)·S + i` of TRLWE
//!   `k div P`, where S is the word width rounded up to a power of two and P = N/S words per TRLWE. A read
//!   selects the TRLWE with a CMUX tree on the high address bits, rotates word `k mod P` to coefficient 0 by
//!   a blind rotation driven by the low address bits (CMUX between acc and X^(−S·2^j)·acc), then
//!   sample-extracts and key-switches each bit and gate-bootstraps it into a fresh gate bit.
//! * RAM: one TRLWE per stored bit (coefficient 0 = ±1/4). Read: a CMUX tree per data bit, extraction, key
//!   switch, gate bootstrapping. Write: the value wren ? wdata : rdata as a TRLWE (HomMUX without SE and
//!   IKS); its difference from the stored bit (the read's CMUX tree output, kept from the cycle's read)
//!   is demultiplexed by the address (a tree of external products) and added to every cell — 4× fewer external products than Iyokan's chain of `a` CMUXes
//!   per cell at a = 8, for the same noise. Unlike Iyokan, cells are not all refreshed every cycle: the noise bound of every
//!   word is tracked ([`crate::noise`]) and words are refreshed round-robin, as few per cycle as the
//!   failure budget allows; the bounds are stored in snapshots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use vsp_tfhe::{Booted, Bootstrap, CircuitKey, EvalKey, Tlwe, TrgswFft, Trlwe};

use crate::backend::check_write_part;
use crate::error::CircuitError;
use crate::noise::{NoiseModel, RefreshPolicy};

/// 1/4 on the 32-bit torus: a stored 1 is +1/4, a stored 0 is −1/4.
pub(crate) const QUARTER: u32 = 1 << 30;

pub(crate) fn tfhe_err(e: vsp_tfhe::Error) -> CircuitError {
    CircuitError::Tfhe(e)
}

/// A CMUX ROM image (vertical packing).
#[derive(Clone, Debug, PartialEq)]
pub struct TfheRom {
    pub(crate) addr_width: usize,
    pub(crate) data_width: usize,
    /// log2 of the slot width S (word width rounded up to a power of two).
    pub(crate) slot_log: usize,
    /// Address bits resolved by the blind rotation (min(a, log2 N − slot_log)).
    pub(crate) low_bits: usize,
    pub(crate) blocks: Vec<Trlwe<u32>>,
}

impl TfheRom {
    /// The packing of a ROM of `2^a × w` bits into TRLWEs of degree `n`: (slot_log, low_bits, blocks).
    pub fn layout(a: usize, w: usize, n: usize) -> Result<(usize, usize, usize), CircuitError> {
        let slot_log = w.next_power_of_two().trailing_zeros() as usize;
        let n_log = n.trailing_zeros() as usize;
        if slot_log > n_log {
            return Err(CircuitError::Usage(format!(
                "ROM words of {w} bits do not fit degree {n}"
            )));
        }
        let low = a.min(n_log - slot_log);
        Ok((slot_log, low, 1 << (a - low)))
    }
    /// The packed TRLWEs.
    pub fn blocks(&self) -> &[Trlwe<u32>] {
        &self.blocks
    }
}

/// A CMUX RAM: one TRLWE per stored bit plus the tracked noise bound of each word.
#[derive(Clone, Debug, PartialEq)]
pub struct TfheRam {
    pub(crate) addr_width: usize,
    pub(crate) data_width: usize,
    /// Word j bit i at `j * data_width + i`.
    pub(crate) cells: Vec<Trlwe<u32>>,
    /// Upper bound of the error variance of each word's cells.
    pub(crate) var: Vec<f64>,
    /// Next word of the round-robin refresh.
    pub(crate) next_refresh: u64,
    /// Refresh bootstraps performed so far (for statistics).
    pub(crate) refreshes: u64,
}

impl TfheRam {
    /// The cells (word j bit i at `j * data_width + i`).
    pub fn cells(&self) -> &[Trlwe<u32>] {
        &self.cells
    }
    /// The tracked noise-variance bound of each word.
    pub fn noise_bounds(&self) -> &[f64] {
        &self.var
    }
    /// Cells refreshed (bootstrapped) since the image was made.
    pub fn refresh_count(&self) -> u64 {
        self.refreshes
    }
}

/// Runs `f(i)` for i in 0..n on up to `threads` scoped threads; the first error wins.
pub(crate) fn par_for<T: Send>(
    n: usize,
    threads: usize,
    f: impl Fn(usize) -> Result<T, CircuitError> + Sync,
) -> Result<Vec<T>, CircuitError> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let err: Mutex<Option<CircuitError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                match f(i) {
                    Ok(v) => {
                        if let Some(slot) = out.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i)
                        {
                            *slot = Some(v);
                        }
                    }
                    Err(e) => {
                        err.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert(e);
                        next.store(n, Ordering::Relaxed);
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = err.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|v| v.ok_or_else(|| CircuitError::Backend("parallel task produced nothing".into())))
        .collect()
}

/// CMUX tree: leaves in address order, level k selects with `addr[k]`.
fn cmux_tree(
    addr: &[&TrgswFft<u32>],
    leaves: Vec<&Trlwe<u32>>,
) -> Result<Trlwe<u32>, CircuitError> {
    let mut level: Vec<Trlwe<u32>> = Vec::with_capacity(leaves.len() / 2);
    let mut scratch = addr
        .first()
        .map(|g| vsp_tfhe::ExtScratch::new(g.degree(), g.gadget()));
    let sc = scratch
        .as_mut()
        .ok_or_else(|| CircuitError::Usage("memory without address".into()))?;
    for pair in leaves.chunks(2) {
        match pair {
            [x0, x1] => level.push(addr[0].cmux_with(x1, x0, sc).map_err(tfhe_err)?),
            [x0] => level.push((*x0).clone()),
            _ => {}
        }
    }
    for sel in addr.iter().skip(1) {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        let mut it = level.into_iter();
        while let Some(x0) = it.next() {
            match it.next() {
                Some(x1) => next.push(sel.cmux_with(&x1, &x0, sc).map_err(tfhe_err)?),
                None => next.push(x0),
            }
        }
        level = next;
    }
    level
        .into_iter()
        .next()
        .ok_or_else(|| CircuitError::Usage("empty memory".into()))
}

/// Extracts coefficient `i`, key-switches it and bootstraps the ±1/4 phase into a fresh ±1/8 bit in
/// ring form (a gate bootstrap stopped before its extraction: CMUXes take it as it is, gates take its
/// extraction).
pub(crate) fn extract_fresh(
    ek: &EvalKey,
    c: &Trlwe<u32>,
    i: usize,
) -> Result<Trlwe<u32>, CircuitError> {
    let t = ek.extract_bit(c, i).map_err(tfhe_err)?;
    ek.bit_to_trlwe(&t).map_err(tfhe_err)
}

/// The gates' test value, 1/8: a bootstrap to a fresh bit.
pub(crate) const EIGHTH: u32 = 1 << 29;

/// Most bootstraps [`boot_rings_on`] runs as one batch: per NAND, thread CPU time was 0.79 of one at
/// a time from batches of 4 on and 0.76–0.79 at 12 and 16 (`gate_breakdown`, AMD EPYC Zen 4, cpu
/// family 25, one and two threads batching at once); bulk work (refreshes, a ROM word's bits) has
/// no first result to wait for, so it takes the largest batches that still share the work evenly
/// among the threads.
pub(crate) const BULK_BATCH: usize = 16;

/// The rings of bootstraps `jobs` (each left as a ring), run as one batch
/// ([`EvalKey::bootstrap_batch`]): each the same as its own call, bit for bit.
pub(crate) fn boot_rings(
    ek: &EvalKey,
    jobs: &[Bootstrap<'_>],
) -> Result<Vec<Trlwe<u32>>, CircuitError> {
    let jobs: Vec<_> = jobs.iter().map(|&j| (j, true)).collect();
    ek.bootstrap_batch(&jobs)
        .map_err(tfhe_err)?
        .into_iter()
        .map(|b| match b {
            Booted::Ring(r) => Ok(r),
            Booted::Bit(_) => Err(CircuitError::Backend(
                "a batch of bootstraps to rings returned a bit".into(),
            )),
        })
        .collect()
}

/// [`boot_rings`] of many jobs on up to `threads` threads: cut into near-equal batches of at most
/// [`BULK_BATCH`], as many as a multiple of the threads (so that each thread gets as many), run
/// side by side; the results in the jobs' order, the same bit for bit.
pub(crate) fn boot_rings_on(
    ek: &EvalKey,
    jobs: &[Bootstrap<'_>],
    threads: usize,
) -> Result<Vec<Trlwe<u32>>, CircuitError> {
    let threads = threads.max(1);
    let batches = jobs.len().div_ceil(BULK_BATCH).div_ceil(threads) * threads;
    let per = jobs.len().div_ceil(batches.max(1)).max(1);
    let chunks: Vec<&[Bootstrap<'_>]> = jobs.chunks(per).collect();
    let out = par_for(chunks.len(), threads, |k| boot_rings(ek, chunks[k]))?;
    Ok(out.into_iter().flatten().collect())
}

/// Refreshed copies of RAM cells ([`refresh_cell`] of each), in batches on up to `threads` threads
/// ([`boot_rings_on`]): the same cells, bit for bit.
pub(crate) fn refresh_cells(
    ek: &EvalKey,
    cells: &[&Trlwe<u32>],
    threads: usize,
) -> Result<Vec<Trlwe<u32>>, CircuitError> {
    let jobs: Vec<_> = cells
        .iter()
        .map(|c| Bootstrap::Coefficient(c, 0, QUARTER))
        .collect();
    boot_rings_on(ek, &jobs, threads)
}

/// Reads the whole word at `addr` from a ROM.
pub(crate) fn rom_read(
    ek: &EvalKey,
    rom: &TfheRom,
    addr: &[&TrgswFft<u32>],
) -> Result<Vec<Trlwe<u32>>, CircuitError> {
    rom_read_bits(ek, rom, addr, 0..rom.data_width)
}

/// Reads data bits `bits` of the word at `addr` from a ROM (the CMUX tree and blind rotation are
/// the same for every part; only the extractions differ).
pub(crate) fn rom_read_bits(
    ek: &EvalKey,
    rom: &TfheRom,
    addr: &[&TrgswFft<u32>],
    bits: std::ops::Range<usize>,
) -> Result<Vec<Trlwe<u32>>, CircuitError> {
    if bits.start > bits.end || bits.end > rom.data_width {
        return Err(CircuitError::Usage("ROM bits out of range".into()));
    }
    if addr.len() != rom.addr_width {
        return Err(CircuitError::Usage("ROM address of the wrong width".into()));
    }
    let (low, high) = addr.split_at(rom.low_bits);
    let mut acc = if high.is_empty() {
        rom.blocks
            .first()
            .cloned()
            .ok_or_else(|| CircuitError::Usage("empty ROM".into()))?
    } else {
        cmux_tree(high, rom.blocks.iter().collect())?
    };
    for (j, sel) in low.iter().enumerate() {
        let rotated = acc.mul_monomial(-((1i64 << rom.slot_log) << j));
        acc = sel.cmux(&rotated, &acc).map_err(tfhe_err)?;
    }
    // Each bit extracted and bootstrapped ([`extract_fresh`]), all in one batch.
    let jobs: Vec<_> = bits
        .map(|i| Bootstrap::Coefficient(&acc, i, EIGHTH))
        .collect();
    boot_rings(ek, &jobs)
}

/// Reads data bit `bit` of the word at `addr`.
pub(crate) fn ram_read(
    ek: &EvalKey,
    ram: &TfheRam,
    addr: &[&TrgswFft<u32>],
    bit: usize,
) -> Result<Trlwe<u32>, CircuitError> {
    Ok(ram_read_keep(ek, ram, addr, bit)?.0)
}

/// [`ram_read`] that also returns the CMUX tree's output before extraction: the stored bit `r` at
/// ±1/4 that the clock-edge write at the same address needs for its change δ = v − r
/// ([`write_change`]), so that the write does not run the tree again.
pub(crate) fn ram_read_keep(
    ek: &EvalKey,
    ram: &TfheRam,
    addr: &[&TrgswFft<u32>],
    bit: usize,
) -> Result<(Trlwe<u32>, Trlwe<u32>), CircuitError> {
    let tree = ram_tree(ram, addr, bit)?;
    Ok((extract_fresh(ek, &tree, 0)?, tree))
}

/// Checks a part of a read of a RAM of 2^`addr_width` words of `data_width` bits (for every backend):
/// data bit `bit` of the 2^k words from `first`, aligned to 2^k, inside the RAM.
pub(crate) fn check_read_part(
    addr_width: usize,
    data_width: usize,
    k: usize,
    first: usize,
    bit: usize,
) -> Result<(), CircuitError> {
    if k > addr_width
        || bit >= data_width
        || !first.is_multiple_of(1usize << k)
        || first + (1usize << k) > 1usize << addr_width
    {
        return Err(CircuitError::Usage(
            "RAM read part of the wrong shape".into(),
        ));
    }
    Ok(())
}

/// Part of a read's CMUX tree: the tree over words `first..first + 2^k` of data bit `bit` with the
/// `k` low address selectors `addr_low` (the same external products as those of the whole tree over
/// these words, so a tree joined from parts, [`ram_read_join`], is bit-identical to [`ram_tree`]).
pub(crate) fn ram_read_part(
    ram: &TfheRam,
    addr_low: &[&TrgswFft<u32>],
    first: usize,
    bit: usize,
) -> Result<Trlwe<u32>, CircuitError> {
    let k = addr_low.len();
    let w = ram.data_width;
    check_read_part(ram.addr_width, w, k, first, bit)?;
    if k == 0 {
        return Ok(ram.cells[first * w + bit].clone());
    }
    let leaves = (first..first + (1usize << k))
        .map(|j| &ram.cells[j * w + bit])
        .collect();
    cmux_tree(addr_low, leaves)
}

/// The read joined from its parts ([`ram_read_part`], in word order) with the high address
/// selectors: the fresh bit in ring form and the tree's output (as [`ram_read_keep`]).
pub(crate) fn ram_read_join(
    ek: &EvalKey,
    parts: &[&Trlwe<u32>],
    addr_high: &[&TrgswFft<u32>],
) -> Result<(Trlwe<u32>, Trlwe<u32>), CircuitError> {
    if parts.len() != 1usize << addr_high.len() {
        return Err(CircuitError::Usage(
            "RAM read parts of the wrong number".into(),
        ));
    }
    let tree = if addr_high.is_empty() {
        parts[0].clone()
    } else {
        cmux_tree(addr_high, parts.to_vec())?
    };
    Ok((extract_fresh(ek, &tree, 0)?, tree))
}

/// The read's CMUX tree for data bit `bit` at `addr` (the stored bit at ±1/4 plus `a` external
/// products' errors).
pub(crate) fn ram_tree(
    ram: &TfheRam,
    addr: &[&TrgswFft<u32>],
    bit: usize,
) -> Result<Trlwe<u32>, CircuitError> {
    if addr.len() != ram.addr_width || bit >= ram.data_width {
        return Err(CircuitError::Usage("RAM read of the wrong shape".into()));
    }
    let w = ram.data_width;
    let leaves = (0..1usize << ram.addr_width)
        .map(|j| &ram.cells[j * w + bit])
        .collect();
    cmux_tree(addr, leaves)
}

/// What a RAM write stores into one data bit of the addressed word (the TFHE backend's write value).
#[derive(Clone, Debug, PartialEq)]
pub enum WriteValue {
    /// The value to store, at ±1/4: the write reads the stored bit `r` through the CMUX tree to
    /// get the change δ = v − r that it demultiplexes.
    Value(Trlwe<u32>),
    /// The change δ = v − r itself, with `r` the output of this cycle's read of the same bit at the
    /// same address before extraction (`ram_read_keep`): exactly what the write would compute,
    /// so it skips its own CMUX tree ((2^a − 1) external products per data bit).
    Change(Trlwe<u32>),
}

impl WriteValue {
    /// The ring it carries (a value or a change).
    pub fn ring(&self) -> &Trlwe<u32> {
        match self {
            WriteValue::Value(r) | WriteValue::Change(r) => r,
        }
    }
}

/// The value a write stores, at ±1/4: wren ? wdata : rdata as a level-1 TRLWE (HomMUX without SE and
/// IKS, seed 000, with test value 1/4 instead of 1/8: BR(wren ∧ wdata) + BR(¬wren ∧ rdata) + 1/4).
pub(crate) fn write_value(
    ek: &EvalKey,
    wren: &Tlwe<u32>,
    wdata: &Tlwe<u32>,
    rdata: &Tlwe<u32>,
) -> Result<Trlwe<u32>, CircuitError> {
    let (x, y) = write_value_inputs(wren, wdata, rdata)?;
    let mut halves = boot_rings(
        ek,
        &[
            Bootstrap::Sample(&x, QUARTER),
            Bootstrap::Sample(&y, QUARTER),
        ],
    )?;
    let y = halves.pop();
    match (halves.pop(), y) {
        (Some(x), Some(y)) => write_value_join(x, &y),
        _ => Err(CircuitError::Backend("a write value lost a half".into())),
    }
}

/// The two level-0 samples a write value bootstraps: wren ∧ wdata and ¬wren ∧ rdata (at −1/8 off).
pub(crate) fn write_value_inputs(
    wren: &Tlwe<u32>,
    wdata: &Tlwe<u32>,
    rdata: &Tlwe<u32>,
) -> Result<(Tlwe<u32>, Tlwe<u32>), CircuitError> {
    let eighth_neg = (QUARTER >> 1).wrapping_neg();
    let x = Tlwe::linear(&[(1, wren), (1, wdata)], eighth_neg).map_err(tfhe_err)?;
    let y = Tlwe::linear(&[(-1, wren), (1, rdata)], eighth_neg).map_err(tfhe_err)?;
    Ok((x, y))
}

/// The write value from its two halves' rings (each bootstrapped with test value 1/4).
pub(crate) fn write_value_join(
    mut x: Trlwe<u32>,
    y: &Trlwe<u32>,
) -> Result<Trlwe<u32>, CircuitError> {
    x.add_assign(y).map_err(tfhe_err)?;
    x.add_const(0, QUARTER).map_err(tfhe_err)?;
    Ok(x)
}

/// The write value given what the read kept ([`write_change`]) from the value itself.
pub(crate) fn change_from(
    mut v: Trlwe<u32>,
    read: Option<&Trlwe<u32>>,
) -> Result<WriteValue, CircuitError> {
    Ok(match read {
        Some(r) => {
            v.sub_assign(r).map_err(tfhe_err)?;
            WriteValue::Change(v)
        }
        None => WriteValue::Value(v),
    })
}

/// The write value of one data bit given what the read kept: the change δ = v − r when the read's
/// CMUX tree output `r` is at hand (the addressed cell then becomes v with the tree's and the
/// demultiplexer's errors, exactly as when the write runs the tree itself), else the value v.
pub(crate) fn write_change(
    ek: &EvalKey,
    wren: &Tlwe<u32>,
    wdata: &Tlwe<u32>,
    rdata: &Tlwe<u32>,
    read: Option<&Trlwe<u32>>,
) -> Result<WriteValue, CircuitError> {
    change_from(write_value(ek, wren, wdata, rdata)?, read)
}

/// Writes `vals` (one per data bit) into the word at `addr`, then refreshes words as the policy says.
///
/// A demultiplexer instead of Iyokan's per-cell chain (RAMwriteBar: `a` CMUXes for every cell, so
/// 2^a·w·a external products per write): for each data bit, the change δ = v − r (the value to store
/// minus the stored value r, read by the CMUX tree — the cycle's read already ran it and hands δ over,
/// [`WriteValue::Change`]) is routed down a binary tree of external products — a node x splits into
/// x − sel⊡x and sel⊡x — so the addressed cell receives δ and every other cell an encryption of 0,
/// which is added to every cell. That is (2^a − 1)·w external products for the tree (as many again
/// when the write must read r itself, [`WriteValue::Value`]), against a·w·2^a. Noise: every cell
/// gains `a` external-product errors; the written cell becomes v minus the read tree's errors plus
/// the demultiplexer's, i.e. Var(v) + 2a·V_ext (V_ext of the RAM gadget, [`NoiseModel::v_ext_ram`]),
/// so it is reset rather than accumulated ([`NoiseModel::after_write`]).
pub(crate) fn ram_write(
    ek: &EvalKey,
    noise: &NoiseModel,
    policy: RefreshPolicy,
    ram: &mut TfheRam,
    addr: &[&TrgswFft<u32>],
    vals: &[WriteValue],
    threads: usize,
) -> Result<(), CircuitError> {
    let list = ram_write_unrefreshed(noise, policy, ram, addr, vals, threads)?;
    let cells: Vec<&Trlwe<u32>> = list.iter().map(|&i| &ram.cells[i]).collect();
    let fresh = refresh_cells(ek, &cells, threads)?;
    for (&idx, c) in list.iter().zip(fresh) {
        ram.cells[idx] = c;
    }
    Ok(())
}

/// [`ram_write`] without the refresh: writes, updates the noise bounds, and returns the cells the
/// policy refreshes now (ascending; their bounds and the counters already say refreshed), for the
/// caller to refresh with [`refresh_cell`] wherever it likes (the MPI executor spreads them over
/// its ranks).
pub(crate) fn ram_write_unrefreshed(
    noise: &NoiseModel,
    policy: RefreshPolicy,
    ram: &mut TfheRam,
    addr: &[&TrgswFft<u32>],
    vals: &[WriteValue],
    threads: usize,
) -> Result<Vec<usize>, CircuitError> {
    let (a, w) = (ram.addr_width, ram.data_width);
    if addr.len() != a || vals.len() != w || a == 0 {
        return Err(CircuitError::Usage("RAM write of the wrong shape".into()));
    }
    let words = 1usize << a;
    // δ = v − r for every data bit (r by the read's CMUX tree, unless the read handed δ over).
    let deltas: Vec<Trlwe<u32>> = {
        let ram: &TfheRam = ram;
        par_for(w, threads, |i| match &vals[i] {
            WriteValue::Change(d) => Ok(d.clone()),
            WriteValue::Value(v) => {
                let mut d = v.clone();
                d.sub_assign(&ram_tree(ram, addr, i)?).map_err(tfhe_err)?;
                Ok(d)
            }
        })?
    };
    // One task per (data bit, subtree under the top `split` address bits), enough for every thread;
    // a task routes δ down the top `split` levels itself (the branches it drops are other tasks').
    let split = (threads.max(1) * 4 / w.max(1))
        .max(1)
        .next_power_of_two()
        .trailing_zeros()
        .min(a as u32) as usize;
    let subtrees = 1usize << split;
    let parts = par_for(w * subtrees, threads, |t| {
        demux_subtree(addr, &deltas[t / subtrees], split, t % subtrees)
    })?;
    // Task (i, top) holds, in order, the changes of words top·2^(a−split) + m for bit i.
    let per = words / subtrees;
    for (t, part) in parts.into_iter().enumerate() {
        let (i, top) = (t / subtrees, t % subtrees);
        for (m, d) in part.iter().enumerate() {
            ram.cells[(top * per + m) * w + i]
                .add_assign(d)
                .map_err(tfhe_err)?;
        }
    }
    ram_write_bookkeep(noise, policy, ram)
}

/// The changes δ routed to the words of subtree `top` under the top `split` address bits (in word
/// order): δ down the top `split` levels to that subtree, then down every level of it (a node x
/// splits into x − sel⊡x and sel⊡x). Whatever `split`, each word's change is the same external
/// products in the same order, so a write cut into subtrees is bit-identical to the whole one.
fn demux_subtree(
    addr: &[&TrgswFft<u32>],
    delta: &Trlwe<u32>,
    split: usize,
    top: usize,
) -> Result<Vec<Trlwe<u32>>, CircuitError> {
    let a = addr.len();
    let first = addr
        .first()
        .ok_or_else(|| CircuitError::Usage("RAM without address".into()))?;
    let mut sc = vsp_tfhe::ExtScratch::new(first.degree(), first.gadget());
    let mut node = delta.clone();
    for k in (a - split..a).rev() {
        let p = addr[k]
            .external_product_with(&node, &mut sc)
            .map_err(tfhe_err)?;
        if (top >> (k - (a - split))) & 1 == 1 {
            node = p;
        } else {
            node.sub_assign(&p).map_err(tfhe_err)?;
        }
    }
    let mut level = vec![node];
    for k in (0..a - split).rev() {
        let mut next = Vec::with_capacity(2 * level.len());
        for mut x in level {
            let p = addr[k]
                .external_product_with(&x, &mut sc)
                .map_err(tfhe_err)?;
            x.sub_assign(&p).map_err(tfhe_err)?;
            next.push(x);
            next.push(p);
        }
        level = next;
    }
    Ok(level)
}

/// The part of a write that touches data bits `bits` of the words of part `part` of `parts` (a
/// power of two, the words cut into equal contiguous ranges): their cells get their changes,
/// exactly as [`ram_write`] gives them; nothing else changes (no noise bounds, no refresh:
/// [`ram_write_bookkeep`]). The values must be changes ([`WriteValue::Change`]): the stored bit is
/// read by this cycle's read, whose tree spans every part.
pub(crate) fn ram_write_part(
    ram: &mut TfheRam,
    addr: &[&TrgswFft<u32>],
    vals: &[WriteValue],
    part: usize,
    parts: usize,
    bits: std::ops::Range<usize>,
    threads: usize,
) -> Result<(), CircuitError> {
    let (a, w) = (ram.addr_width, ram.data_width);
    check_write_part((a, w), (addr.len(), vals.len()), part, parts, &bits)?;
    let split = parts.trailing_zeros() as usize;
    if split > a {
        return Err(CircuitError::Usage(
            "RAM cut into more parts than words".into(),
        ));
    }
    let deltas = vals
        .iter()
        .map(|v| match v {
            WriteValue::Change(d) => Ok(d),
            WriteValue::Value(_) => Err(CircuitError::Usage(
                "a RAM write spread over places needs its read's change".into(),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let changes = par_for(bits.len(), threads, |k| {
        demux_subtree(addr, deltas[bits.start + k], split, part)
    })?;
    let per = (1usize << a) / parts;
    for (i, ch) in bits.zip(changes) {
        for (m, d) in ch.iter().enumerate() {
            ram.cells[(part * per + m) * w + i]
                .add_assign(d)
                .map_err(tfhe_err)?;
        }
    }
    Ok(())
}

/// A write's bookkeeping after its cells changed: every word's noise bound, then the words the
/// policy refreshes now ([`refresh_plan`]; their cells returned). The same on every place that keeps
/// the RAM's bookkeeping.
pub(crate) fn ram_write_bookkeep(
    noise: &NoiseModel,
    policy: RefreshPolicy,
    ram: &mut TfheRam,
) -> Result<Vec<usize>, CircuitError> {
    let a = ram.addr_width;
    for v in ram.var.iter_mut() {
        *v = noise.after_write(*v, a);
    }
    refresh_plan(noise, policy, ram)
}

/// The words the policy refreshes this cycle: advances the round robin, marks their bounds as
/// refreshed and counts them; returns their cells.
fn refresh_plan(
    noise: &NoiseModel,
    policy: RefreshPolicy,
    ram: &mut TfheRam,
) -> Result<Vec<usize>, CircuitError> {
    let (a, w) = (ram.addr_width, ram.data_width);
    let words = 1usize << a;
    let mut chosen = vec![false; words];
    match policy {
        RefreshPolicy::EveryCycle => chosen.iter_mut().for_each(|c| *c = true),
        RefreshPolicy::NoiseBudget { failure_log2 } => {
            let k = noise.refresh_period(a, w, failure_log2).ok_or_else(|| {
                CircuitError::Backend(format!(
                    "these parameters cannot keep a {a}-bit RAM below 2^{failure_log2} failures per cycle"
                ))
            })?;
            let per_cycle = words.div_ceil(k.min(words as u64) as usize);
            for _ in 0..per_cycle {
                chosen[(ram.next_refresh % words as u64) as usize] = true;
                ram.next_refresh = ram.next_refresh.wrapping_add(1);
            }
            // Any word whose bound would pass the limit before its turn comes is refreshed now.
            let limit = noise.bound_after(a, k);
            for (j, c) in chosen.iter_mut().enumerate() {
                if noise.after_write(ram.var[j], a) > limit {
                    *c = true;
                }
            }
        }
    }
    let list: Vec<usize> = (0..words)
        .filter(|&j| chosen[j])
        .flat_map(|j| (0..w).map(move |i| j * w + i))
        .collect();
    for (j, c) in chosen.iter().enumerate() {
        if *c {
            ram.var[j] = noise.after_refresh();
        }
    }
    ram.refreshes += list.len() as u64;
    Ok(list)
}

/// Cells of a `2^a × w` RAM the policy refreshes in a cycle (its round-robin share; words whose
/// bound runs ahead are refreshed too, which this leaves out).
pub(crate) fn refreshes_per_cycle(
    noise: &NoiseModel,
    policy: RefreshPolicy,
    a: usize,
    w: usize,
) -> usize {
    let words = 1usize << a;
    match policy {
        RefreshPolicy::EveryCycle => words * w,
        RefreshPolicy::NoiseBudget { failure_log2 } => noise
            .refresh_period(a, w, failure_log2)
            .map_or(words * w, |k| {
                words.div_ceil(k.clamp(1, words as u64) as usize) * w
            }),
    }
}

/// A refreshed copy of a RAM cell: its bit extracted, key-switched and bootstrapped back to ±1/4.
pub(crate) fn refresh_cell(ek: &EvalKey, c: &Trlwe<u32>) -> Result<Trlwe<u32>, CircuitError> {
    let x = ek.extract_bit(c, 0).map_err(tfhe_err)?;
    ek.bootstrap_to_trlwe(&x, QUARTER).map_err(tfhe_err)
}

/// Circuit-bootstraps an address bit into a CMUX selector.
pub(crate) fn select(
    ck: Option<&CircuitKey>,
    bit: &Tlwe<u32>,
) -> Result<TrgswFft<u32>, CircuitError> {
    select_batch(ck, &[bit])?
        .pop()
        .ok_or_else(|| CircuitError::Backend("empty circuit-bootstrapping batch".into()))
}

fn need_ck(ck: Option<&CircuitKey>) -> Result<&CircuitKey, CircuitError> {
    ck.ok_or_else(|| {
        CircuitError::Backend(
            "this circuit has CMUX memories (rom/ram): the backend needs a circuit-bootstrapping key".into(),
        )
    })
}

/// Circuit-bootstraps several bits in one batch (one pass over the private key-switching key).
pub(crate) fn select_batch(
    ck: Option<&CircuitKey>,
    bits: &[&Tlwe<u32>],
) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
    need_ck(ck)?.circuit_bootstrap_batch(bits).map_err(tfhe_err)
}

/// Circuit-bootstraps a RAM's address bits with the RAM gadget (`Params::cb_ram`): each external
/// product of the read and write trees adds [`NoiseModel::v_ext_ram`] instead of `v_ext`.
pub(crate) fn ram_select_batch(
    ck: Option<&CircuitKey>,
    bits: &[&Tlwe<u32>],
) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
    need_ck(ck)?
        .circuit_bootstrap_batch_ram(bits)
        .map_err(tfhe_err)
}

/// [`select_batch`] on up to `threads` threads of its own (the same selectors, bit for bit:
/// `CircuitKey::circuit_bootstrap_batch_par`).
pub(crate) fn select_batch_on(
    ck: Option<&CircuitKey>,
    bits: &[&Tlwe<u32>],
    threads: usize,
) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
    need_ck(ck)?
        .circuit_bootstrap_batch_par(bits, threads)
        .map_err(tfhe_err)
}

/// [`ram_select_batch`] on up to `threads` threads of its own (the same selectors, bit for bit).
pub(crate) fn ram_select_batch_on(
    ck: Option<&CircuitKey>,
    bits: &[&Tlwe<u32>],
    threads: usize,
) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
    need_ck(ck)?
        .circuit_bootstrap_batch_ram_par(bits, threads)
        .map_err(tfhe_err)
}
