/* CRC-16/CCITT and CRC-32 (bitwise, reflected) of the arguments. */
static u16 crc16(u16 crc, const char *s) {
    while (*s) {
        crc ^= (u16)((u8)*s++ << 8);
        for (i16 i = 0; i < 8; i++)
            crc = (crc & 0x8000) ? (u16)((crc << 1) ^ 0x1021) : (u16)(crc << 1);
    }
    return crc;
}

static u32 crc32(u32 crc, const char *s) {
    while (*s) {
        crc ^= (u8)*s++;
        for (i16 i = 0; i < 8; i++)
            crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return crc;
}

int main(int argc, char **argv) {
    u16 a = 0xFFFF;
    u32 b = 0xFFFFFFFFu;
    for (i16 k = 1; k < argc; k++) {
        a = crc16(a, argv[k]);
        b = crc32(b, argv[k]);
    }
    b = ~b;
    return (u16)(a ^ (u16)b ^ (u16)(b >> 16));
}
