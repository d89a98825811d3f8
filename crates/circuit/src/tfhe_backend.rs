//! The TFHE backend: bits are level-0 TLWE gate ciphertexts of `vsp-tfhe`, gates are bootstrapped gates
//! of the shared [`EvalKey`] (one key for all worker threads; it is `Send + Sync`), memories are CMUX
//! memories ([`crate::cmux`]) driven by circuit bootstrapping ([`CircuitKey`]).

use std::sync::Arc;

use vsp_tfhe::{Bootstrap, CircuitKey, EvalKey, Params, Tlwe, TrgswFft, Trlwe};

use crate::backend::{Backend, Boot, Booted, Reader, TaskKind};
use crate::blueprint::MemorySpec;
use crate::cmux::{self, tfhe_err, TfheRam, TfheRom, WriteValue};
use crate::error::CircuitError;
use crate::leveled::LeveledParams;
use crate::netlist::GateKind;
use crate::noise::{NoiseModel, RefreshPolicy};

/// Encrypted evaluation with a shared evaluation key and, for CMUX memories, a circuit key.
#[derive(Clone)]
pub struct TfheBackend {
    ek: Arc<EvalKey>,
    ck: Option<Arc<CircuitKey>>,
    noise: NoiseModel,
    policy: RefreshPolicy,
    leveled: bool,
    cells: bool,
    boot_batch: usize,
}

/// Ready bootstrap tasks a scheduler runs as one batch ([`Backend::boot_batch`]): per NAND, thread
/// CPU time was 0.89, 0.82, 0.79, 0.81, 0.81, 0.79, 0.79 of one at a time for batches of 2, 3, 4, 6,
/// 8, 12, 16 on one thread, and 0.85, 0.81, 0.79, 0.79, 0.79, 0.79, 0.76 with two threads batching
/// at once (`gate_breakdown 32 batch-only`, AMD EPYC Zen 4, cpu family 25, 2 vCPUs): from 4 on each
/// step's key is read once and the rotation runs as fast as with the key in cache, so a larger
/// batch would only delay its first result (the critical task's) for nothing. Bulk work with no
/// first result to wait for (a ROM word's bits, RAM refreshes) runs in batches of up to 16.
pub const BOOT_BATCH: usize = 4;

impl std::fmt::Debug for TfheBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TfheBackend")
            .field("params", &self.ek.params().id)
            .field("circuit_key", &self.ck.is_some())
            .field("policy", &self.policy)
            .field("leveled", &self.leveled)
            .field("boot_batch", &self.boot_batch)
            .finish()
    }
}

impl TfheBackend {
    /// A backend for gates only (`ck = None`) or gates and CMUX memories. The RAM refresh policy
    /// defaults to [`RefreshPolicy::default`] (noise budget, ≤ 2^-40 failures per cycle).
    pub fn new(ek: Arc<EvalKey>, ck: Option<Arc<CircuitKey>>) -> Result<Self, CircuitError> {
        if let Some(c) = &ck {
            if c.params() != ek.params() {
                return Err(CircuitError::Backend(
                    "the circuit key and the evaluation key use different parameters".into(),
                ));
            }
        }
        let noise = NoiseModel::of(ek.params());
        Ok(TfheBackend {
            leveled: ck.is_some(),
            cells: true,
            boot_batch: BOOT_BATCH,
            ek,
            ck,
            noise,
            policy: RefreshPolicy::default(),
        })
    }

    /// Turns select-once MUXes ([`crate::leveled`]) on or off (on by default when there is a circuit
    /// key; off evaluates every MUX as a two-bootstrap gate, as before).
    pub fn with_leveled(mut self, on: bool) -> Self {
        self.leveled = on && self.ck.is_some();
        self
    }

    /// Most gate bootstraps a scheduler runs as one batch ([`BOOT_BATCH`] by default; 1 runs each
    /// on its own). The results are the same whatever the batches.
    pub fn with_boot_batch(mut self, max: usize) -> Self {
        self.boot_batch = max.max(1);
        self
    }

    /// Turns the technology mapping into multi-input cells ([`crate::techmap`]) on or off (on by
    /// default); results are identical either way.
    pub fn with_cells(mut self, on: bool) -> Self {
        self.cells = on;
        self
    }

