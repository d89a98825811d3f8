# __mulhi3 — 16-bit multiply for the C compiler: a0 = a0 * a1 (mod 2^16), signed and unsigned
# alike. Shift-and-add over the bits of a1, stopping when no bits are left, so small
# multipliers are cheap. Leaf routine (ABI vsp.md §1.8): clobbers a1, a2, a3, t0.
    .text
    .globl __mulhi3
__mulhi3:
    mov  a2, a0            # multiplicand, shifted left each round
    li   a0, 0             # product
    li   a3, 0             # zero, for comparisons
.L__mulhi3_loop:
    beq  a1, a3, .L__mulhi3_done
    andi t0, a1, 1
    beq  t0, a3, .L__mulhi3_skip
    add  a0, a0, a2
.L__mulhi3_skip:
    lsli a2, a2, 1
    lsri a1, a1, 1
    j    .L__mulhi3_loop
.L__mulhi3_done:
    ret
