//! The argument loader: places argv, argc and the initial stack pointer at the top of RAM.
//!
//! Same algorithm as kvsp `attachCommandLineOptions` and cahp-sim `place_cmd_args`
//! (`shared/reference/vsp.md` §1.7), with `argv[0] = ""` as kvsp does:
//! 1. starting at byte `RAMSIZE-2` and going down, copy each argv string with its NUL, last
//!    argument first (so the strings ascend in argv order);
//! 2. round down to even and push the pointer array so that memory ascends
//!    `argv[0], …, argv[argc-1], NULL` (16-bit little-endian pointers);
//! 3. push argc; that address is the initial SP, stored as a word at `RAMSIZE-2`.
//!
//! crt0 (and the benchmark programs) read the SP from `RAMSIZE-2`, argc from `0(sp)` and argv from
//! `sp+2`.

use thiserror::Error;

/// Loader errors.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LoadError {
    /// RAM size not a power of two in 16..=65536.
    #[error("RAM size {0} must be a power of two between 16 and 65536 bytes")]
    BadRamSize(usize),
    /// The program's static data does not fit in RAM.
    #[error("initial RAM image ({len} bytes) is larger than the {size}-byte RAM")]
    ImageTooLarge {
        /// Image length.
        len: usize,
        /// RAM size.
        size: usize,
    },
    /// The arguments would overwrite the program's static data.
    #[error("arguments need {need} bytes at the top of RAM but only {avail} are free above the program's data")]
    ArgsTooLarge {
        /// Bytes the argument block needs (strings, pointers, argc, SP slot).
        need: usize,
        /// Bytes free between the end of static data and the top of RAM.
        avail: usize,
    },
    /// An argument contains a NUL byte, which would cut it short.
    #[error("argument {0} contains a NUL byte")]
    NulInArgument(usize),
}

/// Returns the complete initial RAM (`ram_size` bytes): `ram_init` (the image's static data,
/// starting at address 0) followed by zeros, with `argv = ["", args…]` placed at the top.
pub fn load_args(ram_init: &[u8], args: &[&str], ram_size: usize) -> Result<Vec<u8>, LoadError> {
    if !ram_size.is_power_of_two() || !(16..=65536).contains(&ram_size) {
        return Err(LoadError::BadRamSize(ram_size));
    }
    if ram_init.len() > ram_size {
        return Err(LoadError::ImageTooLarge {
            len: ram_init.len(),
            size: ram_size,
        });
    }
    if let Some(i) = args.iter().position(|a| a.as_bytes().contains(&0)) {
        return Err(LoadError::NulInArgument(i + 1));
    }
    let argv: Vec<&[u8]> = std::iter::once(&b""[..])
        .chain(args.iter().map(|a| a.as_bytes()))
        .collect();
    // Size check before writing anything: strings, alignment, pointers + NULL, argc, SP slot.
    let strings: usize = argv.iter().map(|a| a.len() + 1).sum();
    let need = 2 + strings + 1 + 2 * (argv.len() + 1) + 2;
    let avail = ram_size - ram_init.len();
    if need > avail {
        return Err(LoadError::ArgsTooLarge { need, avail });
    }
    let mut ram = vec![0u8; ram_size];
    ram[..ram_init.len()].copy_from_slice(ram_init);
    let mut idx = ram_size - 2;
    let mut ptrs = vec![0u16; argv.len()];
    for (i, a) in argv.iter().enumerate().rev() {
        idx -= a.len() + 1;
        ram[idx..idx + a.len()].copy_from_slice(a);
        ram[idx + a.len()] = 0;
        ptrs[i] = idx as u16;
    }
    idx &= !1;
    let mut push = |ram: &mut Vec<u8>, v: u16| {
        idx -= 2;
        ram[idx..idx + 2].copy_from_slice(&v.to_le_bytes());
    };
    push(&mut ram, 0); // argv[argc] = NULL
    for &p in ptrs.iter().rev() {
        push(&mut ram, p);
    }
    push(&mut ram, argv.len() as u16);
    let sp = idx as u16;
    ram[ram_size - 2..].copy_from_slice(&sp.to_le_bytes());
    Ok(ram)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(ram: &[u8], a: usize) -> u16 {
        u16::from_le_bytes([ram[a], ram[a + 1]])
    }

    #[test]
    fn layout_matches_reference_algorithm() {
        let ram = load_args(&[0, 0, 7], &["5"], 512).unwrap();
        // Strings: "5\0" at 508..510, "" at 507; round down to 506; NULL at 504, argv[1]=508 at
        // 502, argv[0]=507 at 500, argc=2 at 498 = SP.
        assert_eq!(&ram[507..510], &[0, b'5', 0]);
        assert_eq!(word(&ram, 510), 498);
        assert_eq!(word(&ram, 498), 2);
        assert_eq!(word(&ram, 500), 507);
        assert_eq!(word(&ram, 502), 508);
        assert_eq!(word(&ram, 504), 0);
        assert_eq!(ram[2], 7);
    }

    #[test]
    fn rejects_overlap_and_bad_sizes() {
        let big = vec![1u8; 500];
        assert!(matches!(
            load_args(&big, &["abcdefgh"], 512),
            Err(LoadError::ArgsTooLarge { .. })
        ));
        assert_eq!(load_args(&[], &[], 500), Err(LoadError::BadRamSize(500)));
        assert_eq!(
            load_args(&[], &["a\0b"], 512),
            Err(LoadError::NulInArgument(1))
        );
        let ram = load_args(&[], &[], 1024).unwrap();
        assert_eq!(word(&ram, 1022), 1024 - 2 - 1 - 1 - 4 - 2);
    }
}
