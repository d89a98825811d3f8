//! The 1 KiB variant (seed 000, appendix C) as the tools select it: programs whose code or whose data
//! need more than 512 bytes run on the 1 KiB cores (plain gate-level runs, checked against the ISA
//! simulator and the expected result) and are refused on the 512-byte ones with a message naming
//! `--memory-size 1024`; programs that fit both give the same result on both.

use std::path::{Path, PathBuf};

use vsp_platform::processor::program::{self, PlainRequest};
use vsp_platform::{emulate, Core, Machine, MemSize, Memory};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The error with its causes, as `vsp` prints it.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}

/// What a program too large for 512 bytes is told: the cheapest machine that holds it.
const HINT: &str = "does not fit in the 512-byte ROM and RAM; use --memory-size";

/// (file, arguments, expected a0, what needs the 1 KiB memories, the machine suggested)
const BIG: [(&str, &[&str], u16, &str, &str); 2] = [
    ("far-code.s", &[], 586, "code", "rom=1024,ram=512"),
    ("big-data.s", &["7"], 655, "data", "rom=512,ram=1024"),
];

#[test]
fn programs_larger_than_512_bytes_run_on_the_1k_cores_and_are_refused_on_512() {
    for (file, args, expected, what, suggested) in BIG {
        let hint = format!("{HINT} {suggested}:");
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        // Assembling for 512 bytes fails, naming the option; for 1 KiB it succeeds.
        let e = program::load_program(&data(file), false, MemSize::B512).unwrap_err();
        assert!(chain(&e).contains(&hint), "{file}: {}", chain(&e));
        let image = program::load_program(&data(file), false, MemSize::K1).unwrap();
        match what {
            "code" => assert!(image.rom.len() > 512, "{file}: ROM {}", image.rom.len()),
            _ => assert!(image.ram.len() > 512, "{file}: RAM {}", image.ram.len()),
        }
        // The image itself (as `vsp enc`/`vsp emu` read it from a file) is refused on 512 bytes.
        let e = PlainRequest::new(&image, &args, Memory::Cmux).unwrap_err();
        assert!(chain(&e).contains(&hint), "{file}: {}", chain(&e));
        let e = emulate(
            &image,
            &args,
            Core::Pearl,
            Memory::Cmux,
            MemSize::B512,
            1000,
        )
        .unwrap_err();
        assert!(chain(&e).contains(&hint), "{file}: {}", chain(&e));
        // On the 1 KiB cores: the expected result, agreeing with the 1 KiB ISA simulator.
        for (core, memory) in [
            (Core::Pearl, Memory::Cmux),
            (Core::Ruby, Memory::Cmux),
            (Core::Pearl, Memory::Mux),
        ] {
            let r = emulate(&image, &args, core, memory, MemSize::K1, 1000).unwrap();
            assert!(r.finished, "{file} on {core} {memory:?} did not finish");
            assert_eq!(
                r.agrees_with_isa,
                Some(true),
                "{file} on {core} {memory:?}: {:?}",
                r.regs
            );
            assert_eq!(r.result, expected, "{file} on {core} {memory:?}");
            assert_eq!(r.memory_size, 1024);
        }
    }
}

/// The RAM past 512 bytes holds what the program wrote there, in the gate-level RAM itself.
#[test]
fn the_1k_ram_keeps_the_words_past_512() {
    let image = program::load_program(&data("big-data.s"), false, MemSize::K1).unwrap();
    let req = PlainRequest::new_sized(&image, &["7".into()], Memory::Cmux, MemSize::K1).unwrap();
    assert_eq!(req.size, MemSize::K1);
    let mut m = Machine::plain(Core::Pearl, &req).unwrap();
    let (_, finished) = m.run_until_finished(1000).unwrap();
    assert!(finished);
    let ram = m.ram_bytes().unwrap();
    assert_eq!(ram.len(), 1024);
    assert_eq!(u16::from_le_bytes([ram[602], ram[603]]), 600);
    // argv[1] = "7" sits at the top of the 1 KiB RAM.
    assert_eq!(&ram[1020..1022], b"7\0");
}

