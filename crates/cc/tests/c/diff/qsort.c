/* Recursive quicksort of a pseudo-random array, then a checksum that depends on the order. */
static i16 v[40];

static void swap(i16 *a, i16 *b) {
    i16 t = *a;
    *a = *b;
    *b = t;
}

static void qs(i16 lo, i16 hi) {
    if (lo >= hi)
        return;
    i16 pivot = v[(lo + hi) / 2];
    i16 i = lo, j = hi;
    while (i <= j) {
        while (v[i] < pivot) i++;
        while (v[j] > pivot) j--;
        if (i <= j) {
            swap(&v[i], &v[j]);
            i++;
            j--;
        }
    }
    qs(lo, j);
    qs(i, hi);
}

int main(int argc, char **argv) {
    u16 s = (u16)num(argv[1]);
    i16 n = (i16)(num(argv[2]) % 40);
    if (n < 0) n = (i16)(0 - n);
    for (i16 i = 0; i < n; i++) {
        s = (u16)(s ^ (s << 7));
        s = (u16)(s ^ (s >> 9));
        s = (u16)(s ^ (s << 8));
        v[i] = (i16)s;
    }
    qs(0, (i16)(n - 1));
    u16 h = (u16)n;
    for (i16 i = 0; i < n; i++) {
        if (i > 0 && v[i - 1] > v[i])
            return 0xDEAD;
        h = (u16)(h * 33 + (u16)v[i]);
    }
    return h;
}
