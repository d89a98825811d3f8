//! The envelope around every file of the platform: keys, requests, results, snapshots.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | magic `VSPF` |
//! | 2 | envelope version (currently 1) |
//! | 1 | kind ([`Kind`]) |
//! | 1 | length `p` of the parameter-set name |
//! | p | parameter-set name (ASCII, e.g. `default`) |
//! | 16 | key id: the random identifier of the secret key the contents belong to |
//! | 8 | body length `b` |
//! | b | body (the payload's own format, written by the crate that owns it) |
//! | 32 | SHA3-256 of everything above |
//!
//! A reader checks the magic, version, kind, lengths against the actual file size and the checksum
//! before it looks at the body, so a truncated, corrupt or mismatched file is refused with a message
//! that says which of these it is. Files are written by [`crate::files::write_atomic`], so a crash
//! never leaves a half-written file under the final name.

use std::fmt;
use std::fs;
use std::path::Path;

use sha3::{Digest, Sha3_256};
use zeroize::Zeroizing;

use crate::error::{PlatformError, Result};
use crate::files::{write_atomic, Access};

const MAGIC: &[u8; 4] = b"VSPF";
const VERSION: u16 = 1;
const CHECKSUM_LEN: usize = 32;

/// What a file holds. Stored in the header so that passing a result where a request is expected is
/// refused before anything is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    SecretKey = 1,
    EvalKey = 2,
    Request = 3,
    Result = 4,
    Snapshot = 5,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::SecretKey,
            2 => Kind::EvalKey,
            3 => Kind::Request,
            4 => Kind::Result,
            5 => Kind::Snapshot,
            _ => return None,
        })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::SecretKey => "secret key",
            Kind::EvalKey => "evaluation key",
            Kind::Request => "encrypted request",
            Kind::Result => "encrypted result",
            Kind::Snapshot => "run snapshot",
        })
    }
}

/// Identifier of a secret key, copied into every file derived from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyId(pub [u8; 16]);

impl KeyId {
    pub fn random() -> KeyId {
        let mut id = [0u8; 16];
        rand::Rng::fill(&mut rand::rngs::OsRng, &mut id);
        KeyId(id)
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0[..6] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A parsed, verified envelope.
pub struct Envelope {
    pub kind: Kind,
    pub params: String,
    pub key_id: KeyId,
    /// Zeroized on drop: for a secret-key file it is key material.
    pub body: Zeroizing<Vec<u8>>,
}

impl Envelope {
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Vec::with_capacity(self.body.len() + 96);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(self.kind as u8);
        let name = self.params.as_bytes();
        // Parameter names are short identifiers chosen by this program; clamp defensively.
        let name = &name[..name.len().min(255)];
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        out.extend_from_slice(&self.key_id.0);
        out.extend_from_slice(&(self.body.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.body);
        let sum = Sha3_256::digest(&out);
        out.extend_from_slice(&sum);
        Zeroizing::new(out)
    }

    /// Parses and verifies `bytes`, which must hold a file of kind `expected`.
    pub fn from_bytes(bytes: &[u8], expected: Kind) -> Result<Envelope> {
        let mut r = Reader::new(bytes);
        let magic = r
            .take(4)
            .map_err(|_| PlatformError::format("file too short to be a vsp file"))?;
        if magic != MAGIC {
            return Err(PlatformError::format("not a vsp file (bad magic)"));
        }
        let version = u16::from_le_bytes(r.array()?);
        if version != VERSION {
            return Err(PlatformError::format(format!(
                "unsupported vsp file version {version} (this program reads version {VERSION})"
            )));
        }
        let kind_byte = r.take(1)?[0];
        let kind = Kind::from_u8(kind_byte)
            .ok_or_else(|| PlatformError::format(format!("unknown file kind {kind_byte}")))?;
        if kind != expected {
            return Err(PlatformError::WrongKind {
                found: kind,
                expected,
            });
        }
        let name_len = r.take(1)?[0] as usize;
        let params = std::str::from_utf8(r.take(name_len)?)
            .map_err(|_| PlatformError::format("corrupt header: parameter-set name is not text"))?
            .to_string();
        let key_id = KeyId(r.array()?);
        let body_len = u64::from_le_bytes(r.array()?);
        let remaining = (bytes.len() - r.pos) as u64;
        if body_len.checked_add(CHECKSUM_LEN as u64) != Some(remaining) {
            return Err(PlatformError::format(format!(
                "file is truncated or has trailing data: header announces {body_len} body bytes, {} present",
                remaining.saturating_sub(CHECKSUM_LEN as u64)
            )));
        }
        let body_end = r.pos + body_len as usize;
        let sum = Sha3_256::digest(&bytes[..body_end]);
        if sum.as_slice() != &bytes[body_end..] {
            return Err(PlatformError::format("file is corrupt (checksum mismatch)"));
        }
        Ok(Envelope {
            kind,
            params,
            key_id,
            body: Zeroizing::new(bytes[r.pos..body_end].to_vec()),
        })
    }

    /// Writes the envelope atomically; a secret key is created 0600 (see [`crate::files`]).
    pub fn write(&self, path: &Path) -> Result<u64> {
        let bytes = self.to_bytes();
        let access = match self.kind {
            Kind::SecretKey => Access::Private,
            _ => Access::Public,
        };
        write_atomic(path, &bytes, access)?;
        Ok(bytes.len() as u64)
    }

    pub fn read(path: &Path, expected: Kind) -> Result<Envelope> {
        let bytes = Zeroizing::new(fs::read(path).map_err(|source| PlatformError::Read {
            path: path.into(),
            source,
        })?);
        Envelope::from_bytes(&bytes, expected).map_err(|e| e.in_file(path))
    }
}

/// A bounds-checked little-endian reader over a file's bytes: the envelope header here, and the
/// bodies of requests, results and snapshots. It never allocates from an unchecked length.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(PlatformError::format(
                "file is truncated or corrupt: it ends early",
            ));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// A `u64` length followed by that many bytes.
    pub fn blob(&mut self) -> Result<&'a [u8]> {
        let n = u64::from_le_bytes(self.array()?);
        let n = usize::try_from(n)
            .map_err(|_| PlatformError::format("corrupt file: impossible length"))?;
        self.take(n)
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
    /// Fails unless every byte was read.
    pub fn end(&self) -> Result<()> {
        if self.pos != self.bytes.len() {
            return Err(PlatformError::format(format!(
                "corrupt file: {} unexpected trailing bytes",
                self.bytes.len() - self.pos
            )));
        }
        Ok(())
    }
}

