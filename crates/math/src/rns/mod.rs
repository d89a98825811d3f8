//! Residue number system: bases with CRT reconstruction ([`RnsBasis`]), base conversions
//! ([`BaseConverter`], [`ShenoyKumaresan`]), scale-and-round ([`ScaleRound`]) and polynomials in RNS form ([`RnsContext`],
//! [`RnsPoly`]). Big integers are `num-bigint`'s.

pub mod basis;
pub mod convert;
pub mod poly;
pub mod scale;

pub use basis::RnsBasis;
pub use convert::{BaseConverter, ShenoyKumaresan};
pub use poly::{Representation, RnsContext, RnsPoly};
pub use scale::ScaleRound;
