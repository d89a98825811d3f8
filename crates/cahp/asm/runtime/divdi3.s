# 64-bit division and remainder for the C compiler. A 64-bit value is passed as four 16-bit
# words, low word first: the dividend in a0..a3, the divisor's low words in a4, a5 and its high
# words on the stack (0(sp), 2(sp) at the call); the result comes back in a0..a3.
#   __udivdi3 (unsigned /)   __umoddi3 (unsigned %)   __divdi3 (signed /)   __moddi3 (signed %)
#   __divdi3_mul: A * B mod 2^64 through the same loop, for programs that link this module
#   anyway (vsp-cc calls it instead of __muldi3 then, saving muldi3.s's 159 bytes)
# C semantics for signed values (quotient truncates toward zero, remainder has the dividend's
# sign); division by zero gives, unsigned, quotient 0xFFFF_FFFF_FFFF_FFFF and remainder =
# dividend. One shift-subtract loop serves all of them: the dividend N (a3:a0) shifts out into the
# remainder R (fp:s4:s3:s2) while the quotient bits shift into N; the divisor D is a5:a4 and
# s1:s0. Signed calls divide the magnitudes and negate the result as C wants. The multiply runs
# the loop with N = A and D = 1 - B: each bit of A shifted into R's bit 0 turns the subtraction
# into R = 2R + B (Horner's rule from A's top bit), and R is the product.
# Keeps ra, sp, fp, s0..s4 (saved on the stack, 18 bytes); clobbers a4, a5, t0, t1.
# Frame: 0 ra, 2 fp, 4..12 s0..s4, 14 the result's sign mask (0 or -1), 16 the mode
# (bit 0: return R, bit 1: signed; -1: multiply); the divisor's high words at 18(sp), 20(sp).
    .text
    .globl __udivdi3, __umoddi3, __divdi3, __moddi3, __divdi3_mul
__divdi3_mul:
    li   t1, -1
    j    .L__divdi_go
__udivdi3:
    li   t1, 0
    j    .L__divdi_go
__umoddi3:
    li   t1, 1
    j    .L__divdi_go
__divdi3:
    li   t1, 2
    j    .L__divdi_go
__moddi3:
    li   t1, 3
.L__divdi_go:
    addi sp, sp, -18
    sw   ra, 0(sp)
    sw   fp, 2(sp)
    sw   s0, 4(sp)
    sw   s1, 6(sp)
    sw   s2, 8(sp)
    sw   s3, 10(sp)
    sw   s4, 12(sp)
    sw   t1, 16(sp)
    lw   s0, 18(sp)        # the divisor's high words
    lw   s1, 20(sp)
    li   fp, 0             # zero (and R's top word)
    sw   fp, 14(sp)        # unsigned: the result keeps its sign
    blt  t1, fp, .L__divdi_mul
    andi t0, t1, 2
    beq  t0, fp, .L__divdi_core
    mov  t0, a3            # the quotient is negative when the signs differ,
    andi t1, t1, 1         # the remainder when the dividend is negative
    bne  t1, fp, .L__divdi_rsign
    xor  t0, t0, s1
.L__divdi_rsign:
    asri t0, t0, 15
    sw   t0, 14(sp)
    asri t0, a3, 15        # N = |N|
    lsri t1, a3, 15
    call .L__divdi_cneg
    asri t0, s1, 15        # D = |D| = (D ^ m) + (m & 1)
    lsri t1, s1, 15
    j    .L__divdi_negd
.L__divdi_mul:
    li   t0, -1            # D = 1 - B = (B ^ -1) + 2
    li   t1, 2
.L__divdi_negd:
    xor  a4, a4, t0
    xor  a5, a5, t0
    xor  s0, s0, t0
    xor  s1, s1, t0
    add  a4, a4, t1
    bgeu a4, t1, .L__divdi_core
    li   t1, 1
    addi a5, a5, 1
    bgeu a5, t1, .L__divdi_core
    addi s0, s0, 1
    bgeu s0, t1, .L__divdi_core
    addi s1, s1, 1
