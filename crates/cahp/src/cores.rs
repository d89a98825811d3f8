//! The Pearl and Ruby processor netlists (VSP paper, seed 000, "CAHP-Pearl", "CAHP-Ruby") as data.
//!
//! The cores are written in Verilog under `hw/rtl/`, synthesized by `hw/synth/*.ys` to the TFHE gate
//! set (`$_AND_ … $_MUX_`, `$_DFF_P_`) and committed as Yosys JSON; this module ships those netlists
//! and the blueprints that wire a core to a 512-byte ROM (128 × 32-bit words) and a 512-byte RAM
//! (256 × 16-bit words), in CMUX and in MUX memory. Nothing here depends on the circuit engine: feed
//! [`Core::blueprint`](crate::cores::Core::blueprint) and [`resolve`](crate::cores::resolve) to
//! `vsp_circuit::Blueprint::from_str_with_resolver`.
//! Gate counts, bootstraps per cycle and cycle counts are in `docs/cores.md`.
//!
//! Port conventions of the blueprints (external `@` ports):
//! * [`RESET`](crate::cores::RESET) (in, 1 bit): one reset cycle before the run; nothing is written during it.
//! * [`FINISH`](crate::cores::FINISH) (out, 1 bit): the sticky finish flag. It rises in the first cycle whose register
//!   outputs already show the final state (every instruction before the halting `js 0` has written).
//! * [`REGS`](crate::cores::REGS) (out, 16 bits each): x0..x15 as they are at the start of the cycle.
//! * memories [`ROM`](crate::cores::ROM) and [`RAM`](crate::cores::RAM); use
//!   [`rom_words`](crate::cores::rom_words) and [`ram_words`](crate::cores::ram_words) to turn byte
//!   images into words.

/// A processor core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Core {
    /// Single-cycle core.
    Pearl,
    /// Five-stage pipeline (IF, ID, EX, MEM, WB) with forwarding.
    Ruby,
}

/// How the blueprint builds ROM and RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Memory {
    /// CMUX memory (built-ins `rom` and `ram`): cheap per cycle over TFHE.
    Cmux,
    /// MUX memory (built-ins `mux-rom` and `mux-ram`): gates and flip-flops.
    Mux,
}

/// Sizes of ROM and RAM, chosen independently: each a power of two from 512 bytes to 8 KiB
/// ([`MemSize::SIZES`]). The standard machine has 512 bytes of each ([`MemSize::B512`]), seed 000's
/// appendix C 1 KiB of each ([`MemSize::K1`]). The core is the same RTL for every size: the ROM size
/// sets its PC width (one netlist per ROM size), the RAM size only how many of its RAM address bits
/// the blueprint wires to the RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemSize {
    /// log2 of the ROM size in bytes (9..=13).
    rom_log2: u8,
    /// log2 of the RAM size in bytes (9..=13).
    ram_log2: u8,
}

impl Default for MemSize {
    fn default() -> Self {
        MemSize::B512
    }
}

/// Smallest and largest log2 of a ROM or RAM size in bytes.
const MIN_LOG2: u8 = 9;
const MAX_LOG2: u8 = 13;

impl MemSize {
    /// 512-byte ROM (128 × 32) and 512-byte RAM (256 × 16): the standard machine.
    pub const B512: MemSize = MemSize {
        rom_log2: 9,
        ram_log2: 9,
    };
    /// 1 KiB ROM (256 × 32) and 1 KiB RAM (512 × 16).
    pub const K1: MemSize = MemSize {
        rom_log2: 10,
        ram_log2: 10,
    };
    /// The sizes a ROM or a RAM can have, in bytes.
    pub const SIZES: [usize; 5] = [512, 1024, 2048, 4096, 8192];
    /// Every machine: all 25 pairs of a ROM and a RAM size, cheapest first (RAM size, then ROM
    /// size, ascending: a larger RAM costs more per cycle than a larger ROM).
    pub const ALL: [MemSize; 25] = {
        let mut all = [MemSize::B512; 25];
        let mut k = 0;
        while k < 25 {
            all[k] = MemSize {
                rom_log2: MIN_LOG2 + (k % 5) as u8,
                ram_log2: MIN_LOG2 + (k / 5) as u8,
            };
            k += 1;
        }
        all
    };

