/* One signed 64-bit division: with the assembly helper it fits the 512-byte ROM at -Os and -Oz. */
int main(int argc, char **argv) {
    i64 a = (i64)num(argv[1]) << 32 | (u16)num(argv[2]);
    return (u16)(a / num(argv[3]));
}
