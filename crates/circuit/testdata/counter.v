// 8-bit counter with synchronous reset and enable.
module counter(input clk, input reset, input en, output reg [7:0] count);
  always @(posedge clk)
    if (reset) count <= 8'd0;
    else if (en) count <= count + 8'd1;
endmodule
