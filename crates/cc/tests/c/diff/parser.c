/* Recursive-descent parser and evaluator of integer expressions: + - * / % ( ) and unary minus,
 * on argv[1]; errors give a distinct code. */
static const char *p;
static i16 err;

static i16 expr(void);

static void skip(void) {
    while (*p == ' ')
        p++;
}

static i16 atom(void) {
    skip();
    if (*p == '(') {
        p++;
        i16 v = expr();
        skip();
        if (*p == ')')
            p++;
        else
            err = 1;
        return v;
    }
    if (*p == '-') {
        p++;
        return (i16)(0 - atom());
    }
    if (*p >= '0' && *p <= '9') {
        i16 v = 0;
        while (*p >= '0' && *p <= '9') {
            v = (i16)(v * 10 + (*p - '0'));
            p++;
        }
        return v;
    }
    err = 2;
    return 0;
}

static i16 term(void) {
    i16 v = atom();
    for (;;) {
        skip();
        char c = *p;
        if (c != '*' && c != '/' && c != '%')
            return v;
        p++;
        i16 r = atom();
        if (c == '*')
            v = (i16)(v * r);
        else if (r == 0)
            err = 3;
        else if (c == '/')
            v = (i16)(v / r);
        else
            v = (i16)(v % r);
    }
}

static i16 expr(void) {
    i16 v = term();
    for (;;) {
        skip();
        char c = *p;
        if (c != '+' && c != '-')
            return v;
        p++;
        i16 r = term();
        v = (i16)(c == '+' ? v + r : v - r);
    }
}

int main(int argc, char **argv) {
    p = argv[1];
    err = 0;
    i16 v = expr();
    skip();
    if (*p)
        err = 4;
    return err ? (u16)(1000 + err) : (u16)v;
}
