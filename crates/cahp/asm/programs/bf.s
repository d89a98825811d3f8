# bf — kvsp-benchmark 03_bf.c in assembly (vsp.md §5): interprets the brainf*ck program in
# argv[1] on a tape of 100 16-bit cells (in .bss) starting at cell 50, and returns the current
# cell. Supports + - < > [ ]; every other character is ignored. Brackets must balance.
# `vsp emu bf.img '++++[>++++++++++<-]>++'` -> 42.
#
# Written for few cycles, since every cycle of an encrypted run costs seconds:
# * the current cell lives in a0 and is written back only when the pointer moves;
# * every handler ends with its own copy of the dispatch chain (threaded code), so a character
#   costs at most one taken branch; runs of '+' (the commonest command) fall through an unrolled
#   chain of '+' handlers and take no branch at all until the run ends;
# * `[` pushes the loop start on the stack, so `]` jumps back without scanning; only a `[` on a
#   zero cell scans forward for its partner;
# * jump targets are 4-byte aligned (`.balign` where nothing falls through), so no jump lands on
#   an instruction that straddles two 32-bit ROM words (one fetch stall on Pearl and Ruby);
# * no instruction uses a register loaded by the instruction just before it (no load-use stall
#   on a pipelined core).
# Registers: a0 cell, a1 cell address, a2 next character, a3 character, s0..s4/fp the six
# command characters, t0 depth of a skipped loop, t1 = 0 (never written after reset).
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
    beq   a3, s0, plus1
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
# A run of up to 6 '+' falls straight through; then `rest` dispatches the other characters.
    .balign 4
plus1:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, s0, rest
plus2:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, s0, rest
plus3:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, s0, rest
plus4:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, s0, rest
plus5:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, s0, rest
plus6:
    addi  a0, a0, 1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus1
rest:
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
    beq   a3, s0, plus1
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
    beq   a3, s0, plus1
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
    beq   a3, s0, plus1
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
    beq   a3, s0, plus1
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
close:
    lw    a4, 0(sp)           # the loop start (used unless the cell is zero)
    beq   a0, t1, pop
    lbu   a3, 0(a4)
    addi  a2, a4, 1
    beq   a3, s0, plus1
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
    beq   a3, s0, plus1
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
skip:                       # scan forward to the matching ']'; t0 = nesting depth inside
skip_loop:                  # the skipped loop (0 whenever no scan is running)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s4, skip_in
    beq   a3, t1, end         # unbalanced: stop
    bne   a3, fp, skip_loop
    beq   t0, t1, skip_done
    addi  t0, t0, -1
    j     skip_loop
skip_done:
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s0, plus1
    beq   a3, s2, right
    beq   a3, s3, left
    beq   a3, s1, minus
    beq   a3, fp, close
    beq   a3, s4, open
    beq   a3, t1, end
    j     next
    .balign 4
skip_in:
    addi  t0, t0, 1
    j     skip_loop
    .balign 4
end:
    hlt
