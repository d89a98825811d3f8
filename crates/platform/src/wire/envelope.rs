//! The envelope around every file of the platform (keys, requests, results, snapshots): [`vsp_codec`]'s envelope with magic
//! `VSPF`, format version 2 (version 1 had its own header), kind ([`Kind`]), parameter id (the
//! 16-byte [`KeyId`] of the secret key the contents belong to, then the parameter-set name), body
//! length, body (the payload's own format, written by the crate that owns it) and SHA3-256.
//!
//! A reader checks the magic, version, kind, lengths against the actual file size and the checksum
//! before it looks at the body, so a truncated, corrupt or mismatched file is refused with a message
//! that says which of these it is. Files are written by [`crate::files::write_atomic`], so a crash
//! never leaves a half-written file under the final name.
//!
//! A file type of the platform implements [`FileCodec`] with this [`FORMAT`], [`param_id`] and
//! [`parse_param`] for its header, is read and written by [`load`] and [`save`], and its header read
//! alone by [`read_header`]: the keys ([`crate::keys::ClientKey`], [`crate::keys::EvalKeyFile`]),
//! the requests ([`crate::Request`], [`crate::design::CircuitRequest`]: one kind, the reader's
//! context says which), the results ([`crate::processor::packets::EncryptedResult`],
//! [`crate::design::CircuitResult`]: likewise), the snapshot ([`crate::processor::run::Snapshot`])
//! and the encrypted trace ([`crate::design::EncryptedTrace`]). A read whose header is checked
//! before the body can be decoded (a request's key against the evaluation key's header, before that
//! key is loaded; a result's against the secret key) holds the checked file as an [`Envelope`] and
//! decodes it with [`Envelope::decode`].

use std::fmt;
use std::path::Path;

use vsp_codec::{FileCodec, Format};
use zeroize::Zeroizing;

use crate::error::{PlatformError, Result};
use crate::files::{write_atomic, Access};

pub use vsp_codec::Writer;

/// The `vsp` file format.
pub const FORMAT: Format = Format {
    name: "vsp",
    magic: b"VSPF",
    version: 2,
    kinds: &[
        (Kind::SecretKey as u16, "secret key"),
        (Kind::EvalKey as u16, "evaluation key"),
        (Kind::Request as u16, "encrypted request"),
        (Kind::Result as u16, "encrypted result"),
        (Kind::Snapshot as u16, "run snapshot"),
        (Kind::Trace as u16, "encrypted trace"),
    ],
};

/// What a file holds. Stored in the header so that passing a result where a request is expected is
/// refused before anything is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    SecretKey = 1,
    EvalKey = 2,
    Request = 3,
    Result = 4,
    Snapshot = 5,
    /// Every cycle's encrypted outputs of a circuit run (`vsp circuit exec --trace`).
    Trace = 6,
}

impl Kind {
    /// Every kind, in tag order.
    pub const ALL: [Kind; 6] = [
        Kind::SecretKey,
        Kind::EvalKey,
        Kind::Request,
        Kind::Result,
        Kind::Snapshot,
        Kind::Trace,
    ];
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&FORMAT.kind_name(*self as u16))
    }
}

/// Identifier of a secret key, copied into every file derived from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyId(pub [u8; 16]);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0[..6] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Identity of the key a file's contents are encrypted under (stamped on requests, snapshots,
/// results and traces): its id and parameter-set name, the header's parameter id.
#[derive(Clone, Debug)]
pub struct Stamp {
    pub params_name: String,
    pub key_id: KeyId,
}

impl Stamp {
    /// The stamp as a file's header carries it ([`param_id`]).
    pub fn param_id(&self) -> Vec<u8> {
        param_id(self.key_id, &self.params_name)
    }

    /// The stamp in a file's header ([`parse_param`]).
    pub fn parse(param: &[u8]) -> Result<Stamp> {
        let (key_id, params_name) = parse_param(param)?;
        Ok(Stamp {
            params_name,
            key_id,
        })
    }
}

/// What every `vsp` file type's [`FileCodec`] impl says alike, written once: the `vsp` [`FORMAT`],
/// the file's [`Kind`] (`$kind`), the context its body is decoded with (`$ctx`), the platform's
/// error, and the header's parameter id: the [`Stamp`] in the value's field `stamp`. The impl
/// adds its body's `write_body` and `read_body`.
macro_rules! vsp_file {
    ($kind:ident, $ctx:ty) => {
        const FORMAT: &'static vsp_codec::Format = &$crate::wire::envelope::FORMAT;
        const KIND: u16 = $crate::wire::envelope::Kind::$kind as u16;
        type Context = $ctx;
        type Error = $crate::error::PlatformError;

        fn param_id(&self, _: &$ctx) -> Vec<u8> {
            self.stamp.param_id()
        }
    };
}
pub(crate) use vsp_file;

/// A parsed, verified envelope.
pub struct Envelope {
    pub kind: Kind,
    pub params: String,
    pub key_id: KeyId,
    /// Zeroized on drop: for a secret-key file it is key material.
    pub body: Zeroizing<Vec<u8>>,
}

impl Envelope {
    /// An envelope of `kind` made under the key `key_id` of parameter set `params`.
    pub fn new(kind: Kind, params: &str, key_id: KeyId, body: Vec<u8>) -> Envelope {
        Envelope {
            kind,
            params: params.to_string(),
            key_id,
            body: Zeroizing::new(body),
        }
    }

