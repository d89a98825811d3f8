//! The Pearl and Ruby processor netlists (VSP paper, seed 000, "CAHP-Pearl", "CAHP-Ruby") as data.
//!
//! The cores are written in Verilog under `hw/rtl/`, synthesized by `hw/synth/*.ys` to the TFHE gate
//! set (`$_AND_ … $_MUX_`, `$_DFF_P_`) and committed as Yosys JSON; this module ships those netlists
//! and the blueprints that wire a core to a 512-byte ROM (128 × 32-bit words) and a 512-byte RAM
//! (256 × 16-bit words), in CMUX and in MUX memory. Nothing here depends on the circuit engine: feed
//! [`Core::blueprint`] and [`resolve`] to `vsp_circuit::Blueprint::from_str_with_resolver`.
//! Gate counts, bootstraps per cycle and cycle counts are in `docs/cores.md`.
//!
//! Port conventions of the blueprints (external `@` ports):
//! * [`RESET`] (in, 1 bit): one reset cycle before the run; nothing is written during it.
//! * [`FINISH`] (out, 1 bit): the sticky finish flag. It rises in the first cycle whose register
//!   outputs already show the final state (every instruction before the halting `js 0` has written).
//! * [`REGS`] (out, 16 bits each): x0..x15 as they are at the start of the cycle.
//! * memories [`ROM`] and [`RAM`]; use [`rom_words`] and [`ram_words`] to turn byte images into words.

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

/// Size of ROM and RAM: the standard 512 bytes each, or the 1 KiB variant of seed 000's appendix C
/// (ROM 256 × 32-bit words, RAM 512 × 16-bit words; the cores are the same RTL with a 10-bit PC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemSize {
    /// 512-byte ROM (128 × 32) and 512-byte RAM (256 × 16).
    #[default]
    B512,
    /// 1 KiB ROM (256 × 32) and 1 KiB RAM (512 × 16).
    K1,
}

impl MemSize {
    /// Both sizes.
    pub const ALL: [MemSize; 2] = [MemSize::B512, MemSize::K1];

    /// The size from a byte count (512 or 1024).
    pub fn from_bytes(bytes: usize) -> Option<MemSize> {
        match bytes {
            512 => Some(MemSize::B512),
            1024 => Some(MemSize::K1),
            _ => None,
        }
    }
    /// ROM and RAM size in bytes (each).
    pub fn bytes(self) -> usize {
        match self {
            MemSize::B512 => 512,
            MemSize::K1 => 1024,
        }
    }
    /// ROM address width (32-bit words).
    pub fn rom_addr_width(self) -> usize {
        self.bytes().trailing_zeros() as usize - 2
    }
    /// RAM address width (16-bit words).
    pub fn ram_addr_width(self) -> usize {
        self.bytes().trailing_zeros() as usize - 1
    }
    /// The simulator's memory configuration of this size.
    pub fn mem_config(self) -> crate::MemConfig {
        crate::MemConfig {
            rom_size: self.bytes(),
            ram_size: self.bytes(),
        }
    }
}

impl std::fmt::Display for MemSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemSize::B512 => f.write_str("512 B"),
            MemSize::K1 => f.write_str("1 KiB"),
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
    /// ROM word address (7 bits, 8 in the 1 KiB cores; out).
    pub const ROM_ADDR: &str = "io_romAddr";
    /// ROM word (32 bits, in).
    pub const ROM_DATA: &str = "io_romData";
    /// RAM word address (8 bits, 9 in the 1 KiB cores; out).
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

const PEARL_JSON: &str = include_str!("../../../hw/netlist/pearl.json");
const RUBY_JSON: &str = include_str!("../../../hw/netlist/ruby.json");
const PEARL_CMUX: &str = include_str!("../../../hw/blueprint/pearl-cmux.toml");
const PEARL_MUX: &str = include_str!("../../../hw/blueprint/pearl-mux.toml");
const RUBY_CMUX: &str = include_str!("../../../hw/blueprint/ruby-cmux.toml");
const RUBY_MUX: &str = include_str!("../../../hw/blueprint/ruby-mux.toml");
const PEARL_1K_JSON: &str = include_str!("../../../hw/netlist/pearl-1k.json");
const RUBY_1K_JSON: &str = include_str!("../../../hw/netlist/ruby-1k.json");
const PEARL_CMUX_1K: &str = include_str!("../../../hw/blueprint/pearl-cmux-1k.toml");
const PEARL_MUX_1K: &str = include_str!("../../../hw/blueprint/pearl-mux-1k.toml");
const RUBY_CMUX_1K: &str = include_str!("../../../hw/blueprint/ruby-cmux-1k.toml");
const RUBY_MUX_1K: &str = include_str!("../../../hw/blueprint/ruby-mux-1k.toml");

/// The Yosys JSON netlist of Pearl.
pub fn pearl_netlist_json() -> &'static str {
    PEARL_JSON
}

