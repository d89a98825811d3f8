/* A stack-machine bytecode interpreter (switch dispatch): runs a fixed program that computes
 * sum_{i<n} (i*k mod 7) with a loop, calls and a small stack. */
enum { PUSH, ADD, SUB, MUL, MOD, DUP, SWAP, JNZ, JMP, LOAD, STORE, HALT, DEC, OVER, DROP };
static const u8 code[] = {
    PUSH, 0, STORE, 0,          /* acc = 0            */
    LOAD, 1,                    /* i = n on stack     */
    /* loop @6: [i] */
    DUP, LOAD, 2, MUL, PUSH, 7, MOD, LOAD, 0, ADD, STORE, 0,
    DEC, DUP, JNZ, 6,
    DROP, LOAD, 0, HALT,
};

static i16 run(i16 n, i16 k) {
    i16 stack[16];
    i16 vars[3];
    i16 sp = 0;
    u16 pc = 0;
    vars[0] = 0;
    vars[1] = n;
    vars[2] = k;
    for (;;) {
        u8 op = code[pc++];
        switch (op) {
        case PUSH: stack[sp++] = (i8)code[pc++]; break;
        case ADD: sp--; stack[sp - 1] = (i16)(stack[sp - 1] + stack[sp]); break;
        case SUB: sp--; stack[sp - 1] = (i16)(stack[sp - 1] - stack[sp]); break;
        case MUL: sp--; stack[sp - 1] = (i16)(stack[sp - 1] * stack[sp]); break;
        case MOD: sp--; stack[sp - 1] = (i16)(stack[sp - 1] % stack[sp]); break;
        case DUP: stack[sp] = stack[sp - 1]; sp++; break;
        case SWAP: { i16 t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; } break;
        case OVER: stack[sp] = stack[sp - 2]; sp++; break;
        case DROP: sp--; break;
        case DEC: stack[sp - 1] = (i16)(stack[sp - 1] - 1); break;
        case JNZ: { u8 t = code[pc++]; if (stack[--sp]) pc = t; } break;
        case JMP: pc = code[pc]; break;
        case LOAD: stack[sp++] = vars[code[pc++]]; break;
        case STORE: vars[code[pc++]] = stack[--sp]; break;
        default: return stack[sp - 1];
        }
    }
}

int main(int argc, char **argv) {
    i16 n = num(argv[1]);
    i16 k = num(argv[2]);
    if (n < 1) n = 1;
    if (n > 60) n = 60;
    return (u16)(run(n, k) * 3 + run((i16)(n / 2 + 1), (i16)(k + 1)));
}
