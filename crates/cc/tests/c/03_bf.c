/* Brainf*ck interpreter benchmark (kvsp-benchmark 03_bf.c conventions):
 * interprets argv[1] on a 100-cell tape of 16-bit ints (.bss), pointer at 50;
 * supports + - < > [ ] ('.' and ',' ignored); returns the current cell.
 * "++++[>++++++++++<-]>++" -> 42. */
static int tape[100];

int main(int argc, char **argv) {
    const char *p = argv[1];
    int ptr = 50;
    for (; *p; p++) {
        switch (*p) {
        case '+': tape[ptr]++; break;
        case '-': tape[ptr]--; break;
        case '>': ptr++; break;
        case '<': ptr--; break;
        case '[':
            if (!tape[ptr]) {
                int depth = 1;
                while (depth) {
                    p++;
                    if (*p == '[') depth++;
                    else if (*p == ']') depth--;
                }
            }
            break;
        case ']':
            if (tape[ptr]) {
                int depth = 1;
                while (depth) {
                    p--;
                    if (*p == ']') depth++;
                    else if (*p == '[') depth--;
                }
            }
            break;
        }
    }
    return tape[ptr];
}
