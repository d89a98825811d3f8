/* 64-bit arithmetic through vsp-cahp's assembly helpers: signed division and modulo, multiply and
 * the three variable shifts, folded to 16 bits. Fits the 1 KiB ROM at every level. */

/* One parser, not one per argument: at -O1 and above clang would inline num four times. */
static __attribute__((noinline)) i16 arg(char **argv, int k) { return num(argv[k]); }

int main(int argc, char **argv) {
    i64 a = (i64)arg(argv, 1) << 40 | (u16)arg(argv, 2);
    i64 b = arg(argv, 3);
    u16 s = arg(argv, 4) & 63;
    i64 q = a / b, r = a % b;
    u64 x = (u64)(q * a) ^ (u64)r ^ ((u64)a >> s) ^ (u64)(a >> s) ^ ((u64)b << s);
    return (u16)(x ^ x >> 16 ^ x >> 32 ^ x >> 48);
}
