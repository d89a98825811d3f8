/* Odds and ends: switch on long and char, 2-D arrays, large copies and fills through the runtime
 * (memcpy/memset), pointers in initialised globals, deep recursion. */
struct node {
    i16 v;
    struct node *next;
};

static struct node n3 = {3, 0};
static struct node n2 = {2, &n3};
static struct node n1 = {1, &n2};
static i16 grid[4][5];
static u8 big[40];

static i16 by_long(i32 x) {
    switch (x) {
    case 70000: return 1;
    case -1: return 2;
    case 5: return 3;
    default: return 4;
    }
}

static i16 by_char(u8 c) {
    switch (c) {
    case 'a': return 10;
    case 200: return 20;
    case 0: return 30;
    default: return c & 7;
    }
}

static i16 ack(i16 m, i16 n) {
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

int main(int argc, char **argv) {
    i16 a = num(argv[1]), b = num(argv[2]);
    u16 h = 0;
    h = h * 31 + by_long((i32)a * 7) + by_long(70000) + by_long(-1) + by_long((i32)b);
    h = h * 31 + by_char((u8)a) + by_char('a') + by_char(200) + by_char(0);
    for (i16 i = 0; i < 4; i++)
        for (i16 j = 0; j < 5; j++)
            grid[i][j] = i * a + j * b;
    for (i16 i = 0; i < 4; i++)
        h = h * 31 + grid[i][(i + a) & 3];
    __builtin_memset(big, (u8)a, sizeof big);
    u8 copy[40];
    __builtin_memcpy(copy, big, sizeof big);
    copy[b & 31] = 9;
    for (i16 i = 0; i < 40; i += 3)
        h = h * 31 + copy[i];
    for (struct node *p = &n1; p; p = p->next)
        h = h * 31 + p->v;
    h = h * 31 + ack(2, a & 3);
    return h;
}
