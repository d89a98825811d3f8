//! End-to-end tests of the plain engine on the committed Yosys netlists, against hand-written models.

use std::path::PathBuf;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use vsp_circuit::*;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

fn single(name: &str) -> Arc<Circuit> {
    let n = read_yosys_json(&testdata().join(format!("{name}.json"))).unwrap();
    Arc::new(Circuit::compile(&Blueprint::single(name, n)).unwrap())
}

fn memuser(mux: bool) -> Arc<Circuit> {
    let mut text = std::fs::read_to_string(testdata().join("memuser.toml")).unwrap();
    if mux {
        text = text
            .replace("type = \"rom\"", "type = \"mux-rom\"")
            .replace("type = \"ram\"", "type = \"mux-ram\"");
    }
    Arc::new(Circuit::compile(&Blueprint::from_str_with_base(&text, &testdata()).unwrap()).unwrap())
}

#[test]
fn adder_matches_integer_addition_in_64_lanes() {
    let c = single("adder");
    let st = c.stats();
    assert_eq!(st.dff, 0);
    assert!(st.bootstraps_per_cycle > 0 && st.critical_path > 0);
    let mut e = Engine::new(PlainBackend, c);
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for _ in 0..4 {
        let a: Vec<u64> = (0..64).map(|_| rng.gen_range(0..256)).collect();
        let b: Vec<u64> = (0..64).map(|_| rng.gen_range(0..256)).collect();
        let ci: Vec<u64> = (0..64).map(|_| rng.gen_range(0..2)).collect();
        e.set_input_lanes("a", &a).unwrap();
        e.set_input_lanes("b", &b).unwrap();
        e.set_input_lanes("cin", &ci).unwrap();
        e.step().unwrap();
        for l in 0..64 {
            let sum = a[l] + b[l] + ci[l];
            assert_eq!(e.output_value("s", l).unwrap(), sum & 255);
            assert_eq!(e.output_value("cout", l).unwrap(), sum >> 8);
        }
    }
}

#[test]
fn counter_with_reset_and_enable() {
    let bp = Blueprint::from_path(&testdata().join("counter.toml")).unwrap();
    let mut e = Engine::new(PlainBackend, Arc::new(Circuit::compile(&bp).unwrap()));
    assert!(e.reset().unwrap());
    assert_eq!(e.cycle(), 0);
    let mut model = 0u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    for cyc in 0..300 {
        let en = rng.gen_range(0..4) != 0;
        e.set_input_value("en", en as u64).unwrap();
        let rst = cyc == 150;
        e.set_input_value("reset", rst as u64).unwrap();
        e.step().unwrap();
        assert_eq!(e.output_value("count", 0).unwrap(), model, "cycle {cyc}");
        model = if rst {
            0
        } else if en {
            (model + 1) & 255
        } else {
            model
        };
    }
}

#[test]
fn lfsr_uses_the_init_attribute() {
    let mut e = Engine::new(PlainBackend, single("lfsr"));
    let mut r: u64 = 0xACE1;
    for cyc in 0..200 {
        e.step().unwrap();
        assert_eq!(e.output_value("state", 63).unwrap(), r, "cycle {cyc}");
        let fb = ((r >> 15) ^ (r >> 13) ^ (r >> 12) ^ (r >> 10)) & 1;
        r = ((r << 1) | fb) & 0xffff;
    }
}

/// The hand model of memuser.v.
struct MemUserModel {
    pc: u64,
    acc: u64,
    ram: [u64; 16],
}

impl MemUserModel {
    fn cycle(&mut self, rom: &[u64]) -> (u64, u64) {
        let out = (self.acc, self.pc);
        let w = rom[self.pc as usize];
        let addr = ((w >> 11) & 15) as usize;
        let rdata = self.ram[addr];
        if w >> 15 == 1 {
            self.ram[addr] = (w & 0xff) ^ self.acc;
        }
        self.acc = (self.acc + rdata) & 0xff;
        self.pc = (self.pc + 1) & 15;
        out
    }
}

fn random_rom(seed: u64) -> Vec<u64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..16)
        .map(|_| rng.gen_range(0..1u64 << 16) & 0xf8ff)
        .collect()
}

