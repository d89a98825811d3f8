# Code in the top quarter of a 4 KiB ROM (`vsp asm --memory-size rom=4096,ram=512`): a jump
# through a register to an address over 3 KiB, where one instruction runs before the halt. On
# Pearl the result is in a0 after 5 cycles (`vsp emu` says so: lui, addi, jr, li, then the halt's
# cycle); crates/vsp/tests/encrypted.rs runs exactly those cycles encrypted.
    .text
_start:
    li    a5, far
    jr    a5
    .space 3100
    .align 2
far:
    li    a0, 77
    hlt