    /// The machine with `rom` bytes of ROM and `ram` bytes of RAM, if both are in [`MemSize::SIZES`].
    pub fn new(rom: usize, ram: usize) -> Option<MemSize> {
        let log2 = |b: usize| {
            MemSize::SIZES
                .contains(&b)
                .then(|| b.trailing_zeros() as u8)
        };
        Some(MemSize {
            rom_log2: log2(rom)?,
            ram_log2: log2(ram)?,
        })
    }

    /// The machine with `2^rom` bytes of ROM and `2^ram` bytes of RAM (the encoding of sizes in
    /// files), if both are supported.
    pub fn from_log2(rom: u8, ram: u8) -> Option<MemSize> {
        let ok = |l: u8| (MIN_LOG2..=MAX_LOG2).contains(&l);
        (ok(rom) && ok(ram)).then_some(MemSize {
            rom_log2: rom,
            ram_log2: ram,
        })
    }

    /// The machine with `bytes` of ROM and `bytes` of RAM (512 … 8192).
    pub fn from_bytes(bytes: usize) -> Option<MemSize> {
        MemSize::new(bytes, bytes)
    }

    /// ROM size in bytes.
    pub fn rom_bytes(self) -> usize {
        1 << self.rom_log2
    }
    /// RAM size in bytes.
    pub fn ram_bytes(self) -> usize {
        1 << self.ram_log2
    }
    /// log2 of the ROM size in bytes (the core's PC width).
    pub fn rom_log2(self) -> u8 {
        self.rom_log2
    }
    /// log2 of the RAM size in bytes.
    pub fn ram_log2(self) -> u8 {
        self.ram_log2
    }
    /// ROM address width (32-bit words).
    pub fn rom_addr_width(self) -> usize {
        usize::from(self.rom_log2) - 2
    }
    /// RAM address width (16-bit words).
    pub fn ram_addr_width(self) -> usize {
        usize::from(self.ram_log2) - 1
    }
    /// The simulator's memory configuration of this size.
    pub fn mem_config(self) -> crate::MemConfig {
        crate::MemConfig {
            rom_size: self.rom_bytes(),
            ram_size: self.ram_bytes(),
        }
    }
    /// The machine of a simulator configuration, if it is one of [`MemSize::ALL`].
    pub fn from_mem_config(m: crate::MemConfig) -> Option<MemSize> {
        MemSize::new(m.rom_size, m.ram_size)
    }
    /// How `--memory-size` spells this machine: `1024` when ROM and RAM have the same size,
    /// else `rom=4096,ram=512`.
    pub fn option(self) -> String {
        if self.rom_log2 == self.ram_log2 {
            self.rom_bytes().to_string()
        } else {
            format!("rom={},ram={}", self.rom_bytes(), self.ram_bytes())
        }
    }
    /// Whether every memory of `self` is at least as large as that of `other`.
    pub fn covers(self, other: MemSize) -> bool {
        self.rom_log2 >= other.rom_log2 && self.ram_log2 >= other.ram_log2
    }
}

/// `512 B` / `1 KiB` for a byte count of [`MemSize::SIZES`].
fn fmt_bytes(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{} KiB", bytes / 1024)
    }
}

impl std::fmt::Display for MemSize {
    /// `1 KiB ROM and RAM` when both have the same size, else `4 KiB ROM and 512 B RAM`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rom, ram) = (fmt_bytes(self.rom_bytes()), fmt_bytes(self.ram_bytes()));
        if self.rom_log2 == self.ram_log2 {
            write!(f, "{rom} ROM and RAM")
        } else {
            write!(f, "{rom} ROM and {ram} RAM")
        }
    }
}

