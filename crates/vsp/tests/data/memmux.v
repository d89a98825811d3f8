// A design with a memory (16 x 8, synchronous write, asynchronous read) and word-level muxes, driven
// by an LFSR so that one held input (`seed`) gives a varied run: the documented Yosys flow
// (hw/synth/flow.ys) must map both to gates (tests/yosys_flow.rs).
module memmux(input clk, input reset, input [7:0] seed,
              output [7:0] acc_out, output [7:0] rd_out, output [3:0] addr_out);
  reg [7:0] mem [0:15];
  reg [7:0] acc;
  reg [7:0] lfsr;
  reg [3:0] addr;
  wire [7:0] rd = mem[addr];
  wire [1:0] op = lfsr[1:0];
  always @(posedge clk) begin
    if (reset) begin
      acc <= 8'd0;
      addr <= 4'd0;
      lfsr <= 8'h5a;
    end else begin
      lfsr <= {lfsr[6:0], lfsr[7] ^ lfsr[5] ^ lfsr[4] ^ lfsr[3]};
      case (op)
        2'd0: acc <= acc + (lfsr ^ seed);
        2'd1: acc <= acc ^ rd;
        2'd2: acc <= (lfsr[2] ? rd : acc) - 8'd1;
        default: acc <= acc;
      endcase
      if (op == 2'd0 || op == 2'd3) mem[addr] <= acc ^ seed;
      addr <= lfsr[7:4];
    end
  end
  assign acc_out = acc;
  assign rd_out = rd;
  assign addr_out = addr;
endmodule
