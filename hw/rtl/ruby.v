// CAHP-Ruby: 5-stage pipelined CAHPv3 core (VSP, seed 000; reference vsp.md section 2).
//
// IF | ID | EX | MEM | WB, where WB is the register-file write at the end of the MEM cycle (so an
// instruction's register and RAM writes land at the same clock edge).
// * ID reads the register file, whose read ports see the value MEM writes back (write-through,
//   ruby_regfile), and forwards from EX (the ALU result being computed); a load in EX whose
//   destination ID reads stalls ID for one cycle.
// * Jumps (js, jsal, jr, jalr) redirect the fetch from ID (one-cycle penalty). beq/bne are decided
//   in ID (one-cycle penalty when taken); the other branches are predicted in ID, backward taken and
//   forward not taken, and resolve in EX, where a misprediction flushes IF/ID and ID/EX (two cycles).
// * Fetch uses the same 16-bit cache as Pearl: a jump to a straddling instruction costs one bubble.
// * The finish flag rides the pipeline and is sticky once the halt (js 0) reaches MEM, when every
//   older instruction has written its results.
// reset: control state returns to 0 and nothing is written (registers and RAM keep their contents).
module ruby #(
    // Byte-address width of ROM and RAM: 9 for the standard 512-byte memories, 10 for the 1 KiB
    // variant (seed 000, appendix C). The PC has AW bits; ROM words are 32 bits, RAM words 16.
    parameter AW = 9,
    // Byte-address width of RAM (9 to 16); io_ramAddr has RW-1 bits (RAM word address). The
    // committed netlists drive all 15 (RW = 16) and a blueprint wires the low ones to its RAM.
    parameter RW = AW
) (
    input  wire          clock,
    input  wire          reset,
    output wire [AW-3:0] io_romAddr,
    input  wire [31:0]   io_romData,
    output wire [RW-2:0] io_ramAddr,
    output wire [15:0] io_ramWriteData,
    output wire        io_ramWriteEnable,
    input  wire [15:0] io_ramReadData,
    output wire        io_finishFlag,
    output wire [15:0] io_mainRegOut_x0,
    output wire [15:0] io_mainRegOut_x1,
    output wire [15:0] io_mainRegOut_x2,
    output wire [15:0] io_mainRegOut_x3,
    output wire [15:0] io_mainRegOut_x4,
    output wire [15:0] io_mainRegOut_x5,
    output wire [15:0] io_mainRegOut_x6,
    output wire [15:0] io_mainRegOut_x7,
    output wire [15:0] io_mainRegOut_x8,
    output wire [15:0] io_mainRegOut_x9,
    output wire [15:0] io_mainRegOut_x10,
    output wire [15:0] io_mainRegOut_x11,
    output wire [15:0] io_mainRegOut_x12,
    output wire [15:0] io_mainRegOut_x13,
    output wire [15:0] io_mainRegOut_x14,
    output wire [15:0] io_mainRegOut_x15
);
    // ---------------------------------------------------------------- state
    // IF
    reg [AW-1:0] pc;
    reg [15:0] cache;
    reg cacheValid;
    // IF/ID
    reg [23:0] idInst;
    reg [AW-1:0] idPc;
    reg idValid;
    // ID/EX
    reg [15:0] exA, exB, exData;
    reg [3:0] exRd;
    reg [AW-1:0] exTarget, exLink;
    reg [2:0] exCond;
    reg exRegWrite, exIsLoad, exIsStore, exIsBranch, exPred, exHalt, exValid;
    reg exIsByte, exByteSigned, exAZero, exSub, exCin, exEP, exEC, exEG, exIsShift, exShLeft, exShArith;
    // EX/MEM
    reg [15:0] memResult, memData;
    reg [3:0] memRd;
    reg memRegWrite, memIsLoad, memIsStore, memIsByte, memByteSigned, memHalt, memValid;
    reg finReg;
