//! vsp-cahp (being built; see the workspace README).
