# hamming — kvsp-benchmark 02_hamming.c in assembly (vsp.md §5): argv[1..4] and argv[5..8]
# are two-hex-digit bytes g[0..3] and e[0..3]; returns the number of bits in which g and e
# differ. `vsp emu hamming.img 10 10 10 10 de ad be ef` -> 24.
#
# Straight-line code, no branches: for each of the 8 hex-digit pairs, two table lookups turn
# the characters into nibbles (`hex`, indexed by character - '0'; '0'-'9', 'a'-'f' and 'A'-'F'),
# the nibbles are xor-ed and a third lookup (`pop4`) counts the bits. Loads are interleaved so
# that no instruction uses the result of the load right before it (no load-use stall on Ruby).
# Standalone; a0 (the count) is 0 at reset.
    .data
hex:                        # value of character c at hex + (c - '0'), for c in '0'..'f'
    .byte 0, 1, 2, 3, 4, 5, 6, 7, 8, 9                     # '0'-'9'
    .byte 0, 0, 0, 0, 0, 0, 0                              # ':'-'@'
    .byte 10, 11, 12, 13, 14, 15                           # 'A'-'F'
    .space 26                                              # 'G'-'`'
    .byte 10, 11, 12, 13, 14, 15                           # 'a'-'f'
pop4:                       # number of set bits of 0..15
    .byte 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4

    .text
    .globl _start
_start:
    lw    sp, -2(sp)        # initial SP (sp = 0 at reset; -2 wraps to RAMSIZE-2)
    lw    t0, 4(sp)         # argv[1] (g[0])
    lw    t1, 12(sp)        # argv[5] (e[0])
    # byte 0
    lbu   a1, 0(t0)         # g high digit
    lbu   a3, 1(t0)         # g low digit
    lbu   a2, 0(t1)         # e high digit
    lbu   a4, 1(t1)         # e low digit
    lbu   a1, hex-48(a1)
    lbu   a3, hex-48(a3)
    lbu   a2, hex-48(a2)
    lbu   a4, hex-48(a4)
    xor   a1, a1, a2
    xor   a3, a3, a4
    lbu   a1, pop4(a1)
    lbu   a3, pop4(a3)
    lw    t0, 6(sp)        # argv[2] (g[1])
    lw    t1, 14(sp)        # argv[6] (e[1])
    add   a0, a0, a1
    add   a0, a0, a3
    # byte 1
    lbu   a1, 0(t0)         # g high digit
    lbu   a3, 1(t0)         # g low digit
    lbu   a2, 0(t1)         # e high digit
    lbu   a4, 1(t1)         # e low digit
    lbu   a1, hex-48(a1)
    lbu   a3, hex-48(a3)
    lbu   a2, hex-48(a2)
    lbu   a4, hex-48(a4)
    xor   a1, a1, a2
    xor   a3, a3, a4
    lbu   a1, pop4(a1)
    lbu   a3, pop4(a3)
    lw    t0, 8(sp)        # argv[3] (g[2])
    lw    t1, 16(sp)        # argv[7] (e[2])
    add   a0, a0, a1
    add   a0, a0, a3
    # byte 2
    lbu   a1, 0(t0)         # g high digit
    lbu   a3, 1(t0)         # g low digit
    lbu   a2, 0(t1)         # e high digit
    lbu   a4, 1(t1)         # e low digit
    lbu   a1, hex-48(a1)
    lbu   a3, hex-48(a3)
    lbu   a2, hex-48(a2)
    lbu   a4, hex-48(a4)
    xor   a1, a1, a2
    xor   a3, a3, a4
    lbu   a1, pop4(a1)
    lbu   a3, pop4(a3)
    lw    t0, 10(sp)        # argv[4] (g[3])
    lw    t1, 18(sp)        # argv[8] (e[3])
    add   a0, a0, a1
    add   a0, a0, a3
    # byte 3
    lbu   a1, 0(t0)         # g high digit
    lbu   a3, 1(t0)         # g low digit
    lbu   a2, 0(t1)         # e high digit
    lbu   a4, 1(t1)         # e low digit
    lbu   a1, hex-48(a1)
    lbu   a3, hex-48(a3)
    lbu   a2, hex-48(a2)
    lbu   a4, hex-48(a4)
    xor   a1, a1, a2
    xor   a3, a3, a4
    lbu   a1, pop4(a1)
    lbu   a3, pop4(a3)
    add   a0, a0, a1
    add   a0, a0, a3
    hlt
