/* Number theory on 32-bit values: gcd, lcm, modular exponentiation, integer square root. */
static u32 gcd(u32 a, u32 b) {
    while (b) {
        u32 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static u32 powmod(u32 b, u16 e, u32 m) {
    u32 r = 1;
    b %= m;
    while (e) {
        if (e & 1)
            r = r * b % m;
        b = b * b % m;
        e >>= 1;
    }
    return r;
}

static u16 isqrt(u32 n) {
    u32 x = 0, bit = 1ul << 30;
    while (bit > n)
        bit >>= 2;
    while (bit) {
        if (n >= x + bit) {
            n -= x + bit;
            x = (x >> 1) + bit;
        } else {
            x >>= 1;
        }
        bit >>= 2;
    }
    return (u16)x;
}

int main(int argc, char **argv) {
    i16 x = num(argv[1]), y = num(argv[2]);
    u32 a = (u32)(x < 0 ? -(i32)x : x) * 91 + 1, b = (u32)(y < 0 ? -(i32)y : y) * 35 + 1;
    u32 g = gcd(a, b);
    u32 l = a / g * b;
    u32 p = powmod(a, (u16)(b & 0x3FF), 65521);
    u16 s = isqrt(l);
    return (u16)(g + (u16)l + (u16)(l >> 16) * 3 + (u16)p * 5 + s * 7);
}
