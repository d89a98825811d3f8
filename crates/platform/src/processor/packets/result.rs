//! The result: built by the server's machine, decrypted by the client into a [`Decrypted`] state.

use std::fmt;

use vsp_cahp::cores::{self, MemSize, Memory};
use vsp_circuit::{client, TfheRam};
use vsp_tfhe::{Params, Tlwe};

use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::wire::envelope::{Envelope, KeyId, Kind, Writer};
use crate::wire::tags::{get_memory, put_memory};
use vsp_codec::Reader;

/// The RAM as a result carries it.
pub enum EncryptedRam<'a> {
    Cmux(&'a TfheRam),
    Mux(Vec<Tlwe<u32>>),
}

/// Builds a result envelope: `cycles`, the finish flag and x0..x15 (bits, LSB first), the RAM (of
/// `size`).
pub fn result_envelope(
    params_name: &str,
    key_id: KeyId,
    params: &Params,
    cycles: u64,
    outputs: &[Vec<Tlwe<u32>>],
    ram: EncryptedRam<'_>,
    size: MemSize,
) -> Envelope {
    let mut w = Writer::default();
    w.u64(cycles);
    let memory = match ram {
        EncryptedRam::Cmux(_) => Memory::Cmux,
        EncryptedRam::Mux(_) => Memory::Mux,
    };
    put_memory(&mut w, memory, size);
    for bits in outputs {
        w.u32(bits.len() as u32);
        for b in bits {
            w.blob(&b.to_bytes(params));
        }
    }
    match ram {
        EncryptedRam::Cmux(ram) => w.blob(&ram.to_bytes()),
        EncryptedRam::Mux(cells) => put_cells(&mut w, &cells, params),
    }
    Envelope::new(Kind::Result, params_name, key_id, w.into_bytes())
}

/// A decrypted result.
#[derive(Debug, serde::Serialize)]
pub struct Decrypted {
    pub cycles: u64,
    pub finished: bool,
    pub regs: Vec<u16>,
    /// main's return value (x8 = a0).
    pub result: u16,
    pub ram: Vec<u8>,
}

impl Decrypted {
    /// A hex dump of the RAM (`vsp dec --ram`): 16 bytes a line, all-zero lines skipped.
    pub fn ram_dump(&self) -> String {
        let lines = self.ram.chunks(16).enumerate();
        let mut s = String::new();
        for (i, chunk) in lines.filter(|(_, c)| c.iter().any(|&b| b != 0)) {
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            s.push_str(&format!("{:04x}: {}\n", i * 16, hex.join(" ")));
        }
        s
    }
}

/// The result as `vsp dec` prints it: cycles, the finish flag, a0 and x0..x15.
impl fmt::Display for Decrypted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cycles:     {}", self.cycles)?;
        writeln!(f, "finished:   {}", yes_no(self.finished))?;
        writeln!(f, "result a0:  {} (0x{:04x})", self.result, self.result)?;
        f.write_str(&regs_table(&self.regs))
    }
}

/// `yes` or `no`, as the reports say a flag.
pub(crate) fn yes_no(flag: bool) -> &'static str {
    if flag {
        "yes"
    } else {
        "no"
    }
}

/// x0..x15, eight to a line (each line ends in a newline).
pub(crate) fn regs_table(regs: &[u16]) -> String {
    let mut s = String::new();
    for (i, v) in regs.iter().enumerate() {
        let end = if i % 8 == 7 { "\n" } else { " " };
        s.push_str(&format!("x{i:<2}={v:<6}{end}"));
    }
    s
}

