/* Csmith seeds 128 and 196 (-O0): C that compares the addresses of globals leaves integer constant
 * expressions in clang's IR, `zext (i1 icmp ne (i8* getelementptr (..., @g_a, 0, 1), i8* @g_b) to
 * i32)`, as an operand and as a call argument; vsp-cc refused `zext` and misread the argument. */
static u8 g_a[4];
static u8 g_b;
static i32 g_c[3];
static i16 g_d;

static i8 pick(i8 x, i8 y) { return (i8)(x * 3 + y); }

int main(int argc, char **argv) {
    i16 a = num(argv[1]);
    i32 x = (i32)a * 977;
    u16 h = 0;
    x &= (&g_a[1] != &g_b);
    h = h * 31 + (u16)x;
    h = h * 31 + (u16)pick((i8)(&g_c[0] != &g_c[2]), (i8)a);
    h = h * 31 + (u16)pick((i8)(&g_c[1] == &g_c[1]), (i8)(&g_d == 0));
    h = h * 31 + (u16)((i32)a | (&g_a[3] == &g_a[2]));
    h = h * 31 + (u16)((i32)a - (i32)(&g_c[2] - &g_c[0]));
    h = h * 31 + (u16)(a ^ (&g_a[0] < &g_a[2]) ^ ((&g_d != 0) << 4));
    return h;
}
