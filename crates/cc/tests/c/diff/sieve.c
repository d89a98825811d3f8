/* Sieve of Eratosthenes up to argv[1] (at most 1000, bit-packed): the number of primes and a
 * hash of them. */
static u8 composite[126];

int main(int argc, char **argv) {
    i16 n = num(argv[1]);
    if (n < 2) n = 2;
    if (n > 1000) n = 1000;
    for (i16 i = 2; (i32)i * i <= n; i++)
        if (!(composite[i >> 3] & (1 << (i & 7))))
            for (i16 j = (i16)(i * i); j <= n; j = (i16)(j + i))
                composite[j >> 3] |= (u8)(1 << (j & 7));
    u16 count = 0, hash = 0;
    for (i16 i = 2; i <= n; i++)
        if (!(composite[i >> 3] & (1 << (i & 7)))) {
            count++;
            hash = (u16)((hash << 3) ^ (hash >> 13) ^ (u16)i);
        }
    return (u16)(count + hash);
}
