//! Shared machinery of the co-verification tests: the ISA simulator (golden model), the synthesized
//! Pearl/Ruby netlists in the plain bit-sliced engine (64 programs per run) and the Verilog under
//! iverilog, each reduced to the architectural state after every instruction.
//!
//! Comparison. The simulator and the iverilog testbench see every retired instruction, so they are
//! compared instruction by instruction. A netlist only shows its ports, so both sides are reduced to
//! *events*: the registers after an instruction (or cycle) that changed a register or wrote RAM,
//! plus the RAM word written. Any wrong value, missing or extra write shows up as a different event
//! list; the final RAM and the cycle of the finish flag are compared as well.
#![allow(dead_code)] // each test binary uses a different part

#[path = "../../../circuit/tests/tool/mod.rs"]
mod tool;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use vsp_cahp::cores::MemSize;
use vsp_cahp::cores::{self, Core, Memory};
use vsp_cahp::isa::Op;
use vsp_cahp::Simulator;
use vsp_circuit::plain::PlainMemory;
use vsp_circuit::{Circuit, Engine, PlainBackend};
use vsp_platform::PlatformError;

/// One program for one lane: ROM and complete initial RAM bytes.
#[derive(Clone, Debug)]
pub struct Lane {
    pub rom: Vec<u8>,
    pub ram: Vec<u8>,
}

/// Registers after an instruction and the RAM word it wrote (word address, new word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub regs: [u16; 16],
    pub write: Option<(u16, u16)>,
}

/// What the golden model did with one program.
#[derive(Clone, Debug)]
pub struct SimTrace {
    /// Registers and RAM write after every instruction, the final `js 0` included.
    pub steps: Vec<Event>,
    pub events: Vec<Event>,
    pub ram: Vec<u8>,
    pub halted: bool,
    /// Taken branches and jumps (the final `js 0` included).
    pub jumps: usize,
    /// Loads executed.
    pub loads: usize,
}

/// Runs the ISA simulator until `js 0` (at most `max_steps` instructions).
pub fn simulate(lane: &Lane, max_steps: usize) -> SimTrace {
    simulate_sized(lane, max_steps, MemSize::B512)
}

/// [`simulate`] with memories of the given size.
pub fn simulate_sized(lane: &Lane, max_steps: usize, size: MemSize) -> SimTrace {
    let mut sim = Simulator::new(&lane.rom, &lane.ram, size.mem_config()).expect("simulator");
    let pc_mod = size.rom_bytes() as u16;
    let mut steps = Vec::new();
    let mut events = Vec::new();
    let mut prev = *sim.regs();
    let (mut jumps, mut loads) = (0, 0);
    while !sim.halted() && steps.len() < max_steps {
        let r = sim.step().expect("simulator step");
        if r.next_pc != r.pc.wrapping_add(u16::from(r.inst.size())) % pc_mod {
            jumps += 1;
        }
        if matches!(r.inst.op, Op::Lw | Op::Lb | Op::Lbu | Op::Lwsp) {
            loads += 1;
        }
        let write = r.mem_write.map(|w| {
            let a = usize::from(w.addr) & !1;
            let word = u16::from_le_bytes([sim.ram()[a], sim.ram()[a + 1]]);
            ((a >> 1) as u16, word)
        });
        let e = Event {
            regs: *sim.regs(),
            write,
        };
        if e.regs != prev || write.is_some() {
            events.push(e);
        }
        prev = e.regs;
        steps.push(e);
    }
    SimTrace {
        steps,
        events,
        ram: sim.ram().to_vec(),
        halted: sim.halted(),
        jumps,
        loads,
    }
}

/// What a netlist did in one lane.
#[derive(Clone, Debug)]
pub struct NetTrace {
    pub events: Vec<Event>,
    pub ram: Vec<u8>,
    /// Cycles up to and including the first one whose finish flag is 1 (`None`: never).
    pub cycles: Option<u64>,
}

/// The shipped blueprint of `core` plus debug outputs for the RAM write port.
pub fn circuit(core: Core, memory: Memory) -> Result<Arc<Circuit>, PlatformError> {
    circuit_sized(core, memory, MemSize::B512)
}

/// [`circuit`] with memories of the given size.
pub fn circuit_sized(
    core: Core,
    memory: Memory,
    size: MemSize,
) -> Result<Arc<Circuit>, PlatformError> {
    circuit_with_netlist_sized(core, memory, size, core.netlist_json_sized(size))
}

