// A tiny ROM/RAM user: a 4-bit program counter fetches a 16-bit word from ROM every cycle;
// word = {we, addr[3:0], 3'b0, data[7:0]}. The RAM (16 x 8 bits) is read at addr; on we the core stores
// data ^ acc there. acc accumulates every word read from RAM. Exercises read-after-write over many cycles.
module memuser(input clk, input reset,
               output [3:0] rom_addr, input [15:0] rom_data,
               output [3:0] ram_addr, output ram_wren, output [7:0] ram_wdata, input [7:0] ram_rdata,
               output [7:0] acc_out, output [3:0] pc_out);
  reg [3:0] pc;
  reg [7:0] acc;
  assign rom_addr = pc;
  assign ram_addr = rom_data[14:11];
  assign ram_wren = rom_data[15] & ~reset;
  assign ram_wdata = rom_data[7:0] ^ acc;
  assign acc_out = acc;
  assign pc_out = pc;
  always @(posedge clk)
    if (reset) begin pc <= 4'd0; acc <= 8'd0; end
    else begin pc <= pc + 4'd1; acc <= acc + ram_rdata; end
endmodule
