//! vsp-bfv (being built; see the workspace README).