/// Like [`circuit`] but with `netlist` (Yosys JSON) as the core.
pub fn circuit_with_netlist(
    core: Core,
    memory: Memory,
    netlist: &str,
) -> Result<Arc<Circuit>, PlatformError> {
    circuit_with_netlist_sized(core, memory, MemSize::B512, netlist)
}

/// [`circuit_with_netlist`] with memories of the given size: vsp-platform's one core builder.
pub fn circuit_with_netlist_sized(
    core: Core,
    memory: Memory,
    size: MemSize,
    netlist: &str,
) -> Result<Arc<Circuit>, PlatformError> {
    vsp_platform::core_circuit_with(
        core,
        memory,
        vsp_platform::CoreBuild {
            size,
            netlist: Some(netlist),
            connect: "\"@dbg_wren\" = \"core/io_ramWriteEnable\"\n\
                      \"@dbg_waddr\" = \"core/io_ramAddr\"\n\
                      \"@dbg_wdata\" = \"core/io_ramWriteData\"\n",
        },
    )
}

/// Bit-sliced memory image: lane `l` holds `words[l]`.
fn lane_memory(addr_width: usize, data_width: usize, words: &[Vec<u64>]) -> PlainMemory {
    let mut bits = vec![0u64; (1 << addr_width) * data_width];
    for (l, ws) in words.iter().enumerate() {
        for (j, &w) in ws.iter().enumerate() {
            for i in 0..data_width {
                bits[j * data_width + i] |= ((w >> i) & 1) << l;
            }
        }
    }
    PlainMemory {
        addr_width,
        data_width,
        bits,
    }
}

/// Runs up to 64 programs, one per lane, on `circuit` until every lane has raised the finish flag
/// (or `max_cycles`), and returns each lane's events.
pub fn run_netlist(
    circuit: &Arc<Circuit>,
    memory: Memory,
    lanes: &[Lane],
    max_cycles: u64,
) -> Vec<NetTrace> {
    run_netlist_sized(circuit, memory, MemSize::B512, lanes, max_cycles)
}

/// [`run_netlist`] for a circuit with memories of the given size.
pub fn run_netlist_sized(
    circuit: &Arc<Circuit>,
    memory: Memory,
    size: MemSize,
    lanes: &[Lane],
    max_cycles: u64,
) -> Vec<NetTrace> {
    assert!(!lanes.is_empty() && lanes.len() <= 64);
    let mut e = Engine::new(PlainBackend, circuit.clone());
    let roms: Vec<Vec<u64>> = lanes
        .iter()
        .map(|l| cores::rom_words_sized(&l.rom, size).expect("rom fits"))
        .collect();
    let rams: Vec<Vec<u64>> = lanes
        .iter()
        .map(|l| cores::ram_words_sized(&l.ram, size).expect("ram fits"))
        .collect();
    let rom = lane_memory(size.rom_addr_width(), cores::ROM_DATA_WIDTH, &roms);
    let ram = lane_memory(size.ram_addr_width(), cores::RAM_DATA_WIDTH, &rams);
    match memory {
        Memory::Cmux => {
            e.set_rom(cores::ROM, rom).expect("set rom");
            e.set_ram(cores::RAM, ram).expect("set ram");
        }
        Memory::Mux => {
            e.set_memory_cells(cores::ROM, rom.bits)
                .expect("set rom cells");
            e.set_memory_cells(cores::RAM, ram.bits)
                .expect("set ram cells");
        }
    }
    assert!(
        e.reset().expect("reset"),
        "the blueprint has a @reset input"
    );
    let n = lanes.len();
    let mut prev: Vec<Option<[u16; 16]>> = vec![None; n];
    let mut pending: Vec<Option<(u16, u16)>> = vec![None; n];
    let mut traces: Vec<NetTrace> = (0..n)
        .map(|_| NetTrace {
            events: vec![],
            ram: vec![],
            cycles: None,
        })
        .collect();
    for cycle in 1..=max_cycles {
        e.step().expect("cycle");
        let fin = e.output_lanes(cores::FINISH).expect("finflag");
        let wren = e.output_lanes("dbg_wren").expect("wren");
        let waddr = e.output_lanes("dbg_waddr").expect("waddr");
        let wdata = e.output_lanes("dbg_wdata").expect("wdata");
        let mut regs = vec![[0u16; 16]; n];
        for (k, name) in cores::REGS.iter().enumerate() {
            let v = e.output_lanes(name).expect("reg");
            for (l, r) in regs.iter_mut().enumerate() {
                r[k] = v[l] as u16;
            }
        }
        for l in 0..n {
            let t = &mut traces[l];
            if t.cycles.is_some() {
                continue;
            }
            // The registers at the start of this cycle are the result of the previous one.
            if let Some(p) = prev[l] {
                if p != regs[l] || pending[l].is_some() {
                    t.events.push(Event {
                        regs: regs[l],
                        write: pending[l],
                    });
                }
            } else if regs[l] != [0; 16] {
                t.events.push(Event {
                    regs: regs[l],
                    write: None,
                });
            }
            prev[l] = Some(regs[l]);
            // The netlist's port carries the full RAM address; the machine (the blueprint) wires
            // only the RAM's own address bits, as the simulator wraps the address.
            let waddr = waddr[l] & ((1u64 << size.ram_addr_width()) - 1);
            pending[l] = (wren[l] & 1 == 1).then_some((waddr as u16, wdata[l] as u16));
            if fin[l] & 1 == 1 {
                t.cycles = Some(cycle);
                assert!(
                    pending[l].is_none(),
                    "lane {l}: RAM write in the finishing cycle"
                );
            }
        }
        if traces.iter().all(|t| t.cycles.is_some()) {
            break;
        }
    }
    for (l, t) in traces.iter_mut().enumerate() {
        let words = e.memory_words(cores::RAM, l).expect("ram words");
        t.ram = cores::ram_bytes(&words);
    }
    traces
}

