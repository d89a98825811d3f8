/* 64-bit recurrences: factorials modulo a prime, Fibonacci numbers, Collatz path lengths. */
static u64 mulmod(u64 a, u64 b, u64 m) { return (a * b) % m; }

static u64 fib(i16 n) {
    u64 a = 0, b = 1;
    while (n-- > 0) {
        u64 t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv) {
    i16 n = num(argv[1]);
    if (n < 0) n = (i16)(0 - n);
    n = (i16)(n % 90);
    u64 f = 1;
    for (i16 i = 2; i <= n % 20 + 2; i++)
        f = mulmod(f, (u64)i, 1000000007ull);
    u64 fb = fib(n);
    i64 c = (i64)num(argv[2]) * 12345 + 77;
    if (c < 0) c = -c;
    u16 steps = 0;
    while (c != 1 && steps < 300) {
        c = (c & 1) ? 3 * c + 1 : c / 2;
        steps++;
    }
    u64 h = f ^ (fb << 3) ^ steps;
    return (u16)(h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48));
}
