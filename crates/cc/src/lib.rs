//! vsp-cc (being built; see the workspace README).
