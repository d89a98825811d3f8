# 32-bit division and remainder for the C compiler (a 32-bit value is passed low half first:
# dividend a1:a0, divisor a3:a2, result a1:a0; vsp.md §1.8):
#   __udivsi3 (unsigned /)   __umodsi3 (unsigned %)   __divsi3 (signed /)   __modsi3 (signed %)
# C semantics for signed values (quotient truncates toward zero, remainder has the dividend's
# sign); division by zero gives, unsigned, quotient 0xFFFFFFFF and remainder = dividend.
# One shift-subtract loop serves all four: the dividend shifts out of a1:a0 while the quotient
# bits shift in; the remainder builds up in a5:a4. t1 carries the mode (bit 0: return the
# remainder, bit 1: negate the result). Clobbers a2..a5, t0, t1; saves s0 on the stack.
    .text
    .globl __udivsi3, __umodsi3, __divsi3, __modsi3
__udivsi3:
    li   t1, 0
    j    .L__divsi_core
__umodsi3:
    li   t1, 1
    j    .L__divsi_core
__divsi3:
    xor  t1, a1, a3        # bit 15: the quotient is negative
    lsri t1, t1, 15
    lsli t1, t1, 1
    j    .L__divsi_abs
__modsi3:
    lsri t1, a1, 15        # the remainder takes the dividend's sign
    lsli t1, t1, 1
    ori  t1, t1, 1
.L__divsi_abs:
    li   t0, 0
    bge  a1, t0, .L__divsi_a_pos
    xori a0, a0, -1        # a1:a0 = -(a1:a0)
    xori a1, a1, -1
    addi a0, a0, 1
    bne  a0, t0, .L__divsi_a_pos
    addi a1, a1, 1
.L__divsi_a_pos:
    bge  a3, t0, .L__divsi_core
    xori a2, a2, -1        # a3:a2 = -(a3:a2)
    xori a3, a3, -1
    addi a2, a2, 1
    bne  a2, t0, .L__divsi_core
    addi a3, a3, 1
.L__divsi_core:
    addi sp, sp, -2
    sw   s0, 0(sp)
    li   a4, 0             # remainder
    li   a5, 0
    li   s0, 32            # bits left
.L__divsi_loop:
    lsli a5, a5, 1         # remainder = remainder << 1 | dividend bit 31
    lsri t0, a4, 15
    or   a5, a5, t0
    lsli a4, a4, 1
    lsri t0, a1, 15
    or   a4, a4, t0
    lsli a1, a1, 1         # dividend <<= 1 (its low bit becomes the next quotient bit)
    lsri t0, a0, 15
    or   a1, a1, t0
    lsli a0, a0, 1
    bltu a5, a3, .L__divsi_next     # remainder < divisor?
    bne  a5, a3, .L__divsi_sub
    bltu a4, a2, .L__divsi_next
.L__divsi_sub:
    bgeu a4, a2, .L__divsi_noborrow # remainder -= divisor
    addi a5, a5, -1
.L__divsi_noborrow:
    sub  a4, a4, a2
    sub  a5, a5, a3
    ori  a0, a0, 1
.L__divsi_next:
    addi s0, s0, -1
    li   t0, 0
    bne  s0, t0, .L__divsi_loop
    lw   s0, 0(sp)
    addi sp, sp, 2
    li   a2, 0             # zero, for comparisons (the divisor is no longer needed)
    andi t0, t1, 1
    beq  t0, a2, .L__divsi_sign
    mov  a0, a4            # return the remainder
    mov  a1, a5
.L__divsi_sign:
    andi t0, t1, 2
    beq  t0, a2, .L__divsi_ret
    xori a0, a0, -1        # negate a1:a0
    xori a1, a1, -1
    addi a0, a0, 1
    bne  a0, a2, .L__divsi_ret
    addi a1, a1, 1
.L__divsi_ret:
    ret
