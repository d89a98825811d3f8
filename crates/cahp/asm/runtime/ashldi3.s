# __ashldi3 — 64-bit shift left for the C compiler: a3:a0 << a4 -> a3:a0 (a 64-bit value is four
# 16-bit words, low word first; the amount is one word). Whole words move first, then the
# remaining 0..15 bits shift with the register-amount shifts (an amount of 16 gives 0, so a
# remainder of 0 needs no special case). Amounts of 64 or more give 0.
# Leaf routine: clobbers a4, t0, t1; keeps ra.
    .text
    .globl __ashldi3
__ashldi3:
    li   t1, 16
.L__ashldi_words:
    bltu a4, t1, .L__ashldi_bits
    mov  a3, a2
    mov  a2, a1
    mov  a1, a0
    li   a0, 0
    sub  a4, a4, t1
    j    .L__ashldi_words
.L__ashldi_bits:
    sub  t1, t1, a4        # 16 - n
    lsl  a3, a3, a4
    lsr  t0, a2, t1
    or   a3, a3, t0
    lsl  a2, a2, a4
    lsr  t0, a1, t1
    or   a2, a2, t0
    lsl  a1, a1, a4
    lsr  t0, a0, t1
    or   a1, a1, t0
    lsl  a0, a0, a4
    ret
