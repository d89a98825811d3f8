/* Fibonacci benchmark (kvsp-benchmark 01_fib.c conventions): argv[1][0] is a
 * decimal digit n; returns fib(n) with a=0, b=1 iterated n times ("5" -> 5). */
int main(int argc, char **argv) {
    int n = argv[1][0] - '0';
    int a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        int t = a + b;
        a = b;
        b = t;
    }
    return a;
}
