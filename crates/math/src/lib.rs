//! vsp-math (being built; see the workspace README).
