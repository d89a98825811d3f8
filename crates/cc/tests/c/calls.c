/* Calls: more arguments than registers (stack arguments), variadic functions, deep expressions
 * that need callee-saved registers and spills. */
static i16 many(i16 a, i16 b, i16 c, i16 d, i16 e, i16 f, i16 g, i16 h) {
    return a - b + c * 2 - d + e * 3 - f + g * 5 - h;
}

static i32 wide(i32 a, i32 b, i32 c, i32 d) { return a + b * 2 + c * 3 + d * 4; }

static i16 sum(i16 n, ...) {
    __builtin_va_list ap;
    __builtin_va_start(ap, n);
    i16 s = 0;
    for (i16 i = 0; i < n; i++)
        s = s * 3 + __builtin_va_arg(ap, int);
    __builtin_va_end(ap);
    return s;
}

static i16 id(i16 x) { return x; }

int main(int argc, char **argv) {
    i16 a = num(argv[1]), b = num(argv[2]);
    u16 h = 0;
    h = h * 31 + many(a, b, a + 1, b + 2, a * 3, b - 4, a ^ b, 9);
    h = h * 31 + (u16)wide(a, b, 70000, -a);
    h = h * 31 + sum(5, a, b, 3, 4, 5) + sum(0);
    i16 v0 = id(a), v1 = id(b), v2 = id(a + b), v3 = id(a - b), v4 = id(a * b), v5 = id(a | b);
    i16 v6 = id(a & b), v7 = id(3), v8 = id(4), v9 = id(5), v10 = id(6), v11 = id(7);
    i16 v12 = id(8), v13 = id(9), v14 = id(10), v15 = id(11);
    h = h * 31 + v0 + v1 * 2 + v2 * 3 + v3 * 4 + v4 * 5 + v5 * 6 + v6 * 7 + v7 * 8;
    h = h * 31 + v8 * 9 + v9 * 10 + v10 * 11 + v11 * 12 + v12 * 13 + v13 * 14 + v14 * 15 + v15 * 16;
    h = h * 31 + v0 * v15 + v1 * v14 + v2 * v13 + v3 * v12;
    return h;
}
