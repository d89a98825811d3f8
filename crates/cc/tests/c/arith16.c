/* 16-bit arithmetic: every operator, signed and unsigned, through helpers for * / %. */
int main(int argc, char **argv) {
    i16 a = num(argv[1]), b = num(argv[2]);
    u16 ua = a, ub = b;
    u16 h = 0;
    i16 t;
    u16 u;
    t = a + b; h = h * 31 + t;
    t = a - b; h = h * 31 + t;
    t = a * b; h = h * 31 + t;
    if (b != 0) {
        t = a / b; h = h * 31 + t;
        t = a % b; h = h * 31 + t;
        u = ua / ub; h = h * 31 + u;
        u = ua % ub; h = h * 31 + u;
    }
    t = a & b; h = h * 31 + t;
    t = a | b; h = h * 31 + t;
    t = a ^ b; h = h * 31 + t;
    t = ~a; h = h * 31 + t;
    t = -a; h = h * 31 + t;
    t = a >> 3; h = h * 31 + t;
    u = ua >> 3; h = h * 31 + u;
    u = ua << 5; h = h * 31 + u;
    t = a >> (b & 15); h = h * 31 + t;
    u = ua >> (ub & 15); h = h * 31 + u;
    u = ua << (ub & 15); h = h * 31 + u;
    t = a * 10; h = h * 31 + t;
    t = a * 7; h = h * 31 + t;
    t = a / 4; h = h * 31 + t;
    t = a % 8; h = h * 31 + t;
    u = ua / 16; h = h * 31 + u;
    u = ua % 16; h = h * 31 + u;
    t = a / 10; h = h * 31 + t;
    h = h * 31 + (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b) + 32 * (a != b);
    h = h * 31 + (ua < ub) + 2 * (ua <= ub) + 4 * (ua > ub) + 8 * (ua >= ub);
    h = h * 31 + (a < 0) + 2 * (a > 100) + 4 * (ua > 1000u);
    return h;
}
