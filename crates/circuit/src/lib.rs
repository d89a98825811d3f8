//! vsp-circuit (being built; see the workspace README).
