# fib — kvsp-benchmark 01_fib.c in assembly (vsp.md §5): returns fib(argv[1][0] - '0'),
# iterating (a, b) <- (b, a + b) n times from a = 0, b = 1 (n <= 0 gives 0).
# `vsp emu fib.img 5` -> 5.
#
# Standalone (no crt0, nothing called): entered at reset, where every register is 0.
# Written for few cycles, since every cycle of an encrypted run costs seconds: for a digit
# (0 <= n <= 9) it jumps into a straight run of nine `add2`s so that exactly the last n of them
# execute — no loop, one taken jump. The two registers take turns holding a and b; which one
# must start as a = 0 depends on the parity of n. Any other character falls back to a loop.
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP (sp = 0 at reset; -2 wraps to RAMSIZE-2)
    li    a4, 10           # (placed between loads and their uses: no load-use stall)
    lw    t0, 4(sp)        # argv[1]
    li    a5, steps_end
    lbu   a1, 0(t0)        # n = argv[1][0] - '0'
    addi  a1, a1, -48
    bgeu  a1, a4, general  # not a digit
    andi  a0, a1, 1        # a0 is the answer after the last step: it starts as b (1) for odd n
    xori  a2, a0, 1        # a2 starts as the other one
    lsli  t1, a1, 1        # each step is 2 bytes
    sub   a5, a5, t1
    jr    a5               # run the last n steps
    .balign 2              # steps at even addresses: a 16-bit instruction never straddles a word
steps:
    add2  a2, a0
    add2  a0, a2
    add2  a2, a0
    add2  a0, a2
    add2  a2, a0
    add2  a0, a2
    add2  a2, a0
    add2  a0, a2
    add2  a2, a0
steps_end:
    hlt

general:                   # any n: a0 = a = 0 and a3 = 0 from reset
    li    a2, 1            # b = 1
    ble   a1, a3, done     # n <= 0: fib = 0
loop:                      # two iterations per round, a0/a2 taking turns
    add   a0, a0, a2
    addi  a1, a1, -1
    beq   a1, a3, odd
    add   a2, a2, a0
    addi  a1, a1, -1
    bne   a1, a3, loop
done:
    hlt
odd:
    mov   a0, a2
    hlt
