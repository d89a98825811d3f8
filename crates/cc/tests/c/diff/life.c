/* Conway's game of life on a 12x12 torus, seeded from the arguments; returns a checksum of the
 * grid after the given number of generations. */
#define N 12
static u8 g[N][N], h[N][N];

int main(int argc, char **argv) {
    u16 seed = (u16)num(argv[1]);
    i16 gens = num(argv[2]);
    if (gens < 0) gens = (i16)(0 - gens);
    gens = (i16)(gens % 16);
    for (i16 i = 0; i < N; i++)
        for (i16 j = 0; j < N; j++) {
            seed = (u16)(seed * 25173u + 13849u);
            g[i][j] = (u8)((seed >> 13) & 1);
        }
    for (i16 t = 0; t < gens; t++) {
        for (i16 i = 0; i < N; i++)
            for (i16 j = 0; j < N; j++) {
                u8 c = 0;
                for (i16 di = -1; di <= 1; di++)
                    for (i16 dj = -1; dj <= 1; dj++)
                        if (di || dj)
                            c = (u8)(c + g[(i + di + N) % N][(j + dj + N) % N]);
                h[i][j] = (u8)(c == 3 || (c == 2 && g[i][j]));
            }
        for (i16 i = 0; i < N; i++)
            for (i16 j = 0; j < N; j++)
                g[i][j] = h[i][j];
    }
    u16 sum = 0;
    for (i16 i = 0; i < N; i++)
        for (i16 j = 0; j < N; j++)
            sum = (u16)(sum * 3 + g[i][j] * (u16)(i + j + 1));
    return sum;
}
