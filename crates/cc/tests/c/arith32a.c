/* 32-bit (long) arithmetic on register pairs: carries and the helpers for * / %. */
__attribute__((noinline)) static u32 fold(u32 h, u32 v) { return (h ^ v) * 33u + (v >> 7); }

int main(int argc, char **argv) {
    i32 a = (i32)num(argv[1]) * 1237 + num(argv[2]), b = (i32)num(argv[2]) * -3;
    u32 ua = a, ub = b;
    u32 h = 5381;
    h = fold(h, a + b);
    h = fold(h, a - b);
    h = fold(h, ua * ub);
    if (b != 0) {
        h = fold(h, a / b);
        h = fold(h, a % b);
        h = fold(h, ua / ub);
        h = fold(h, ua % ub);
    }
    return (u16)(h ^ (h >> 16));
}
