//! Prints the CAHPv3 assembly vsp-cc produces for a C file: `cargo run -p vsp-cc --example vspcc_dump -- prog.c`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: vspcc_dump <file.c>");
        std::process::exit(2);
    };
    match vsp_cc::compile_c(std::path::Path::new(&path), &vsp_cc::CcOptions::default()) {
        Ok(asm) => print!("{asm}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
