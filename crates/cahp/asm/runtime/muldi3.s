# __muldi3 — 64-bit multiply for the C compiler: A * B mod 2^64. A 64-bit value is passed as four
# 16-bit words, low word first: A in a0..a3, B's low words in a4, a5 and its high words on the
# stack (0(sp), 2(sp) at the call); the product comes back in a0..a3. Shift-and-add over the bits
# of B, stopping when none are left: the product P builds up in fp:s4:s3:s2 while A (a3:a0)
# shifts left and B (s1:s0:a5:a4) shifts right.
# Keeps ra, sp, fp, s0..s4 (saved on the stack, 12 bytes); clobbers a4, a5, t0, t1.
    .text
    .globl __muldi3
__muldi3:
    addi sp, sp, -12
    sw   fp, 0(sp)
    sw   s0, 2(sp)
    sw   s1, 4(sp)
    sw   s2, 6(sp)
    sw   s3, 8(sp)
    sw   s4, 10(sp)
    lw   s0, 12(sp)        # B's high words
    lw   s1, 14(sp)
    li   s2, 0             # P = 0
    li   s3, 0
    li   s4, 0
    li   fp, 0
.L__muldi_loop:
    mov  t0, a4            # B = 0: done
    or   t0, t0, a5
    or   t0, t0, s0
    or   t0, t0, s1
    li   t1, 0             # zero, then the carry
    beq  t0, t1, .L__muldi_done
    andi t0, a4, 1
    beq  t0, t1, .L__muldi_shift
    add  s2, s2, a0        # P += A, the carry in t1
    bgeu s2, a0, .L__muldi_c0
    li   t1, 1
.L__muldi_c0:
    add  t0, a1, t1        # A word + carry; when that wraps to 0, P's word stays and the
    bltu t0, t1, .L__muldi_c1      # carry goes on
    add  s3, s3, t0
    li   t1, 0
    bgeu s3, t0, .L__muldi_c1
    li   t1, 1
.L__muldi_c1:
    add  t0, a2, t1
    bltu t0, t1, .L__muldi_c2
    add  s4, s4, t0
    li   t1, 0
    bgeu s4, t0, .L__muldi_c2
    li   t1, 1
.L__muldi_c2:
    add  t0, a3, t1
    add  fp, fp, t0
.L__muldi_shift:
    lsli a3, a3, 1         # A <<= 1
    lsri t0, a2, 15
    or   a3, a3, t0
    lsli a2, a2, 1
    lsri t0, a1, 15
    or   a2, a2, t0
    lsli a1, a1, 1
    lsri t0, a0, 15
    or   a1, a1, t0
    lsli a0, a0, 1
    lsri a4, a4, 1         # B >>= 1
    lsli t0, a5, 15
    or   a4, a4, t0
    lsri a5, a5, 1
    lsli t0, s0, 15
    or   a5, a5, t0
    lsri s0, s0, 1
    lsli t0, s1, 15
    or   s0, s0, t0
    lsri s1, s1, 1
    j    .L__muldi_loop
.L__muldi_done:
    mov  a0, s2
    mov  a1, s3
    mov  a2, s4
    mov  a3, fp
    lw   fp, 0(sp)
    lw   s0, 2(sp)
    lw   s1, 4(sp)
    lw   s2, 6(sp)
    lw   s3, 8(sp)
    lw   s4, 10(sp)
    addi sp, sp, 12
    ret
