//! End-to-end: the benchmark programs assemble, run on the simulator with the paper's inputs and
//! return the paper's results; the runtime helpers compute what Rust computes.

use vsp_cahp::programs::{self, ALL};
use vsp_cahp::{assemble, Image, MemConfig, Simulator};

fn run(image: &Image, args: &[&str], config: MemConfig) -> Simulator {
    let mut sim = Simulator::from_image(image, args, config).unwrap();
    let stats = sim.run(1_000_000).unwrap();
    assert!(stats.halted, "did not halt");
    sim
}

#[test]
fn benchmarks_give_the_papers_results() {
    for p in ALL {
        let image = assemble(p.source, p.name).unwrap_or_else(|e| panic!("{e}"));
        for config in [MemConfig::default(), MemConfig::kib1()] {
            let sim = run(&image, p.args, config);
            assert_eq!(sim.result(), p.expected, "{} with {config:?}", p.name);
            println!(
                "{}: {} instructions, {} ROM bytes",
                p.name,
                sim.instret(),
                image.rom.len()
            );
        }
    }
}

#[test]
fn benchmarks_on_other_inputs() {
    let fib = assemble(programs::FIB.source, "fib").unwrap();
    let f = [0u16, 1, 1, 2, 3, 5, 8, 13, 21, 34];
    // Non-digits take the loop: n = 10 (":"), 11 (";"), and n < 0 ("/") gives 0.
    assert_eq!(run(&fib, &[":"], MemConfig::default()).result(), 55);
    assert_eq!(run(&fib, &[";"], MemConfig::default()).result(), 89);
    assert_eq!(run(&fib, &["/"], MemConfig::default()).result(), 0);
    for c in ["A", "z"] {
        let n = c.as_bytes()[0] - b'0';
        let (mut a, mut b) = (0u16, 1u16);
        for _ in 0..n {
            (a, b) = (b, a.wrapping_add(b));
        }
        assert_eq!(
            run(&fib, &[c], MemConfig::default()).result(),
            a,
            "fib({n}) mod 2^16"
        );
    }
    for (n, want) in f.iter().enumerate() {
        let arg = n.to_string();
        assert_eq!(
            run(&fib, &[&arg], MemConfig::default()).result(),
            *want,
            "fib({n})"
        );
    }
    let ham = assemble(programs::HAMMING.source, "hamming").unwrap();
    let cases: [([&str; 8], u16); 3] = [
        (["00", "00", "00", "00", "00", "00", "00", "00"], 0),
        (["ff", "FF", "fF", "Ff", "00", "00", "00", "00"], 32),
        (["12", "34", "56", "78", "9a", "bc", "de", "f0"], {
            let g = 0x1234_5678u32;
            let e = 0x9abc_def0u32;
            (g ^ e).count_ones() as u16
        }),
    ];
    for (args, want) in cases {
        assert_eq!(
            run(&ham, &args, MemConfig::default()).result(),
            want,
            "{args:?}"
        );
    }
    let bf = assemble(programs::BF.source, "bf").unwrap();
    for (prog, want) in [
        ("", 0u16),
        ("+++-", 2),
        ("+[[-]]+", 1),
        ("+[-[-]]", 0),
        ("++>+++[<+>-]<", 5),
        ("[+++]++", 2),
        ("+.,x+", 2),
        ("++[>+++[>++<-]<-]>>", 12),
    ] {
        assert_eq!(
            run(&bf, &[prog], MemConfig::default()).result(),
            want,
            "bf {prog:?}"
        );
    }
}
