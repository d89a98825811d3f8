/* A program larger than 1 KiB of CAHPv3 code (at every -O level): 64-bit division and modulo, a
 * CRC-16, an insertion sort, a 32-bit xorshift generator, Euclid's algorithm and a digit-sum,
 * folded into one 16-bit result. The same source builds on the host (crates/vsp/tests/big_programs.rs
 * compares the two); types are spelled for both the 16-bit target and a 32/64-bit host. */
#ifdef __MSP430__
typedef int i16;
typedef unsigned u16;
typedef long i32;
typedef unsigned long u32;
#else
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned u32;
#endif
typedef unsigned char u8;
typedef long long i64;
typedef unsigned long long u64;

static __attribute__((noinline)) i16 num(const char *s) {
    i16 v = 0;
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        v = (i16)(v * 10 + (*s - '0'));
        s++;
    }
    return neg ? (i16)-v : v;
}

static __attribute__((noinline)) u16 crc16(const u8 *p, int n) {
    u16 crc = 0xffff;
    for (int i = 0; i < n; i++) {
        crc ^= (u16)p[i] << 8;
        for (int k = 0; k < 8; k++)
            crc = (crc & 0x8000) ? (u16)(crc << 1) ^ 0x1021 : (u16)(crc << 1);
    }
    return crc;
}

static __attribute__((noinline)) void sort(i16 *a, int n) {
    for (int i = 1; i < n; i++) {
        i16 v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static u32 state;
static __attribute__((noinline)) u32 xorshift(void) {
    u32 x = state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    state = x;
    return x;
}

static __attribute__((noinline)) u32 gcd(u32 a, u32 b) {
    while (b) {
        u32 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static __attribute__((noinline)) u16 digits(i64 v) {
    u64 u = v < 0 ? (u64)-v : (u64)v;
    u16 s = 0;
    do {
        s += (u16)(u % 10);
        u /= 10;
    } while (u);
    return s;
}

static __attribute__((noinline)) i64 mix(i64 a, i64 b) {
    i64 q = a / b, r = a % b;
    return q * 3 + r - (a >> 7) + (b << 3);
}

int main(int argc, char **argv) {
    i16 x = num(argv[1]), y = num(argv[2]);
    state = (u32)(u16)x << 16 | (u16)y | 1;
    i16 a[8];
    for (int i = 0; i < 8; i++)
        a[i] = (i16)xorshift();
    sort(a, 8);
    u16 c = crc16((const u8 *)a, sizeof a);
    i64 big = (i64)x * 1000003LL * (i64)(y | 1) + (i64)xorshift();
    i64 m = mix(big, (i64)(y ? y : 7));
    u32 g = gcd(xorshift() | 1, (u32)(u16)x * 12u + 6u);
    u16 d = digits(m);
    u16 r = c ^ (u16)m ^ (u16)((u64)m >> 16) ^ (u16)g ^ (u16)(d * 7) ^ (u16)a[0] ^ (u16)a[7];
    return (i16)r;
}
