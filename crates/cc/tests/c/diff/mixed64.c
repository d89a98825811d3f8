/* 64-bit values mixed with 8-, 16- and 32-bit ones: min/max, absolute values, accumulation in a
 * 64-bit array, 64-bit switch, signed/unsigned conversions and 64-bit struct fields. */
struct acc { u8 tag; i64 sum; u32 n; };

static i64 absll(i64 v) { return v < 0 ? -v : v; }
static i64 maxll(i64 a, i64 b) { return a > b ? a : b; }
static u64 minull(u64 a, u64 b) { return a < b ? a : b; }

static u16 classify(i64 v) {
    switch (v) {
    case 0: return 1;
    case 1: return 2;
    case -1: return 3;
    case 0x100000000ll: return 4;
    default: return 5;
    }
}

int main(int argc, char **argv) {
    i16 x = num(argv[1]), y = num(argv[2]);
    struct acc a = { 7, 0, 0 };
    i64 vals[6];
    for (i16 i = 0; i < 6; i++) {
        vals[i] = (i64)((u64)(i64)x << (i * 9)) - (i64)y * (i + 1);
        a.sum += vals[i];
        a.n += (u32)(u16)i;
    }
    i64 mx = vals[0], mn_abs = absll(vals[0]);
    u64 mnu = (u64)vals[0];
    for (i16 i = 1; i < 6; i++) {
        mx = maxll(mx, vals[i]);
        if (absll(vals[i]) < mn_abs) mn_abs = absll(vals[i]);
        mnu = minull(mnu, (u64)vals[i]);
    }
    u16 c = (u16)(classify(a.sum) + classify((i64)(i16)(x - y)) * 10 + classify((i64)((u64)(i64)y << 32)) * 100);
    u16 k = (u16)(x & 63);
    u64 rot = ((u64)mx << k) | ((u64)mx >> ((64 - k) & 63));
    u32 r32 = (u32)mnu;
    u16 k32 = (u16)(y & 31);
    r32 = (r32 >> k32) | (r32 << ((32 - k32) & 31));
    u64 h = (u64)mx ^ ((u64)mn_abs << 1) ^ (mnu >> 3) ^ (u64)a.sum ^ a.n ^ a.tag ^ rot ^ r32;
    return (u16)(h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48) ^ c);
}