/// External reset input of the blueprints.
pub const RESET: &str = "reset";
/// External finish-flag output of the blueprints.
pub const FINISH: &str = "finflag";
/// External register outputs of the blueprints, x0 first.
pub const REGS: [&str; 16] = [
    "reg_x0", "reg_x1", "reg_x2", "reg_x3", "reg_x4", "reg_x5", "reg_x6", "reg_x7", "reg_x8",
    "reg_x9", "reg_x10", "reg_x11", "reg_x12", "reg_x13", "reg_x14", "reg_x15",
];
/// Name of the ROM built-in.
pub const ROM: &str = "rom";
/// Name of the RAM built-in.
pub const RAM: &str = "ram";
/// ROM address width (words) of the standard 512-byte build ([`MemSize::rom_addr_width`] in general).
pub const ROM_ADDR_WIDTH: usize = 7;
/// ROM word width in bits.
pub const ROM_DATA_WIDTH: usize = 32;
/// RAM address width (words) of the standard 512-byte build ([`MemSize::ram_addr_width`] in general).
pub const RAM_ADDR_WIDTH: usize = 8;
/// RAM word width in bits.
pub const RAM_DATA_WIDTH: usize = 16;
/// ROM size in bytes.
pub const ROM_BYTES: usize = (1 << ROM_ADDR_WIDTH) * ROM_DATA_WIDTH / 8;
/// RAM size in bytes.
pub const RAM_BYTES: usize = (1 << RAM_ADDR_WIDTH) * RAM_DATA_WIDTH / 8;

/// Ports of the core netlists themselves (instance `core` in the blueprints).
pub mod core_ports {
    /// Reset input.
    pub const RESET: &str = "reset";
    /// ROM word address (PC width − 2 bits: 7 for a 512-byte ROM … 11 for 8 KiB; out).
    pub const ROM_ADDR: &str = "io_romAddr";
    /// ROM word (32 bits, in).
    pub const ROM_DATA: &str = "io_romData";
    /// RAM word address (15 bits, byte address bits 15:1; a blueprint wires the low ones; out).
    pub const RAM_ADDR: &str = "io_ramAddr";
    /// RAM write data (16 bits, out).
    pub const RAM_WRITE_DATA: &str = "io_ramWriteData";
    /// RAM write enable (1 bit, out).
    pub const RAM_WRITE_ENABLE: &str = "io_ramWriteEnable";
    /// RAM read data (16 bits, in).
    pub const RAM_READ_DATA: &str = "io_ramReadData";
    /// Sticky finish flag (1 bit, out).
    pub const FINISH: &str = "io_finishFlag";
    /// Register outputs `io_mainRegOut_x0` … `io_mainRegOut_x15` (16 bits each, out).
    pub const REG_PREFIX: &str = "io_mainRegOut_x";
}

/// The committed netlists, one per core and ROM size (512 B, 1, 2, 4, 8 KiB: PC widths 9 to 13).
const NETLISTS: [[(&str, &str); 5]; 2] = [
    [
        (
            "../netlist/pearl.json",
            include_str!("../../../hw/netlist/pearl.json"),
        ),
        (
            "../netlist/pearl-1k.json",
            include_str!("../../../hw/netlist/pearl-1k.json"),
        ),
        (
            "../netlist/pearl-2k.json",
            include_str!("../../../hw/netlist/pearl-2k.json"),
        ),
        (
            "../netlist/pearl-4k.json",
            include_str!("../../../hw/netlist/pearl-4k.json"),
        ),
        (
            "../netlist/pearl-8k.json",
            include_str!("../../../hw/netlist/pearl-8k.json"),
        ),
    ],
    [
        (
            "../netlist/ruby.json",
            include_str!("../../../hw/netlist/ruby.json"),
        ),
        (
            "../netlist/ruby-1k.json",
            include_str!("../../../hw/netlist/ruby-1k.json"),
        ),
        (
            "../netlist/ruby-2k.json",
            include_str!("../../../hw/netlist/ruby-2k.json"),
        ),
        (
            "../netlist/ruby-4k.json",
            include_str!("../../../hw/netlist/ruby-4k.json"),
        ),
        (
            "../netlist/ruby-8k.json",
            include_str!("../../../hw/netlist/ruby-8k.json"),
        ),
    ],
];
const PEARL_CMUX: &str = include_str!("../../../hw/blueprint/pearl-cmux.toml");
const PEARL_MUX: &str = include_str!("../../../hw/blueprint/pearl-mux.toml");
const RUBY_CMUX: &str = include_str!("../../../hw/blueprint/ruby-cmux.toml");
const RUBY_MUX: &str = include_str!("../../../hw/blueprint/ruby-mux.toml");

