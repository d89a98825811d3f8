# __mulsi3 — 32-bit multiply for the C compiler: (a1:a0) * (a3:a2) -> a1:a0 (mod 2^32;
# a 32-bit value is passed low half first, vsp.md §1.8). Shift-and-add over the bits of the
# second operand, stopping when none are left. Leaf routine: clobbers a2..a5, t0, t1; keeps ra.
    .text
    .globl __mulsi3
__mulsi3:
    mov  a4, a0            # multiplicand (a5:a4), shifted left each round
    mov  a5, a1
    li   a0, 0             # product (a1:a0)
    li   a1, 0
    li   t1, 0             # zero, for comparisons
.L__mulsi3_loop:
    mov  t0, a2
    or   t0, t0, a3
    beq  t0, t1, .L__mulsi3_done
    andi t0, a2, 1
    beq  t0, t1, .L__mulsi3_skip
    add  a0, a0, a4        # product += multiplicand, with the carry out of the low half
    add  a1, a1, a5
    bgeu a0, a4, .L__mulsi3_skip
    addi a1, a1, 1
.L__mulsi3_skip:
    lsli a5, a5, 1         # multiplicand <<= 1
    lsri t0, a4, 15
    or   a5, a5, t0
    lsli a4, a4, 1
    lsri a2, a2, 1         # multiplier >>= 1
    lsli t0, a3, 15
    or   a2, a2, t0
    lsri a3, a3, 1
    j    .L__mulsi3_loop
.L__mulsi3_done:
    ret
