/* The issue-24 program (memset/memcpy that clang merges into wide stores at -O1 and above) and a
 * packed struct whose 16- and 32-bit fields sit at odd addresses: small enough for the 512-byte
 * cores at every -O level, so the gate-level runs on Pearl and Ruby can check it too. */
void *memset(void *, int, unsigned);
void *memcpy(void *, const void *, unsigned);

struct __attribute__((packed)) rec {
    u8 tag;
    u16 half;
    u32 word;
};

struct rec g[2];

int main(int argc, char **argv) {
    char b[8];
    memset(b, 'x', 7);
    b[7] = 0;
    memcpy(b, argv[1], 3); /* every argument passes at least 3 characters */
    u16 n = 0;
    for (int i = 0; b[i]; i++) n += (u8)b[i];
    struct rec *r = &g[argv[1][0] & 1];
    r->tag = (u8)n;
    r->half = n * 3;
    r->word = (u32)n << 9;
    r->half += (u16)(r->word >> 8);
    return n ^ r->half ^ r->tag;
}
