# Two instructions that write RAM past 512 bytes on the 1 KiB cores: the initial SP (near the top
# of RAM) stored just below itself. Short on purpose: the encrypted test runs it cycle by cycle.
    .text
    .globl _start
_start:
    lw    sp, -2(sp)       # initial SP: 1014 or so in a 1 KiB RAM (502 or so in 512 bytes)
    sw    sp, -2(sp)       # RAM[sp - 2] <- sp
    hlt