/// The Yosys JSON netlist of Pearl.
pub fn pearl_netlist_json() -> &'static str {
    Core::Pearl.netlist_json()
}

/// The Yosys JSON netlist of Ruby.
pub fn ruby_netlist_json() -> &'static str {
    Core::Ruby.netlist_json()
}

impl Core {
    /// Both cores.
    pub const ALL: [Core; 2] = [Core::Pearl, Core::Ruby];

    /// `"pearl"` or `"ruby"`.
    pub fn name(self) -> &'static str {
        match self {
            Core::Pearl => "pearl",
            Core::Ruby => "ruby",
        }
    }

    /// Parses `"pearl"` or `"ruby"` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Core> {
        Core::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }

    fn netlist(self, size: MemSize) -> (&'static str, &'static str) {
        let c = match self {
            Core::Pearl => 0,
            Core::Ruby => 1,
        };
        NETLISTS[c][usize::from(size.rom_log2 - MIN_LOG2)]
    }

    /// The Yosys JSON netlist of this core (512-byte ROM).
    pub fn netlist_json(self) -> &'static str {
        self.netlist_json_sized(MemSize::B512)
    }

    /// The Yosys JSON netlist of this core for memories of the given size (one per ROM size).
    pub fn netlist_json_sized(self, size: MemSize) -> &'static str {
        self.netlist(size).1
    }

    /// Path of the netlist as the blueprints name it (resolve it with [`resolve`]).
    pub fn netlist_path(self) -> &'static str {
        self.netlist_path_sized(MemSize::B512)
    }

    /// [`Core::netlist_path`] for memories of the given size.
    pub fn netlist_path_sized(self, size: MemSize) -> &'static str {
        self.netlist(size).0
    }

    /// The blueprint TOML wiring this core to 512-byte ROM and RAM of the given kind (the committed
    /// `hw/blueprint/{pearl,ruby}-{cmux,mux}.toml`).
    pub fn blueprint(self, memory: Memory) -> &'static str {
        match (self, memory) {
            (Core::Pearl, Memory::Cmux) => PEARL_CMUX,
            (Core::Pearl, Memory::Mux) => PEARL_MUX,
            (Core::Ruby, Memory::Cmux) => RUBY_CMUX,
            (Core::Ruby, Memory::Mux) => RUBY_MUX,
        }
    }

    /// Where the 512-byte blueprint lives in the repository (relative to the workspace root).
    pub fn blueprint_path(self, memory: Memory) -> &'static str {
        match (self, memory) {
            (Core::Pearl, Memory::Cmux) => "hw/blueprint/pearl-cmux.toml",
            (Core::Pearl, Memory::Mux) => "hw/blueprint/pearl-mux.toml",
            (Core::Ruby, Memory::Cmux) => "hw/blueprint/ruby-cmux.toml",
            (Core::Ruby, Memory::Mux) => "hw/blueprint/ruby-mux.toml",
        }
    }

    /// The blueprint TOML wiring this core to ROM and RAM of the given kind and size: the core's
    /// netlist for the ROM size, a ROM of 2^a 32-bit words and a RAM of 2^b 16-bit words fed by the
    /// low `b` bits of the core's 15-bit RAM word address (the committed `hw/blueprint/*.toml` are
    /// this text for 512 B and 1 KiB).
    pub fn blueprint_sized(self, memory: Memory, size: MemSize) -> String {
        let (ra, aa) = (size.rom_addr_width(), size.ram_addr_width());
        let title = match self {
            Core::Pearl => "CAHP-Pearl",
            Core::Ruby => "CAHP-Ruby",
        };
        let (kind, rom, ram) = match memory {
            Memory::Cmux => (
                "CMUX memory (ROM: vertical packing + blind rotation; RAM: CMUX trees)",
                "rom",
                "ram",
            ),
            Memory::Mux => (
                "MUX memory (ROM/RAM as gates and flip-flops)",
                "mux-rom",
                "mux-ram",
            ),
        };
        let mut t = format!(
            "# {title} core + {} ROM ({} x 32-bit words) + {} RAM ({} x 16-bit words),\n\
             # {kind}. Written by vsp_cahp::cores::Core::blueprint_sized; see docs/cores.md.\n\
             # External ports: @reset (in), @finflag (out, sticky finish flag), @reg_x0..@reg_x15 \
             (out, 16 bits).\n\n\
             [[file]]\ntype = \"yosys-json\"\npath = \"{}\"\nname = \"core\"\n\n\
             [[builtin]]\ntype = \"{rom}\"\nname = \"rom\"\nin_addr_width = {ra}\n\
             out_rdata_width = 32\n\n\
             [[builtin]]\ntype = \"{ram}\"\nname = \"ram\"\nin_addr_width = {aa}\n\
             in_wdata_width = 16\nout_rdata_width = 16\n\n\
             # [connect] stays the last table so that tools may append connections (e.g. debug \
             outputs).\n[connect]\n\"core/reset\" = \"@reset\"\n\
             \"rom/addr\" = \"core/io_romAddr\"\n\"core/io_romData\" = \"rom/rdata\"\n\
             \"ram/addr\" = \"core/io_ramAddr[0:{}]\"\n\"ram/wdata\" = \"core/io_ramWriteData\"\n\
             \"ram/wren\" = \"core/io_ramWriteEnable\"\n\"core/io_ramReadData\" = \"ram/rdata\"\n\
             \"@finflag\" = \"core/io_finishFlag\"\n",
            fmt_bytes(size.rom_bytes()),
            1usize << ra,
            fmt_bytes(size.ram_bytes()),
            1usize << aa,
            self.netlist_path_sized(size),
            aa - 1,
        );
        for r in 0..16 {
            t.push_str(&format!(
                "\"@reg_x{r}\" = \"core/{}{r}\"\n",
                core_ports::REG_PREFIX
            ));
        }
        t
    }
}