#[test]
fn memuser_cmux_and_mux_memories_match_the_model() {
    for mux in [false, true] {
        let c = memuser(mux);
        let mut e = Engine::new(PlainBackend, c);
        let rom = random_rom(3);
        let ram0: Vec<u64> = (0..16).map(|i| (i * 37 + 5) & 255).collect();
        e.load_memory_words("rom", &rom).unwrap();
        e.load_memory_words("ram", &ram0).unwrap();
        e.reset().unwrap();
        let mut m = MemUserModel {
            pc: 0,
            acc: 0,
            ram: [0; 16],
        };
        m.ram.copy_from_slice(&ram0);
        for cyc in 0..80 {
            e.step().unwrap();
            let (acc, pc) = m.cycle(&rom);
            assert_eq!(
                e.output_value("acc", 0).unwrap(),
                acc,
                "mux={mux} cycle {cyc}"
            );
            assert_eq!(
                e.output_value("pc", 0).unwrap(),
                pc,
                "mux={mux} cycle {cyc}"
            );
        }
        assert_eq!(
            e.memory_words("ram", 0).unwrap(),
            m.ram.to_vec(),
            "mux={mux}"
        );
        assert_eq!(e.memory_words("rom", 0).unwrap(), rom);
    }
}

#[test]
fn scheduled_evaluation_equals_sequential() {
    // Different ROM per lane would need per-lane images; instead vary the RAM per lane through writes.
    let c = memuser(true);
    let mut seq = Engine::new(PlainBackend, c.clone());
    let mut par = Engine::new(PlainBackend, c);
    par.set_threads(3);
    for e in [&mut seq, &mut par] {
        e.load_memory_words("rom", &random_rom(4)).unwrap();
        e.reset().unwrap();
    }
    for _ in 0..20 {
        seq.step().unwrap();
        let st = par.step().unwrap();
        assert_eq!(st.threads, 3);
        assert_eq!(seq.output("acc").unwrap(), par.output("acc").unwrap());
    }
    assert_eq!(seq.state().dffs, par.state().dffs);
}

#[test]
fn snapshot_resume_equals_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("run.snap");
    let c = memuser(false);
    let rom = random_rom(5);
    let mut a = Engine::new(PlainBackend, c.clone());
    a.load_memory_words("rom", &rom).unwrap();
    a.reset().unwrap();
    let opts = RunOptions {
        max_cycles: 23,
        snapshot: Some(snap.clone()),
        ..Default::default()
    };
    let mut seen = 0;
    a.run(&opts, &mut |p| seen += p.cycle_finished as u64)
        .unwrap();
    assert_eq!(seen, 23);
    let mut b = Engine::new(PlainBackend, c.clone());
    b.load_snapshot(&snap).unwrap();
    assert_eq!(b.cycle(), 23);
    let opts = RunOptions {
        max_cycles: 30,
        ..Default::default()
    };
    a.run(&opts, &mut |_| {}).unwrap();
    b.run(&opts, &mut |_| {}).unwrap();
    assert_eq!(a.cycle(), 53);
    assert_eq!(
        a.output_value("acc", 0).unwrap(),
        b.output_value("acc", 0).unwrap()
    );
    assert_eq!(
        a.memory_words("ram", 0).unwrap(),
        b.memory_words("ram", 0).unwrap()
    );
    assert_eq!(a.snapshot_bytes(), b.snapshot_bytes());

    // Corruption, truncation and a different circuit are refused with a clear error.
    let mut bytes = std::fs::read(&snap).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    let e = b.restore_snapshot(&bytes).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    let e = b
        .restore_snapshot(&bytes[..n - 40])
        .unwrap_err()
        .to_string();
    assert!(e.contains("checksum") || e.contains("truncated"), "{e}");
    let mut other = Engine::new(PlainBackend, memuser(true));
    let e = other.load_snapshot(&snap).unwrap_err().to_string();
    assert!(e.contains("different circuit"), "{e}");
}

