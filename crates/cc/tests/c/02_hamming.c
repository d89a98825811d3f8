/* Hamming-distance benchmark (kvsp-benchmark 02_hamming.c conventions):
 * argv[1..4] and argv[5..8] are two-hex-digit bytes g[0..3] and e[0..3]; the
 * bits of g^e fill a static 32-entry byte array that is then tree-summed in
 * place (5 levels). "10 10 10 10 de ad be ef" -> 24. Adds and shifts only. */
#define WIDTH 4

static unsigned char bits[WIDTH * 8];

static int hex_digit(char c) {
    if (c >= 'a')
        return c - 'a' + 10;
    if (c >= 'A')
        return c - 'A' + 10;
    return c - '0';
}

static int parse_byte(const char *s) {
    return (hex_digit(s[0]) << 4) | hex_digit(s[1]);
}

int main(int argc, char **argv) {
    for (int i = 0; i < WIDTH; i++) {
        int x = parse_byte(argv[1 + i]) ^ parse_byte(argv[1 + WIDTH + i]);
        for (int j = 0; j < 8; j++)
            bits[i * 8 + j] = (x >> j) & 1;
    }
    for (int w = 1; w < WIDTH * 8; w <<= 1)
        for (int k = 0; k + w < WIDTH * 8; k += 2 * w)
            bits[k] += bits[k + w];
    return bits[0];
}