/// Decrypts a result with the secret key.
pub fn decrypt_result(key: &ClientKey, env: &Envelope) -> Result<Decrypted> {
    key.check_file("the result", env)?;
    let corrupt = |m: String| PlatformError::format(format!("corrupt result: {m}"));
    let params: &Params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let cycles = r.u64("body")?;
    let (memory, size) = get_memory(&mut r).context(|| "corrupt result".into())?;
    let mut values = Vec::with_capacity(17);
    // The shape must be the core's: a 1-bit finish flag, 16-bit registers, the core's RAM.
    let widths = std::iter::once((cores::FINISH, 1)).chain(cores::REGS.map(|r| (r, REG_BITS)));
    for (name, want) in widths {
        let n = r.u32("body")? as usize;
        if n != want {
            return Err(corrupt(format!(
                "output {name} has {n} bits, the core's has {want}"
            )));
        }
        let bits = (0..n)
            .map(|_| {
                Tlwe::<u32>::from_bytes(r.blob(usize::MAX, "body")?, params)
                    .map_err(|e| PlatformError::from(e).context("corrupt result"))
            })
            .collect::<Result<Vec<_>>>()?;
        values.push(client::decrypt_value(&key.sk, &bits)?);
    }
    let aa = size.ram_addr_width();
    let words = match memory {
        Memory::Cmux => {
            let ram_bytes = r.blob(usize::MAX, "body")?;
            let want = format!("a {size} result's");
            check_shape("RAM", &want, ram_bytes, aa, cores::RAM_DATA_WIDTH)
                .map_err(|e| corrupt(e.to_string()))?;
            let ram =
                TfheRam::from_bytes(ram_bytes, params).context(|| "corrupt result: RAM".into())?;
            // Decoded with the announced shape: 2^a noise bounds and 2^a·w cells.
            let words = 1usize << aa;
            if ram.noise_bounds().len() != words
                || ram.cells().len() != words * cores::RAM_DATA_WIDTH
            {
                return Err(corrupt("the RAM's shape is not the core's".into()));
            }
            client::decrypt_ram(&key.sk, &ram)?
        }
        Memory::Mux => {
            let cells = get_cells(&mut r, ram_bits(size), params)
                .context(|| format!("corrupt result: {size} RAM"))?;
            client::decrypt_mux_memory(&key.sk, cores::RAM_DATA_WIDTH, &cells)?
        }
    };
    r.end()?;
    Ok(Decrypted {
        cycles,
        finished: values[0] == 1,
        regs: values[1..].iter().map(|&v| v as u16).collect(),
        result: values[1 + 8] as u16,
        ram: cores::ram_bytes(&words),
    })
}

#[cfg(test)]
mod tests {
    use super::Decrypted;

    fn decrypted(ram: Vec<u8>) -> Decrypted {
        Decrypted {
            cycles: 12,
            finished: true,
            regs: (0..16).map(|i| i * 1000).collect(),
            result: 8000,
            ram,
        }
    }

    /// `vsp dec`'s text, line by line (the CLI tests read it).
    #[test]
    fn a_decrypted_result_prints_as_vsp_dec_shows_it() {
        let text = decrypted(vec![0; 32]).to_string();
        let want = "cycles:     12\nfinished:   yes\nresult a0:  8000 (0x1f40)\n\
            x0 =0      x1 =1000   x2 =2000   x3 =3000   x4 =4000   x5 =5000   x6 =6000   x7 =7000  \n\
            x8 =8000   x9 =9000   x10=10000  x11=11000  x12=12000  x13=13000  x14=14000  x15=15000 \n";
        assert_eq!(text, want);
        let unfinished = Decrypted {
            finished: false,
            ..decrypted(vec![])
        };
        assert!(unfinished.to_string().contains("finished:   no\n"));
    }

    /// The RAM dump skips all-zero lines and numbers the others by their address.
    #[test]
    fn the_ram_dump_shows_only_lines_with_data() {
        let mut ram = vec![0u8; 48];
        ram[33] = 0xab;
        let d = decrypted(ram);
        let zeros = "00 ".repeat(14);
        assert_eq!(d.ram_dump(), format!("0020: 00 ab {}\n", zeros.trim_end()));
        assert_eq!(decrypted(vec![0; 64]).ram_dump(), "");
    }
}
