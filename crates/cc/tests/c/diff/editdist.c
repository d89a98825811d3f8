/* Levenshtein edit distance of argv[1] and argv[2] (two-row dynamic programming). */
static u16 min3(u16 a, u16 b, u16 c) {
    u16 m = a < b ? a : b;
    return m < c ? m : c;
}

static u16 len(const char *s) {
    u16 n = 0;
    while (s[n])
        n++;
    return n;
}

int main(int argc, char **argv) {
    const char *a = argv[1], *b = argv[2];
    u16 n = len(a), m = len(b);
    if (n > 24) n = 24;
    if (m > 24) m = 24;
    u16 prev[25], cur[25];
    for (u16 j = 0; j <= m; j++)
        prev[j] = j;
    for (u16 i = 1; i <= n; i++) {
        cur[0] = i;
        for (u16 j = 1; j <= m; j++) {
            u16 cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = min3((u16)(prev[j] + 1), (u16)(cur[j - 1] + 1), (u16)(prev[j - 1] + cost));
        }
        for (u16 j = 0; j <= m; j++)
            prev[j] = cur[j];
    }
    return prev[m] * 100 + n * 10 + m;
}
