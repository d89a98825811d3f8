# bf — kvsp-benchmark 03_bf.c in assembly (vsp.md §5): interprets the brainf*ck program in
# argv[1] on a tape of 100 16-bit cells (in .bss) starting at cell 50, and returns the current
# cell. Supports + - < > [ ]; every other character is ignored. Brackets must balance.
# `vsp emu bf.img '++++[>++++++++++<-]>++'` -> 42.
#
# Written for few cycles, since every cycle of an encrypted run costs seconds:
# * the current cell lives in a0 and is written back only when the pointer moves;
# * runs of '+' (the commonest command) fall through an unrolled chain of '+' handlers and take
#   no branch until the run ends;
# * the handlers are laid out in the order the commands usually follow each other ('+' run,
#   '<', '-', ']', '>', back to '+'), each ending with a forward `bne` that is not taken when the
#   usual successor comes, so a typical loop body runs almost without taken branches; a shared
#   dispatch block `dispatch` handles the other cases. Forward branches are the not-taken case,
#   which suits a pipeline that predicts forward branches not taken;
# * `[` pushes the loop start on the stack, so `]` jumps back without scanning; only a `[` on a
#   zero cell scans forward for its partner;
# * the hot jump targets sit at addresses with bit 1 clear (`.balign` where nothing falls
#   through), so no jump lands in the second half of a 32-bit ROM word (a fetch bubble);
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
next:                       # fetch and dispatch (entry, and after rare commands)
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
rest:                       # after a run of '+': usually '<'
    bne   a3, s3, dispatch
left:
    sw    a0, 0(a1)
    addi  a1, a1, -2
    lw    a0, 0(a1)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, s1, dispatch    # usually '-'
minus:
    addi  a0, a0, -1
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    bne   a3, fp, dispatch    # usually ']'
close:
    lw    a4, 0(sp)           # the loop start (used unless the cell is zero)
    beq   a0, t1, pop
    lbu   a3, 0(a4)
    addi  a2, a4, 1
    bne   a3, s2, dispatch    # usually '>'
right:
    sw    a0, 0(a1)
    addi  a1, a1, 2
    lw    a0, 0(a1)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
dispatch:                   # dispatch a3 (falls in from '>', whose usual successor is '+')
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
    j     next
    .balign 4
open:
    beq   a0, t1, skip        # zero cell: skip the loop
    addi  sp, sp, -2          # push the loop start
    sw    a2, 0(sp)
    j     next
    .balign 4
skip:                       # scan forward to the matching ']'; t0 = nesting depth inside
skip_loop:                  # the skipped loop (0 whenever no scan is running)
    lbu   a3, 0(a2)
    addi  a2, a2, 1
    beq   a3, s4, skip_in
    beq   a3, t1, end         # unbalanced: stop
    bne   a3, fp, skip_loop
    beq   t0, t1, next
    addi  t0, t0, -1
    j     skip_loop
    .balign 4
skip_in:
    addi  t0, t0, 1
    j     skip_loop
    .balign 4
end:
    hlt