/// Checks one lane of a netlist run against the golden model.
pub fn check_netlist(what: &str, sim: &SimTrace, net: &NetTrace) {
    assert!(sim.halted, "{what}: the simulator did not halt");
    assert!(
        net.cycles.is_some(),
        "{what}: the netlist never raised the finish flag"
    );
    let n = sim.events.len().min(net.events.len());
    for k in 0..n {
        assert_eq!(
            sim.events[k], net.events[k],
            "{what}: event {k} differs (simulator left, netlist right)"
        );
    }
    assert_eq!(
        sim.events.len(),
        net.events.len(),
        "{what}: number of state changes differs"
    );
    assert!(sim.ram == net.ram, "{what}: final RAM differs");
}

/// Runs the `lanes` (name, program, expected a0) through the netlist of `core` with `memory` at
/// `size` and checks each against the simulator, which must give the expected result.
pub fn check_netlists_sized(
    core: Core,
    memory: Memory,
    size: MemSize,
    lanes: &[(&str, Lane, u16)],
) {
    let c = circuit_sized(core, memory, size).expect("blueprint compiles");
    let plain: Vec<Lane> = lanes.iter().map(|(_, l, _)| l.clone()).collect();
    let nets = run_netlist_sized(&c, memory, size, &plain, 20_000);
    for ((name, lane, expected), net) in lanes.iter().zip(&nets) {
        let sim = simulate_sized(lane, 100_000, size);
        assert_eq!(
            sim.steps.last().map(|e| e.regs[8]),
            Some(*expected),
            "{size} {name}: simulator result"
        );
        check_netlist(&format!("{core} {size} {memory:?} {name}"), &sim, net);
    }
}

/// `text` assembled for the machine `size`, with `args` loaded into its RAM.
pub fn assemble_lane(name: &str, text: &str, args: &[&str], size: MemSize) -> Lane {
    let opts = vsp_cahp::AsmOptions {
        rom_size: size.rom_bytes(),
        ram_size: size.ram_bytes(),
        ..vsp_cahp::AsmOptions::default()
    };
    let image = vsp_cahp::assemble_sources(&[vsp_cahp::Source { name, text }], &opts)
        .unwrap_or_else(|e| panic!("{name} does not assemble: {e}"));
    let ram = vsp_cahp::load_args(&image.ram, args, size.ram_bytes()).expect("arguments fit");
    Lane {
        rom: image.rom,
        ram,
    }
}

/// (name, lane, expected a0) of the paper's three benchmarks, built for `size`.
pub fn benchmark_lanes(size: MemSize) -> Vec<(&'static str, Lane, u16)> {
    vsp_cahp::programs::ALL
        .iter()
        .map(|p| {
            (
                p.name,
                assemble_lane(p.name, p.source, p.args, size),
                p.expected,
            )
        })
        .collect()
}

/// Repository's `hw/` directory.
pub fn hw_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../hw")
}

/// Fails the test (never skips it) when `tool -V` does not run: the tests that call this are
/// `#[ignore = "needs TOOL"]` and run with `cargo test -- --include-ignored` (what `.ci/run` does).
pub fn require_tool(name: &str) {
    tool::require(name, &["-V"], &format!("apt-get install -y {name}"));
}

