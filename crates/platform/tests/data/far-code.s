# Code past the first 512 bytes of ROM (the 1 KiB cores only): a jump over 600 bytes, a call back
# from there (a return address past 512), and a RAM word past 512.
# `vsp emu far-code.s --memory-size 1024` -> 586; with 512 bytes the program does not fit.
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP, near the top of the RAM
    li    t0, 768          # a RAM address past 512
    li    t1, 421
    j     far              # past 512 bytes of ROM
back:
    sw    t1, 0(t0)
    sb    t1, 3(t0)
    ret
    .space 600
far:
    call  back             # ra = an address past 512
    lw    a0, 0(t0)        # 421
    lbu   a1, 3(t0)        # 0xa5 = 165
    add   a0, a0, a1       # 586
    hlt
