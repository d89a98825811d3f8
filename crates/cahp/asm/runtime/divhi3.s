# 16-bit division and remainder for the C compiler (the cahp-rt libc names):
#   __udivhi3  a0 = a0 / a1  (unsigned)     __umodhi3  a0 = a0 % a1  (unsigned)
#   __divhi3   a0 = a0 / a1  (signed)       __modhi3   a0 = a0 % a1  (signed)
# Signed results follow C: the quotient truncates toward zero, the remainder has the sign of
# the dividend. Division by zero (undefined in C) gives, unsigned, quotient 0xFFFF and
# remainder = dividend. All four share one restoring-division loop; t1 carries the mode
# (bit 0: return the remainder, bit 1: negate the result). Leaf routines (vsp.md §1.8):
# they clobber a1..a5, t0, t1 and keep ra.
    .text
    .globl __udivhi3, __umodhi3, __divhi3, __modhi3
__udivhi3:
    li   t1, 0
    j    .L__div_core
__umodhi3:
    li   t1, 1
    j    .L__div_core
__divhi3:
    xor  t1, a0, a1        # bit 15: the quotient is negative
    lsri t1, t1, 15
    lsli t1, t1, 1
    j    .L__div_abs
__modhi3:
    lsri t1, a0, 15        # the remainder takes the dividend's sign
    lsli t1, t1, 1
    ori  t1, t1, 1
.L__div_abs:
    li   a5, 0
    bge  a0, a5, .L__div_a_pos
    neg  a0, a0
.L__div_a_pos:
    bge  a1, a5, .L__div_core
    neg  a1, a1
.L__div_core:              # unsigned a0 / a1 -> quotient a2, remainder a3
    li   a2, 0
    li   a3, 0
    li   a4, 16            # bits left
    li   a5, 0
.L__div_loop:
    lsli a3, a3, 1         # remainder = remainder << 1 | next dividend bit
    lsri t0, a0, 15
    or   a3, a3, t0
    lsli a0, a0, 1
    lsli a2, a2, 1
    bltu a3, a1, .L__div_next
    sub  a3, a3, a1
    addi a2, a2, 1
.L__div_next:
    addi a4, a4, -1
    bne  a4, a5, .L__div_loop
    andi t0, t1, 1
    beq  t0, a5, .L__div_sign
    mov  a2, a3
.L__div_sign:
    andi t0, t1, 2
    beq  t0, a5, .L__div_ret
    neg  a2, a2
.L__div_ret:
    mov  a0, a2
    ret
