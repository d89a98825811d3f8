//! The result: built by the server's machine, decrypted by the client into a [`Decrypted`] state.

use std::borrow::Cow;
use std::fmt;

use vsp_cahp::cores::{self, MemSize, Memory};
use vsp_circuit::{client, TfheRam};
use vsp_tfhe::{Params, Tlwe};

use super::*;
use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::ClientKey;
use crate::wire::envelope::{vsp_file, Envelope, Kind, Stamp, Writer};
use crate::wire::tags::{get_memory, put_memory};
use vsp_codec::{FileCodec, Reader};

/// The RAM as a result carries it (a machine's CMUX RAM borrowed while it is written).
pub enum EncryptedRam<'a> {
    Cmux(Cow<'a, TfheRam>),
    Mux(Vec<Tlwe<u32>>),
}

impl EncryptedRam<'_> {
    /// The RAM's words of `data_width` bits, decrypted with the secret key.
    pub fn decrypt(&self, key: &ClientKey, data_width: usize) -> Result<Vec<u64>> {
        Ok(match self {
            EncryptedRam::Cmux(ram) => client::decrypt_ram(&key.sk, ram)?,
            EncryptedRam::Mux(cells) => client::decrypt_mux_memory(&key.sk, data_width, cells)?,
        })
    }
}

/// An encrypted result: the cycle count, the finish flag and x0..x15 (bits, LSB first) and the RAM
/// of `size`, stamped with the key they are encrypted under.
pub struct EncryptedResult<'a> {
    pub stamp: Stamp,
    pub cycles: u64,
    pub size: MemSize,
    /// The finish flag, then x0..x15.
    pub outputs: Vec<Vec<Tlwe<u32>>>,
    pub ram: EncryptedRam<'a>,
    /// The parameter set of the ciphertexts.
    pub params: Params,
}

impl EncryptedResult<'_> {
    /// The result as an envelope (written by [`Envelope::write`], or sent).
    pub fn to_envelope(&self) -> Envelope {
        Envelope::of(
            self,
            Kind::Result,
            &self.stamp.params_name,
            self.stamp.key_id,
        )
    }

    /// Decrypts the result with the secret key.
    pub fn decrypt(&self, key: &ClientKey) -> Result<Decrypted> {
        let values = (self.outputs.iter())
            .map(|bits| client::decrypt_value(&key.sk, bits))
            .collect::<Result<Vec<_>, _>>()?;
        let words = self.ram.decrypt(key, cores::RAM_DATA_WIDTH)?;
        Ok(Decrypted {
            cycles: self.cycles,
            finished: values[0] == 1,
            regs: values[1..].iter().map(|&v| v as u16).collect(),
            result: values[1 + 8] as u16,
            ram: cores::ram_bytes(&words),
        })
    }
}

/// The result file: cycles u64 ‖ memory ‖ 17 × (bits u32 ‖ bits × TLWE blob) ‖ RAM (as in a
/// request); decoded for a parameter set, every output's width and the RAM's shape checked against
/// the core's.
impl FileCodec for EncryptedResult<'_> {
    vsp_file!(Result, Params);

    fn write_body(&self, w: &mut Writer) {
        let params = &self.params;
        w.u64(self.cycles);
        let memory = match self.ram {
            EncryptedRam::Cmux(_) => Memory::Cmux,
            EncryptedRam::Mux(_) => Memory::Mux,
        };
        put_memory(w, memory, self.size);
        for bits in &self.outputs {
            w.u32(bits.len() as u32);
            for b in bits {
                w.blob(&b.to_bytes(params));
            }
        }
        match &self.ram {
            EncryptedRam::Cmux(ram) => w.blob(&ram.to_bytes()),
            EncryptedRam::Mux(cells) => put_cells(w, cells, params),
        }
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Params) -> Result<Self> {
        let stamp = Stamp::parse(param)?;
        let corrupt = |m: String| PlatformError::format(format!("corrupt result: {m}"));
        let cycles = r.u64("body")?;
        let (memory, size) = get_memory(r).context(|| "corrupt result".into())?;
        let mut outputs = Vec::with_capacity(17);
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
            outputs.push(bits);
        }
        let ram = match memory {
            Memory::Cmux => {
                let aa = size.ram_addr_width();
                let ram_bytes = r.blob(usize::MAX, "body")?;
                let want = format!("a {size} result's");
                check_shape("RAM", &want, ram_bytes, aa, cores::RAM_DATA_WIDTH)
                    .map_err(|e| corrupt(e.to_string()))?;
                let ram = TfheRam::from_bytes(ram_bytes, params)
                    .context(|| "corrupt result: RAM".into())?;
                // Decoded with the announced shape: 2^a noise bounds and 2^a·w cells.
                let words = 1usize << aa;
                if ram.noise_bounds().len() != words
                    || ram.cells().len() != words * cores::RAM_DATA_WIDTH
                {
                    return Err(corrupt("the RAM's shape is not the core's".into()));
                }
                EncryptedRam::Cmux(Cow::Owned(ram))
            }
            Memory::Mux => EncryptedRam::Mux(
                get_cells(r, ram_bits(size), params)
                    .context(|| format!("corrupt result: {size} RAM"))?,
            ),
        };
        Ok(EncryptedResult {
            stamp,
            cycles,
            size,
            outputs,
            ram,
            params: *params,
        })
    }
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

/// Decrypts a result envelope with the secret key (its key checked first).
pub fn decrypt_result(key: &ClientKey, env: &Envelope) -> Result<Decrypted> {
    key.check_file("the result", env)?;
    env.decode::<EncryptedResult>(key.sk.params())?.decrypt(key)
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
