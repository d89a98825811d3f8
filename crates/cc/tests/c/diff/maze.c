/* Breadth-first search on a 10x10 grid maze (walls from a seed), with a queue in an array:
 * the shortest path length from the top-left to the bottom-right corner, or 999. */
#define W 10
static u8 wall[W][W];
static i16 dist[W][W];
static u8 qx[W * W], qy[W * W];

int main(int argc, char **argv) {
    u16 s = (u16)num(argv[1]);
    i16 density = (i16)(num(argv[2]) % 5);
    if (density < 0) density = (i16)(0 - density);
    for (i16 i = 0; i < W; i++)
        for (i16 j = 0; j < W; j++) {
            s = (u16)(s * 31421u + 6927u);
            wall[i][j] = (u8)((s >> 12) < (u16)(density + 3));
            dist[i][j] = -1;
        }
    wall[0][0] = wall[W - 1][W - 1] = 0;
    static const i8 dx[4] = { 1, -1, 0, 0 }, dy[4] = { 0, 0, 1, -1 };
    i16 head = 0, tail = 0;
    qx[tail] = 0;
    qy[tail] = 0;
    tail++;
    dist[0][0] = 0;
    while (head < tail) {
        i16 x = qx[head], y = qy[head];
        head++;
        for (i16 d = 0; d < 4; d++) {
            i16 nx = (i16)(x + dx[d]), ny = (i16)(y + dy[d]);
            if (nx < 0 || ny < 0 || nx >= W || ny >= W || wall[nx][ny] || dist[nx][ny] >= 0)
                continue;
            dist[nx][ny] = (i16)(dist[x][y] + 1);
            qx[tail] = (u8)nx;
            qy[tail] = (u8)ny;
            tail++;
        }
    }
    i16 r = dist[W - 1][W - 1];
    return r < 0 ? 999 : (u16)(r + tail * 1000);
}