    /// Changes the CMUX RAM refresh policy.
    pub fn with_policy(mut self, policy: RefreshPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The parameter set.
    pub fn params(&self) -> &Params {
        self.ek.params()
    }
    /// The noise model of the parameters.
    pub fn noise(&self) -> &NoiseModel {
        &self.noise
    }
    /// The refresh policy.
    pub fn policy(&self) -> RefreshPolicy {
        self.policy
    }
    /// The evaluation key.
    pub fn eval_key(&self) -> &Arc<EvalKey> {
        &self.ek
    }
}

fn put_words(out: &mut Vec<u8>, w: &[u32]) {
    out.extend_from_slice(&(w.len() as u64).to_le_bytes());
    for x in w {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn get_words(r: &mut Reader<'_>, want: usize, what: &str) -> Result<Vec<u32>, CircuitError> {
    Ok(r.u32s(want, what)?)
}

fn put_trlwe(c: &Trlwe<u32>, out: &mut Vec<u8>) {
    put_words(out, c.a());
    put_words(out, c.b());
}

fn get_trlwe(r: &mut Reader<'_>, n: usize) -> Result<Trlwe<u32>, CircuitError> {
    let a = get_words(r, n, "TRLWE mask")?;
    let b = get_words(r, n, "TRLWE body")?;
    Ok(Trlwe::from_polys(a, b)?)
}

fn get_shape(r: &mut Reader<'_>) -> Result<(usize, usize), CircuitError> {
    let a = r.count(0, crate::blueprint::MAX_ADDR_WIDTH, "memory address width")?;
    let w = r.count(0, crate::blueprint::MAX_DATA_WIDTH, "memory data width")?;
    if a == 0 || w == 0 {
        return Err(CircuitError::Snapshot("empty memory".into()));
    }
    Ok((a, w))
}

fn whole<T>(
    bytes: &[u8],
    decode: impl FnOnce(&mut Reader<'_>) -> Result<T, CircuitError>,
) -> Result<T, CircuitError> {
    let mut r = Reader::new(bytes);
    let v = decode(&mut r)?;
    r.end()?;
    Ok(v)
}

/// Encodings of the CMUX memories that need no key, so a client (who has only the secret key) can
/// write and read them: requests carry encrypted ROM/RAM images, results the RAM. Snapshots use the
/// same encoding through [`Backend::encode_rom`] / [`Backend::encode_ram`].
impl TfheRom {
    /// Appends `addr width ‖ data width ‖ packed TRLWEs`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.addr_width as u64).to_le_bytes());
        out.extend_from_slice(&(self.data_width as u64).to_le_bytes());
        for b in &self.blocks {
            put_trlwe(b, out);
        }
    }
    /// Decodes a ROM of TRLWEs of degree `params.n1`, checking every length.
    pub fn decode(r: &mut Reader<'_>, params: &Params) -> Result<TfheRom, CircuitError> {
        let (a, w) = get_shape(r)?;
        let (slot_log, low_bits, n) =
            TfheRom::layout(a, w, params.n1).map_err(|e| CircuitError::Snapshot(e.to_string()))?;
        // Each block is two counted vectors of N words: check the size before allocating.
        r.check_count(n as u64, 2 * (8 + params.n1 * 4), usize::MAX, "ROM blocks")?;
        let blocks = (0..n)
            .map(|_| get_trlwe(r, params.n1))
            .collect::<Result<_, _>>()?;
        Ok(TfheRom {
            addr_width: a,
            data_width: w,
            slot_log,
            low_bits,
            blocks,
        })
    }
    /// The encoding as a byte vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
    /// Decodes exactly `bytes` (no trailing data).
    pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<TfheRom, CircuitError> {
        whole(bytes, |r| TfheRom::decode(r, params))
    }
}

impl TfheRam {
    /// Appends `shape ‖ refresh state ‖ noise bounds ‖ cells`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.addr_width as u64).to_le_bytes());
        out.extend_from_slice(&(self.data_width as u64).to_le_bytes());
        out.extend_from_slice(&self.next_refresh.to_le_bytes());
        out.extend_from_slice(&self.refreshes.to_le_bytes());
        for v in &self.var {
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        for c in &self.cells {
            put_trlwe(c, out);
        }
    }
    /// Decodes a RAM of TRLWEs of degree `params.n1`, checking every length before allocating.
    pub fn decode(r: &mut Reader<'_>, params: &Params) -> Result<TfheRam, CircuitError> {
        let (a, w) = get_shape(r)?;
        let next_refresh = r.u64("RAM refresh counter")?;
        let refreshes = r.u64("RAM refresh count")?;
        let words = 1usize << a;
        let var = r
            .u64_words(words, "RAM noise bounds")?
            .into_iter()
            .map(|v| {
                let v = f64::from_bits(v);
                if v.is_finite() && v >= 0.0 {
                    Ok(v)
                } else {
                    Err(CircuitError::Snapshot("bad noise bound".into()))
                }
            })
            .collect::<Result<_, _>>()?;
        // Each cell is two counted vectors of N words; check the size before allocating.
        let cells = (words as u64).saturating_mul(w as u64);
        r.check_count(cells, 2 * (8 + params.n1 * 4), usize::MAX, "RAM cells")?;
        let cells = (0..words * w)
            .map(|_| get_trlwe(r, params.n1))
            .collect::<Result<_, _>>()?;
        Ok(TfheRam {
            addr_width: a,
            data_width: w,
            cells,
            var,
            next_refresh,
            refreshes,
        })
    }
    /// The encoding as a byte vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
    /// Decodes exactly `bytes` (no trailing data).
    pub fn from_bytes(bytes: &[u8], params: &Params) -> Result<TfheRam, CircuitError> {
        whole(bytes, |r| TfheRam::decode(r, params))
    }
}

/// The TFHE backend's task costs ([`Backend::task_cost`], the scheduler's priorities, the MPI
/// partition and its cost model), in units of a tenth of a gate bootstrap: each operation's thread
/// CPU time over a NAND's in the same process, by `cargo run --release -p vsp-circuit --example
/// task_costs -- 5 2` (and `-- 7 2`), the median over four runs of each one's medians (2026-12-04
/// 22:31–22:57 UTC, AMD EPYC Zen 4, cpu family 25, 2 vCPUs shared with other sessions at load
/// 6–13; a NAND 7.96–11.13 ms of thread CPU, the spread of a loaded machine, so the ratios move by
/// ±15 % from run to run). The MUX planner prices its CMUXes by `CMUX` and `CMUX_RAM` over `GATE`
/// ([`LeveledParams::for_params`]).
pub(crate) mod costs {
    /// A gate (or a multi-input cell): one gate bootstrap, the unit's definition.
    pub(crate) const GATE: f64 = 10.0;
    /// A gate MUX (18.0–25.0 units over the runs).
    pub(super) const MUX: f64 = 20.5;
    /// A RAM write value: a MUX without its extraction and key switch (17.5–22.8).
    pub(super) const WRITE_VALUE: f64 = 20.0;
    /// A bootstrap to a ring: a lift, a RAM cell's refresh, a memory read's extraction (8.6–10.1).
    pub(super) const BOOTSTRAP_RING: f64 = 9.5;
    /// A CMUX with a MUX plan's or a ROM's selector (`Params::cb`; 0.0127–0.0137).
    pub(crate) const CMUX: f64 = 0.013;
    /// A CMUX with a RAM's selector (`Params::cb_ram`: more levels; 0.0240–0.0245).
    pub(crate) const CMUX_RAM: f64 = 0.024;
    /// A batch of `n` circuit bootstraps with `Params::cb` (MUX selects, ROM addresses):
    /// `.0 + .1·n` (the private key switch streams its key once per batch), from batches of 1 bit
    /// (33.9–44.8 units, median 38.3) and of 8 (22.7–31.6 per bit, median 25.8).
    pub(super) const CB: (f64, f64) = (14.0, 24.0);
    /// The same with `Params::cb_ram` (RAM addresses): 1 bit 37.1–49.1 (median 46.3), 8 bits
    /// 26.3–38.3 per bit (median 31.0).
    pub(super) const CB_RAM: (f64, f64) = (17.5, 28.8);
}

/// Most threads a batch of circuit bootstraps is split over when a scheduler lends it idle workers
/// (`CircuitKey::circuit_bootstrap_batch_par`: the rotations one group per thread, or each on two
/// threads when the batch has fewer bits than threads, and both private key switches in `threads`
/// parts).
pub const CB_THREADS: usize = 4;

impl Backend for TfheBackend {
    type Bit = Tlwe<u32>;
    type Sel = TrgswFft<u32>;
    type Rom = TfheRom;
    type Ram = TfheRam;
    type WriteVal = WriteValue;
    type Ring = Trlwe<u32>;

    fn kind(&self) -> &'static str {
        "tfhe"
    }
    fn params_id(&self) -> String {
        format!(
            "{:?}-{:016x}",
            self.params().id,
            vsp_tfhe::serialize::fingerprint(self.params())
        )
    }
    fn constant(&self, v: bool) -> Tlwe<u32> {
        self.ek.constant(v)
    }
    fn not(&self, a: &Tlwe<u32>) -> Result<Tlwe<u32>, CircuitError> {
        self.ek.not(a).map_err(tfhe_err)
    }
    fn gate(&self, k: GateKind, a: &Tlwe<u32>, b: &Tlwe<u32>) -> Result<Tlwe<u32>, CircuitError> {
        self.ek.gate2(k, a, b).map_err(tfhe_err)
    }
    fn mux(&self, s: &Tlwe<u32>, a: &Tlwe<u32>, b: &Tlwe<u32>) -> Result<Tlwe<u32>, CircuitError> {
        // Netlist MUX is s ? b : a; vsp-tfhe's mux(c, x, y) is c ? x : y.
        self.ek.mux(s, b, a).map_err(tfhe_err)
    }
    fn cell(
        &self,
        spec: &vsp_tfhe::CellSpec,
        ins: &[&Tlwe<u32>],
    ) -> Result<Tlwe<u32>, CircuitError> {
        self.ek.cell(spec, ins).map_err(tfhe_err)
    }
    fn cell_ring(
        &self,
        spec: &vsp_tfhe::CellSpec,
        ins: &[&Tlwe<u32>],
    ) -> Result<Trlwe<u32>, CircuitError> {
        self.ek.cell_trlwe(spec, ins).map_err(tfhe_err)
    }
    fn gate_linear(
        &self,
        k: GateKind,
        a: &Tlwe<u32>,
        b: &Tlwe<u32>,
    ) -> Result<Tlwe<u32>, CircuitError> {
        self.ek.gate2_input(k, a, b).map_err(tfhe_err)
    }
    fn cell_linear(
        &self,
        spec: &vsp_tfhe::CellSpec,
        ins: &[&Tlwe<u32>],
    ) -> Result<Tlwe<u32>, CircuitError> {
        self.ek.cell_input(spec, ins).map_err(tfhe_err)
    }
    fn techmap(&self) -> Option<crate::techmap::MapParams> {
        self.cells
            .then(|| crate::techmap::MapParams::for_params(self.params()))
    }
    fn leveled(&self) -> Option<LeveledParams> {
        if !self.leveled {
            return None;
        }
        LeveledParams::for_params(self.params())
    }
    fn ring_constant(&self, v: bool) -> Trlwe<u32> {
        let mut m = vec![0u32; self.params().n1];
        m[0] = vsp_tfhe::tlwe::encode_bit(v);
        Trlwe::trivial(m)
    }
    fn ring_not(&self, r: &Trlwe<u32>) -> Trlwe<u32> {
        let mut out = Trlwe::zero(r.degree());
        let _ = out.sub_assign(r);
        out
    }
    fn boot_batch_max(&self) -> usize {
        self.boot_batch
    }
    fn boot_batch(
        &self,
        jobs: &[Boot<'_, Tlwe<u32>, Trlwe<u32>>],
    ) -> Result<Vec<Booted<Tlwe<u32>, Trlwe<u32>, WriteValue>>, CircuitError> {
        // A write value's two samples first (the batch's jobs borrow them).
        let halves = jobs
            .iter()
            .filter_map(|job| match *job {
                Boot::WriteValue {
                    wren, wdata, rdata, ..
                } => Some(cmux::write_value_inputs(wren, wdata, rdata)),
                _ => None,
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut halves_at = halves.iter();
        let mut tfhe_jobs = Vec::with_capacity(jobs.len() + halves.len());
        for job in jobs {
            match *job {
                Boot::Gate { kind, a, b, ring } => {
                    tfhe_jobs.push((Bootstrap::Gate2(kind, a, b), ring))
                }
                Boot::Cell { spec, ins, ring } => {
                    tfhe_jobs.push((Bootstrap::Cell(spec, ins), ring))
                }
                Boot::Lift(a) => tfhe_jobs.push((Bootstrap::Refresh(a), true)),
                // Netlist MUX is s ? b : a; vsp-tfhe's mux(c, x, y) is c ? x : y.
                Boot::Mux { s, a, b, ring } => tfhe_jobs.push((Bootstrap::Mux(s, b, a), ring)),
                Boot::ReadOut(tree) => {
                    tfhe_jobs.push((Bootstrap::Coefficient(tree, 0, cmux::EIGHTH), true))
                }
                Boot::WriteValue { .. } => {
                    let (x, y) = halves_at.next().ok_or_else(|| {
                        CircuitError::Backend("a write value's halves are missing".into())
                    })?;
                    tfhe_jobs.push((Bootstrap::Sample(x, cmux::QUARTER), true));
                    tfhe_jobs.push((Bootstrap::Sample(y, cmux::QUARTER), true));
                }
            }
        }
        let mut outs = self
            .ek
            .bootstrap_batch(&tfhe_jobs)
            .map_err(tfhe_err)?
            .into_iter();
        let ring = |o: Option<vsp_tfhe::Booted>| match o {
            Some(vsp_tfhe::Booted::Ring(r)) => Ok(r),
            _ => Err(CircuitError::Backend(
                "a batched bootstrap lost its ring".into(),
            )),
        };
        jobs.iter()
            .map(|job| match *job {
                Boot::WriteValue { kept, .. } => {
                    let x = ring(outs.next())?;
                    let y = ring(outs.next())?;
                    let v = cmux::write_value_join(x, &y)?;
                    Ok(Booted::WriteVal(cmux::change_from(v, kept)?))
                }
                _ => match outs.next() {
                    Some(vsp_tfhe::Booted::Bit(c)) => Ok(Booted::Bit(c)),
                    o => Ok(Booted::Ring(ring(o)?)),
                },
            })
            .collect()
    }
    fn lift(&self, a: &Tlwe<u32>) -> Result<Trlwe<u32>, CircuitError> {
        self.ek.bit_to_trlwe(a).map_err(tfhe_err)
    }
    fn gate_ring(
        &self,
        k: GateKind,
        a: &Tlwe<u32>,
        b: &Tlwe<u32>,
    ) -> Result<Trlwe<u32>, CircuitError> {
        self.ek.gate2_trlwe(k, a, b).map_err(tfhe_err)
    }
    fn mux_ring(
        &self,
        s: &Tlwe<u32>,
        a: &Tlwe<u32>,
        b: &Tlwe<u32>,
    ) -> Result<Trlwe<u32>, CircuitError> {
        self.ek.mux_without_se(s, b, a).map_err(tfhe_err)
    }
    fn extract(&self, r: &Trlwe<u32>) -> Result<Tlwe<u32>, CircuitError> {
        self.ek.extract_bit(r, 0).map_err(tfhe_err)
    }
    fn cmux(
        &self,
        s: &TrgswFft<u32>,
        a: &Trlwe<u32>,
        b: &Trlwe<u32>,
    ) -> Result<Trlwe<u32>, CircuitError> {
        s.cmux(b, a).map_err(tfhe_err)
    }
    fn select(&self, addr_bit: &Tlwe<u32>) -> Result<TrgswFft<u32>, CircuitError> {
        cmux::select(self.ck.as_deref(), addr_bit)
    }
    fn select_batch(&self, bits: &[&Tlwe<u32>]) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
        cmux::select_batch(self.ck.as_deref(), bits)
    }
    fn ram_select_batch(&self, bits: &[&Tlwe<u32>]) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
        cmux::ram_select_batch(self.ck.as_deref(), bits)
    }
    fn select_threads(&self) -> usize {
        CB_THREADS
    }
    fn select_batch_on(
        &self,
        bits: &[&Tlwe<u32>],
        threads: usize,
    ) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
        cmux::select_batch_on(self.ck.as_deref(), bits, threads)
    }
    fn ram_select_batch_on(
        &self,
        bits: &[&Tlwe<u32>],
        threads: usize,
    ) -> Result<Vec<TrgswFft<u32>>, CircuitError> {
        cmux::ram_select_batch_on(self.ck.as_deref(), bits, threads)
    }
    fn rom_read(
        &self,
        rom: &TfheRom,
        addr: &[&TrgswFft<u32>],
    ) -> Result<Vec<Trlwe<u32>>, CircuitError> {
        cmux::rom_read(&self.ek, rom, addr)
    }
    fn ram_read(
        &self,
        ram: &TfheRam,
        addr: &[&TrgswFft<u32>],
        bit: usize,
    ) -> Result<Trlwe<u32>, CircuitError> {
        cmux::ram_read(&self.ek, ram, addr, bit)
    }
    fn ram_read_keep(
        &self,
        ram: &TfheRam,
        addr: &[&TrgswFft<u32>],
        bit: usize,
    ) -> Result<(Trlwe<u32>, Option<Trlwe<u32>>), CircuitError> {
        let (bit, tree) = cmux::ram_read_keep(&self.ek, ram, addr, bit)?;
        Ok((bit, Some(tree)))
    }
    fn ram_read_tree(
        &self,
        ram: &TfheRam,
        addr: &[&TrgswFft<u32>],
        bit: usize,
    ) -> Result<Option<Trlwe<u32>>, CircuitError> {
        cmux::ram_tree(ram, addr, bit).map(Some)
    }
    fn read_out(&self, tree: &Trlwe<u32>) -> Result<Trlwe<u32>, CircuitError> {
        cmux::extract_fresh(&self.ek, tree, 0)
    }
    fn ram_write_value(
        &self,
        wren: &Tlwe<u32>,
        wdata: &Tlwe<u32>,
        rdata: &Tlwe<u32>,
    ) -> Result<WriteValue, CircuitError> {
        cmux::write_change(&self.ek, wren, wdata, rdata, None)
    }
    fn ram_write_value_keep(
        &self,
        wren: &Tlwe<u32>,
        wdata: &Tlwe<u32>,
        rdata: &Tlwe<u32>,
        kept: Option<&Trlwe<u32>>,
    ) -> Result<WriteValue, CircuitError> {
        cmux::write_change(&self.ek, wren, wdata, rdata, kept)
    }
    fn ram_write(
        &self,
        ram: &mut TfheRam,
        addr: &[&TrgswFft<u32>],
        vals: &[WriteValue],
        threads: usize,
    ) -> Result<(), CircuitError> {
        cmux::ram_write(&self.ek, &self.noise, self.policy, ram, addr, vals, threads)
    }
    fn ram_write_unrefreshed(
        &self,
        ram: &mut TfheRam,
        addr: &[&TrgswFft<u32>],
        vals: &[WriteValue],
        threads: usize,
    ) -> Result<Vec<usize>, CircuitError> {
        cmux::ram_write_unrefreshed(&self.noise, self.policy, ram, addr, vals, threads)
    }
    fn ram_read_part(
        &self,
        ram: &TfheRam,
        addr_low: &[&TrgswFft<u32>],
        first: usize,
        bit: usize,
    ) -> Result<Trlwe<u32>, CircuitError> {
        cmux::ram_read_part(ram, addr_low, first, bit)
    }
    fn ram_read_join(
        &self,
        parts: &[&Trlwe<u32>],
        addr_high: &[&TrgswFft<u32>],
    ) -> Result<(Trlwe<u32>, Option<Trlwe<u32>>), CircuitError> {
        let (bit, tree) = cmux::ram_read_join(&self.ek, parts, addr_high)?;
        Ok((bit, Some(tree)))
    }
    #[allow(clippy::too_many_arguments)]
    fn ram_write_part(
        &self,
        ram: &mut TfheRam,
        addr: &[&TrgswFft<u32>],
        vals: &[WriteValue],
        part: usize,
        parts: usize,
        bits: std::ops::Range<usize>,
        threads: usize,
    ) -> Result<(), CircuitError> {
        cmux::ram_write_part(ram, addr, vals, part, parts, bits, threads)
    }
    fn ram_write_bookkeep(&self, ram: &mut TfheRam) -> Result<Vec<usize>, CircuitError> {
        cmux::ram_write_bookkeep(&self.noise, self.policy, ram)
    }
    fn ram_cell(&self, ram: &TfheRam, i: usize) -> Result<Trlwe<u32>, CircuitError> {
        ram.cells
            .get(i)
            .cloned()
            .ok_or_else(|| CircuitError::Backend(format!("RAM cell {i} does not exist")))
    }
    fn refresh_ram_cell(&self, cell: &Trlwe<u32>) -> Result<Trlwe<u32>, CircuitError> {
        cmux::refresh_cell(&self.ek, cell)
    }
    fn refresh_ram_cells(
        &self,
        cells: &[&Trlwe<u32>],
        threads: usize,
    ) -> Result<Vec<Trlwe<u32>>, CircuitError> {
        cmux::refresh_cells(&self.ek, cells, threads)
    }
    fn set_ram_cell(
        &self,
        ram: &mut TfheRam,
        i: usize,
        cell: Trlwe<u32>,
    ) -> Result<(), CircuitError> {
        if cell.degree() != self.params().n1 {
            return Err(CircuitError::Backend(
                "a RAM cell of the wrong degree".into(),
            ));
        }
        let slot = ram
            .cells
            .get_mut(i)
            .ok_or_else(|| CircuitError::Backend(format!("RAM cell {i} does not exist")))?;
        *slot = cell;
        Ok(())
    }
    fn ram_refreshes_per_cycle(&self, spec: &MemorySpec) -> usize {
        cmux::refreshes_per_cycle(&self.noise, self.policy, spec.addr_width, spec.data_width)
    }
    fn zero_rom(&self, spec: &MemorySpec) -> TfheRom {
        let n = self.params().n1;
        let (slot_log, low_bits, blocks) =
            TfheRom::layout(spec.addr_width, spec.data_width, n).unwrap_or((0, 0, 1));
        // Trivial encryptions of all-zero words (−1/4 in every coefficient).
        let zero = Trlwe::trivial(vec![cmux::QUARTER.wrapping_neg(); n]);
        TfheRom {
            addr_width: spec.addr_width,
            data_width: spec.data_width,
            slot_log,
            low_bits,
            blocks: vec![zero; blocks],
        }
    }
    fn zero_ram(&self, spec: &MemorySpec) -> TfheRam {
        let n = self.params().n1;
        let mut m = vec![0u32; n];
        m[0] = cmux::QUARTER.wrapping_neg();
        TfheRam {
            addr_width: spec.addr_width,
            data_width: spec.data_width,
            cells: vec![Trlwe::trivial(m); spec.words() * spec.data_width],
            var: vec![0.0; spec.words()],
            next_refresh: 0,
            refreshes: 0,
        }
    }
    fn rom_tree_cmuxes(&self, spec: &MemorySpec) -> usize {
        // The tree over the packed blocks, then one CMUX per address bit of the blind rotation.
        TfheRom::layout(spec.addr_width, spec.data_width, self.params().n1)
            .map_or(0, |(_, low, blocks)| blocks - 1 + low)
    }
    fn rom_shape(&self, rom: &TfheRom) -> (usize, usize) {
        (rom.addr_width, rom.data_width)
    }
    fn ram_shape(&self, ram: &TfheRam) -> (usize, usize) {
        (ram.addr_width, ram.data_width)
    }
    fn reveal(&self, _b: &Tlwe<u32>) -> Option<u64> {
        None
    }
    fn task_cost(&self, k: TaskKind) -> f64 {
        use costs::*;
        match k {
            TaskKind::Gate => GATE,
            TaskKind::Mux => MUX,
            TaskKind::Not => 0.0,
            // One bit alone (a batch: `select_cost`).
            TaskKind::Select => CB.0 + CB.1,
            // Per data bit: extraction, key switch and bootstrap (the tree: rom_tree_cmuxes).
            TaskKind::RomRead => BOOTSTRAP_RING,
            // Per data bit: extraction, key switch and bootstrap (the tree: ram_tree_cmuxes).
            TaskKind::RamRead => BOOTSTRAP_RING,
            TaskKind::WriteValue => WRITE_VALUE,
            TaskKind::Cmux => CMUX,
            TaskKind::Lift => BOOTSTRAP_RING,
            // The demultiplexed write on an MPI rank: two external products per cell (the read tree
            // and the demultiplexer), each about a CMUX. (Where the write values are made next to
            // the RAM's reads, as in one process, the write reuses the read's tree: one per cell.)
            TaskKind::RamWriteCell => 2.0 * CMUX_RAM,
            // Extraction, key switch and bootstrap: a gate bootstrap's work.
            TaskKind::RamRefreshCell => BOOTSTRAP_RING,
        }
    }
    fn ram_tree_cmuxes(&self, spec: &MemorySpec) -> usize {
        spec.words().saturating_sub(1)
    }
    fn ram_cmux_cost(&self) -> f64 {
        costs::CMUX_RAM
    }
    fn select_cost(&self, bits: usize, ram: bool) -> f64 {
        let (fixed, per_bit) = if ram { costs::CB_RAM } else { costs::CB };
        if bits == 0 {
            0.0
        } else {
            fixed + per_bit * bits as f64
        }
    }
    fn encode_bit(&self, b: &Tlwe<u32>, out: &mut Vec<u8>) {
        put_words(out, b.words());
    }
    fn decode_bit(&self, r: &mut Reader<'_>) -> Result<Tlwe<u32>, CircuitError> {
        let w = get_words(r, self.params().n0 + 1, "TLWE")?;
        Ok(Tlwe::from_words(w)?)
    }
    fn encode_ring(&self, r: &Trlwe<u32>, out: &mut Vec<u8>) {
        put_trlwe(r, out);
    }
    fn decode_ring(&self, r: &mut Reader<'_>) -> Result<Trlwe<u32>, CircuitError> {
        get_trlwe(r, self.params().n1)
    }
    fn encode_write_val(&self, v: &WriteValue, out: &mut Vec<u8>) {
        // A tag (0: the value, 1: the change from the read's tree) and the ring.
        out.push(u8::from(matches!(v, WriteValue::Change(_))));
        put_trlwe(v.ring(), out);
    }
    fn decode_write_val(&self, r: &mut Reader<'_>) -> Result<WriteValue, CircuitError> {
        let tag = r.u8("RAM write value tag")?;
        let ring = get_trlwe(r, self.params().n1)?;
        match tag {
            0 => Ok(WriteValue::Value(ring)),
            1 => Ok(WriteValue::Change(ring)),
            t => Err(CircuitError::Backend(format!(
                "a RAM write value with tag {t}, not 0 (value) or 1 (change)"
            ))),
        }
    }
    fn encode_sel(&self, s: &TrgswFft<u32>, out: &mut Vec<u8>) {
        // The gadget says which (ROM selects use `cb`, RAM selects `cb_ram`).
        let g = s.gadget();
        out.extend_from_slice(&g.levels.to_le_bytes());
        out.extend_from_slice(&g.base_bits.to_le_bytes());
        let d = s.fourier_data();
        out.extend_from_slice(&(d.len() as u64).to_le_bytes());
        for x in d {
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
    }
    fn decode_sel(&self, r: &mut Reader<'_>) -> Result<TrgswFft<u32>, CircuitError> {
        let p = self.params();
        let (levels, base_bits) = (r.u32("TRGSW levels")?, r.u32("TRGSW base")?);
        let gadget = [p.cb, p.cb_ram]
            .into_iter()
            .find(|g| g.levels == levels && g.base_bits == base_bits)
            .ok_or_else(|| {
                CircuitError::Backend(format!(
                    "a TRGSW with gadget {levels} × 2^{base_bits}, not one of these parameters'"
                ))
            })?;
        let want = 4 * gadget.levels as usize * p.n1;
        let n = r.count(8, want, "TRGSW length")?;
        if n != want {
            return Err(CircuitError::Backend(format!(
                "a TRGSW of {n} values, these parameters' have {want}"
            )));
        }
        let data = r
            .u64_words(n, "TRGSW")?
            .into_iter()
            .map(f64::from_bits)
            .collect();
        Ok(TrgswFft::from_fourier_data(p.n1, gadget, data)?)
    }
    fn rom_read_bits(
        &self,
        rom: &TfheRom,
        addr: &[&TrgswFft<u32>],
        bits: std::ops::Range<usize>,
    ) -> Result<Vec<Trlwe<u32>>, CircuitError> {
        cmux::rom_read_bits(&self.ek, rom, addr, bits)
    }
    fn encode_rom(&self, m: &TfheRom, out: &mut Vec<u8>) {
        m.encode(out);
    }
    fn decode_rom(&self, r: &mut Reader<'_>) -> Result<TfheRom, CircuitError> {
        TfheRom::decode(r, self.params())
    }
    fn encode_ram(&self, m: &TfheRam, out: &mut Vec<u8>) {
        m.encode(out);
    }
    fn decode_ram(&self, r: &mut Reader<'_>) -> Result<TfheRam, CircuitError> {
        TfheRam::decode(r, self.params())
    }
}