/// The little-endian writer matching [`Reader`].
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// A `u64` length followed by the bytes.
    pub fn blob(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
}

/// Checks that a file made for `file_key`/`file_params` may be used with keys `key`/`params`.
pub fn check_same_key(
    what: &str,
    file_key: KeyId,
    file_params: &str,
    key: KeyId,
    params: &str,
) -> Result<()> {
    if file_params != params {
        return Err(PlatformError::KeyMismatch(format!(
            "{what} was made with parameter set {file_params:?}, the key uses {params:?}"
        )));
    }
    if file_key != key {
        return Err(PlatformError::KeyMismatch(format!(
            "{what} was encrypted under another key (key id {file_key}, this key is {key})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Envelope {
        Envelope {
            kind: Kind::Request,
            params: "default".into(),
            key_id: KeyId([7; 16]),
            body: Zeroizing::new(vec![1, 2, 3, 4, 5]),
        }
    }

    #[test]
    fn round_trip() {
        let e = Envelope::from_bytes(&sample().to_bytes(), Kind::Request).unwrap();
        assert_eq!(*e.body, vec![1, 2, 3, 4, 5]);
        assert_eq!(e.params, "default");
        assert!(e.key_id == KeyId([7; 16]));
    }

    #[test]
    fn rejects_wrong_kind_truncation_and_corruption() {
        let bytes = sample().to_bytes();
        let err = Envelope::from_bytes(&bytes, Kind::Result)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("found encrypted request, expected encrypted result"),
            "{err}"
        );
        for cut in [0, 3, 10, bytes.len() - 1] {
            let err = Envelope::from_bytes(&bytes[..cut], Kind::Request)
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.contains("truncated") || err.contains("too short"),
                "cut {cut}: {err}"
            );
        }
        let mut bad = bytes.clone();
        bad[40] ^= 1;
        let err = Envelope::from_bytes(&bad, Kind::Request)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("checksum"), "{err}");
        let mut bad = bytes;
        bad[0] = b'X';
        assert!(Envelope::from_bytes(&bad, Kind::Request).is_err());
    }
}
