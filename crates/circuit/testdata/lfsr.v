// 16-bit Fibonacci LFSR (taps 16,14,13,11) with a non-zero power-on value (Yosys `init`).
module lfsr(input clk, output [15:0] state);
  reg [15:0] r = 16'hACE1;
  always @(posedge clk)
    r <= {r[14:0], r[15] ^ r[13] ^ r[12] ^ r[10]};
  assign state = r;
endmodule
