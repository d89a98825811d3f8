//! The backend trait: what the evaluator needs from a bit representation — the gates, the memory
//! primitives (address selectors, ROM read, RAM read and write) and a byte encoding for snapshots.
//! Implemented by [`crate::PlainBackend`] (64 bit-sliced runs per `u64`) and [`crate::TfheBackend`]
//! (TFHE ciphertexts). The evaluator, scheduler and snapshots are generic over it, so the plain run is a
//! faithful oracle for the encrypted one.

use crate::blueprint::MemorySpec;
use crate::error::CircuitError;
use crate::netlist::GateKind;
use vsp_tfhe::CellSpec;

/// Kinds of scheduler tasks, for per-type costs (priority by upward rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskKind {
    /// A two-input gate.
    Gate,
    /// A MUX.
    Mux,
    /// NOT, or the linear combination of a select that its circuit bootstrap decides
    /// ([`Backend::gate_linear`]): free in TFHE (level-0 arithmetic, no bootstrap).
    Not,
    /// Preparing one address bit as a selector (circuit bootstrapping in TFHE).
    Select,
    /// One data bit of a ROM read (its extraction: a bootstrap in TFHE); the read's CMUX tree and
    /// blind rotation, which every task reading part of a word runs, are priced as
    /// [`Backend::rom_tree_cmuxes`] CMUXes.
    RomRead,
    /// One RAM data bit read (CMUX tree + extraction).
    RamRead,
    /// One RAM write value (HomMUX without SE and IKS in TFHE).
    WriteValue,
    /// A MUX evaluated as a CMUX on rings (see [`crate::leveled`]), with its extraction or refresh.
    Cmux,
    /// Lifting a level-0 bit to a ring (a bootstrap in TFHE).
    Lift,
    /// The clock-edge RAM write, per cell (its external products); not a task of the DAG, but work
    /// the memory's MPI rank does ([`crate::partition`]).
    RamWriteCell,
    /// Refreshing one RAM cell at the clock edge (extraction and a bootstrap in TFHE); the MPI
    /// executor spreads a cycle's refreshes over every rank.
    RamRefreshCell,
}

