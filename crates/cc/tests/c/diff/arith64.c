/* 64-bit arithmetic through vsp-cahp's assembly helpers: signed division and modulo, multiply and
 * the three variable shifts, folded to 16 bits. Fits the 1 KiB ROM at every level. */
int main(int argc, char **argv) {
    i64 a = (i64)num(argv[1]) << 40 | (u16)num(argv[2]);
    i64 b = num(argv[3]);
    u16 s = num(argv[4]) & 63;
    i64 q = a / b, r = a % b;
    u64 x = (u64)(q * b) ^ (u64)r ^ ((u64)a >> s) ^ (u64)(a >> s) ^ ((u64)b << s);
    return (u16)(x ^ x >> 16 ^ x >> 32 ^ x >> 48);
}
