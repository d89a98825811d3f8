//! vsp-tfhe (being built; see the workspace README).
