// A small design written the way third-party RTL is (no thought for the flow): a register file
// (8 x 8, synchronous write, asynchronous read), a case statement of word-level operations, and
// `sel ? x + r : y ^ r` (used nowhere else), whose bit 0 is a XOR with r on both sides, so that
// `opt -full` after techmap (opt_share) merges the two XORs behind a word-level $mux. The flow
// as documented (docs/circuit.md, hw/synth/flow.ys) must still leave only gates (tests/yosys_flow.rs).
module thirdparty(input clk, input reset, input [7:0] seed,
                  output [7:0] acc_out, output [7:0] rd_out, output [7:0] mix_out);
  reg [7:0] regs [0:7];
  reg [7:0] acc, lfsr, mix;
  reg [2:0] ra, wa;
  wire [7:0] rd = regs[ra];
  wire [2:0] op = lfsr[2:0];
  always @(posedge clk) begin
    if (reset) begin
      acc <= 8'd0;
      mix <= 8'd0;
      lfsr <= 8'hb4;
      ra <= 3'd0;
      wa <= 3'd0;
    end else begin
      lfsr <= {lfsr[6:0], lfsr[7] ^ lfsr[5] ^ lfsr[4] ^ lfsr[3]};
      case (op)
        3'd0: acc <= acc + rd;
        3'd1: acc <= acc ^ seed;
        3'd2: acc <= {acc[6:0], acc[7]};
        3'd3: acc <= acc - lfsr;
        3'd4: acc <= rd & ~seed;
        default: acc <= acc | (lfsr & 8'h0f);
      endcase
      mix <= lfsr[3] ? (mix + rd) : (lfsr ^ rd);
      if (op[0]) regs[wa] <= acc ^ mix;
      ra <= lfsr[6:4];
      wa <= lfsr[2:0] ^ ra;
    end
  end
  assign acc_out = acc;
  assign rd_out = rd;
  assign mix_out = mix;
endmodule
