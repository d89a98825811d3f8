//! The envelope around every file: one layout for every format (all integers little-endian).
//!
//! | bytes | field |
//! |---|---|
//! | m | magic (the format's own, e.g. `VSPTFHE\0`; 4 or 8 bytes) |
//! | 2 | format version |
//! | 2 | kind (what the file holds; the format names its kinds) |
//! | 1 | length `p` of the parameter id |
//! | p | parameter id (the format's: a parameter-set name, a hash, …) |
//! | 8 | body length `b` |
//! | b | body (the format's own fields, read with [`crate::Reader`]) |
//! | 32 | SHA3-256 of everything above |
//!
//! The version comes right after the magic in this layout and in every older layout of the
//! project's formats, so a file written by an older build is refused with a version error rather
//! than a confusing one. [`open`] checks, in order: magic, version, kind, the body length against
//! the bytes present, and the checksum; only then does the caller read the body.

use sha3::{Digest, Sha3_256};

use crate::{Error, Reader};

/// Length of the trailing checksum.
pub const CHECKSUM_LEN: usize = 32;
/// Longest parameter id.
pub const MAX_PARAM_ID: usize = 255;

/// One file format: its name (for messages), magic, current version and kinds.
#[derive(Debug)]
pub struct Format {
    /// Name in messages, e.g. `vsp-tfhe`.
    pub name: &'static str,
    /// The magic bytes at offset 0.
    pub magic: &'static [u8],
    /// The version this build writes and reads.
    pub version: u16,
    /// The kinds of object the format holds: number and name.
    pub kinds: &'static [(u16, &'static str)],
}

impl Format {
    /// The name of kind `k` (its number when the format has no such kind).
    pub fn kind_name(&self, k: u16) -> String {
        self.kinds
            .iter()
            .find(|(n, _)| *n == k)
            .map_or_else(|| format!("unknown kind {k}"), |(_, s)| (*s).to_string())
    }
}

/// A checked envelope: the parameter id and body, borrowed from the file's bytes.
#[derive(Debug, Clone, Copy)]
pub struct Opened<'a> {
    /// The kind (equal to the one [`open`] was asked for).
    pub kind: u16,
    /// The parameter id.
    pub param: &'a [u8],
    /// The body.
    pub body: &'a [u8],
}

impl<'a> Opened<'a> {
    /// A reader over the body.
    pub fn reader(&self) -> Reader<'a> {
        Reader::new(self.body)
    }
}

/// Frames `body` as a file of `format` holding `kind` under the parameter id `param`.
///
/// # Panics
/// If `param` is longer than [`MAX_PARAM_ID`] bytes or `kind` is not one of the format's kinds:
/// both are fixed by the program, never read from a file.
pub fn seal(format: &Format, kind: u16, param: &[u8], body: &[u8]) -> Vec<u8> {
    assert!(param.len() <= MAX_PARAM_ID, "parameter id too long");
    assert!(
        format.kinds.iter().any(|(k, _)| *k == kind),
        "{} has no kind {kind}",
        format.name
    );
    let len = format.magic.len() + 2 + 2 + 1 + param.len() + 8 + body.len() + CHECKSUM_LEN;
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(format.magic);
    out.extend_from_slice(&format.version.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.push(param.len() as u8);
    out.extend_from_slice(param);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let sum = Sha3_256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// Longest header: magic (at most 8 bytes), version, kind, parameter id length and id, body length.
pub const MAX_HEADER: usize = 8 + 2 + 2 + 1 + MAX_PARAM_ID + 8;

/// The parameter id in the header at the start of a file of `format` holding `kind`: magic,
/// version and kind checked, nothing else (`prefix` may be the file's first [`MAX_HEADER`] bytes).
/// For a cheap check of what a large file belongs to before reading it whole; [`open`] still
/// checks everything when the file is read.
pub fn peek_param<'a>(format: &Format, prefix: &'a [u8], kind: u16) -> Result<&'a [u8], Error> {
    let r = header(format, prefix, kind)?;
    Ok(r.1)
}

