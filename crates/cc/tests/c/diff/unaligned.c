/* 16-, 32- and 64-bit accesses at odd addresses: packed structs (through the struct, through a
 * pointer, in a global, in an array), memcpy type punning in and out of byte buffers, and the wide
 * stores clang merges from memset/memcpy. CAHPv3's word loads and stores ignore address bit 0, so
 * any of these lowered to a word access returns wrong bytes without an error. */
void *memset(void *, int, unsigned);
void *memcpy(void *, const void *, unsigned);

struct __attribute__((packed)) rec {
    u8 tag;
    u16 half;
    u32 word;
    u8 pad;
    u64 wide;
};

struct __attribute__((packed)) rec g_rec = {1, 0x1234, 0x56789abcUL, 2, 0x0123456789abcdefULL};
struct __attribute__((packed)) rec g_arr[3];

static u16 fold64(u64 v) { return (u16)(v ^ (v >> 16) ^ (v >> 32) ^ (v >> 48)); }
static u16 fold32(u32 v) { return (u16)(v ^ (v >> 16)); }

static u16 via_pointer(struct rec *r, i16 x) {
    r->half += (u16)x;
    r->word = r->word * 3 + (u32)x;
    r->wide ^= (u64)(u16)x << 20;
    return (u16)(r->half ^ fold32(r->word) ^ fold64(r->wide));
}

int main(int argc, char **argv) {
    i16 x = num(argv[1]);
    i16 y = num(argv[2]);
    u16 acc = 0;

    /* memset/memcpy merged into wide stores (the program). */
    char b[8];
    memset(b, 'x', 7);
    b[7] = 0;
    memcpy(b, argv[1], 3); /* every argument set passes at least 3 characters */
    for (int i = 0; b[i]; i++) acc += (u8)b[i];

    /* A packed struct on the stack. */
    struct rec s;
    s.tag = (u8)y;
    s.half = (u16)x * 7;
    s.word = (u32)x * 100003UL;
    s.pad = (u8)(x >> 3);
    s.wide = (u64)(u16)y * 0x10001000100ULL + 5;
    acc = acc * 31 + s.half + fold32(s.word) + fold64(s.wide) + s.tag + s.pad;
    acc ^= via_pointer(&s, y);

    /* A global packed struct and an array of them (odd strides). */
    acc ^= via_pointer(&g_rec, x);
    for (int i = 0; i < 3; i++) {
        g_arr[i].half = (u16)(x + i);
        g_arr[i].word = (u32)y << (4 * i);
        g_arr[i].wide = (u64)(u16)x << (8 * i);
    }
    for (int i = 0; i < 3; i++)
        acc = acc * 5 + g_arr[i].half + fold32(g_arr[i].word) + fold64(g_arr[i].wide);

    /* memcpy type punning at odd offsets of a byte buffer. */
    u8 buf[16];
    for (int i = 0; i < 16; i++) buf[i] = (u8)(x * i + y);
    u16 h;
    u32 w;
    u64 d;
    memcpy(&h, buf + 1, 2);
    memcpy(&w, buf + 3, 4);
    memcpy(&d, buf + 7, 8);
    acc ^= h + fold32(w) + fold64(d);
    h = (u16)(h * 3 + 1);
    w = w * 5 + 1;
    d = d * 7 + 1;
    memcpy(buf + 1, &h, 2);
    memcpy(buf + 5, &w, 4);
    memcpy(buf + 9, &d, 4);
    for (int i = 0; i < 16; i++) acc = acc * 3 + buf[i];
    return acc;
}
