/* Signed 64-bit division and modulo: with the assembly helpers (the multiply clang makes of the
 * remainder runs through the division's loop) this fits the 512-byte ROM at -Os and -Oz. */
int main(int argc, char **argv) {
    i64 a = (i64)num(argv[1]) << 32 | (u16)num(argv[2]);
    i64 b = num(argv[3]);
    return (u16)(a / b) ^ (u16)(a % b);
}
