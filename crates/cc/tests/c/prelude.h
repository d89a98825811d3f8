/* Prelude of the differential tests: fixed-width types that mean the same on the 16-bit target
 * (msp430 data layout = CAHP) and on the host that computes the expected results. */
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
typedef signed char i8;
typedef unsigned char u8;
typedef long long i64;
typedef unsigned long long u64;

/* Decimal (optionally negative) argument, so that inputs are unknown to the optimizer. */
static i16 num(const char *s) {
    i16 v = 0;
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        s++;
    }
    return neg ? -v : v;
}
