/* String hashes of the arguments: djb2 (16-bit), FNV-1a (32-bit), and a rolling checksum. */
static u32 fnv(const char *s) {
    u32 h = 2166136261u;
    while (*s) {
        h ^= (u8)*s++;
        h *= 16777619u;
    }
    return h;
}

static u16 djb2(const char *s) {
    u16 h = 5381;
    while (*s)
        h = (u16)((h << 5) + h + (u8)*s++);
    return h;
}

int main(int argc, char **argv) {
    u32 f = 0;
    u16 d = 0, roll = 0;
    for (i16 k = 1; k < argc; k++) {
        f ^= fnv(argv[k]);
        d = (u16)(d + djb2(argv[k]) * (u16)k);
        for (const char *p = argv[k]; *p; p++)
            roll = (u16)((roll << 1 | roll >> 15) ^ (u8)*p);
    }
    return (u16)((u16)f ^ (u16)(f >> 16) ^ d ^ roll);
}
