//! Programs larger than 1 KiB: a C program whose code needs a 2–4 KiB ROM compiles with
//! `vsp cc --memory-size rom=…`, is refused (naming the option) without it, and `vsp emu` runs the
//! image on both cores with the size it records, giving what a host build of the same source
//! gives; and every spelling of a size that no core has is refused with a one-line error.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clang_scratch, fails, ok};

fn big_c() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/big.c")
}

/// main's result (as a 16-bit value) of a host build of `src` with `args`.
fn host_results(src: &Path, dir: &Path, arg_sets: &[[&str; 2]]) -> Vec<u64> {
    let drv = dir.join("driver.c");
    std::fs::write(
        &drv,
        "#include <stdio.h>\nint vsp_main(int, char **);\nint main(int argc, char **argv) {\n    \
         argv[0] = \"\";\n    printf(\"%u\\n\", (unsigned)(unsigned short)vsp_main(argc, argv));\n    \
         return 0;\n}\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let st = Command::new("clang").args(args).current_dir(dir).status();
        assert!(
            st.is_ok_and(|s| s.success()),
            "host clang {args:?} failed (libc6-dev missing?)"
        );
    };
    let src = src.to_str().unwrap();
    run(&[
        "-O1",
        "-w",
        "-fwrapv",
        "-Dmain=vsp_main",
        "-c",
        src,
        "-o",
        "prog.o",
    ]);
    run(&["-O1", "-w", "-c", "driver.c", "-o", "driver.o"]);
    run(&["prog.o", "driver.o", "-o", "host"]);
    arg_sets
        .iter()
        .map(|a| {
            let out = Command::new(dir.join("host")).args(a).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        })
        .collect()
}

#[test]
#[ignore = "needs clang"]
fn a_c_program_over_1_kib_runs_on_a_larger_rom_on_both_cores() {
    let dir = clang_scratch();
    let d = dir.path();
    let src = big_c();
    let src = src.to_str().unwrap();
    let args = [["123", "-4567"], ["-300", "0"], ["7", "32767"]];
    let want = host_results(Path::new(src), d, &args);
    for (level, size) in [("-Oz", "rom=2048,ram=512"), ("-O2", "rom=4096,ram=1024")] {
        // Without the option: too large for 512 bytes, and the message names a machine that holds it.
        let _ = std::fs::remove_file(d.join("big.img"));
        let err = fails(&["cc", level, src, "-o", "big.img"], d);
        assert!(
            err.contains("does not fit") && err.contains("--memory-size rom="),
            "{level}: {err}"
        );
        assert!(!d.join("big.img").exists());
        ok(
            &[
                "-q",
                "cc",
                level,
                "--memory-size",
                size,
                src,
                "-o",
                "big.img",
            ],
            d,
        );
        let image = vsp_cahp::Image::read(&d.join("big.img")).unwrap();
        assert!(image.rom.len() > 1024, "{level}: {} bytes", image.rom.len());
        for core in ["pearl", "ruby"] {
            for (a, want) in args.iter().zip(&want) {
                // No --memory-size: the image says which machine it was built for.
                let out = ok(
                    &[
                        "emu",
                        "--json",
                        "--max-cycles",
                        "400000",
                        "--core",
                        core,
                        "big.img",
                        a[0],
                        a[1],
                    ],
                    d,
                );
                let json: serde_json::Value = serde_json::from_str(&out).unwrap();
                assert_eq!(json["result"], *want, "{level} {core} {a:?}: {json}");
                assert_eq!(json["agrees_with_isa"], true, "{level} {core} {a:?}");
                let rom: usize = size[4..8].parse().unwrap();
                assert_eq!(json["rom_size"], rom, "{json}");
            }
        }
        // The image refuses another explicit size, naming the one it was built for.
        let err = fails(&["emu", "--memory-size", "8192", "big.img", "1", "2"], d);
        assert!(err.contains(&format!("--memory-size {size}")), "{err}");
    }
}

#[test]
fn sizes_no_core_has_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.s"), "_start:\n    li a0, 7\n    hlt\n").unwrap();
    for bad in [
        "0",
        "256",
        "1000",
        "16384",
        "65536",
        "99999999999999999999999",
        "rom=16384",
        "rom=4096,ram=256",
        "rom=4096,rom=512",
        "rom=4096;ram=512",
        "rom=,ram=512",
        "disk=512",
        "rom=0x1000",
        "",
    ] {
        let err = fails(&["asm", "--memory-size", bad, "p.s", "-o", "p.img"], d);
        assert!(
            err.contains("memory size") && err.lines().count() <= 3,
            "{bad:?}: {err}"
        );
        assert!(!d.join("p.img").exists());
    }
    // Every supported pair is accepted, and recorded in the image.
    ok(
        &[
            "-q",
            "asm",
            "--memory-size",
            "rom=8192,ram=2048",
            "p.s",
            "-o",
            "p.img",
        ],
        d,
    );
    let image = vsp_cahp::Image::read(&d.join("p.img")).unwrap();
    assert_eq!(
        image.memory,
        Some(vsp_cahp::MemConfig {
            rom_size: 8192,
            ram_size: 2048
        })
    );
    let out = ok(&["emu", "--json", "p.img"], d);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&json["result"], &json["rom_size"], &json["ram_size"]),
        (&7.into(), &8192.into(), &2048.into()),
        "{json}"
    );
}
