//! [`FileCodec`]: the one trait every file format implements. An object's impl says which format and
//! kind it is, what its header's parameter id is, and how its body is written and read; the
//! envelope ([`seal`]/[`open`]), the check that the body was read to its end, the atomic save and
//! the load come with the trait, so a new format is one impl.
//!
//! Decoding may depend on parameters the caller already holds ([`FileCodec::Context`]: a
//! ciphertext's sizes follow from its parameter set, which the file only names); an object whose
//! file says it all (a key, a program image) has the context `()`.

use std::path::Path;

use crate::atomic::{read_file, write_atomic, Access};
use crate::envelope::{open, peek_param, seal, Format};
use crate::{Error, Reader, Writer};

/// One kind of object in one file format.
pub trait FileCodec: Sized {
    /// The format (name, magic, version, kinds) the object's files are in.
    const FORMAT: &'static Format;
    /// The object's kind in [`FileCodec::FORMAT`].
    const KIND: u16;
    /// Who may read a saved file: [`Access::Private`] for secret keys (whose encoded body is then
    /// also wiped from memory after sealing).
    const ACCESS: Access = Access::Public;
    /// What encoding and decoding need besides the object and the bytes (`()` when nothing).
    type Context: ?Sized;
    /// The implementing crate's error (which wraps this crate's).
    type Error: From<Error>;

    /// The header's parameter id (a parameter-set name, a hash, …).
    fn param_id(&self, ctx: &Self::Context) -> Vec<u8>;
    /// Writes the body.
    fn write_body(&self, w: &mut Writer);
    /// Reads the body; `param` is the header's parameter id. The caller checks that `r` is at the
    /// body's end afterwards.
    fn read_body(
        param: &[u8],
        r: &mut Reader<'_>,
        ctx: &Self::Context,
    ) -> Result<Self, Self::Error>;

    /// The object's file bytes: envelope around the body.
    fn encode(&self, ctx: &Self::Context) -> Vec<u8> {
        self.encode_with_id(&self.param_id(ctx))
    }

    /// [`FileCodec::encode`] with the parameter id given (an object that knows its own id needs no
    /// context to be written).
    fn encode_with_id(&self, param: &[u8]) -> Vec<u8> {
        let mut w = Writer::new();
        self.write_body(&mut w);
        let out = seal(Self::FORMAT, Self::KIND, param, w.as_bytes());
        if Self::ACCESS == Access::Private {
            wipe(w.vec_mut());
        }
        out
    }

    /// Reads file bytes: envelope checked (magic, version, kind, length, checksum), body read and
    /// read to its end.
    fn decode(bytes: &[u8], ctx: &Self::Context) -> Result<Self, Self::Error> {
        let o = open(Self::FORMAT, bytes, Self::KIND)?;
        let mut r = o.reader();
        let v = Self::read_body(o.param, &mut r, ctx)?;
        r.end()?;
        Ok(v)
    }

    /// The parameter id in the header at the start of a file of this kind, from its first
    /// [`MAX_HEADER`](crate::envelope::MAX_HEADER) bytes or more: magic, version and kind checked,
    /// nothing else ([`peek_param`]); what a large file belongs to, known before it is read whole.
    fn peek_param(prefix: &[u8]) -> Result<&[u8], Error> {
        peek_param(Self::FORMAT, prefix, Self::KIND)
    }

    /// Writes the file atomically ([`write_atomic`], with [`FileCodec::ACCESS`]).
    fn save(&self, path: &Path, ctx: &Self::Context) -> Result<(), Self::Error> {
        let mut bytes = self.encode(ctx);
        let res = write_atomic(path, &bytes, Self::ACCESS);
        if Self::ACCESS == Access::Private {
            wipe(&mut bytes);
        }
        Ok(res?)
    }

    /// Reads a file written by [`FileCodec::save`].
    fn load(path: &Path, ctx: &Self::Context) -> Result<Self, Self::Error> {
        let mut bytes = read_file(path)?;
        let v = Self::decode(&bytes, ctx);
        if Self::ACCESS == Access::Private {
            wipe(&mut bytes);
        }
        v
    }
}

/// Overwrites secret bytes before they are freed (the volatile writes are not optimised away).
fn wipe(bytes: &mut [u8]) {
    for b in bytes.iter_mut() {
        *std::hint::black_box(b) = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::tests::F;

    /// Two numbers whose count of the second is fixed by the context.
    #[derive(Debug, PartialEq)]
    struct Pair(u32, Vec<u32>);

    impl FileCodec for Pair {
        const FORMAT: &'static Format = &F;
        const KIND: u16 = 1;
        type Context = usize;
        type Error = Error;
        fn param_id(&self, ctx: &usize) -> Vec<u8> {
            vec![*ctx as u8]
        }
        fn write_body(&self, w: &mut Writer) {
            w.u32(self.0);
            w.u32s(&self.1);
        }
        fn read_body(param: &[u8], r: &mut Reader<'_>, ctx: &usize) -> Result<Self, Error> {
            if param != [*ctx as u8] {
                return Err(Error::Invalid("other parameters".into()));
            }
            Ok(Pair(r.u32("first")?, r.u32s(*ctx, "rest")?))
        }
    }

    #[test]
    fn round_trips_and_refuses_other_contexts_kinds_and_trailing_bytes() {
        let p = Pair(7, vec![1, 2, 3]);
        let bytes = p.encode(&3);
        assert_eq!(Pair::decode(&bytes, &3).unwrap(), p);
        assert!(Pair::decode(&bytes, &2).is_err());
        let other = seal(&F, 2, &[3], &bytes);
        let e = Pair::decode(&other, &3).unwrap_err().to_string();
        assert!(e.contains("beta") && e.contains("alpha"), "{e}");
        let mut w = Writer::new();
        p.write_body(&mut w);
        w.u8(0);
        let long = seal(&F, 1, &[3], w.as_bytes());
        assert!(Pair::decode(&long, &3).is_err());
    }

    #[test]
    fn saves_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p");
        let p = Pair(1, vec![9]);
        p.save(&path, &1).unwrap();
        assert_eq!(Pair::load(&path, &1).unwrap(), p);
        // The header alone: the parameter id; another kind is refused.
        let bytes = p.encode(&1);
        assert_eq!(Pair::peek_param(&bytes[..20]).unwrap(), [1]);
        let other = seal(&F, 2, &[1], &[]);
        assert!(Pair::peek_param(&other).is_err());
    }
}
