/* 4x4 integer matrix products and powers modulo 10007 (32-bit intermediates). */
typedef struct { i16 m[4][4]; } mat;

static mat mul(const mat *a, const mat *b) {
    mat r;
    for (i16 i = 0; i < 4; i++)
        for (i16 j = 0; j < 4; j++) {
            i32 s = 0;
            for (i16 k = 0; k < 4; k++)
                s += (i32)a->m[i][k] * b->m[k][j];
            r.m[i][j] = (i16)(s % 10007);
        }
    return r;
}

int main(int argc, char **argv) {
    i16 a = num(argv[1]), e = num(argv[2]);
    if (e < 0) e = (i16)(0 - e);
    e = (i16)(e % 12);
    mat b, r;
    for (i16 i = 0; i < 4; i++)
        for (i16 j = 0; j < 4; j++) {
            b.m[i][j] = (i16)(((a + i * 7 + j * 3) % 100 + 100) % 100);
            r.m[i][j] = (i16)(i == j);
        }
    while (e > 0) {
        if (e & 1)
            r = mul(&r, &b);
        b = mul(&b, &b);
        e = (i16)(e >> 1);
    }
    u16 h = 0;
    for (i16 i = 0; i < 4; i++)
        for (i16 j = 0; j < 4; j++)
            h = (u16)(h * 7 + (u16)r.m[i][j]);
    return h;
}
