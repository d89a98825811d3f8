// Testbench shared by both cores: ROM (128 x 32) and RAM (256 x 16) as the blueprint wires them
// (-DAW=N: a 2^N-byte ROM and PC of N bits, 9..13; -DRW=M: a 2^M-byte RAM, default M = N),
// one reset cycle, then one line per retired instruction with the registers and the RAM write.
//
// With GATE_LEVEL defined (a synthesized netlist has no internal probe) every cycle prints an R line.
// Plusargs: +rom=FILE +ram=FILE (hex words, $readmemh), +cycles=N (limit).
// Output lines:
//   R <cycle> x0 .. x15        after an instruction retired (hex)
//   W <word address> <data>    a RAM write of that instruction (hex), printed before its R line
//   FIN <cycles>               the first cycle whose finish flag was 1 (counted from 1 after reset)
//   TIMEOUT <cycles>
`ifndef CORE
`define CORE pearl
`endif
`ifndef AW
`define AW 9
`endif
`ifndef RW
`define RW `AW
`endif
module tb;
    reg clock = 1'b0;
    reg reset = 1'b1;
    localparam ROMW = 1 << (`AW - 2);
    localparam RAMW = 1 << (`RW - 1);
    reg [31:0] rom [0:ROMW-1];
    reg [15:0] ram [0:RAMW-1];
    wire [`AW-3:0] romAddr;
    wire [`RW-2:0] ramAddr;
    wire [15:0] ramWdata;
    wire ramWe, fin;
    wire [15:0] x [0:15];
    `CORE #(.AW(`AW), .RW(`RW)) dut (
        .clock(clock), .reset(reset), .io_romAddr(romAddr), .io_romData(rom[romAddr]),
        .io_ramAddr(ramAddr), .io_ramWriteData(ramWdata), .io_ramWriteEnable(ramWe),
        .io_ramReadData(ram[ramAddr]), .io_finishFlag(fin),
        .io_mainRegOut_x0(x[0]), .io_mainRegOut_x1(x[1]), .io_mainRegOut_x2(x[2]),
        .io_mainRegOut_x3(x[3]), .io_mainRegOut_x4(x[4]), .io_mainRegOut_x5(x[5]),
        .io_mainRegOut_x6(x[6]), .io_mainRegOut_x7(x[7]), .io_mainRegOut_x8(x[8]),
        .io_mainRegOut_x9(x[9]), .io_mainRegOut_x10(x[10]), .io_mainRegOut_x11(x[11]),
        .io_mainRegOut_x12(x[12]), .io_mainRegOut_x13(x[13]), .io_mainRegOut_x14(x[14]),
        .io_mainRegOut_x15(x[15])
    );
    reg [1023:0] romFile, ramFile;
    integer limit, cycle, i;
    reg retiring;
    always @(posedge clock) if (ramWe) ram[ramAddr] <= ramWdata;
    initial begin
        for (i = 0; i < ROMW; i = i + 1) rom[i] = 32'b0;
        for (i = 0; i < RAMW; i = i + 1) ram[i] = 16'b0;
        if ($value$plusargs("rom=%s", romFile)) $readmemh(romFile, rom);
        if ($value$plusargs("ram=%s", ramFile)) $readmemh(ramFile, ram);
        if (!$value$plusargs("cycles=%d", limit)) limit = 100000;
        // reset cycle
        #1 clock = 1'b1;
        #1 clock = 1'b0;
        reset = 1'b0;
        for (cycle = 1; cycle <= limit; cycle = cycle + 1) begin
            #1;
            if (fin) begin
                $display("FIN %0d", cycle);
                $finish;
            end
`ifdef GATE_LEVEL
            retiring = 1'b1;   // no probe in a netlist: print every cycle
`else
            retiring = dut.retire;
`endif
            if (ramWe) $display("W %h %h", ramAddr, ramWdata);
            clock = 1'b1;
            #1 clock = 1'b0;
            if (retiring)
                $display("R %0d %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h", cycle,
                         x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7],
                         x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]);
        end
        $display("TIMEOUT %0d", limit);
        $finish;
    end
endmodule
