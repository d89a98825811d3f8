/* Bit manipulation: population count, bit reversal, parity, leading zeros, rotations (the
 * hamming-distance family of kvsp's benchmarks). */
static u16 popcount(u16 x) {
    u16 c = 0;
    while (x) {
        x &= (u16)(x - 1);
        c++;
    }
    return c;
}

static u16 rev(u16 x) {
    u16 r = 0;
    for (i16 i = 0; i < 16; i++) {
        r = (u16)(r << 1 | (x & 1));
        x >>= 1;
    }
    return r;
}

static u16 clz(u16 x) {
    u16 n = 0;
    if (!x)
        return 16;
    while (!(x & 0x8000)) {
        x <<= 1;
        n++;
    }
    return n;
}

static u16 rotl(u16 x, u16 k) {
    k &= 15;
    return (u16)(x << k | x >> ((16 - k) & 15));
}

int main(int argc, char **argv) {
    u16 a = (u16)num(argv[1]), b = (u16)num(argv[2]);
    u16 dist = popcount((u16)(a ^ b));
    u16 par = (u16)(popcount(a) & 1);
    u16 r = rev(a);
    u16 z = clz(b);
    u16 ro = rotl(a, b);
    return (u16)(dist + par * 17 + r * 3 + z * 101 + ro);
}