/// A compiled iverilog testbench for one core.
pub struct Iverilog {
    dir: tempfile::TempDir,
    vvp: PathBuf,
    size: MemSize,
}

impl Iverilog {
    /// Compiles `hw/tb/tb_core.v` with the core's RTL.
    pub fn compile(core: Core) -> Iverilog {
        Iverilog::compile_sized(core, MemSize::B512)
    }

    /// [`Iverilog::compile`] for memories of the given size (`-DAW=` log2 of the ROM bytes, `-DRW=`
    /// log2 of the RAM bytes).
    pub fn compile_sized(core: Core, size: MemSize) -> Iverilog {
        let dir = tempfile::tempdir().expect("tempdir");
        let vvp = dir.path().join(format!("{}.vvp", core.name()));
        let hw = hw_dir();
        let (aw, rw) = (size.rom_log2(), size.ram_log2());
        tool::run(
            Command::new("iverilog")
                .args([
                    "-g2005",
                    &format!("-DCORE={}", core.name()),
                    &format!("-DAW={aw}"),
                    &format!("-DRW={rw}"),
                    "-o",
                ])
                .arg(&vvp)
                .arg(hw.join("rtl/cahp_common.v"))
                .arg(hw.join(format!("rtl/{}.v", core.name())))
                .arg(hw.join("tb/tb_core.v")),
        );
        Iverilog { dir, vvp, size }
    }

    /// Runs one program; returns per retired instruction (the final `js 0` excluded) the registers
    /// and RAM write, and the finishing cycle.
    pub fn run(&self, lane: &Lane, max_cycles: u64) -> (Vec<Event>, Option<u64>) {
        let rom = self.dir.path().join("rom.hex");
        let ram = self.dir.path().join("ram.hex");
        let hex = |words: Vec<u64>, digits: usize| {
            words
                .iter()
                .map(|w| format!("{w:0digits$x}\n"))
                .collect::<String>()
        };
        let (rom_words, ram_words) = (
            cores::rom_words_sized(&lane.rom, self.size).expect("rom"),
            cores::ram_words_sized(&lane.ram, self.size).expect("ram"),
        );
        std::fs::write(&rom, hex(rom_words, 8)).expect("write rom");
        std::fs::write(&ram, hex(ram_words, 4)).expect("write ram");
        let out = Command::new("vvp")
            .arg("-N")
            .arg(&self.vvp)
            .arg(format!("+rom={}", rom.display()))
            .arg(format!("+ram={}", ram.display()))
            .arg(format!("+cycles={max_cycles}"))
            .output()
            .expect("run vvp");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut steps = Vec::new();
        let mut write = None;
        let mut fin = None;
        let hexv = |s: &str| u16::from_str_radix(s, 16).expect("hex in testbench output");
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.first() {
                Some(&"W") => write = Some((hexv(f[1]), hexv(f[2]))),
                Some(&"R") => {
                    let mut regs = [0u16; 16];
                    for (k, r) in regs.iter_mut().enumerate() {
                        *r = hexv(f[2 + k]);
                    }
                    steps.push(Event {
                        regs,
                        write: write.take(),
                    });
                }
                Some(&"FIN") => fin = f[1].parse().ok(),
                _ => {}
            }
        }
        (steps, fin)
    }
}

/// Runs the `lanes` (name, program, expected a0) under iverilog on both cores with memories of
/// `size` and checks each instruction by instruction against the simulator.
pub fn check_iverilog_lanes(size: MemSize, lanes: &[(&str, Lane, u16)]) {
    require_tool("iverilog");
    for core in Core::ALL {
        let tb = Iverilog::compile_sized(core, size);
        for (name, lane, _) in lanes {
            let sim = simulate_sized(lane, 100_000, size);
            let (steps, fin) = tb.run(lane, 20_000);
            check_iverilog(
                &format!("{core} {size} {name} (iverilog)"),
                &sim,
                &steps,
                fin,
            );
        }
    }
}

/// Checks an iverilog run instruction by instruction against the golden model.
pub fn check_iverilog(what: &str, sim: &SimTrace, steps: &[Event], fin: Option<u64>) {
    assert!(fin.is_some(), "{what}: iverilog run did not finish");
    let expect = &sim.steps[..sim.steps.len().saturating_sub(1)];
    for (k, (a, b)) in expect.iter().zip(steps).enumerate() {
        assert_eq!(
            a, b,
            "{what}: instruction {k} differs (simulator left, iverilog right)"
        );
    }
    assert_eq!(
        expect.len(),
        steps.len(),
        "{what}: number of retired instructions differs"
    );
}
