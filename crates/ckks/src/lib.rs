//! vsp-ckks (being built; see the workspace README).