.L__divdi_core:
    li   s2, 0             # R = 0 (fp is 0 already)
    li   s3, 0
    li   s4, 0
    li   ra, 68            # bits left + 4 (so that ra > 3 >= the division modes)
.L__divdi_loop:
    lsli fp, fp, 1         # R:N <<= 1
    lsri t0, s4, 15
    or   fp, fp, t0
    lsli s4, s4, 1
    lsri t0, s3, 15
    or   s4, s4, t0
    lsli s3, s3, 1
    lsri t0, s2, 15
    or   s3, s3, t0
    lsli s2, s2, 1
    lsri t0, a3, 15
    or   s2, s2, t0
    lsli a3, a3, 1
    lsri t0, a2, 15
    or   a3, a3, t0
    lsli a2, a2, 1
    lsri t0, a1, 15
    or   a2, a2, t0
    lsli a1, a1, 1
    lsri t0, a0, 15
    or   a1, a1, t0
    lsli a0, a0, 1
    lw   t0, 16(sp)        # the mode: a division, or the multiply (-1)
    bltu t0, ra, .L__divdi_cmp
    lsli t0, s2, 15        # multiply: A's bit just shifted into R (bit 15 here;
    bltu ra, t0, .L__divdi_sub     # ra < 0x8000 when it is set)
    j    .L__divdi_next
.L__divdi_cmp:
    bltu fp, s1, .L__divdi_next    # R < D?
    bne  fp, s1, .L__divdi_sub
    bltu s4, s0, .L__divdi_next
    bne  s4, s0, .L__divdi_sub
    bltu s3, a5, .L__divdi_next
    bne  s3, a5, .L__divdi_sub
    bltu s2, a4, .L__divdi_next
.L__divdi_sub:
    li   t1, 0             # R -= D, the borrow in t1
    bgeu s2, a4, .L__divdi_b0
    li   t1, 1
.L__divdi_b0:
    sub  s2, s2, a4
    add  t0, a5, t1        # divisor word + borrow; when that wraps to 0, the word stays
    bltu t0, t1, .L__divdi_b1      # and the borrow goes on
    li   t1, 0
    bgeu s3, t0, .L__divdi_b1
    li   t1, 1
.L__divdi_b1:
    sub  s3, s3, t0
    add  t0, s0, t1
    bltu t0, t1, .L__divdi_b2
    li   t1, 0
    bgeu s4, t0, .L__divdi_b2
    li   t1, 1
.L__divdi_b2:
    sub  s4, s4, t0
    add  t0, s1, t1
    sub  fp, fp, t0
    addi a0, a0, 1         # quotient bit
.L__divdi_next:
    addi ra, ra, -1
    li   t0, 4
    bne  ra, t0, .L__divdi_loop
    lw   t1, 16(sp)
    andi t1, t1, 1
    li   t0, 0
    beq  t1, t0, .L__divdi_sign
    mov  a0, s2            # return R: the remainder, or the product
    mov  a1, s3
    mov  a2, s4
    mov  a3, fp
.L__divdi_sign:
    lw   t0, 14(sp)
    lsri t1, t0, 15
    call .L__divdi_cneg
    lw   ra, 0(sp)
    lw   fp, 2(sp)
    lw   s0, 4(sp)
    lw   s1, 6(sp)
    lw   s2, 8(sp)
    lw   s3, 10(sp)
    lw   s4, 12(sp)
    addi sp, sp, 18
    ret
# a3:a0 = (a3:a0 ^ t0) + t1 with t0 = -t1 (0, or -1 to negate); clobbers t1.
.L__divdi_cneg:
    xor  a0, a0, t0
    xor  a1, a1, t0
    xor  a2, a2, t0
    xor  a3, a3, t0
    add  a0, a0, t1
    bgeu a0, t1, .L__divdi_cdone
    li   t1, 1
    addi a1, a1, 1
    bgeu a1, t1, .L__divdi_cdone
    addi a2, a2, 1
    bgeu a2, t1, .L__divdi_cdone
    addi a3, a3, 1
.L__divdi_cdone:
    ret
