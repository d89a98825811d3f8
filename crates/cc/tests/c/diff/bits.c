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

/* The builtins count on unsigned int: 16 bits here, 32 on the host. */
#ifdef __MSP430__
#define CLZ16(x) __builtin_clz(x)
#else
#define CLZ16(x) (__builtin_clz(x) - 16)
#endif

static u16 sat_sub(u16 a, u16 b) { return a > b ? (u16)(a - b) : 0; }
static u8 sat_add8(u8 a, u8 b) { return (u8)(a + b) < a ? 255 : (u8)(a + b); }
static u32 sat_sub32(u32 a, u32 b) { return a > b ? a - b : 0; }

int main(int argc, char **argv) {
    u16 a = (u16)num(argv[1]), b = (u16)num(argv[2]);
    u16 dist = popcount((u16)(a ^ b));
    u16 par = (u16)(popcount(a) & 1);
    u16 r = rev(a);
    u16 z = clz(b);
    u16 ro = rotl(a, b);
    u16 bi = (u16)(__builtin_popcount(a) + CLZ16(b | 1) * 5 + __builtin_ctz(a | 0x8000) * 7);
    u16 sat = (u16)(sat_sub(a, b) ^ sat_add8((u8)a, (u8)b) ^ (u16)sat_sub32((u32)a << 3, (u32)b * 5));
    return (u16)(dist + par * 17 + r * 3 + z * 101 + ro + bi * 11 + sat);
}
