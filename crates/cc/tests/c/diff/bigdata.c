/* Static data past byte 511 of RAM (Csmith seed 266): `sym+imm(reg)` has a 10-bit immediate, so a
 * global beyond it is addressed with `li` of its address. Arrays before and after a large one,
 * indexed by run-time values, read and written. */
static u8 pad[700] = {1, 2, 3};
static i16 arr[8];
static u8 tail[16] = {9, 8, 7};
u16 counter = 5;

int main(int argc, char **argv) {
    i16 x = num(argv[1]);
    i16 k = num(argv[2]) & 7;
    for (int i = 0; i < 8; i++) arr[i] = (i16)(x * i + k);
    arr[k] += 100;
    pad[(u16)x % 700] ^= 0x5a;
    tail[k] = (u8)(tail[k] + x);
    counter += (u16)arr[k];
    u16 acc = counter;
    for (int i = 0; i < 700; i += 37) acc = acc * 3 + pad[i];
    for (int i = 0; i < 16; i++) acc = acc * 5 + tail[i];
    for (int i = 0; i < 8; i++) acc ^= (u16)arr[i] << (i & 3);
    return acc + pad[(u16)x % 700];
}