/// The snapshot format is fixed: a run's snapshot bytes (CMUX memories, and MUX memories as
/// flip-flops) hash to what this format has always written, and the [`EngineSnapshot`] read back
/// for the engine's context holds the cycle and encodes to the same bytes.
#[test]
fn snapshot_bytes_are_the_formats() {
    use sha3::{Digest, Sha3_256};
    use vsp_codec::FileCodec;
    for (mux, want) in [
        (
            false,
            "1212d3414585f09cd3116eebd6dc7a8d31aa89c35ab5d9502ddd5c8b2bf8d4f8",
        ),
        (
            true,
            "0be868089d574a24c60f335d00c931962c71feee62f781480bfba66e5fdf4dd8",
        ),
    ] {
        let mut e = Engine::new(PlainBackend, memuser(mux));
        e.load_memory_words("rom", &random_rom(5)).unwrap();
        e.reset().unwrap();
        let opts = RunOptions {
            max_cycles: 7,
            ..Default::default()
        };
        e.run(&opts, &mut |_| {}).unwrap();
        let bytes = e.snapshot_bytes();
        let sum: String = Sha3_256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(sum, want, "mux memories: {mux}");
        let ctx = e.snapshot_context();
        let snap = EngineSnapshot::decode(&bytes, &ctx).unwrap();
        assert_eq!(snap.cycle(), 7);
        assert_eq!(snap.encode(&ctx), bytes);
    }
}

/// The cycle of the snapshot at `path` (`None` when there is none yet).
fn snapshot_cycle(c: &Arc<Circuit>, path: &std::path::Path) -> Option<u64> {
    path.exists().then(|| {
        let mut e = Engine::new(PlainBackend, c.clone());
        e.load_snapshot(path).unwrap();
        e.cycle()
    })
}

/// Options of a run of `cycles` cycles writing a snapshot to `path` every `every` cycles.
fn snapshots_every(every: u64, path: &std::path::Path, cycles: u64) -> RunOptions {
    RunOptions {
        max_cycles: cycles,
        snapshot: Some(path.to_path_buf()),
        snapshot_every: Some(every),
        ..Default::default()
    }
}

/// Options of a plain run of `n` cycles.
fn cycles(n: u64) -> RunOptions {
    RunOptions {
        max_cycles: n,
        ..Default::default()
    }
}

/// A memuser engine with a random ROM, after its reset cycle.
fn memuser_engine(seed: u64) -> Engine<PlainBackend> {
    let mut e = Engine::new(PlainBackend, memuser(false));
    e.load_memory_words("rom", &random_rom(seed)).unwrap();
    e.reset().unwrap();
    e
}

#[test]
fn periodic_snapshots_appear_every_k_cycles_and_resume_to_a_straight_run() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("run.snap");
    let kept = dir.path().join("kept.snap");
    let c = memuser(false);
    let mut a = memuser_engine(7);
    let opts = snapshots_every(4, &snap, 10);
    // When cycle d of the run finishes, the file holds the last multiple of 4 before it (the
    // snapshot of cycle d itself follows the report).
    let mut seen = Vec::new();
    a.run(&opts, &mut |p| {
        if p.cycle_finished {
            seen.push((p.cycles_done, snapshot_cycle(&c, &snap)));
            if p.cycles_done == 9 {
                std::fs::copy(&snap, &kept).unwrap();
            }
        }
    })
    .unwrap();
    let want: Vec<(u64, Option<u64>)> = (1..=10)
        .map(|d| (d, Some((d - 1) / 4 * 4).filter(|&k| k > 0)))
        .collect();
    assert_eq!(seen, want);
    // After the run: the final snapshot, and no temporary file beside it.
    assert_eq!(snapshot_cycle(&c, &snap), Some(10));
    assert_eq!(snapshot_cycle(&c, &kept), Some(8));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);

    // Resumed from the snapshot of cycle 8, 12 more cycles equal 20 straight ones.
    let mut b = Engine::new(PlainBackend, c.clone());
    b.load_memory_words("rom", &random_rom(7)).unwrap();
    b.load_snapshot(&kept).unwrap();
    b.run(&cycles(12), &mut |_| {}).unwrap();
    let mut straight = memuser_engine(7);
    straight.run(&cycles(20), &mut |_| {}).unwrap();
    assert_eq!(b.cycle(), 20);
    assert_eq!(b.snapshot_bytes(), straight.snapshot_bytes());
    assert_eq!(
        b.memory_words("ram", 0).unwrap(),
        straight.memory_words("ram", 0).unwrap()
    );
}

