/* Csmith seed 22: a packed struct of bit-fields 3 bytes long is read and written as an `i24` with
 * `align 1`. */
#pragma pack(push)
#pragma pack(1)
struct S0 {
    volatile unsigned f0 : 9;
    signed f1 : 10;
    unsigned f2 : 4;
};
#pragma pack(pop)

static struct S0 g = {21, -13, 1};
static u8 after = 0x5A;

static struct S0 get(void) { return g; }

int main(int argc, char **argv) {
    i16 a = num(argv[1]);
    u16 h = 0;
    struct S0 s = get();
    h = h * 31 + (u16)(g.f0 * 1000u + (u16)g.f1 * 10u + g.f2);
    g.f1 = a;
    g.f2 = (u16)a >> 3;
    g.f0 = (u16)a + 7;
    h = h * 31 + (u16)(g.f0 * 1000u + (u16)g.f1 * 10u + g.f2);
    h = h * 31 + (u16)(s.f0 + s.f1 + s.f2) + after;
    return h;
}
