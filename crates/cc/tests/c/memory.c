/* Memory: structs by value and by pointer, sret returns, arrays, globals with initializers,
 * string constants, pointer arithmetic, memcpy/memset. */
struct pt {
    i16 x;
    i8 tag;
    i32 w;
};

static struct pt pts[3] = {{1, 'a', 100000}, {-2, 'b', -5}, {3, 'c', 7}};
static const char msg[] = "hello, cahp";
static i16 table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
static i16 zeros[5];
const char *names[] = {"zero", "one", "two"};
i16 counter = 7;

static struct pt make(i16 x, i8 tag, i32 w) {
    struct pt p = {x, tag, w};
    return p;
}

static i32 score(struct pt p) { return p.x * 3 + p.tag + p.w; }

static void bump(struct pt *p, i16 d) {
    p->x += d;
    p->w -= d;
}

static u16 strsum(const char *s) {
    u16 h = 0;
    while (*s)
        h = h * 7 + (u8)*s++;
    return h;
}

int main(int argc, char **argv) {
    i16 a = num(argv[1]), b = num(argv[2]);
    u16 h = 0;
    struct pt p = make(a, 'z', b);
    bump(&p, 5);
    h = h * 31 + (u16)score(p);
    for (i16 i = 0; i < 3; i++) {
        bump(&pts[i], a);
        h = h * 31 + (u16)score(pts[i]);
    }
    struct pt copy[3];
    for (i16 i = 0; i < 3; i++)
        copy[i] = pts[2 - i];
    h = h * 31 + copy[0].x + copy[2].tag;
    h = h * 31 + strsum(msg) + strsum(names[b & 1]) + strsum(names[2]);
    i16 local[8];
    for (i16 i = 0; i < 8; i++)
        local[i] = table[(i + a) & 7] * (i + 1);
    for (i16 i = 0; i < 8; i++)
        h = h * 31 + local[i];
    i16 *q = &local[2];
    q += 3;
    h = h * 31 + *q + q[-1] + (q - local);
    zeros[a & 3] = b;
    for (i16 i = 0; i < 5; i++)
        h = h * 31 + zeros[i];
    counter += a;
    h = h * 31 + counter;
    char buf[16];
    for (i16 i = 0; i < 16; i++)
        buf[i] = (char)(i * b + 1);
    buf[15] = 0;
    h = h * 31 + strsum(buf + 1);
    return h;
}
