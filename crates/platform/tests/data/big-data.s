# Static data past the first 512 bytes of RAM (the 1 KiB cores only): a 600-byte table, a word
# after it that the program reads, doubles and writes back, and the argument at the top of RAM.
# `vsp emu big-data.s 7 --memory-size 1024` -> 2 * 300 + '7' = 655; with 512 bytes the data do not
# fit.
    .data
table:
    .space 600
past:
    .half 300
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP, near the top of the 1 KiB RAM
    la    t0, past         # 602: past 512
    lw    a0, 0(t0)        # 300
    add   a0, a0, a0       # 600
    sw    a0, 0(t0)
    lw    t1, 4(sp)        # argv[1]
    lbu   a1, 0(t1)        # '7' = 55
    add   a0, a0, a1       # 655
    hlt
