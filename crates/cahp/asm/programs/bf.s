# bf — kvsp-benchmark 03_bf.c in assembly (vsp.md §5): interprets the brainf*ck program in
# argv[1] on a tape of 100 16-bit cells (in .bss) starting at cell 50, and returns the current
# cell. Supports + - < > [ ]; every other character is ignored. Brackets must balance.
# `vsp emu bf.img '++++[>++++++++++<-]>++'` -> 42.
#
# Made for few cycles, since every cycle of an encrypted run costs seconds:
# * the current cell lives in a0 and is written back only when the pointer moves;
# * every handler ends with its own copy of the dispatch chain (threaded code), ordered by how
#   often characters occur ('+' first), so a character costs one taken branch;
# * `[` pushes the loop start on the stack, so `]` jumps back without scanning; only a `[` on a
#   zero cell scans forward for its partner;
# * handlers are 4-byte aligned (never reached by falling through), so a jump to them does not
#   hit the fetch stall of an instruction that straddles two ROM words.
# Registers: a0 cell, a1 cell address, a2 next character, a3 character, s0..s4/fp the six
# command characters, t0 bracket depth, t1 = 0 (never written after reset).
    .bss
tape:
    .space 200

    .text
    .globl _start
_start:
    lw    sp, -2(sp)        # initial SP (sp = 0 at reset; -2 wraps to RAMSIZE-2)
    lw    a2, 4(sp)         # argv[1]
    li    a1, tape+100      # cell 50
    li    s0, '+'
    li    s1, '-'
    li    s2, '>'
    li    s3, '<'
    li    s4, '['
    li    fp, ']'
next:
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
plus:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
minus:
    addi  a0, a0, -1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
right:
    sw    a0, 0(a1)
    addi  a1, a1, 2
    lw    a0, 0(a1)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
left:
    sw    a0, 0(a1)
    addi  a1, a1, -2
    lw    a0, 0(a1)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
open:
    beq   a0, t1, skip        # zero cell: skip the loop
    addi  sp, sp, -2          # push the loop start
    sw    a2, 0(sp)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
close:
    beq   a0, t1, pop
    lw    a2, 0(sp)           # back to the loop start
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
pop:
    addi  sp, sp, 2           # loop done
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
skip:                       # scan forward to the matching ']' (depth in t0)
    li    t0, 1
skip_loop:
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s4, skip_in
    beq   a3, t1, end         # unbalanced: stop
    bne   a3, fp, skip_loop
    addi  t0, t0, -1
    bne   t0, t1, skip_loop
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
skip_in:
    addi  t0, t0, 1
    j     skip_loop
end:
    hlt