/// One bootstrap of a batch ([`Backend::boot_batch`]).
#[derive(Clone, Copy, Debug)]
pub enum Boot<'a, Bit, Ring> {
    /// A two-input gate: [`Backend::gate_ring`] when `ring`, else [`Backend::gate`].
    Gate {
        kind: GateKind,
        a: &'a Bit,
        b: &'a Bit,
        ring: bool,
    },
    /// A multi-input cell: [`Backend::cell_ring`] when `ring`, else [`Backend::cell`].
    Cell {
        spec: &'a CellSpec,
        ins: &'a [&'a Bit],
        ring: bool,
    },
    /// [`Backend::lift`] (always a ring).
    Lift(&'a Bit),
    /// A gate MUX `s ? b : a`: [`Backend::mux_ring`] when `ring`, else [`Backend::mux`] (two
    /// bootstraps in TFHE).
    Mux {
        s: &'a Bit,
        a: &'a Bit,
        b: &'a Bit,
        ring: bool,
    },
    /// What a RAM read makes of its CMUX tree's output ([`Backend::ram_read_tree`]):
    /// [`Backend::read_out`] (always a ring).
    ReadOut(&'a Ring),
    /// A RAM write value: [`Backend::ram_write_value_keep`] (two bootstraps in TFHE).
    WriteValue {
        wren: &'a Bit,
        wdata: &'a Bit,
        rdata: &'a Bit,
        kept: Option<&'a Ring>,
    },
}

/// The result of one bootstrap of a batch: a bit, a ring or a write value, as the job asked.
#[derive(Clone, Debug)]
pub enum Booted<Bit, Ring, WriteVal> {
    Bit(Bit),
    Ring(Ring),
    WriteVal(WriteVal),
}

/// A bit representation and the operations on it.
pub trait Backend: Send + Sync {
    /// One bit of the circuit (a `u64` of 64 lanes, or a ciphertext).
    type Bit: Clone + Send + Sync;
    /// A prepared memory address bit (a TRGSW in TFHE).
    type Sel: Send + Sync;
    /// The contents of a CMUX ROM.
    type Rom: Clone + Send + Sync;
    /// The contents of a CMUX RAM (and whatever per-cell bookkeeping the backend needs).
    type Ram: Clone + Send + Sync;
    /// The value a RAM write stores into the addressed word, one per data bit.
    type WriteVal: Send + Sync;
    /// A bit in the form CMUXes take (a level-1 TRLWE in TFHE; see [`crate::leveled`]).
    type Ring: Clone + Send + Sync;

    /// A short tag stored in snapshots (`"plain"`, `"tfhe"`).
    fn kind(&self) -> &'static str;
    /// An identifier of the parameters (snapshots refuse to resume under other parameters).
    fn params_id(&self) -> String;

    /// A constant (trivial encryption in TFHE).
    fn constant(&self, v: bool) -> Self::Bit;
    /// `!a`.
    fn not(&self, a: &Self::Bit) -> Result<Self::Bit, CircuitError>;
    /// A two-input gate.
    fn gate(&self, k: GateKind, a: &Self::Bit, b: &Self::Bit) -> Result<Self::Bit, CircuitError>;
    /// `s ? b : a`.
    fn mux(&self, s: &Self::Bit, a: &Self::Bit, b: &Self::Bit) -> Result<Self::Bit, CircuitError>;
    /// A multi-input cell ([`crate::techmap`]; one bootstrap in TFHE).
    fn cell(&self, spec: &CellSpec, ins: &[&Self::Bit]) -> Result<Self::Bit, CircuitError>;
    /// A multi-input cell whose result is left in ring form (a bootstrap without extraction).
    fn cell_ring(&self, spec: &CellSpec, ins: &[&Self::Bit]) -> Result<Self::Ring, CircuitError>;
    /// A two-input gate as a select's circuit bootstrap takes it: TFHE, the level-0 linear
    /// combination the gate's bootstrap would decide, not bootstrapped (a circuit bootstrap decides
    /// the same sign; [`crate::leveled`] plans where that keeps the failure bound). Only
    /// [`Self::select`] and its batch forms may read it. The default is [`Self::gate`] (a backend
    /// whose bits are values).
    fn gate_linear(
        &self,
        k: GateKind,
        a: &Self::Bit,
        b: &Self::Bit,
    ) -> Result<Self::Bit, CircuitError> {
        self.gate(k, a, b)
    }
    /// A multi-input cell as a select's circuit bootstrap takes it (see [`Self::gate_linear`]).
    fn cell_linear(&self, spec: &CellSpec, ins: &[&Self::Bit]) -> Result<Self::Bit, CircuitError> {
        self.cell(spec, ins)
    }
    /// How to technology-map circuits into multi-input cells for this backend ([`crate::techmap`]);
    /// `None` (the default) runs the circuit as built.
    fn techmap(&self) -> Option<crate::techmap::MapParams> {
        None
    }

    /// How to plan select-once MUXes for this backend; `None` keeps every MUX a gate.
    fn leveled(&self) -> Option<crate::leveled::LeveledParams>;
    /// A constant in ring form.
    fn ring_constant(&self, v: bool) -> Self::Ring;
    /// `!r` in ring form (free in TFHE).
    fn ring_not(&self, r: &Self::Ring) -> Self::Ring;
    /// Lifts a bit to ring form (a bootstrap in TFHE).
    fn lift(&self, a: &Self::Bit) -> Result<Self::Ring, CircuitError>;
    /// Most bootstraps worth running as one batch ([`Self::boot_batch`]); 1 (the default): batches
    /// gain nothing, so a scheduler does not form them.
    fn boot_batch_max(&self) -> usize {
        1
    }
    /// Runs several independent bootstraps; result i is what job i's own call gives, bit for bit
    /// (TFHE: the blind rotations step by step together, one read of the bootstrapping key for the
    /// batch). The default runs them one by one.
    #[allow(clippy::type_complexity)]
    fn boot_batch(
        &self,
        jobs: &[Boot<'_, Self::Bit, Self::Ring>],
    ) -> Result<Vec<Booted<Self::Bit, Self::Ring, Self::WriteVal>>, CircuitError> {
        jobs.iter()
            .map(|job| {
                Ok(match *job {
                    Boot::Gate {
                        kind,
                        a,
                        b,
                        ring: true,
                    } => Booted::Ring(self.gate_ring(kind, a, b)?),
                    Boot::Gate {
                        kind,
                        a,
                        b,
                        ring: false,
                    } => Booted::Bit(self.gate(kind, a, b)?),
                    Boot::Cell {
                        spec,
                        ins,
                        ring: true,
                    } => Booted::Ring(self.cell_ring(spec, ins)?),
                    Boot::Cell {
                        spec,
                        ins,
                        ring: false,
                    } => Booted::Bit(self.cell(spec, ins)?),
                    Boot::Lift(a) => Booted::Ring(self.lift(a)?),
                    Boot::Mux {
                        s,
                        a,
                        b,
                        ring: true,
                    } => Booted::Ring(self.mux_ring(s, a, b)?),
                    Boot::Mux {
                        s,
                        a,
                        b,
                        ring: false,
                    } => Booted::Bit(self.mux(s, a, b)?),
                    Boot::ReadOut(tree) => Booted::Ring(self.read_out(tree)?),
                    Boot::WriteValue {
                        wren,
                        wdata,
                        rdata,
                        kept,
                    } => Booted::WriteVal(self.ram_write_value_keep(wren, wdata, rdata, kept)?),
                })
            })
            .collect()
    }
    /// A two-input gate whose result is left in ring form (a gate bootstrap without extraction).
    fn gate_ring(
        &self,
        k: GateKind,
        a: &Self::Bit,
        b: &Self::Bit,
    ) -> Result<Self::Ring, CircuitError>;
    /// `s ? b : a` as a gate MUX left in ring form.
    fn mux_ring(
        &self,
        s: &Self::Bit,
        a: &Self::Bit,
        b: &Self::Bit,
    ) -> Result<Self::Ring, CircuitError>;
    /// The bit a ring holds (sample extraction + key switch in TFHE, no bootstrap).
    fn extract(&self, r: &Self::Ring) -> Result<Self::Bit, CircuitError>;
    /// `s ? b : a` on rings with a prepared select (a CMUX in TFHE).
    fn cmux(
        &self,
        s: &Self::Sel,
        a: &Self::Ring,
        b: &Self::Ring,
    ) -> Result<Self::Ring, CircuitError>;

    /// Prepares an address bit for memory access.
    fn select(&self, addr_bit: &Self::Bit) -> Result<Self::Sel, CircuitError>;
    /// Prepares several bits at once (circuit bootstrapping shares its key stream across a batch).
    fn select_batch(&self, bits: &[&Self::Bit]) -> Result<Vec<Self::Sel>, CircuitError> {
        bits.iter().map(|b| self.select(b)).collect()
    }
    /// Prepares a RAM's address bits (TFHE: circuit bootstrapping with the RAM's lower-noise gadget,
    /// since RAM cells accumulate every write's external-product errors); by default as
    /// [`Self::select_batch`].
    fn ram_select_batch(&self, bits: &[&Self::Bit]) -> Result<Vec<Self::Sel>, CircuitError> {
        self.select_batch(bits)
    }
    /// Most threads one batch of [`Self::select_batch`] or [`Self::ram_select_batch`] can use at
    /// once (1, the default: it runs on its own thread). A scheduler lends a batch on the critical
    /// path the workers that would otherwise idle ([`crate::schedule::run_wide`]).
    fn select_threads(&self) -> usize {
        1
    }
    /// [`Self::select_batch`] on up to `threads` threads: the same selectors, bit for bit, sooner.
    fn select_batch_on(
        &self,
        bits: &[&Self::Bit],
        _threads: usize,
    ) -> Result<Vec<Self::Sel>, CircuitError> {
        self.select_batch(bits)
    }
    /// [`Self::ram_select_batch`] on up to `threads` threads (the same selectors, bit for bit).
    fn ram_select_batch_on(
        &self,
        bits: &[&Self::Bit],
        _threads: usize,
    ) -> Result<Vec<Self::Sel>, CircuitError> {
        self.ram_select_batch(bits)
    }
    /// Reads the word at the address given by `addr` (LSB first) from a ROM, as fresh rings
    /// ([`Self::extract`] gives the bits).
    fn rom_read(
        &self,
        rom: &Self::Rom,
        addr: &[&Self::Sel],
    ) -> Result<Vec<Self::Ring>, CircuitError>;
    /// Reads data bits `bits` of the word at `addr` from a ROM (what [`Self::rom_read`] gives for
    /// them; the MPI executor reads a ROM word in parts on several ranks).
    fn rom_read_bits(
        &self,
        rom: &Self::Rom,
        addr: &[&Self::Sel],
        bits: std::ops::Range<usize>,
    ) -> Result<Vec<Self::Ring>, CircuitError> {
        let mut all = self.rom_read(rom, addr)?;
        if bits.start > bits.end || bits.end > all.len() {
            return Err(CircuitError::Usage("ROM bits out of range".into()));
        }
        Ok(all.drain(bits).collect())
    }
    /// Reads data bit `bit` of the word at `addr` from a RAM, as a fresh ring.
    fn ram_read(
        &self,
        ram: &Self::Ram,
        addr: &[&Self::Sel],
        bit: usize,
    ) -> Result<Self::Ring, CircuitError>;
    /// [`Self::ram_read`] that also returns what the clock-edge write at the same address may reuse
    /// ([`Self::ram_write_value_keep`]; TFHE: the CMUX tree's output before extraction, so that the
    /// write does not run the tree again). The default keeps nothing.
    fn ram_read_keep(
        &self,
        ram: &Self::Ram,
        addr: &[&Self::Sel],
        bit: usize,
    ) -> Result<(Self::Ring, Option<Self::Ring>), CircuitError> {
        Ok((self.ram_read(ram, addr, bit)?, None))
    }
    /// The first half of [`Self::ram_read_keep`] where the backend can split it: the CMUX tree's
    /// output for data bit `bit` at `addr` (what `ram_read_keep` keeps), whose [`Self::read_out`] is
    /// the read's ring — so that reads run their bootstraps in a batch ([`Boot::ReadOut`]). `None`
    /// (the default): the read does not split; run [`Self::ram_read_keep`].
    fn ram_read_tree(
        &self,
        _ram: &Self::Ram,
        _addr: &[&Self::Sel],
        _bit: usize,
    ) -> Result<Option<Self::Ring>, CircuitError> {
        Ok(None)
    }
    /// The second half of a split read: the fresh ring of the bit a [`Self::ram_read_tree`] holds
    /// (extraction and a bootstrap in TFHE). The default refuses (no backend's tree reaches it).
    fn read_out(&self, _tree: &Self::Ring) -> Result<Self::Ring, CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not split RAM reads",
            self.kind()
        )))
    }
    /// The value stored by a write of `wdata` with enable `wren`, given the old value `rdata`.
    fn ram_write_value(
        &self,
        wren: &Self::Bit,
        wdata: &Self::Bit,
        rdata: &Self::Bit,
    ) -> Result<Self::WriteVal, CircuitError>;
    /// [`Self::ram_write_value`] given what [`Self::ram_read_keep`] kept from this cycle's read of the
    /// same bit (the RAM unchanged since, the write at the same address selectors): the same write,
    /// cheaper. The default ignores it.
    fn ram_write_value_keep(
        &self,
        wren: &Self::Bit,
        wdata: &Self::Bit,
        rdata: &Self::Bit,
        kept: Option<&Self::Ring>,
    ) -> Result<Self::WriteVal, CircuitError> {
        let _ = kept;
        self.ram_write_value(wren, wdata, rdata)
    }
    /// Stores `vals` (one per data bit) into the word at `addr`; runs on up to `threads` threads.
    fn ram_write(
        &self,
        ram: &mut Self::Ram,
        addr: &[&Self::Sel],
        vals: &[Self::WriteVal],
        threads: usize,
    ) -> Result<(), CircuitError>;

    /// The clock-edge write in the two parts an MPI job spreads differently: stores `vals` like
    /// [`Self::ram_write`] but leaves out the refresh, and returns the cells (`word * data_width +
    /// bit`, ascending) the refresh policy refreshes now, whose bookkeeping (noise bounds, counters)
    /// is already done. Refreshing each listed cell with [`Self::refresh_ram_cell`] and storing it
    /// with [`Self::set_ram_cell`] gives exactly the state [`Self::ram_write`] gives. A backend that
    /// never refreshes writes everything and lists nothing.
    fn ram_write_unrefreshed(
        &self,
        ram: &mut Self::Ram,
        addr: &[&Self::Sel],
        vals: &[Self::WriteVal],
        threads: usize,
    ) -> Result<Vec<usize>, CircuitError> {
        self.ram_write(ram, addr, vals, threads)?;
        Ok(Vec::new())
    }
    /// Part of a RAM read that a place holding only some words can do: the CMUX tree over words
    /// `first..first + 2^k` of data bit `bit`, with the `k` low address selectors `addr_low`
    /// (`first` a multiple of `2^k`). Joined in word order by [`Self::ram_read_join`] it gives
    /// exactly [`Self::ram_read_keep`]'s result. The default refuses (the RAM is then never spread).
    fn ram_read_part(
        &self,
        _ram: &Self::Ram,
        _addr_low: &[&Self::Sel],
        _first: usize,
        _bit: usize,
    ) -> Result<Self::Ring, CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not spread RAM",
            self.kind()
        )))
    }
    /// Joins a read's parts ([`Self::ram_read_part`], `2^h` of them in word order) with the `h`
    /// high address selectors: what [`Self::ram_read_keep`] gives.
    fn ram_read_join(
        &self,
        _parts: &[&Self::Ring],
        _addr_high: &[&Self::Sel],
    ) -> Result<(Self::Ring, Option<Self::Ring>), CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not spread RAM",
            self.kind()
        )))
    }
    /// The cells of data bits `bits` in part `part` of `parts` (a power of two; the words cut into
    /// equal contiguous ranges) after the write of `vals` at `addr`, as
    /// [`Self::ram_write_unrefreshed`] leaves them; nothing else changes
    /// ([`Self::ram_write_bookkeep`] does the rest). Each cell's change depends on its own bit
    /// only, so a part written a few bits at a time is the same as written at once. The write
    /// values are those made with this cycle's read of the same bit kept
    /// ([`Self::ram_write_value_keep`]).
    #[allow(clippy::too_many_arguments)]
    fn ram_write_part(
        &self,
        _ram: &mut Self::Ram,
        _addr: &[&Self::Sel],
        _vals: &[Self::WriteVal],
        _part: usize,
        _parts: usize,
        _bits: std::ops::Range<usize>,
        _threads: usize,
    ) -> Result<(), CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not spread RAM",
            self.kind()
        )))
    }
    /// What [`Self::ram_write_unrefreshed`] does besides the cells: the RAM's bookkeeping (noise
    /// bounds, refresh round robin), returning the cells to refresh now. Every place holding part of
    /// a spread RAM, and every place refreshing for it, runs it, so they agree.
    fn ram_write_bookkeep(&self, _ram: &mut Self::Ram) -> Result<Vec<usize>, CircuitError> {
        Ok(Vec::new())
    }
    /// Cell `i` (`word * data_width + bit`) of a RAM in ring form, to be refreshed elsewhere.
    fn ram_cell(&self, _ram: &Self::Ram, _i: usize) -> Result<Self::Ring, CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not refresh RAM cells",
            self.kind()
        )))
    }
    /// A refreshed RAM cell (a bootstrap of its bit in TFHE).
    fn refresh_ram_cell(&self, _cell: &Self::Ring) -> Result<Self::Ring, CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not refresh RAM cells",
            self.kind()
        )))
    }
    /// [`Self::refresh_ram_cell`] of each of `cells`, on up to `threads` threads (TFHE: in batches
    /// of bootstraps); the same cells, bit for bit.
    fn refresh_ram_cells(
        &self,
        cells: &[&Self::Ring],
        threads: usize,
    ) -> Result<Vec<Self::Ring>, CircuitError> {
        crate::cmux::par_for(cells.len(), threads, |k| self.refresh_ram_cell(cells[k]))
    }
    /// Replaces cell `i` of a RAM (a refreshed cell from [`Self::refresh_ram_cell`]).
    fn set_ram_cell(
        &self,
        _ram: &mut Self::Ram,
        _i: usize,
        _cell: Self::Ring,
    ) -> Result<(), CircuitError> {
        Err(CircuitError::Backend(format!(
            "the {} backend does not refresh RAM cells",
            self.kind()
        )))
    }
    /// About how many cells of a RAM of this shape the refresh policy refreshes per cycle (for the
    /// partition's and the cost model's accounting; 0 when the backend never refreshes).
    fn ram_refreshes_per_cycle(&self, _spec: &MemorySpec) -> usize {
        0
    }

    /// An all-zero ROM of the given shape.
    fn zero_rom(&self, spec: &MemorySpec) -> Self::Rom;
    /// An all-zero RAM of the given shape.
    fn zero_ram(&self, spec: &MemorySpec) -> Self::Ram;
    /// CMUXes (external products) of one ROM read's tree and blind rotation for a ROM of this
    /// shape, before its bits are extracted (0: the backend's reads have no tree).
    fn rom_tree_cmuxes(&self, _spec: &MemorySpec) -> usize {
        0
    }
    /// CMUXes of one RAM data bit's read tree for a RAM of this shape, before the bit is extracted
    /// (0: the backend's reads have no tree; [`TaskKind::RamRead`] is then the whole read's cost).
    fn ram_tree_cmuxes(&self, _spec: &MemorySpec) -> usize {
        0
    }
    /// Cost units of one CMUX with a RAM's selector (its gadget may differ from the MUX plan's and a
    /// ROM's: [`Self::ram_select_batch`]); by default a [`TaskKind::Cmux`].
    fn ram_cmux_cost(&self) -> f64 {
        self.task_cost(TaskKind::Cmux)
    }
    /// Cost units of one batch of `bits` address or MUX selects ([`Self::select_batch`], or
    /// [`Self::ram_select_batch`] when `ram`); by default `bits` × [`TaskKind::Select`] (a backend
    /// whose batch shares work prices a fixed part and a part per bit).
    fn select_cost(&self, bits: usize, _ram: bool) -> f64 {
        self.task_cost(TaskKind::Select) * bits as f64
    }
    /// `(address width, data width)` of a ROM, to check it fits the blueprint.
    fn rom_shape(&self, rom: &Self::Rom) -> (usize, usize);
    /// `(address width, data width)` of a RAM.
    fn ram_shape(&self, ram: &Self::Ram) -> (usize, usize);

    /// The plain lanes of a bit when the backend can see them (plain: `Some`, encrypted: `None`).
    fn reveal(&self, b: &Self::Bit) -> Option<u64>;

    /// Relative cost of a task, used for the upward-rank priorities (Iyokan's "ranku" costs).
    fn task_cost(&self, k: TaskKind) -> f64 {
        match k {
            TaskKind::Gate => 10.0,
            TaskKind::Mux => 20.0,
            TaskKind::Not => 0.0,
            TaskKind::Select => 100.0,
            TaskKind::RomRead => 10.0,
            TaskKind::RamRead => 10.0,
            TaskKind::WriteValue => 20.0,
            TaskKind::Cmux => 0.1,
            TaskKind::Lift => 10.0,
            TaskKind::RamWriteCell => 0.0,
            TaskKind::RamRefreshCell => 0.0,
        }
    }

    /// Appends the encoding of a bit.
    fn encode_bit(&self, b: &Self::Bit, out: &mut Vec<u8>);
    /// Decodes a bit written by [`Self::encode_bit`].
    fn decode_bit(&self, r: &mut Reader<'_>) -> Result<Self::Bit, CircuitError>;
    /// Appends the encoding of a ring (sent between MPI ranks, [`crate::partition`]).
    fn encode_ring(&self, r: &Self::Ring, out: &mut Vec<u8>);
    /// Decodes a ring written by [`Self::encode_ring`].
    fn decode_ring(&self, r: &mut Reader<'_>) -> Result<Self::Ring, CircuitError>;
    /// Appends the encoding of a RAM write value (sent between MPI ranks).
    fn encode_write_val(&self, v: &Self::WriteVal, out: &mut Vec<u8>);
    /// Decodes a write value written by [`Self::encode_write_val`].
    fn decode_write_val(&self, r: &mut Reader<'_>) -> Result<Self::WriteVal, CircuitError>;
    /// Appends the encoding of a prepared address bit (sent between MPI ranks).
    fn encode_sel(&self, s: &Self::Sel, out: &mut Vec<u8>);
    /// Decodes a prepared address bit written by [`Self::encode_sel`].
    fn decode_sel(&self, r: &mut Reader<'_>) -> Result<Self::Sel, CircuitError>;
    /// Appends the encoding of a ROM.
    fn encode_rom(&self, m: &Self::Rom, out: &mut Vec<u8>);
    /// Decodes a ROM.
    fn decode_rom(&self, r: &mut Reader<'_>) -> Result<Self::Rom, CircuitError>;
    /// Appends the encoding of a RAM.
    fn encode_ram(&self, m: &Self::Ram, out: &mut Vec<u8>);
    /// Decodes a RAM.
    fn decode_ram(&self, r: &mut Reader<'_>) -> Result<Self::Ram, CircuitError>;
}

/// The bounds-checked reader backends decode snapshot and memory encodings with: the shared one.
pub use vsp_codec::Reader;

/// Checks the shape of a [`Backend::ram_write_part`] on a RAM of `a` address and `w` data bits:
/// `addr` selectors and `vals` values as wide as the RAM, `part` one of `parts` (a power of two),
/// `bits` within the word. (Whether there are as many words as parts is the caller's check.)
pub(crate) fn check_write_part(
    (a, w): (usize, usize),
    (addr, vals): (usize, usize),
    part: usize,
    parts: usize,
    bits: &std::ops::Range<usize>,
) -> Result<(), CircuitError> {
    if addr != a
        || vals != w
        || a == 0
        || !parts.is_power_of_two()
        || part >= parts
        || bits.start > bits.end
        || bits.end > w
    {
        return Err(CircuitError::Usage("RAM write of the wrong shape".into()));
    }
    Ok(())
}
