# fib — kvsp-benchmark 01_fib.c in assembly (vsp.md §5): returns fib(argv[1][0] - '0'),
# iterating a = 0, b = 1 n times (n <= 0 gives 0). `vsp emu fib.img 5` -> 5.
#
# Standalone (no crt0, nothing called): entered at reset, where every register is 0, so a0
# (a = 0) and a3 (the zero used by comparisons) need no initialisation. The loop runs two
# iterations per round, (a, b) -> (a + b, a + 2b), with the roles of a0/a2 alternating.
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP (sp = 0 at reset; -2 wraps to RAMSIZE-2)
    lw    t0, 4(sp)        # argv[1]
    lbu   a1, 0(t0)        # n = argv[1][0] - '0'
    addi  a1, a1, -48
    li    a2, 1            # b = 1
    ble   a1, a3, done     # n <= 0: fib = 0
loop:
    add   a0, a0, a2       # a += b   (now a2 holds fib(k), a0 fib(k+1))
    addi  a1, a1, -1
    beq   a1, a3, odd
    add   a2, a2, a0       # b += a   (back to a0 = fib(k), a2 = fib(k+1))
    addi  a1, a1, -1
    bne   a1, a3, loop
done:
    hlt
odd:
    mov   a0, a2
    hlt
