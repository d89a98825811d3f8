// Shared building blocks of the Pearl and Ruby CAHPv3 cores (VSP, seed 000).
//
// Every block is written for a TFHE evaluator, where a 2-input gate costs one bootstrap, a MUX two
// and a NOT nothing, while flip-flops are free. So the datapath shares the adder's propagate and
// generate signals for the logic ops, gates results to zero and ORs them instead of multiplexing,
// and never puts an enable on a register that does not need one.

// A gate that synthesis keeps as written (keep_hierarchy): hw/synth/flow.ys maps the logic around it
// without seeing through it (ABC skips such modules) and flattens it afterwards. For structures
// whose TFHE cost ABC cannot see: ABC counts depth in gates, not in the cycle's bootstrap latencies
// (CMUX data free, a circuit-bootstrapped select 5), so its area recovery turns balanced trees off
// its own critical path into chains, which can be the cycle's critical path.
(* keep_hierarchy *)
module cahp_and2 (
    input  wire a,
    input  wire b,
    output wire y
);
    assign y = a & b;
endmodule

// All 16 bits set, as a balanced tree of kept AND gates (4 bootstrap levels).
module cahp_and16 (
    input  wire [15:0] x,
    output wire        y
);
    wire [7:0] l1;
    wire [3:0] l2;
    wire [1:0] l3;
    genvar k;
    generate
        for (k = 0; k < 8; k = k + 1) begin : s1
            cahp_and2 a (.a(x[2*k]), .b(x[2*k+1]), .y(l1[k]));
        end
        for (k = 0; k < 4; k = k + 1) begin : s2
            cahp_and2 a (.a(l1[2*k]), .b(l1[2*k+1]), .y(l2[k]));
        end
        for (k = 0; k < 2; k = k + 1) begin : s3
            cahp_and2 a (.a(l2[2*k]), .b(l2[2*k+1]), .y(l3[k]));
        end
    endgenerate
    cahp_and2 top (.a(l3[0]), .b(l3[1]), .y(y));
endmodule

