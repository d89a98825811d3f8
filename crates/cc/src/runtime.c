/* vsp-cc runtime: the helpers clang's output may call beyond the 16-bit mul/div of vsp-cahp's
 * runtime — 32-bit (long) multiply, divide, modulo and variable shifts, 16-bit bit counts, and
 * memcpy/memset/memmove (the 64-bit helpers are hand-written assembly in vsp-cahp's runtime).
 * Compiled by vsp cc itself (with -ffreestanding -fno-builtin, so that no loop here is turned back
 * into a call to itself) and linked only when referenced. Only constant shifts, adds and compares
 * are used, which the back end lowers inline. */

unsigned long __mulsi3(unsigned long a, unsigned long b) {
    unsigned long r = 0;
    while (b) {
        if (b & 1)
            r += a;
        a <<= 1;
        b >>= 1;
    }
    return r;
}

unsigned long __udivmodsi4(unsigned long n, unsigned long d, unsigned long *rem) {
    unsigned long q = 0, r = 0;
    for (int i = 0; i < 32; i++) {
        r = (r << 1) | (n >> 31);
        n <<= 1;
        q <<= 1;
        if (r >= d) {
            r -= d;
            q |= 1;
        }
    }
    *rem = r;
    return q;
}

unsigned long __udivsi3(unsigned long n, unsigned long d) {
    unsigned long r;
    return __udivmodsi4(n, d, &r);
}

unsigned long __umodsi3(unsigned long n, unsigned long d) {
    unsigned long r;
    __udivmodsi4(n, d, &r);
    return r;
}

long __divsi3(long a, long b) {
    int neg = 0;
    unsigned long ua = a, ub = b, r;
    if (a < 0) {
        ua = -ua;
        neg = 1;
    }
    if (b < 0) {
        ub = -ub;
        neg ^= 1;
    }
    unsigned long q = __udivmodsi4(ua, ub, &r);
    return neg ? -(long)q : (long)q;
}

long __modsi3(long a, long b) {
    unsigned long ua = a, ub = b, r;
    if (a < 0)
        ua = -ua;
    if (b < 0)
        ub = -ub;
    __udivmodsi4(ua, ub, &r);
    return a < 0 ? -(long)r : (long)r;
}

unsigned long __ashlsi3(unsigned long a, unsigned long n) {
    for (n &= 31; n; n--)
        a <<= 1;
    return a;
}

unsigned long __lshrsi3(unsigned long a, unsigned long n) {
    for (n &= 31; n; n--)
        a >>= 1;
    return a;
}

long __ashrsi3(long a, unsigned long n) {
    for (n &= 31; n; n--)
        a >>= 1;
    return a;
}

/* Bit counts (llvm.ctpop/ctlz/cttz on 16 bits). Written so that clang does not turn them back
 * into the intrinsics they implement: a clear-lowest-bit loop and branchy binary searches. */
unsigned __popcounthi2(unsigned x) {
    unsigned n = 0;
    while (x) {
        x &= x - 1;
        n++;
    }
    return n;
}

unsigned __clzhi2(unsigned x) {
    unsigned n = 0;
    if (!(x & 0xFF00u)) {
        n += 8;
        x <<= 8;
    }
    if (!(x & 0xF000u)) {
        n += 4;
        x <<= 4;
    }
    if (!(x & 0xC000u)) {
        n += 2;
        x <<= 2;
    }
    if (!(x & 0x8000u)) {
        n += 1;
        x <<= 1;
    }
    if (!(x & 0x8000u))
        n += 1;
    return n;
}

unsigned __ctzhi2(unsigned x) {
    unsigned n = 0;
    if (!(x & 0xFFu)) {
        n += 8;
        x >>= 8;
    }
    if (!(x & 0xFu)) {
        n += 4;
        x >>= 4;
    }
    if (!(x & 3u)) {
        n += 2;
        x >>= 2;
    }
    if (!(x & 1u)) {
        n += 1;
        x >>= 1;
    }
    if (!(x & 1u))
        n += 1;
    return n;
}

void *memcpy(void *dst, const void *src, unsigned n) {
    char *d = dst;
    const char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, unsigned n) {
    char *d = dst;
    const char *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        d += n;
        s += n;
        while (n--)
            *--d = *--s;
    }
    return dst;
}

void *memset(void *dst, int c, unsigned n) {
    char *d = dst;
    while (n--)
        *d++ = c;
    return dst;
}
