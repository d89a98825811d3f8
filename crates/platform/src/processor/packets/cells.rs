//! The pieces both packets (and a circuit's) are made of: TLWE cells and the shapes of serialized
//! memories.

use vsp_cahp::cores::{self, MemSize};
use vsp_tfhe::{Params, Tlwe};

use crate::error::{PlatformError, Result};
use crate::wire::envelope::Writer;
use vsp_codec::Reader;

/// Bits of the ROM of `size`.
pub(crate) fn rom_bits(size: MemSize) -> usize {
    (1 << size.rom_addr_width()) * cores::ROM_DATA_WIDTH
}

/// Bits of the RAM of `size`.
pub(crate) fn ram_bits(size: MemSize) -> usize {
    (1 << size.ram_addr_width()) * cores::RAM_DATA_WIDTH
}

pub(crate) fn put_cells(w: &mut Writer, cells: &[Tlwe<u32>], params: &Params) {
    w.u64(cells.len() as u64);
    for c in cells {
        w.blob(&c.to_bytes(params));
    }
}

/// Exactly `want` TLWE cells (the count is checked before anything is allocated).
pub(crate) fn get_cells(
    r: &mut Reader<'_>,
    want: usize,
    params: &Params,
) -> Result<Vec<Tlwe<u32>>> {
    let n = r.u64("body")?;
    if n != want as u64 {
        return Err(PlatformError::format(format!(
            "{n} memory cells, the core's memory has {want}"
        )));
    }
    (0..want)
        .map(|_| {
            Ok(Tlwe::<u32>::from_bytes(
                r.blob(usize::MAX, "body")?,
                params,
            )?)
        })
        .collect()
}

/// Checks the shape a serialized RAM announces (address width u64 ‖ data width u64 ‖ …) against
/// `a` and `w` before anything is decoded.
pub(crate) fn check_ram_shape(bytes: &[u8], a: usize, w: usize) -> Result<()> {
    check_shape("RAM", "the core's", bytes, a, w)
}

/// [`check_ram_shape`] for a serialized CMUX ROM or RAM (both begin with the two widths): `what`
/// is the memory, `want` whose shape it must have (`the ROM is …, a 1 KiB request's is …`).
pub(crate) fn check_shape(what: &str, want: &str, bytes: &[u8], a: usize, w: usize) -> Result<()> {
    let mut r = Reader::new(bytes);
    let (ba, bw) = (r.u64("body")?, r.u64("body")?);
    if (ba, bw) != (a as u64, w as u64) {
        return Err(PlatformError::format(format!(
            "the {what} is 2^{ba} words of {bw} bits, {want} is 2^{a} words of {w} bits"
        )));
    }
    Ok(())
}
