//! Re-synthesis check of the committed core netlists (needs Yosys: `#[ignore = "needs yosys"]`, run with `--include-ignored`).
//!
//! The RTL in `hw/rtl/` is synthesized again with the committed scripts in a scratch copy of `hw/`.
//! With the Yosys version that produced the committed JSON the result must be byte-identical (so the
//! committed netlists are exactly what the sources say); with another version ABC may map
//! differently, so the fresh netlists must instead run the benchmark programs exactly like the
//! ISA simulator.

mod coverify_support;

use coverify_support::{
    check_netlist, circuit_with_netlist_sized, hw_dir, require_tool, run_netlist_sized,
    simulate_sized, Lane,
};
use std::process::Command;
use vsp_cahp::cores::{Core, MemSize, Memory};
use vsp_cahp::{assemble_sources, load_args, programs, AsmOptions, Source};

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("dir entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

/// The `"creator": "Yosys …"` line of a Yosys JSON file.
fn creator(json: &str) -> Option<String> {
    let rest = &json[json.find("\"creator\"")?..];
    let start = rest.find(": \"")? + 3;
    let end = start + rest[start..].find('"')?;
    Some(rest[start..end].to_string())
}

#[test]
#[ignore = "needs yosys"]
fn committed_netlists_are_what_the_rtl_synthesizes_to() {
    require_tool("yosys");
    let scratch = tempfile::tempdir().expect("tempdir");
    let hw = hw_dir();
    copy_dir(&hw.join("rtl"), &scratch.path().join("rtl"));
    copy_dir(&hw.join("synth"), &scratch.path().join("synth"));
    std::fs::create_dir_all(scratch.path().join("netlist")).expect("mkdir");
    // One netlist per ROM size; each runs with a RAM of the same size here.
    let sizes = MemSize::SIZES.map(|b| MemSize::from_bytes(b).expect("a size"));
    for (core, size) in Core::ALL.into_iter().flat_map(|c| sizes.map(|s| (c, s))) {
        let stem = match size.rom_bytes() {
            512 => core.name().to_string(),
            b => format!("{}-{}k", core.name(), b / 1024),
        };
        assert!(core
            .netlist_path_sized(size)
            .ends_with(&format!("/{stem}.json")));
        let out = Command::new("yosys")
            .args(["-q", "-s", &format!("synth/{stem}.ys")])
            .current_dir(scratch.path())
            .output()
            .expect("run yosys");
        // The flow needs a Yosys with dfflegalize, `opt -nodffe -nosdff` and ABC's &nf (0.10 or
        // later; CI installs Debian's 0.23, the committed netlists' version). A Yosys that cannot
        // run it fails the test: passing would check nothing.
        assert!(
            out.status.success(),
            "{core}: yosys failed (the flow needs Yosys 0.10 or later; committed netlists: {}): {}",
            creator(core.netlist_json_sized(size)).unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr)
        );
        let fresh = std::fs::read_to_string(scratch.path().join(format!("netlist/{stem}.json")))
            .expect("fresh netlist");
        let committed = core.netlist_json_sized(size);
        if creator(&fresh) == creator(committed) {
            assert!(
                fresh == committed,
                "{core}: hw/netlist/{stem}.json is stale; run `cd hw && yosys -q -s synth/{stem}.ys`"
            );
            continue;
        }
        println!(
            "{core}: Yosys {:?} differs from the committed netlist's {:?}; checking the fresh netlist by simulation",
            creator(&fresh),
            creator(committed)
        );
        let circuit = circuit_with_netlist_sized(core, Memory::Cmux, size, &fresh)
            .expect("fresh netlist compiles");
        let opts = AsmOptions {
            rom_size: size.rom_bytes(),
            ram_size: size.ram_bytes(),
            ..AsmOptions::default()
        };
        for p in programs::ALL {
            let image = assemble_sources(
                &[Source {
                    name: p.name,
                    text: p.source,
                }],
                &opts,
            )
            .expect("assembles");
            let lane = Lane {
                rom: image.rom.clone(),
                ram: load_args(&image.ram, p.args, size.ram_bytes()).expect("args"),
            };
            let sim = simulate_sized(&lane, 100_000, size);
            let net = run_netlist_sized(
                &circuit,
                Memory::Cmux,
                size,
                std::slice::from_ref(&lane),
                20_000,
            );
            check_netlist(
                &format!("{core} {stem} {} (fresh netlist)", p.name),
                &sim,
                &net[0],
            );
        }
    }
}