`ifndef SYNTHESIS
    initial begin
        pc = 0; cache = 0; cacheValid = 0; idInst = 0; idPc = 0; idValid = 0;
        exA = 0; exB = 0; exData = 0; exRd = 0; exTarget = 0; exLink = 0; exCond = 0;
        exRegWrite = 0; exIsLoad = 0; exIsStore = 0; exIsBranch = 0; exPred = 0; exHalt = 0;
        exValid = 0; exIsByte = 0; exByteSigned = 0; exAZero = 0; exSub = 0; exCin = 0; exEP = 0;
        exEC = 0; exEG = 0; exIsShift = 0; exShLeft = 0; exShArith = 0;
        memResult = 0; memData = 0; memRd = 0; memRegWrite = 0; memIsLoad = 0; memIsStore = 0;
        memIsByte = 0; memByteSigned = 0; memHalt = 0; memValid = 0; finReg = 0;
    end
`endif

    // ---------------------------------------------------------------- EX (first: ID forwards from it)
    wire [15:0] aluSum, aluRes;
    wire eq, ltu, lt, condOk;
    cahp_alu #(.KEEP_CARRY(1), .SEP_CIN(1)) alu (
        .cin(exCin), .a(exA), .b(exB), .aZero(exAZero), .sub(exSub), .eP(exEP), .eC(exEC), .eG(exEG),
        .isShift(exIsShift), .shLeft(exShLeft), .shArith(exShArith), .sum(aluSum), .res(aluRes),
        .eq(eq), .ltu(ltu), .lt(lt)
    );
    // beq/bne were decided exactly in ID (EX agrees: no misprediction); blt(u) and ble(u) are
    // the borrow of a - b (carry in 1) and of a - b - 1 (carry in 0, exCin), so EX needs no equality.
    assign condOk = exCond[1] ? (exCond[2] ? lt : ltu) : exPred;
    wire [15:0] exResult = aluRes | {{(16-AW){1'b0}}, exLink};
    // exTarget holds where the branch should have gone if the prediction made in ID was wrong.
    wire taken = exIsBranch & (condOk ^ exPred);

    // ---------------------------------------------------------------- MEM / WB
    assign io_ramAddr = memResult[RW-1:1];
    assign io_ramWriteEnable = memIsStore & ~reset;
    // Byte stores and loads select on isByte and address bit 0 alone (three selects for both).
    wire [7:0] rdLo = io_ramReadData[7:0], rdHi = io_ramReadData[15:8];
    assign io_ramWriteData = memIsByte
        ? (memResult[0] ? {memData[7:0], rdLo} : {rdHi, memData[7:0]}) : memData;
    wire [7:0] ldLo = memIsByte ? (memResult[0] ? rdHi : rdLo) : rdLo;
    wire [15:0] loaded = {memIsByte ? {8{memByteSigned & ldLo[7]}} : rdHi, ldLo};
    wire [15:0] wbData = memIsLoad ? loaded : memResult;
    wire fin = finReg | memHalt;
    assign io_finishFlag = fin;
    wire retire = memValid;   // testbench probe: the instruction in MEM completes this cycle

    // ---------------------------------------------------------------- ID
    wire is24, regWrite, usesA, usesB, useImm, aZero, sub, eP, eC, eG, isShift, shLeft, shArith;
    wire isLoad, isStore, isByte, byteSigned, isBranch, isJump, jumpReg, isLink, halt;
    wire [3:0] rdAddr, raAddr, rbAddr;
    wire [15:0] imm;
    wire [2:0] cond;
    wire [AW-1:0] pcOff;
    cahp_decode #(.PW(AW)) dec (
        .inst(idInst), .is24(is24), .rdAddr(rdAddr), .regWrite(regWrite), .raAddr(raAddr),
        .rbAddr(rbAddr), .usesA(usesA), .usesB(usesB), .useImm(useImm), .imm(imm),
        .aZero(aZero), .sub(sub), .eP(eP), .eC(eC), .eG(eG), .isShift(isShift), .shLeft(shLeft),
        .shArith(shArith), .isLoad(isLoad), .isStore(isStore), .isByte(isByte),
        .byteSigned(byteSigned), .isBranch(isBranch), .cond(cond), .isJump(isJump),
        .jumpReg(jumpReg), .isLink(isLink), .pcOff(pcOff), .halt(halt)
    );
    wire [15:0] regA, regB;
    wire [255:0] regs;
    ruby_regfile rf (
        .clock(clock), .we(memRegWrite & ~reset), .wa(memRd), .wd(wbData), .ra(raAddr),
        .rb(rbAddr), .qa(regA), .qb(regB), .all(regs)
    );
    wire exHitA = exRegWrite & (exRd == raAddr);
    wire exHitB = exRegWrite & (exRd == rbAddr);
    wire [15:0] fwdA = exHitA ? exResult : regA;
    wire [15:0] fwdB = exHitB ? exResult : regB;
    wire loadUse = idValid & exIsLoad & ((usesA & exHitA) | (usesB & exHitB));
    wire kill = ~idValid | loadUse | taken | reset;   // ID/EX receives a bubble
    // beq/bne are decided in ID from the forwarded operands (exact); the others are predicted
    // backward taken (offset sign bit), forward not taken. EX re-evaluates every branch.
    wire eqBranch = ~cond[1] & cond[0];
    wire operandsEqual;
    cahp_and16 eqTree (.x(~(fwdA ^ fwdB)), .y(operandsEqual));
    wire predTaken = isBranch & (eqBranch ? (operandsEqual ^ cond[2]) : idInst[7]);
    wire [AW-1:0] idTarget = (isJump & jumpReg) ? fwdA[AW-1:0] : idPc + pcOff;
    wire idRedirect = idValid & ~loadUse & (isJump | predTaken);

    // ---------------------------------------------------------------- IF
    wire stallF = pc[1] & ~cacheValid;   // first half of a straddling instruction not cached yet
    wire advance = ~stallF & ~loadUse;
    // While ID stalls, fetch the word at PC itself so the cache reload below keeps its content.
    assign io_romAddr = pc[AW-1:2] + {{(AW-3){1'b0}}, pc[1] & cacheValid & ~loadUse};
    wire [23:0] inst;
    cahp_align align (.pcLow(pc[1:0]), .cache(cache), .romData(io_romData), .inst(inst));
    wire [AW-1:0] seq = pc + {{(AW-2){1'b0}}, advance, inst[0] & advance};

    // ---------------------------------------------------------------- clock edge
    always @(posedge clock) begin
        // IF
        pc <= reset ? {AW{1'b0}} : (taken ? exTarget : (idRedirect ? idTarget : seq));
        cache <= io_romData[31:16];
        cacheValid <= ~taken & ~idRedirect & ~reset;
        // IF/ID (held while ID stalls)
        if (~loadUse) begin
            idInst <= inst;
            idPc <= pc;
        end
        idValid <= loadUse ? idValid & ~taken & ~reset : ~stallF & ~taken & ~idRedirect & ~reset;
        // ID/EX
        exA <= fwdA;
        exB <= useImm ? imm : fwdB;
        exData <= fwdB;
        exRd <= rdAddr;
        // While ID holds a valid instruction, IF's PC is the next one's, idPc + 2 or + 3: the
        // fall-through of a branch and the link of jsal/jalr.
        exTarget <= predTaken ? pc : idTarget;
        exPred <= predTaken;
        exLink <= isLink ? pc : {AW{1'b0}};
        exCond <= cond;
        exRegWrite <= regWrite & ~kill;
        exIsLoad <= isLoad & ~kill;
        exIsStore <= isStore & ~kill;
        exIsBranch <= isBranch & ~kill;
        exHalt <= halt & ~kill;
        exValid <= ~kill;
        exIsByte <= isByte;
        exByteSigned <= byteSigned;
        exAZero <= aZero;
        exSub <= sub;
        exCin <= sub & ~(isBranch & cond[1] & cond[0]);
        exEP <= eP;
        exEC <= eC;
        exEG <= eG;
        exIsShift <= isShift;
        exShLeft <= shLeft;
        exShArith <= shArith;
        // EX/MEM
        memResult <= exResult;
        // Only a store reads memData, and a store never has exShLeft set: holding on that select
        // (circuit-bootstrapped for the shifter anyway) makes D a CMUX, whose ring the engine can
        // carry across the clock edge, where a flip-flop fed by a flip-flop lifts its bit every
        // cycle (16 bootstraps).
        memData <= exShLeft ? memData : exData;
        memRd <= exRd;
        memRegWrite <= exRegWrite & ~reset;
        memIsLoad <= exIsLoad;
        memIsStore <= exIsStore & ~reset;
        memIsByte <= exIsByte;
        memByteSigned <= exByteSigned;
        memHalt <= exHalt & ~reset;
        memValid <= exValid & ~reset;
        finReg <= fin & ~reset;
    end

    assign {io_mainRegOut_x15, io_mainRegOut_x14, io_mainRegOut_x13, io_mainRegOut_x12,
            io_mainRegOut_x11, io_mainRegOut_x10, io_mainRegOut_x9, io_mainRegOut_x8,
            io_mainRegOut_x7, io_mainRegOut_x6, io_mainRegOut_x5, io_mainRegOut_x4,
            io_mainRegOut_x3, io_mainRegOut_x2, io_mainRegOut_x1, io_mainRegOut_x0} = regs;
endmodule

// A full adder's carry, MAJ(a, b, c), kept as written: one MAJ3 cell for the Rust techmap (cahp_alu
// with KEEP_CARRY = 1; here, not in cahp_common.v, as only Ruby uses it). Left to
// ABC, a majority may become a MUX whose select is an operand bit, which the engine must then
// circuit-bootstrap (5 bootstrap latencies) on the ALU's critical path.
(* keep_hierarchy *)
module cahp_maj3 (
    input  wire a,
    input  wire b,
    input  wire c,
    output wire y
);
    assign y = (a & b) | (c & (a | b));
endmodule

// Ruby's register file: cahp_regfile's ports, with three differences for TFHE, where each distinct
// MUX select costs a circuit bootstrap per cycle (5 gate bootstraps) and each CMUX a register bit
// passes through adds noise (lifted by a gate bootstrap when over budget):
// * Write-through: the read ports see the registers' next state (the value written back this
//   cycle), so ID needs no forwarding from MEM (its compares and 2 selects); the read passes the
//   write MUX instead of a forwarding MUX, no CMUX level more.
// * The write is two MUX levels per register, on 4 selects `we & wa[3:2] == j` and 4 selects
//   `wa[1:0] == k`, instead of one MUX on 16 decoded enables: 8 circuit bootstraps fewer, at the
//   price of more lifts (a register bit passes two CMUXes a cycle).
// * The MUXes are kept as written (keep_hierarchy), so ABC does not fold the decode into them.
module ruby_regfile (
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
    wire [255:0] next;
    genvar i;
    generate
        for (i = 0; i < 16; i = i + 1) begin : r
            reg [15:0] q;
`ifndef SYNTHESIS
            initial q = 16'b0;
`endif
            wire [15:0] t;
            ruby_mux2_kept lo (.s(wa[1:0] == i % 4), .a(q), .b(wd), .y(t));
            ruby_mux2_kept hi (.s(we && wa[3:2] == i / 4), .a(q), .b(t), .y(next[i*16+:16]));
            always @(posedge clock) q <= next[i*16+:16];
            assign all[i*16+:16] = q;
        end
    endgenerate
    ruby_mux16_kept portA (.sel(ra), .in(next), .out(qa));
    ruby_mux16_kept portB (.sel(rb), .in(next), .out(qb));
endmodule

// A 16-bit 2:1 MUX kept as written (keep_hierarchy).
(* keep_hierarchy *)
module ruby_mux2_kept (
    input  wire        s,
    input  wire [15:0] a,
    input  wire [15:0] b,
    output wire [15:0] y
);
    assign y = s ? b : a;
endmodule

// cahp_mux16 kept as written (keep_hierarchy): ABC would merge the read addresses' decode into the
// tree, giving it more distinct selects.
(* keep_hierarchy *)
module ruby_mux16_kept (
    input  wire [3:0]   sel,
    input  wire [255:0] in,
    output wire [15:0]  out
);
    cahp_mux16 m (.sel(sel), .in(in), .out(out));
endmodule
