# __lshrdi3, __ashrdi3 — 64-bit logical and arithmetic shifts right for the C compiler:
# a3:a0 >> a4 -> a3:a0 (a 64-bit value is four 16-bit words, low word first; the amount is one
# word). Both share one body: a5 holds the fill word (0, or the sign for __ashrdi3); whole words
# move first, then the remaining 0..15 bits shift with the register-amount shifts (an amount of
# 16 gives 0, so a remainder of 0 needs no special case). Amounts of 64 or more give the fill.
# Leaf routine: clobbers a4, a5, t0, t1; keeps ra.
    .text
    .globl __lshrdi3, __ashrdi3
__lshrdi3:
    li   a5, 0
    j    .L__shrdi_go
__ashrdi3:
    asri a5, a3, 15
.L__shrdi_go:
    li   t1, 16
.L__shrdi_words:
    bltu a4, t1, .L__shrdi_bits
    mov  a0, a1
    mov  a1, a2
    mov  a2, a3
    mov  a3, a5
    sub  a4, a4, t1
    j    .L__shrdi_words
.L__shrdi_bits:
    sub  t1, t1, a4        # 16 - n
    lsr  a0, a0, a4
    lsl  t0, a1, t1
    or   a0, a0, t0
    lsr  a1, a1, a4
    lsl  t0, a2, t1
    or   a1, a1, t0
    lsr  a2, a2, a4
    lsl  t0, a3, t1
    or   a2, a2, t0
    lsr  a3, a3, a4
    lsl  t0, a5, t1
    or   a3, a3, t0
    ret
