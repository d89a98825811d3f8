/* 64-bit (long long) arithmetic: add, sub, mul, div, rem (signed and unsigned), shifts by
 * constants and variables, compares, and conversions to and from narrower types. */
__attribute__((noinline)) static u64 mix(u64 h, u64 v) { return (h ^ v) * 0x100000001B3ull + (v >> 29); }

int main(int argc, char **argv) {
    i16 x = num(argv[1]), y = num(argv[2]);
    i64 a = (i64)x * 1000003 + y, b = (i64)y * -77777 - 5;
    u64 ua = (u64)a, ub = (u64)b;
    i64 c = a * b;
    u64 h = 14695981039346656037ull;
    h = mix(h, (u64)(a + b));
    h = mix(h, (u64)(a - b));
    h = mix(h, (u64)c);
    h = mix(h, ua * ub);
    if (b != 0) {
        h = mix(h, (u64)(a / b));
        h = mix(h, (u64)(a % b));
        h = mix(h, ua / ub);
        h = mix(h, ua % ub);
        h = mix(h, (u64)(c / b));
    }
    if (y != 0) {
        h = mix(h, (u64)(c / y));
        h = mix(h, (u64)(c % (y | 1)));
    }
    u16 s = (u16)(x & 63);
    h = mix(h, ua << s);
    h = mix(h, ua >> s);
    h = mix(h, (u64)(a >> s));
    h = mix(h, (u64)(b >> 7) ^ (ub << 13) ^ (ub >> 40));
    h = mix(h, (a < b) + 2 * (ua < ub) + 4 * (a == b) + 8 * (a >= c) + 16 * (ua > 12345));
    i32 t32 = (i32)a;
    u16 t16 = (u16)(ub >> 17);
    i8 t8 = (i8)c;
    h = mix(h, (u64)(i64)t32 + (u64)t16 + (u64)(i64)t8);
    h = mix(h, (u64)(i64)(i32)(i16)(x * 3) + (u64)(u32)(i32)y);
    return (u16)(h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48));
}
