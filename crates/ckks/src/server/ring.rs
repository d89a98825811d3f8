//! The server's ring arithmetic is vsp-math's: the NTT is `NttTable` (SEAL order, Harvey lazy
//! butterflies with Shoup constants, SIMD when available) and every residue operation (add, sub,
//! neg, Barrett products, signed reduction) is a `Modulus` method. This module checks that the
//! device's 32-bit NTT agrees with it.

#[cfg(test)]
mod tests {
    use crate::arith::minimal_primitive_root;
    use crate::device::ntt::{forward_otf, NttPrime};
    use vsp_math::{Modulus, NttTable};

    /// The device's 32-bit NTT and vsp-math's 64-bit one agree: both are in SEAL's order.
    #[test]
    fn device_ntt_matches_vsp_math() {
        let n = 256;
        let q = 1054015489u64;
        let t = NttTable::new(n, Modulus::new(q).unwrap()).unwrap();
        let a: Vec<u64> = (0..n as u64).map(|i| (i * i * 7919 + 3) % q).collect();
        let mut x = a.clone();
        t.forward(&mut x).unwrap();
        let psi = minimal_primitive_root(2 * n as u64, q).unwrap() as u32;
        assert_eq!(psi as u64, t.psi());
        let mut y: Vec<u32> = a.iter().map(|&v| v as u32).collect();
        forward_otf(&mut y, &NttPrime::new(q as u32, psi, 8).unwrap());
        assert!(x.iter().zip(&y).all(|(&u, &v)| u == v as u64));
    }
}
