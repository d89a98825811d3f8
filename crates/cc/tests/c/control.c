/* Control flow: loops, switch (dense and sparse), select, recursion, function pointers. */
static i16 fib(i16 n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static i16 gcd(i16 a, i16 b) {
    while (b != 0) {
        i16 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static i16 dense(i16 x) {
    switch (x) {
    case 0: return 11;
    case 1: return 22;
    case 2: return 35;
    case 3: return 47;
    case 4: return 59;
    case 5: return 61;
    default: return -1;
    }
}

static i16 sparse(i16 x) {
    switch (x) {
    case -7: return 1;
    case 100: return 2;
    case 1000: return 3;
    case 31: return 4;
    default: return x & 3;
    }
}

static i16 twice(i16 (*f)(i16), i16 x) { return f(f(x)); }
static i16 inc(i16 x) { return x + 1; }
static i16 dbl(i16 x) { return x * 2; }

int main(int argc, char **argv) {
    i16 a = num(argv[1]), b = num(argv[2]);
    u16 h = 0;
    h = h * 31 + fib(a & 15);
    h = h * 31 + gcd(a < 0 ? -a : a, b < 0 ? -b : b);
    for (i16 i = -2; i < 8; i++)
        h = h * 31 + dense(i) + sparse(i * b);
    h = h * 31 + sparse(1000) + sparse(-7) + sparse(31);
    i16 (*fs[2])(i16) = {inc, dbl};
    h = h * 31 + twice(fs[a & 1], b);
    i16 n = 0;
    do {
        n += a;
        a >>= 1;
    } while (a > 3);
    h = h * 31 + n;
    i16 m = a > b ? a : b;
    h = h * 31 + m + (a != b ? 5 : 9);
    return h;
}