/// The benchmarks fit both sizes and compute the same on both (their stack and arguments move to
/// the top of the larger RAM).
#[test]
fn programs_that_fit_512_bytes_run_the_same_on_1k() {
    let p = &vsp_cahp::programs::HAMMING;
    let image = vsp_cahp::assemble(p.source, p.name).unwrap();
    let args: Vec<String> = p.args.iter().map(|s| s.to_string()).collect();
    for core in Core::ALL {
        let small = emulate(&image, &args, core, Memory::Cmux, MemSize::B512, 5000).unwrap();
        let big = emulate(&image, &args, core, Memory::Cmux, MemSize::K1, 5000).unwrap();
        assert!(small.finished && big.finished && big.agrees_with_isa == Some(true));
        assert_eq!(
            (big.result, small.result),
            (p.expected, p.expected),
            "{core}"
        );
        assert_eq!(small.memory_size, 512);
    }
}

#[test]
fn memory_sizes_are_512_to_8192_bytes_each() {
    assert_eq!(program::parse_memory_size("512").unwrap(), MemSize::B512);
    assert_eq!(program::parse_memory_size("1024").unwrap(), MemSize::K1);
    assert_eq!(
        program::parse_memory_size(" rom=8192, ram=1024 ").unwrap(),
        MemSize::new(8192, 1024).unwrap()
    );
    assert_eq!(
        program::parse_memory_size("ram=2048,rom=4096").unwrap(),
        MemSize::new(4096, 2048).unwrap()
    );
    assert_eq!(
        program::parse_memory_size("rom=2048").unwrap(),
        MemSize::new(2048, 512).unwrap()
    );
    for size in MemSize::ALL {
        assert_eq!(program::parse_memory_size(&size.option()).unwrap(), size);
    }
    let long = "9".repeat(10_000);
    for bad in [
        "1k",
        "1KiB",
        "0",
        "",
        "-512",
        "256",
        "16384",
        "rom=16384",
        "ram=256",
        "rom=512,rom=512",
        "rom=512,",
        "rom",
        "=512",
        "rom=+512",
        "rom=1e3",
        &long,
    ] {
        let e = program::parse_memory_size(bad).unwrap_err().to_string();
        assert!(
            e.contains("unknown memory size") && e.contains("rom=BYTES,ram=BYTES") && e.len() < 300,
            "{bad:?}: {e}"
        );
    }
}

/// A program too large for the ROM asked for is told the cheapest machine that holds it, and one
/// whose code needs more than 1 KiB runs on the larger ROM with a small RAM.
#[test]
fn larger_roms_hold_larger_programs_and_the_hint_names_the_cheapest() {
    let text = "_start:\n    li a0, 5\n    li a5, far\n    jr a5\n    .space 3000\nfar:\n    addi a0, a0, 2\n    hlt\n";
    let src = vsp_cahp::Source {
        name: "big.s",
        text,
    };
    let small = MemSize::new(2048, 512).unwrap();
    let e = program::assemble(&[src], false, small).unwrap_err();
    assert!(
        chain(&e).contains(
            "does not fit in the 2048-byte ROM and 512-byte RAM; use --memory-size rom=4096,ram=512:"
        ),
        "{}",
        chain(&e)
    );
    let size = MemSize::new(4096, 512).unwrap();
    let image = program::assemble(&[src], false, size).unwrap();
    for core in Core::ALL {
        let r = emulate(&image, &[], core, Memory::Cmux, size, 100).unwrap();
        assert_eq!(
            (
                r.result,
                r.agrees_with_isa,
                r.rom_size,
                r.ram_size,
                r.memory_size
            ),
            (7, Some(true), 4096, 512, 0),
            "{core}"
        );
    }
}