/// Magic, version, kind and parameter id of `bytes`; the reader after them.
fn header<'a>(
    format: &Format,
    bytes: &'a [u8],
    kind: u16,
) -> Result<(Reader<'a>, &'a [u8]), Error> {
    let m = format.magic.len();
    if bytes.len() < m {
        return Err(if format.magic.starts_with(bytes) {
            Error::Truncated("magic".into())
        } else {
            Error::BadMagic {
                format: format.name,
            }
        });
    }
    if &bytes[..m] != format.magic {
        return Err(Error::BadMagic {
            format: format.name,
        });
    }
    let mut r = Reader::new(&bytes[m..]);
    let version = r.u16("format version")?;
    if version != format.version {
        return Err(Error::Version {
            format: format.name,
            found: version,
            supported: format.version,
        });
    }
    let found = r.u16("kind")?;
    if found != kind {
        return Err(Error::Kind {
            format: format.name,
            found: format.kind_name(found),
            expected: format
                .kinds
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or("an unknown kind", |(_, s)| s),
        });
    }
    let plen = usize::from(r.u8("parameter id length")?);
    let param = r.take(plen, "parameter id")?;
    Ok((r, param))
}

/// Checks `bytes` as a file of `format` holding `kind` (see the module documentation).
pub fn open<'a>(format: &Format, bytes: &'a [u8], kind: u16) -> Result<Opened<'a>, Error> {
    let (mut r, param) = header(format, bytes, kind)?;
    let announced = r.u64("body length")?;
    let present = (r.remaining() as u64).saturating_sub(CHECKSUM_LEN as u64);
    if announced.checked_add(CHECKSUM_LEN as u64) != Some(r.remaining() as u64) {
        return Err(Error::BodyLength { announced, present });
    }
    let body = r.take(announced as usize, "body")?;
    let split = bytes.len() - CHECKSUM_LEN;
    if Sha3_256::digest(&bytes[..split]).as_slice() != &bytes[split..] {
        return Err(Error::Checksum {
            format: format.name,
        });
    }
    Ok(Opened { kind, param, body })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The format of the crate's tests (kind 1 `alpha`, kind 2 `beta`).
    pub(crate) const F: Format = Format {
        name: "test",
        magic: b"TESTFMT\0",
        version: 3,
        kinds: &[(1, "alpha"), (2, "beta")],
    };
    const SHORT: Format = Format {
        name: "short",
        magic: b"SHRT",
        version: 2,
        kinds: &[(1, "thing")],
    };

    #[test]
    fn round_trip() {
        let b = seal(&F, 2, b"p-id", b"hello");
        let o = open(&F, &b, 2).unwrap();
        assert_eq!(o.param, b"p-id");
        assert_eq!(o.body, b"hello");
        let b = seal(&SHORT, 1, b"", b"");
        assert_eq!(open(&SHORT, &b, 1).unwrap().body, b"");
    }

    #[test]
    fn each_check_has_its_message() {
        let b = seal(&F, 1, b"p", b"body");
        let msg = |r: Result<Opened<'_>, Error>| r.unwrap_err().to_string();
        assert_eq!(
            msg(open(&F, &b, 2)),
            "wrong kind of test file: found alpha, expected beta"
        );
        assert_eq!(msg(open(&SHORT, &b, 1)), "not a short file (bad magic)");
        assert!(msg(open(&F, &b[..3], 1)).contains("truncated"));
        assert!(msg(open(&F, &b[..b.len() - 1], 1)).contains("header announces 4 body bytes"));
        let mut flipped = b.clone();
        let at = flipped.len() - 33;
        flipped[at] ^= 1;
        assert_eq!(
            msg(open(&F, &flipped, 1)),
            "test file is corrupt (checksum mismatch)"
        );
        let mut v = b.clone();
        v[8] = 1;
        assert_eq!(
            msg(open(&F, &v, 1)),
            "unsupported test format version 1: this build reads version 3 (regenerate the file with this build)"
        );
        let mut huge = b;
        let at = 8 + 2 + 2 + 1 + 1;
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(msg(open(&F, &huge, 1)).contains("header announces"));
    }

    #[test]
    fn every_truncation_and_bit_flip_is_refused() {
        let b = seal(&F, 1, b"params", b"some body bytes");
        for n in 0..b.len() {
            assert!(open(&F, &b[..n], 1).is_err(), "cut at {n}");
        }
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut m = b.clone();
                m[i] ^= 1 << bit;
                assert!(open(&F, &m, 1).is_err(), "flip {i}.{bit}");
            }
        }
    }
}
