//! BLAKE2b (RFC 7693), unkeyed, for SEAL's parms_id (SEAL `util/hash.h` hashes the parameter words
//! with BLAKE2b-256). Small and allocation-free; speed is irrelevant here.

const IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

const SIGMA: [[usize; 16]; 12] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
];

#[inline(always)]
fn g(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

fn compress(h: &mut [u64; 8], block: &[u8; 128], t: u128, last: bool) {
    let mut m = [0u64; 16];
    for (i, w) in m.iter_mut().enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(&block[8 * i..8 * i + 8]);
        *w = u64::from_le_bytes(b);
    }
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= t as u64;
    v[13] ^= (t >> 64) as u64;
    if last {
        v[14] = !v[14];
    }
    for s in SIGMA.iter() {
        g(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/// BLAKE2b with an `OUT`-byte digest (1 ≤ OUT ≤ 64) of `data`.
pub fn blake2b<const OUT: usize>(data: &[u8]) -> [u8; OUT] {
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ OUT as u64;
    let mut t: u128 = 0;
    let mut block = [0u8; 128];
    let mut chunks = data.chunks(128).peekable();
    if data.is_empty() {
        compress(&mut h, &block, 0, true);
    }
    while let Some(c) = chunks.next() {
        block = [0u8; 128];
        block[..c.len()].copy_from_slice(c);
        t += c.len() as u128;
        compress(&mut h, &block, t, chunks.peek().is_none());
    }
    let mut out = [0u8; OUT];
    for (i, o) in out.iter_mut().enumerate() {
        *o = (h[i / 8] >> (8 * (i % 8))) as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7693_abc_vector() {
        let d = blake2b::<64>(b"abc");
        assert_eq!(d[..8], [0xBA, 0x80, 0xA5, 0x3F, 0x98, 0x1C, 0x4D, 0x0D]);
        assert_eq!(d[56..], [0xB9, 0x23, 0x86, 0xED, 0xD4, 0x00, 0x99, 0x23]);
    }

    #[test]
    fn seal_parms_id_vector() {
        // SEAL 4.4 (seal-python) first_parms_id of CKKS N=4096, the default three 30-bit primes.
        let words: [u64; 6] = [2, 4096, 1053818881, 1054015489, 1054212097, 0];
        let mut bytes = [0u8; 48];
        for (i, w) in words.iter().enumerate() {
            bytes[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        let d = blake2b::<32>(&bytes);
        let w0 = u64::from_le_bytes(d[..8].try_into().unwrap());
        let w3 = u64::from_le_bytes(d[24..].try_into().unwrap());
        assert_eq!((w0, w3), (0x146d58e5b43c73da, 0x880f0582d82b8f6c));
    }
}