// Instruction decoder: one 24-bit window (a 16-bit instruction uses bits 15:0).
module cahp_decode #(
    parameter PW = 9   // width of pcOff (the PC width)
) (
    input  wire [23:0] inst,
    output wire        is24,
    output wire [3:0]  rdAddr,      // register written (x0 for the link of jsal/jalr)
    output wire        regWrite,
    output wire [3:0]  raAddr,      // read port A (rs1 / base / rd of 16-bit ops / jump register)
    output wire [3:0]  rbAddr,      // read port B (rs2 / store data / rs of 16-bit ops)
    output wire        usesA,
    output wire        usesB,
    output wire        useImm,      // ALU operand B is the immediate
    output wire [15:0] imm,
    output wire        aZero,       // ALU operand A forced to 0 (li, lsi, lui, mov)
    output wire        sub,
    output wire        eP,
    output wire        eC,
    output wire        eG,
    output wire        isShift,
    output wire        shLeft,
    output wire        shArith,
    output wire        isLoad,
    output wire        isStore,
    output wire        isByte,
    output wire        byteSigned,
    output wire        isBranch,
    output wire [2:0]  cond,
    output wire        isJump,
    output wire        jumpReg,
    output wire        isLink,
    output wire [PW-1:0] pcOff,
    output wire        halt
);
    wire [1:0] cls = inst[2:1];
    wire cR = (cls == 2'b00);
    wire cI = (cls == 2'b01);
    wire cM = (cls == 2'b10);
    wire cJ = (cls == 2'b11);
    wire [2:0] f = inst[5:3];

    assign is24 = inst[0];
    assign isJump = ~is24 & cJ;
    assign isLink = isJump & inst[4];
    assign jumpReg = ~inst[3];
    assign isBranch = is24 & cJ;
    assign cond = f;
    assign rdAddr = isLink ? 4'd0 : inst[11:8];

    wire mLi = cM & (f == 3'b110);               // li / lsi
    wire mLui = cM & ~is24 & (f == 3'b000);      // lui
    wire mov = cR & ~is24 & inst[6];
    wire nop16 = cR & ~is24 & ~inst[7];
    assign isLoad = cM & ~inst[3] & ~mLi & ~mLui;
    assign isStore = cM & inst[3];
    assign isByte = is24 & ~inst[4];
    assign byteSigned = inst[5];
    assign regWrite = cR ? (is24 | inst[7]) : cI ? 1'b1 : cM ? ~inst[3] : isLink;

    assign raAddr = is24 ? inst[15:12] : (cM ? 4'd1 : inst[11:8]);
    assign rbAddr = is24 ? (cR ? inst[19:16] : inst[11:8]) : (cM ? inst[11:8] : inst[15:12]);
    assign aZero = mLi | mLui | mov;
    assign usesA = ~aZero & ~(isJump & ~jumpReg) & ~nop16;
    assign usesB = cR | isBranch | isStore;
    assign useImm = cI | cM;

    wire [15:0] simm10 = {{6{inst[7]}}, inst[7:6], inst[23:16]};
    wire [15:0] simm6 = {{10{inst[7]}}, inst[7:6], inst[15:12]};
    wire [15:0] uimm7 = {9'b0, inst[7:6], inst[15:12], 1'b0};
    wire [15:0] luiImm = {inst[7:6], inst[15:12], 10'b0};
    wire [15:0] imm16 = cM ? (f[1] ? (f[2] ? simm6 : uimm7) : luiImm) : simm6;
    assign imm = is24 ? simm10 : imm16;
    // js/jsal: simm11 in bits 15:5, sign-extended for a PC wider than 11 bits (ROM over 2 KiB).
    wire [15:0] simm11 = {{5{inst[15]}}, inst[15:5]};
    assign pcOff = is24 ? simm10[PW-1:0] : simm11[PW-1:0];

    // ALU function: R and I classes share the op code in bits 5:3; memory ops add, branches subtract.
    wire [2:0] op = (cR | cI) ? f : {2'b00, cJ};
    assign sub = (op == 3'b001);
    assign isShift = op[2] & (op[1] | op[0]);
    assign shLeft = (op == 3'b101);
    assign shArith = (op == 3'b111);
    assign eC = ~op[2] & ~op[1] & ~isLink;
    assign eP = ~(op == 3'b010) & ~isShift & ~isLink;
    assign eG = (op == 3'b010) | (op == 3'b100);
    assign halt = (inst[15:0] == 16'h000E);
endmodule

// ALU: ripple adder whose propagate (a^b) and generate (a&b) also give XOR, AND and OR;
// a right barrel shifter that serves left shifts by bit reversal; branch flags.
// res is 0 for shifts-off/link (eP=eC=eG=0), so the core can OR other results into it.
module cahp_alu #(
    // 1: every carry is a kept cahp_maj3 (defined in ruby.v, its only user, so that Pearl's synthesis
    // reads the same sources and its netlists stay byte-identical). ABC may turn a carry into a MUX
    // whose select is an operand bit (Pearl's bit 0), a circuit bootstrap on the critical path. Ruby
    // kept: the plan gives 740 gate bootstraps and a critical path of 36.0 against 763 and 39.0. 0: ABC maps the
    // ripple (Pearl, which the kept carries make dearer and deeper: 779 and 41.0 against 688 and
    // 40.1). BENCHMARKS.md, "Virtual Secure Platform", 2026-12-04.
    parameter KEEP_CARRY = 0,
    // 1: the carry into bit 0 is `cin` (Ruby: 0 for ble/bleu, whose a - b - 1 borrows when
    // a <= b), not `sub`; 0: `cin` is unused (Pearl leaves it unconnected).
    parameter SEP_CIN = 0
) (
    input  wire        cin,
    input  wire [15:0] a,
    input  wire [15:0] b,
    input  wire        aZero,
    input  wire        sub,
    input  wire        eP,
    input  wire        eC,
    input  wire        eG,
    input  wire        isShift,
    input  wire        shLeft,
    input  wire        shArith,
    output wire [15:0] sum,      // a + b (or a - b), for memory addresses
    output wire [15:0] res,      // operation result (0 when no ALU/shift op is selected)
    output wire        eq,
    output wire        ltu,
    output wire        lt
);
    wire [15:0] aa = aZero ? 16'b0 : a;
    wire [15:0] bb = b ^ {16{sub}};
    wire [15:0] p = aa ^ bb;
    wire [15:0] g = aa & bb;
    wire [16:0] c;
    generate
        if (SEP_CIN) begin : cinSep
            assign c[0] = cin;
        end else begin : cinSub
            assign c[0] = sub;
        end
    endgenerate
    genvar i;
    generate
        for (i = 0; i < 16; i = i + 1) begin : carry
            if (KEEP_CARRY) begin : kept
                cahp_maj3 m (.a(aa[i]), .b(bb[i]), .c(c[i]), .y(c[i+1]));
            end else begin : free
                assign c[i+1] = g[i] | (p[i] & c[i]);
            end
        end
    endgenerate
    assign sum = p ^ c[15:0];
    wire [15:0] logicRes = ((p & {16{eP}}) ^ (c[15:0] & {16{eC}})) | (g & {16{eG}});

    // Correct comparisons: the full 17-bit borrow (the originals truncate -b and get rs2 = 0 wrong).
    cahp_and16 eqTree (.x(p), .y(eq));
    assign ltu = ~c[16];
    assign lt = p[15] ? ltu : aa[15];

    // Shifter: amounts >= 16 give 0 (lsl/lsr) or the sign (asr).
    wire [15:0] arev;
    wire [15:0] yrev;
    wire fill = shArith & a[15];
    wire big = |b[15:4];
    wire [15:0] x0 = shLeft ? arev : a;
    wire [15:0] x1 = b[0] ? {fill, x0[15:1]} : x0;
    wire [15:0] x2 = b[1] ? {{2{fill}}, x1[15:2]} : x1;
    wire [15:0] x3 = b[2] ? {{4{fill}}, x2[15:4]} : x2;
    wire [15:0] x4 = b[3] ? {{8{fill}}, x3[15:8]} : x3;
    wire kill = big | ~isShift;
    wire [15:0] y = kill ? {16{fill & isShift}} : x4;
    generate
        for (i = 0; i < 16; i = i + 1) begin : reverse
            assign arev[i] = a[15-i];
            assign yrev[i] = y[15-i];
        end
    endgenerate
    wire [15:0] sh = shLeft ? yrev : y;
    assign res = logicRes | sh;
endmodule

// Branch condition (bits 5:3 of a 24-bit J instruction).
module cahp_cond (
    input  wire [2:0] cond,
    input  wire       eq,
    input  wire       ltu,
    input  wire       lt,
    output wire       ok
);
    wire l = cond[2] ? lt : ltu;
    assign ok = cond[1] ? (l | (cond[0] & eq)) : (eq ^ cond[2]);
endmodule

// 16-to-1 multiplexer of 16-bit words (binary tree, address bit 0 first).
module cahp_mux16 (
    input  wire [3:0]   sel,
    input  wire [255:0] in,
    output wire [15:0]  out
);
    wire [127:0] l1;
    wire [63:0] l2;
    wire [31:0] l3;
    genvar j;
    generate
        for (j = 0; j < 8; j = j + 1) begin : s1
            assign l1[j*16+:16] = sel[0] ? in[(2*j+1)*16+:16] : in[(2*j)*16+:16];
        end
        for (j = 0; j < 4; j = j + 1) begin : s2
            assign l2[j*16+:16] = sel[1] ? l1[(2*j+1)*16+:16] : l1[(2*j)*16+:16];
        end
        for (j = 0; j < 2; j = j + 1) begin : s3
            assign l3[j*16+:16] = sel[2] ? l2[(2*j+1)*16+:16] : l2[(2*j)*16+:16];
        end
    endgenerate
    assign out = sel[3] ? l3[31:16] : l3[15:0];
endmodule

// Register file: 16 x 16 bits, one write port, two asynchronous read ports, all registers exported.
module cahp_regfile (
    input  wire         clock,
    input  wire         we,
    input  wire [3:0]   wa,
    input  wire [15:0]  wd,
    input  wire [3:0]   ra,
    input  wire [3:0]   rb,
    output wire [15:0]  qa,
    output wire [15:0]  qb,
    output wire [255:0] all
);
    genvar i;
    generate
        for (i = 0; i < 16; i = i + 1) begin : r
            reg [15:0] q;
`ifndef SYNTHESIS
            initial q = 16'b0;
`endif
            always @(posedge clock) if (we && wa == i) q <= wd;
            assign all[i*16+:16] = q;
        end
    endgenerate
    cahp_mux16 portA (.sel(ra), .in(all), .out(qa));
    cahp_mux16 portB (.sel(rb), .in(all), .out(qb));
endmodule

// Instruction window: 16-bit cache (upper half of the previously fetched ROM word) followed by the
// current ROM word; the instruction at PC starts at byte {~pc[1], pc[0]} of that 6-byte window.
module cahp_align (
    input  wire [1:0]  pcLow,
    input  wire [15:0] cache,
    input  wire [31:0] romData,
    output wire [23:0] inst
);
    wire [47:0] w = {romData, cache};
    wire [31:0] t = pcLow[1] ? w[31:0] : w[47:16];
    assign inst = pcLow[0] ? t[31:8] : t[23:0];
endmodule

// Load value: word, or sign/zero-extended byte picked by address bit 0.
module cahp_load (
    input  wire [15:0] rdata,
    input  wire        isByte,
    input  wire        byteSigned,
    input  wire        addr0,
    output wire [15:0] value
);
    wire hiByte = isByte & addr0;
    wire [7:0] lo = hiByte ? rdata[15:8] : rdata[7:0];
    wire ext = byteSigned & lo[7];
    assign value = {isByte ? {8{ext}} : rdata[15:8], lo};
endmodule

// Store data: sw writes the word; sb merges the byte into the word read this cycle.
module cahp_store (
    input  wire [15:0] rdata,
    input  wire [15:0] data,
    input  wire        isByte,
    input  wire        addr0,
    output wire [15:0] wdata
);
    wire keepLo = isByte & addr0;
    wire keepHi = isByte & ~addr0;
    assign wdata = {keepHi ? rdata[15:8] : (isByte ? data[7:0] : data[15:8]),
                    keepLo ? rdata[7:0] : data[7:0]};
endmodule
