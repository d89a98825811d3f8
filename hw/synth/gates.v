// Maps the cells of cells.genlib back to Yosys internal gates (the only cell types the importer takes).
module ZERO (output Y); assign Y = 1'b0; endmodule
module ONE (output Y); assign Y = 1'b1; endmodule
module BUF (input A, output Y); assign Y = A; endmodule
module NOT (input A, output Y); \$_NOT_ g (.A(A), .Y(Y)); endmodule
module AND (input A, B, output Y); \$_AND_ g (.A(A), .B(B), .Y(Y)); endmodule
module NAND (input A, B, output Y); \$_NAND_ g (.A(A), .B(B), .Y(Y)); endmodule
module OR (input A, B, output Y); \$_OR_ g (.A(A), .B(B), .Y(Y)); endmodule
module NOR (input A, B, output Y); \$_NOR_ g (.A(A), .B(B), .Y(Y)); endmodule
module XOR (input A, B, output Y); \$_XOR_ g (.A(A), .B(B), .Y(Y)); endmodule
module XNOR (input A, B, output Y); \$_XNOR_ g (.A(A), .B(B), .Y(Y)); endmodule
module ANDNOT (input A, B, output Y); \$_ANDNOT_ g (.A(A), .B(B), .Y(Y)); endmodule
module ORNOT (input A, B, output Y); \$_ORNOT_ g (.A(A), .B(B), .Y(Y)); endmodule
module MUX (input A, B, S, output Y); \$_MUX_ g (.A(A), .B(B), .S(S), .Y(Y)); endmodule
