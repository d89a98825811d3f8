/* 32-bit (long) arithmetic on register pairs: bitwise operations, shifts and compares. */
__attribute__((noinline)) static u32 fold(u32 h, u32 v) { return (h ^ v) * 33u + (v >> 7); }

int main(int argc, char **argv) {
    i32 a = (i32)num(argv[1]) * 1237 + num(argv[2]), b = (i32)num(argv[2]) * -3;
    u32 ua = a, ub = b;
    u32 h = 5381;
    h = fold(h, a & b);
    h = fold(h, a | b);
    h = fold(h, a ^ ~b);
    h = fold(h, ua << 3);
    h = fold(h, a >> 5);
    h = fold(h, ua >> 17);
    h = fold(h, ua << 20);
    h = fold(h, a >> 16);
    h = fold(h, ua << (ub & 31));
    h = fold(h, a >> (ub & 31));
    h = fold(h, ua >> (ub & 31));
    h = fold(h, (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b) + 32 * (a != b));
    h = fold(h, (ua < ub) + 2 * (ua <= ub) + 4 * (ua > ub) + 8 * (ua >= ub));
    h = fold(h, a < 0 ? -a : a);
    i16 s = a;
    h = fold(h, (i32)s + (u32)(u16)a);
    return (u16)(h ^ (h >> 16));
}