impl std::fmt::Display for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Resolves a file named in one of the shipped blueprints to its embedded text (`None` if unknown).
pub fn resolve(path: &str) -> Option<&'static str> {
    NETLISTS
        .iter()
        .flatten()
        .find(|(p, _)| *p == path)
        .map(|(_, json)| *json)
}

/// ROM bytes (at most [`ROM_BYTES`]; missing bytes are 0) as 32-bit little-endian words, or `None`
/// if the image is too large.
pub fn rom_words(rom: &[u8]) -> Option<Vec<u64>> {
    rom_words_sized(rom, MemSize::B512)
}

/// [`rom_words`] for a ROM of the given size.
pub fn rom_words_sized(rom: &[u8], size: MemSize) -> Option<Vec<u64>> {
    words(rom, size.rom_bytes(), 4)
}

/// RAM bytes (at most [`RAM_BYTES`]; missing bytes are 0) as 16-bit little-endian words, or `None`
/// if the image is too large.
pub fn ram_words(ram: &[u8]) -> Option<Vec<u64>> {
    ram_words_sized(ram, MemSize::B512)
}

/// [`ram_words`] for a RAM of the given size.
pub fn ram_words_sized(ram: &[u8], size: MemSize) -> Option<Vec<u64>> {
    words(ram, size.ram_bytes(), 2)
}

