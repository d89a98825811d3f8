# Code past the first 512 bytes of ROM (the 1 KiB cores only): a jump over 600 bytes, a call back
# from there (a return address past 512), RAM words and bytes past 512, argc near the top of the
# RAM. `vsp emu far-code.s --memory-size 1024` -> 586; with 512 bytes the program does not fit.
# vsp-cahp's 1 KiB co-verification runs it too (tests/coverify_1k.rs).
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP: 1022 in a 1 KiB RAM
    li    t0, 384
    add   t0, t0, t0       # 768: beyond a 512-byte RAM
    li    t1, 421
    j     far              # beyond a 512-byte ROM
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
    mov   a2, ra
    lw    a3, 0(sp)        # argc (1: argv[0] only), stored near the top of the RAM
    hlt
