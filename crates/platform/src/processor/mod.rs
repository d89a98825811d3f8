//! The CAHPv3 processor as a machine: programs and their initial memories ([`program`]), the
//! encrypted request and result ([`packets`]), and the core with its memories ([`machine`]).

pub mod client;
pub mod machine;
pub mod packets;
pub mod program;