#[test]
fn a_snapshot_wrapper_shapes_every_snapshot_file() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("wrapped");
    let mut e = memuser_engine(3);
    let wrap = SnapshotWrap(Arc::new(|state: &[u8]| {
        let mut v = b"WRAP".to_vec();
        v.extend_from_slice(state);
        v
    }));
    let opts = RunOptions {
        snapshot_wrap: Some(wrap.clone()),
        ..snapshots_every(2, &snap, 3)
    };
    e.run(&opts, &mut |_| {}).unwrap();
    let bytes = std::fs::read(&snap).unwrap();
    assert_eq!(&bytes[..4], b"WRAP");
    assert_eq!(&bytes[4..], &e.snapshot_bytes()[..]);
    let size = e.write_snapshot(&snap, Some(&wrap)).unwrap();
    assert_eq!(size, bytes.len() as u64);
}

#[test]
fn a_failed_snapshot_write_stops_the_run_and_leaves_no_partial_file() {
    let c = memuser(false);
    let mut e = memuser_engine(5);
    let dir = tempfile::tempdir().unwrap();
    let (snap, victim) = (dir.path().join("run.snap"), dir.path().join("victim"));
    let opts = snapshots_every(2, &snap, 6);
    // After cycle 3 the snapshot of cycle 2 moves away and a symbolic link to it takes its place:
    // the write of cycle 4 must fail without touching the file behind the link or leaving a
    // temporary file.
    let mut cycles = 0;
    let err = e
        .run(&opts, &mut |p| {
            if p.cycle_finished {
                cycles = p.cycles_done;
                if p.cycles_done == 3 {
                    std::fs::rename(&snap, &victim).unwrap();
                    std::os::unix::fs::symlink(&victim, &snap).unwrap();
                }
            }
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(cycles, 4, "the run stops at the failed snapshot");
    assert_eq!(snapshot_cycle(&c, &victim), Some(2));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["run.snap", "victim"]);

    // A snapshot path in a missing directory fails on the first write and creates nothing.
    let missing = dir.path().join("no/such/dir/run.snap");
    let mut e = memuser_engine(5);
    let opts = snapshots_every(1, &missing, 3);
    let err = e.run(&opts, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("cannot create"), "{err}");
    assert_eq!(e.cycle(), 1);
    assert!(!dir.path().join("no").exists());
}

#[test]
fn run_stops_on_output() {
    let bp = Blueprint::from_path(&testdata().join("counter.toml")).unwrap();
    let n = read_yosys_json(&testdata().join("counter.json")).unwrap();
    assert_eq!(n.stats().dff, 8);
    let mut e = Engine::new(PlainBackend, Arc::new(Circuit::compile(&bp).unwrap()));
    e.set_input_value("en", 1).unwrap();
    // Stop when count bit 3 is 1: first in the cycle whose output is 8 (the 9th cycle).
    let text = "[[file]]\ntype = \"yosys-json\"\npath = \"counter.json\"\nname = \"c\"\n[connect]\n\
                \"c/reset\" = \"0\"\n\"c/en\" = \"1\"\n\"@bit3\" = \"c/count[3]\"\n\"@count\" = \"c/count\"\n";
    let bp = Blueprint::from_str_with_base(text, &testdata()).unwrap();
    let mut e2 = Engine::new(PlainBackend, Arc::new(Circuit::compile(&bp).unwrap()));
    let opts = RunOptions {
        max_cycles: 100,
        stop_when: Some("bit3".into()),
        ..Default::default()
    };
    let r = e2.run(&opts, &mut |_| {}).unwrap();
    assert!(r.stopped);
    assert_eq!(r.cycles, 9);
    assert_eq!(e2.output_value("count", 0).unwrap(), 8);
    let r = e
        .run(
            &RunOptions {
                max_cycles: 3,
                ..Default::default()
            },
            &mut |_| {},
        )
        .unwrap();
    assert!(!r.stopped && r.cycles == 3);
}
