/* 8-bit arithmetic: char promotions, sign and zero extension, byte loads and stores. */
static i8 sc[4];
static u8 uc[4];

i8 add8(i8 x, i8 y) { return x + y; }
u8 mix8(u8 x, i8 y) { return (u8)(x * 3) ^ (u8)y; }

int main(int argc, char **argv) {
    i8 a = num(argv[1]), b = num(argv[2]);
    u8 ua = a, ub = b;
    u16 h = 0;
    i8 t;
    u8 u;
    sc[0] = a; sc[1] = b; uc[0] = ua; uc[1] = ub;
    t = a + b; h = h * 31 + t;
    t = a - b; h = h * 31 + t;
    t = a * b; h = h * 31 + t;
    if (b != 0) {
        t = a / b; h = h * 31 + t;
        t = a % b; h = h * 31 + t;
    }
    if (ub != 0) {
        u = ua / ub; h = h * 31 + u;
        u = ua % ub; h = h * 31 + u;
    }
    t = a >> 2; h = h * 31 + t;
    u = ua >> 2; h = h * 31 + u;
    u = ua << 3; h = h * 31 + u;
    h = h * 31 + (a < b) + 2 * (ua < ub) + 4 * (a == b) + 8 * (sc[0] > sc[1]) + 16 * (uc[0] > uc[1]);
    h = h * 31 + sc[0] + sc[1] + uc[0] + uc[1];
    h = h * 31 + add8(a, b);
    h = h * 31 + mix8(ua, b);
    i16 w = a;
    u16 uw = ua;
    h = h * 31 + w + uw;
    h = h * 31 + (a < 0 ? 1 : 2) + (ua > 200 ? 4 : 8);
    return h;
}