/// The Yosys JSON netlist of Ruby.
pub fn ruby_netlist_json() -> &'static str {
    RUBY_JSON
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

    /// The Yosys JSON netlist of this core (512-byte memories).
    pub fn netlist_json(self) -> &'static str {
        self.netlist_json_sized(MemSize::B512)
    }

    /// The Yosys JSON netlist of this core for memories of the given size.
    pub fn netlist_json_sized(self, size: MemSize) -> &'static str {
        match (self, size) {
            (Core::Pearl, MemSize::B512) => PEARL_JSON,
            (Core::Ruby, MemSize::B512) => RUBY_JSON,
            (Core::Pearl, MemSize::K1) => PEARL_1K_JSON,
            (Core::Ruby, MemSize::K1) => RUBY_1K_JSON,
        }
    }

    /// Path of the netlist as the blueprints name it (resolve it with [`resolve`]).
    pub fn netlist_path(self) -> &'static str {
        self.netlist_path_sized(MemSize::B512)
    }

    /// [`Core::netlist_path`] for memories of the given size.
    pub fn netlist_path_sized(self, size: MemSize) -> &'static str {
        match (self, size) {
            (Core::Pearl, MemSize::B512) => "../netlist/pearl.json",
            (Core::Ruby, MemSize::B512) => "../netlist/ruby.json",
            (Core::Pearl, MemSize::K1) => "../netlist/pearl-1k.json",
            (Core::Ruby, MemSize::K1) => "../netlist/ruby-1k.json",
        }
    }

    /// The blueprint TOML wiring this core to 512-byte ROM and RAM of the given kind.
    pub fn blueprint(self, memory: Memory) -> &'static str {
        self.blueprint_sized(memory, MemSize::B512)
    }

    /// The blueprint TOML wiring this core to ROM and RAM of the given kind and size.
    pub fn blueprint_sized(self, memory: Memory, size: MemSize) -> &'static str {
        match (self, memory, size) {
            (Core::Pearl, Memory::Cmux, MemSize::B512) => PEARL_CMUX,
            (Core::Pearl, Memory::Mux, MemSize::B512) => PEARL_MUX,
            (Core::Ruby, Memory::Cmux, MemSize::B512) => RUBY_CMUX,
            (Core::Ruby, Memory::Mux, MemSize::B512) => RUBY_MUX,
            (Core::Pearl, Memory::Cmux, MemSize::K1) => PEARL_CMUX_1K,
            (Core::Pearl, Memory::Mux, MemSize::K1) => PEARL_MUX_1K,
            (Core::Ruby, Memory::Cmux, MemSize::K1) => RUBY_CMUX_1K,
            (Core::Ruby, Memory::Mux, MemSize::K1) => RUBY_MUX_1K,
        }
    }

    /// Where the 512-byte blueprint lives in the repository (relative to the workspace root).
    pub fn blueprint_path(self, memory: Memory) -> &'static str {
        self.blueprint_path_sized(memory, MemSize::B512)
    }

    /// Where a blueprint lives in the repository (relative to the workspace root).
    pub fn blueprint_path_sized(self, memory: Memory, size: MemSize) -> &'static str {
        match (self, memory, size) {
            (Core::Pearl, Memory::Cmux, MemSize::B512) => "hw/blueprint/pearl-cmux.toml",
            (Core::Pearl, Memory::Mux, MemSize::B512) => "hw/blueprint/pearl-mux.toml",
            (Core::Ruby, Memory::Cmux, MemSize::B512) => "hw/blueprint/ruby-cmux.toml",
            (Core::Ruby, Memory::Mux, MemSize::B512) => "hw/blueprint/ruby-mux.toml",
            (Core::Pearl, Memory::Cmux, MemSize::K1) => "hw/blueprint/pearl-cmux-1k.toml",
            (Core::Pearl, Memory::Mux, MemSize::K1) => "hw/blueprint/pearl-mux-1k.toml",
            (Core::Ruby, Memory::Cmux, MemSize::K1) => "hw/blueprint/ruby-cmux-1k.toml",
            (Core::Ruby, Memory::Mux, MemSize::K1) => "hw/blueprint/ruby-mux-1k.toml",
        }
    }
}

impl std::fmt::Display for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Resolves a file named in one of the shipped blueprints to its embedded text (`None` if unknown).
pub fn resolve(path: &str) -> Option<&'static str> {
    Core::ALL
        .into_iter()
        .flat_map(|c| MemSize::ALL.map(|s| (c, s)))
        .find(|&(c, s)| c.netlist_path_sized(s) == path)
        .map(|(c, s)| c.netlist_json_sized(s))
}

/// ROM bytes (at most [`ROM_BYTES`]; missing bytes are 0) as 32-bit little-endian words, or `None`
/// if the image is too large.
pub fn rom_words(rom: &[u8]) -> Option<Vec<u64>> {
    rom_words_sized(rom, MemSize::B512)
}

/// [`rom_words`] for a ROM of the given size.
pub fn rom_words_sized(rom: &[u8], size: MemSize) -> Option<Vec<u64>> {
    words(rom, size.bytes(), 4)
}

/// RAM bytes (at most [`RAM_BYTES`]; missing bytes are 0) as 16-bit little-endian words, or `None`
/// if the image is too large.
pub fn ram_words(ram: &[u8]) -> Option<Vec<u64>> {
    ram_words_sized(ram, MemSize::B512)
}

/// [`ram_words`] for a RAM of the given size.
pub fn ram_words_sized(ram: &[u8], size: MemSize) -> Option<Vec<u64>> {
    words(ram, size.bytes(), 2)
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
        assert_eq!(MemSize::from_bytes(2048), None);
        assert_eq!(
            rom_words_sized(&[0; 1024], MemSize::K1).map(|w| w.len()),
            Some(256)
        );
        assert_eq!(
            ram_words_sized(&[0; 1024], MemSize::K1).map(|w| w.len()),
            Some(512)
        );
        assert!(ram_words_sized(&[0; 1025], MemSize::K1).is_none());
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
