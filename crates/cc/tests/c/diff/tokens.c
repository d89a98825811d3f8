/* A tokenizer state machine (switch on character classes): counts words, numbers, operators and
 * the sum of the numbers in all arguments. */
enum { START, WORD, NUMBER };

static u8 cls(char c) {
    if (c >= 'a' && c <= 'z') return 1;
    if (c >= 'A' && c <= 'Z') return 1;
    if (c >= '0' && c <= '9') return 2;
    switch (c) {
    case '+': case '-': case '*': case '/': case '=': case '<': case '>': return 3;
    case ' ': case ',': case ';': return 0;
    default: return 4;
    }
}

int main(int argc, char **argv) {
    u16 words = 0, nums = 0, ops = 0, other = 0;
    u16 sum = 0, cur = 0;
    for (i16 k = 1; k < argc; k++) {
        u8 st = START;
        for (const char *p = argv[k];; p++) {
            u8 c = *p ? cls(*p) : 0;
            switch (st) {
            case NUMBER:
                if (c == 2) { cur = (u16)(cur * 10 + (u16)(*p - '0')); continue; }
                sum = (u16)(sum + cur);
                break;
            case WORD:
                if (c == 1 || c == 2) continue;
                break;
            default:
                break;
            }
            st = START;
            if (!*p) break;
            switch (c) {
            case 1: st = WORD; words++; break;
            case 2: st = NUMBER; nums++; cur = (u16)(*p - '0'); break;
            case 3: ops++; break;
            case 4: other++; break;
            default: break;
            }
        }
    }
    return (u16)(words + nums * 10 + ops * 100 + other * 1000 + sum * 7);
}