    /// The envelope of `value`, a [`FileCodec`] object of `kind`, made under the key `key_id` of
    /// parameter set `params` (a request, written by [`Envelope::write`] or sent).
    pub fn of<T: FileCodec>(value: &T, kind: Kind, params: &str, key_id: KeyId) -> Envelope {
        let mut w = Writer::default();
        value.write_body(&mut w);
        Envelope::new(kind, params, key_id, w.into_bytes())
    }

    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(vsp_codec::seal(
            &FORMAT,
            self.kind as u16,
            &param_id(self.key_id, &self.params),
            &self.body,
        ))
    }

    /// Parses and verifies `bytes`, which must hold a file of kind `expected`.
    pub fn from_bytes(bytes: &[u8], expected: Kind) -> Result<Envelope> {
        let o = vsp_codec::open(&FORMAT, bytes, expected as u16)?;
        let (key_id, params) = parse_param(o.param)?;
        Ok(Envelope {
            kind: expected,
            params,
            key_id,
            body: Zeroizing::new(o.body.to_vec()),
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

    /// The value this verified envelope holds, read by its [`FileCodec`] (to its end): the second
    /// half of a read whose header was checked first (a request's key against the evaluation key's
    /// header before that key is loaded).
    pub fn decode<T: FileCodec<Error = PlatformError>>(&self, ctx: &T::Context) -> Result<T> {
        if kind_of::<T>()? != self.kind {
            return Err(PlatformError::format(format!(
                "found {}, expected {}",
                self.kind,
                FORMAT.kind_name(T::KIND)
            )));
        }
        let mut r = vsp_codec::Reader::new(&self.body);
        let value = T::read_body(&param_id(self.key_id, &self.params), &mut r, ctx)?;
        r.end()?;
        Ok(value)
    }

    pub fn read(path: &Path, expected: Kind) -> Result<Envelope> {
        let bytes = read_bytes(path, expected as u16)?;
        Envelope::from_bytes(&bytes, expected).map_err(|e| e.in_file(path))
    }
}

/// The [`Kind`] of a [`FileCodec`] type of this format.
fn kind_of<T: FileCodec>() -> Result<Kind> {
    match Kind::ALL.into_iter().find(|k| *k as u16 == T::KIND) {
        Some(k) if T::FORMAT.magic == FORMAT.magic => Ok(k),
        _ => Err(PlatformError::format(format!(
            "{} kind {} is not a vsp file",
            T::FORMAT.name,
            T::KIND
        ))),
    }
}

/// The bytes of the file `path` of kind `kind`, read up to that kind's size limit.
fn read_bytes(path: &Path, kind: u16) -> Result<Zeroizing<Vec<u8>>> {
    let (max, what) = if kind == Kind::SecretKey as u16 {
        (vsp_codec::limits::SECRET_KEY, "a secret key")
    } else {
        (vsp_codec::limits::ANY, "any vsp file")
    };
    Ok(Zeroizing::new(vsp_codec::read_bounded(path, max, what)?))
}

/// Reads the `vsp` file `path` of a [`FileCodec`] type: read up to its kind's size limit, envelope
/// and body checked, an error naming the file.
pub fn load<T: FileCodec<Error = PlatformError>>(path: &Path, ctx: &T::Context) -> Result<T> {
    let bytes = read_bytes(path, T::KIND)?;
    T::decode(&bytes, ctx).map_err(|e| e.in_file(path))
}

/// Writes `value` atomically to `path` (a secret key 0600, see [`crate::files`]); returns the
/// file's size.
pub fn save<T: FileCodec<Error = PlatformError>>(
    value: &T,
    path: &Path,
    ctx: &T::Context,
) -> Result<u64> {
    let bytes = Zeroizing::new(value.encode(ctx));
    write_atomic(path, &bytes, T::ACCESS)?;
    Ok(bytes.len() as u64)
}

/// The key id and parameter-set name in the header of the `vsp` file `path` of a [`FileCodec`]
/// type, from its first few hundred bytes (magic, version and kind checked; the rest is checked when
/// the file is read whole): what a large file belongs to, known before it is loaded.
pub fn read_header<T: FileCodec>(path: &Path) -> Result<(KeyId, String)> {
    let prefix = vsp_codec::read_prefix(
        path,
        vsp_codec::envelope::MAX_HEADER as u64,
        vsp_codec::limits::ANY,
        "any vsp file",
    )?;
    let header = || parse_param(T::peek_param(&prefix)?);
    header().map_err(|e| e.in_file(path))
}

/// The header's parameter id of a file made under the key `key_id` of parameter set `params`: the
/// key id, then the name.
pub fn param_id(key_id: KeyId, params: &str) -> Vec<u8> {
    let name = params.as_bytes();
    // Parameter names are short identifiers chosen by this program; clamp defensively.
    let name = &name[..name.len().min(vsp_codec::envelope::MAX_PARAM_ID - 16)];
    let mut param = key_id.0.to_vec();
    param.extend_from_slice(name);
    param
}

/// The key id and parameter-set name of a header's parameter id.
pub fn parse_param(param: &[u8]) -> Result<(KeyId, String)> {
    let mut r = vsp_codec::Reader::new(param);
    let key_id = KeyId(r.array("key id")?);
    let params = std::str::from_utf8(r.take(r.remaining(), "parameter-set name")?)
        .map_err(|_| PlatformError::format("corrupt header: parameter-set name is not text"))?
        .to_string();
    Ok((key_id, params))
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
        assert!(Envelope::from_bytes(&bad, Kind::Request).is_err());
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 33] ^= 1;
        let err = Envelope::from_bytes(&bad, Kind::Request)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("checksum"), "{err}");
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(Envelope::from_bytes(&bad, Kind::Request).is_err());
        // A version-1 file (before the shared envelope) gets a version error.
        let mut old = bytes;
        old[4..6].copy_from_slice(&1u16.to_le_bytes());
        let err = Envelope::from_bytes(&old, Kind::Request)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "unsupported vsp format version 1: this build reads version 2 (regenerate the file with this build)"
        );
    }
}
