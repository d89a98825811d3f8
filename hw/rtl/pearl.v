// CAHP-Pearl: single-cycle CAHPv3 core (VSP, seed 000; reference vsp.md section 2).
//
// Fetch, decode, register read, ALU/branch, RAM access and write-back happen in one cycle. The only
// state is the PC, a 16-bit fetch cache, its valid bit, the sticky finish flag and the register file.
// A jump to a 24-bit instruction at PC%4 = 2 or 3 (or a 16-bit one at PC%4 = 3) costs one extra
// cycle: the first half of the instruction must be fetched into the cache first.
//
// reset: the control state (PC, cache valid, finish flag) returns to 0 and nothing is written
// (registers and RAM keep their contents; every flip-flop powers up at 0).
module pearl #(
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
    reg [AW-1:0] pc;
    reg [15:0] cache;
    reg cacheValid;
    reg finReg;
    // The ROM word this cycle reads, (PC + 2) >> 2 once the cache holds an instruction's first half:
    // always pc[AW-1:2] + (pc[1] & cacheValid), computed at the previous clock edge so that the ROM
    // read starts the cycle instead of waiting for an incrementer.
    reg [AW-3:0] romAddr;
`ifndef SYNTHESIS
    initial begin
        romAddr = {(AW-2){1'b0}};
        pc = {AW{1'b0}};
        cache = 16'b0;
        cacheValid = 1'b0;
        finReg = 1'b0;
    end
`endif

    // ---- fetch
    wire stall = pc[1] & ~cacheValid;   // first half of a straddling instruction not cached yet
    assign io_romAddr = romAddr;
    wire [23:0] inst;
    cahp_align align (.pcLow(pc[1:0]), .cache(cache), .romData(io_romData), .inst(inst));

    // ---- decode
    wire is24, regWrite, usesA, usesB, useImm, aZero, sub, eP, eC, eG, isShift, shLeft, shArith;
    wire isLoad, isStore, isByte, byteSigned, isBranch, isJump, jumpReg, isLink, halt;
    wire [3:0] rdAddr, raAddr, rbAddr;
    wire [15:0] imm;
    wire [2:0] cond;
    wire [AW-1:0] pcOff;
    cahp_decode #(.PW(AW)) dec (
        .inst(inst), .is24(is24), .rdAddr(rdAddr), .regWrite(regWrite), .raAddr(raAddr),
        .rbAddr(rbAddr), .usesA(usesA), .usesB(usesB), .useImm(useImm), .imm(imm),
        .aZero(aZero), .sub(sub), .eP(eP), .eC(eC), .eG(eG), .isShift(isShift), .shLeft(shLeft),
        .shArith(shArith), .isLoad(isLoad), .isStore(isStore), .isByte(isByte),
        .byteSigned(byteSigned), .isBranch(isBranch), .cond(cond), .isJump(isJump),
        .jumpReg(jumpReg), .isLink(isLink), .pcOff(pcOff), .halt(halt)
    );
    wire run = ~stall & ~reset;
    wire retire = run;   // testbench probe: an instruction completes this cycle

    // ---- registers
    // The read ports are indexed by the instruction's register fields themselves (bits 11:8, 15:12
    // and 19:16), so their trees start as soon as the instruction is there; the operands are then
    // picked among the three reads as cahp_decode's raAddr/rbAddr would address them. Under TFHE a
    // read tree is CMUXes (nearly free) and this takes one circuit-bootstrap latency off the cycle.
    wire [15:0] rd11, rd15, rd19, wbData;
    wire [255:0] regs;
    cahp_regfile rf (
        .clock(clock), .we(regWrite & run), .wa(rdAddr), .wd(wbData), .ra(inst[11:8]),
        .rb(inst[15:12]), .qa(rd11), .qb(rd15), .all(regs)
    );
    cahp_mux16 port19 (.sel(inst[19:16]), .in(regs), .out(rd19));
    wire instR = inst[2:1] == 2'b00;
    wire instM = inst[2:1] == 2'b10;
    // raAddr = is24 ? inst[15:12] : (cM ? x1 : inst[11:8])
    wire [15:0] regA = is24 ? rd15 : (instM ? regs[31:16] : rd11);
    // rbAddr = is24 ? (cR ? inst[19:16] : inst[11:8]) : (cM ? inst[11:8] : inst[15:12])
    wire [15:0] regB = is24 ? (instR ? rd19 : rd11) : (instM ? rd11 : rd15);

    // ---- execute
    wire [15:0] aluSum, aluRes;
    wire eq, ltu, lt, condOk;
    cahp_alu alu (
        .a(regA), .b(useImm ? imm : regB), .aZero(aZero), .sub(sub), .eP(eP), .eC(eC), .eG(eG),
        .isShift(isShift), .shLeft(shLeft), .shArith(shArith), .sum(aluSum), .res(aluRes),
        .eq(eq), .ltu(ltu), .lt(lt)
    );
    cahp_cond cnd (.cond(cond), .eq(eq), .ltu(ltu), .lt(lt), .ok(condOk));

    // next sequential PC (+0 while stalled); it is also the link value (PC + 2) of jsal/jalr
    wire [AW-1:0] seq = pc + {{(AW-2){1'b0}}, ~stall, is24 & ~stall};
    wire [AW-1:0] target = jumpReg & isJump ? regA[AW-1:0] : pc + pcOff;
    wire taken = ((isBranch & condOk) | isJump) & ~stall;
    wire [AW-3:0] seqWord = seq[AW-1:2] + {{(AW-3){1'b0}}, seq[1]};

    // ---- memory
    // For loads and stores the ALU result is the address (no shift, no link term).
    assign io_ramAddr = aluRes[RW-1:1];
    assign io_ramWriteEnable = isStore & run;
    cahp_store st (
        .rdata(io_ramReadData), .data(regB), .isByte(isByte), .addr0(aluRes[0]),
        .wdata(io_ramWriteData)
    );
    wire [15:0] loaded;
    cahp_load ld (
        .rdata(io_ramReadData), .isByte(isByte), .byteSigned(byteSigned), .addr0(aluRes[0]),
        .value(loaded)
    );
    assign wbData = isLoad ? loaded : (aluRes | {{(16-AW){1'b0}}, seq & {AW{isLink}}});

    // ---- state update
    wire fin = finReg | (halt & ~stall);
    assign io_finishFlag = fin;
    always @(posedge clock) begin
        pc <= reset ? {AW{1'b0}} : (taken ? target : seq);
        // pc[AW-1:2] + (pc[1] & cacheValid) of the next cycle (a taken jump clears cacheValid).
        romAddr <= reset ? {(AW-2){1'b0}} : (taken ? target[AW-1:2] : seqWord);
        cache <= io_romData[31:16];
        cacheValid <= ~taken & ~reset;
        finReg <= fin & ~reset;
    end

    assign {io_mainRegOut_x15, io_mainRegOut_x14, io_mainRegOut_x13, io_mainRegOut_x12,
            io_mainRegOut_x11, io_mainRegOut_x10, io_mainRegOut_x9, io_mainRegOut_x8,
            io_mainRegOut_x7, io_mainRegOut_x6, io_mainRegOut_x5, io_mainRegOut_x4,
            io_mainRegOut_x3, io_mainRegOut_x2, io_mainRegOut_x1, io_mainRegOut_x0} = regs;
endmodule