fn words(bytes: &[u8], size: usize, width: usize) -> Option<Vec<u64>> {
    if bytes.len() > size {
        return None;
    }
    let mut padded = bytes.to_vec();
    padded.resize(size, 0);
    Some(
        padded
            .chunks_exact(width)
            .map(|c| {
                c.iter()
                    .rev()
                    .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
            })
            .collect(),
    )
}

/// Inverse of [`ram_words`]: 16-bit words back to little-endian bytes.
pub fn ram_bytes(words: &[u64]) -> Vec<u8> {
    words
        .iter()
        .flat_map(|&w| [(w & 0xff) as u8, ((w >> 8) & 0xff) as u8])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_little_endian() {
        let w = rom_words(&[1, 2, 3, 4, 5]).unwrap_or_default();
        assert_eq!(w.len(), 128);
        assert_eq!(w[0], 0x0403_0201);
        assert_eq!(w[1], 0x05);
        let r = ram_words(&[0x34, 0x12, 0x78]).unwrap_or_default();
        assert_eq!((r.len(), r[0], r[1]), (256, 0x1234, 0x78));
        assert_eq!(&ram_bytes(&r)[..4], &[0x34, 0x12, 0x78, 0]);
        assert!(rom_words(&[0; 513]).is_none());
        assert!(ram_words(&[0; 513]).is_none());
    }

    #[test]
    fn sizes_give_the_address_widths() {
        assert_eq!(MemSize::default(), MemSize::B512);
        assert_eq!(
            (
                MemSize::B512.rom_addr_width(),
                MemSize::B512.ram_addr_width()
            ),
            (ROM_ADDR_WIDTH, RAM_ADDR_WIDTH)
        );
        assert_eq!(
            (MemSize::K1.rom_addr_width(), MemSize::K1.ram_addr_width()),
            (8, 9)
        );
        assert_eq!(MemSize::from_bytes(1024), Some(MemSize::K1));
        assert_eq!(MemSize::from_bytes(256), None);
        assert_eq!(MemSize::from_bytes(16384), None);
        assert_eq!(MemSize::from_bytes(1000), None);
        let wide = MemSize::new(8192, 512).unwrap();
        assert_eq!((wide.rom_addr_width(), wide.ram_addr_width()), (11, 8));
        assert_eq!((wide.rom_bytes(), wide.ram_bytes()), (8192, 512));
        assert_eq!(wide.option(), "rom=8192,ram=512");
        assert_eq!(MemSize::K1.option(), "1024");
        assert_eq!(wide.to_string(), "8 KiB ROM and 512 B RAM");
        assert_eq!(MemSize::B512.to_string(), "512 B ROM and RAM");
        assert_eq!(MemSize::from_log2(13, 9), Some(wide));
        assert_eq!(MemSize::from_log2(14, 9), None);
        assert_eq!(MemSize::from_log2(9, 8), None);
        assert_eq!(MemSize::from_log2(255, 255), None);
        assert!(wide.covers(MemSize::B512) && !wide.covers(MemSize::K1));
        assert_eq!(
            rom_words_sized(&[0; 1024], MemSize::K1).map(|w| w.len()),
            Some(256)
        );
        assert_eq!(
            ram_words_sized(&[0; 1024], MemSize::K1).map(|w| w.len()),
            Some(512)
        );
        assert!(ram_words_sized(&[0; 1025], MemSize::K1).is_none());
        assert_eq!(
            rom_words_sized(&[0; 8192], wide).map(|w| w.len()),
            Some(2048)
        );
        assert!(ram_words_sized(&[0; 513], wide).is_none());
        // ALL: every pair once, cheapest (smallest RAM, then ROM) first.
        let set: std::collections::HashSet<MemSize> = MemSize::ALL.into_iter().collect();
        assert_eq!(set.len(), 25);
        assert_eq!(MemSize::ALL[0], MemSize::B512);
        assert!(MemSize::ALL
            .windows(2)
            .all(|w| (w[0].ram_log2, w[0].rom_log2) < (w[1].ram_log2, w[1].rom_log2)));
        for size in MemSize::ALL {
            assert_eq!(
                MemSize::from_log2(size.rom_log2(), size.ram_log2()),
                Some(size)
            );
            assert_eq!(MemSize::from_mem_config(size.mem_config()), Some(size));
        }
        for core in Core::ALL {
            for size in MemSize::ALL {
                let widths = format!(
                    "in_addr_width = {}\nout_rdata_width = 32",
                    size.rom_addr_width()
                );
                for mem in [Memory::Cmux, Memory::Mux] {
                    let bp = core.blueprint_sized(mem, size);
                    assert!(bp.contains(&widths), "{core} {size} {mem:?}");
                    assert!(
                        bp.contains(&format!(
                            "in_addr_width = {}\nin_wdata",
                            size.ram_addr_width()
                        )),
                        "{core} {size} {mem:?}"
                    );
                    assert!(bp.contains(core.netlist_path_sized(size)));
                    assert_eq!(
                        resolve(core.netlist_path_sized(size)),
                        Some(core.netlist_json_sized(size))
                    );
                }
            }
        }
    }

    /// The committed blueprints are what `blueprint_sized` writes (regenerate them with
    /// `VSP_WRITE_BLUEPRINTS=1 cargo test -p vsp-cahp --lib committed_blueprints`).
    #[test]
    fn committed_blueprints_are_the_generated_ones() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../hw/blueprint");
        let write = std::env::var_os("VSP_WRITE_BLUEPRINTS").is_some();
        for core in Core::ALL {
            for mem in [Memory::Cmux, Memory::Mux] {
                for (size, suffix) in [(MemSize::B512, ""), (MemSize::K1, "-1k")] {
                    let kind = match mem {
                        Memory::Cmux => "cmux",
                        Memory::Mux => "mux",
                    };
                    let path = dir.join(format!("{}-{kind}{suffix}.toml", core.name()));
                    let text = core.blueprint_sized(mem, size);
                    if write {
                        std::fs::write(&path, &text).expect("write blueprint");
                    }
                    let committed = std::fs::read_to_string(&path).expect("read blueprint");
                    assert_eq!(committed, text, "{}", path.display());
                }
                assert_eq!(
                    core.blueprint(mem),
                    core.blueprint_sized(mem, MemSize::B512)
                );
            }
        }
    }

    #[test]
    fn blueprints_name_the_shipped_netlists_and_ports() {
        for core in Core::ALL {
            assert_eq!(Core::from_name(core.name()), Some(core));
            for mem in [Memory::Cmux, Memory::Mux] {
                let bp = core.blueprint(mem);
                assert!(bp.contains(core.netlist_path()), "{core} {mem:?}");
                assert!(resolve(core.netlist_path()).is_some());
                for r in REGS {
                    assert!(bp.contains(&format!("\"@{r}\"")));
                }
                assert!(
                    bp.contains(&format!("\"@{FINISH}\"")) && bp.contains(&format!("\"@{RESET}\""))
                );
            }
            let json = core.netlist_json();
            for p in [
                core_ports::ROM_ADDR,
                core_ports::RAM_WRITE_DATA,
                core_ports::FINISH,
            ] {
                assert!(json.contains(p));
            }
        }
        assert!(resolve("nope.json").is_none());
        assert_eq!(Core::from_name("RUBY"), Some(Core::Ruby));
        assert_eq!(Core::from_name("diamond"), None);
    }
}
