/* A one-dimensional cellular automaton (rule given as argv[1] mod 256) on a 64-cell ring packed
 * into 16-bit words; returns a hash of the state after argv[2] mod 32 steps. */
static u16 cells[4];

static u8 get(i16 i) {
    i = (i16)((i + 64) % 64);
    return (u8)((cells[i >> 4] >> (i & 15)) & 1);
}

int main(int argc, char **argv) {
    u8 rule = (u8)num(argv[1]);
    i16 steps = num(argv[2]);
    if (steps < 0) steps = (i16)(0 - steps);
    steps = (i16)(steps % 32);
    cells[0] = 0x0001;
    cells[1] = 0x8000;
    cells[2] = (u16)rule;
    cells[3] = 0x0100;
    u16 next[4];
    for (i16 s = 0; s < steps; s++) {
        for (i16 w = 0; w < 4; w++)
            next[w] = 0;
        for (i16 i = 0; i < 64; i++) {
            u8 pat = (u8)(get((i16)(i - 1)) << 2 | get(i) << 1 | get((i16)(i + 1)));
            if ((rule >> pat) & 1)
                next[i >> 4] |= (u16)(1u << (i & 15));
        }
        for (i16 w = 0; w < 4; w++)
            cells[w] = next[w];
    }
    return (u16)(cells[0] ^ (cells[1] << 1) ^ (cells[2] << 2) ^ (cells[3] << 3));
}
