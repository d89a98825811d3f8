#[test]
#[ignore]
fn dump() {
    let p = std::env::var("SCRATCH_C").unwrap();
    let src = std::fs::read_to_string(&p).unwrap();
    let opt = std::env::var("SCRATCH_O").unwrap_or("-Oz".into());
    let asm = vsp_cc::compile_c_source(
        &src,
        "x.c",
        &vsp_cc::CcOptions {
            opt,
            ..Default::default()
        },
    )
    .unwrap();
    std::fs::write("/tmp/ccchk/out.s", &asm).unwrap();
}
