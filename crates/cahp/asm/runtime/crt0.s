# crt0 — program entry for C code (cahp-rt crt0.s, vsp.md §1.7), linked at ROM address 0.
#
# The loader stores the initial SP as a word at RAMSIZE-2. At reset every register is 0, so
# `-2(sp)` wraps to RAMSIZE-2 whatever the RAM size (the hardware drops high address bits);
# this replaces cahp-rt's `li sp, 0x1FE` and works for 512 B and 1 KiB RAM alike.
# main(argc, argv) returns in a0 (x8), which stays there after the halt.
    .text
    .globl _start
_start:
    lw   sp, -2(sp)        # initial SP
    lw   a0, 0(sp)         # argc
    addi a1, sp, 2         # argv
    call main
    hlt
