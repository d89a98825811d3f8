//! Key files: the client's secret key (`vsp genkey`) and the evaluation key the server runs with
//! (`vsp genbkey`).
//!
//! The secret key file holds vsp-tfhe's secret-key encoding (a 32-byte seed from which every key
//! component is derived) inside an envelope whose key id is derived from that encoding
//! ([`key_id_of`]) and checked on load: a key whose material was changed and whose envelope was
//! sealed again is refused, instead of decrypting silently wrong under the old id. The evaluation key file holds
//! the compressed gate key (bootstrapping key level 0→1 + key switching 1→0) and the compressed
//! circuit key (level 0→2 bootstrapping key + private key switching 2→1); masks are regenerated from
//! seeds on load, which is why the file is a fraction of the in-memory size.
//!
//! Both files are [`FileCodec`] types ([`ClientKey`], [`EvalKeyFile`]): read by
//! [`crate::wire::envelope::load`], written by [`crate::wire::envelope::save`], their headers read by
//! [`crate::wire::envelope::read_header`].

use std::path::Path;
use std::sync::Arc;

use vsp_codec::{Access, FileCodec, Format, Reader, Writer};
use vsp_tfhe::{
    CircuitKey, CompressedCircuitKey, CompressedEvalKey, EvalKey, ParamId, Params, SecretKey,
};

use crate::error::{PlatformError, Result};
use crate::wire::envelope::{self, vsp_file, Envelope, KeyId, Kind, Stamp, FORMAT};

/// The parameter-set names the CLI accepts; all but `default` need `--insecure`.
pub const PARAM_SETS: [&str; 3] = ["default", "vsp2021", "cggi16"];

/// Resolves a parameter-set name, refusing the paper-reproduction sets unless `insecure` is given
/// (the caller warns the user when it is: see [`is_insecure`]).
pub fn params_by_name(name: &str, insecure: bool) -> Result<Params> {
    if !PARAM_SETS.contains(&name) {
        return Err(PlatformError::usage(format!(
            "unknown parameter set {name:?}; choose one of {}",
            PARAM_SETS.join(", ")
        )));
    }
    if is_insecure(name) && !insecure {
        return Err(PlatformError::usage(format!(
            "parameter set {name:?} is below 128-bit security (paper reproduction only); \
             pass --insecure to use it anyway"
        )));
    }
    Ok(Params::by_name(name, insecure)?)
}

/// Whether `name` is a parameter set below 128-bit security.
pub fn is_insecure(name: &str) -> bool {
    name != "default"
}

/// The parameter set an envelope's label names.
fn label_id(name: &str) -> Option<ParamId> {
    match name {
        "default" => Some(ParamId::Default128),
        "vsp2021" => Some(ParamId::Vsp2021),
        "cggi16" => Some(ParamId::Cggi16),
        _ => None,
    }
}

/// Refuses a key file whose envelope label does not name the parameter set of the key inside (a
/// relabelled `cggi16` key must not pass as `default`).
fn check_label(what: &str, label: &str, inside: &Params) -> Result<()> {
    match label_id(label) {
        Some(id) if id == inside.id => Ok(()),
        Some(_) => Err(PlatformError::KeyMismatch(format!(
            "the file says parameter set {label:?} but the {what} inside uses {:?}",
            inside.id
        ))),
        None => Err(PlatformError::format(format!(
            "unknown parameter set {label:?}"
        ))),
    }
}

/// A loaded secret key with the identity stamped on everything derived from it.
pub struct ClientKey {
    pub sk: SecretKey,
    pub params_name: String,
    pub key_id: KeyId,
}

/// The server's keys.
pub struct ServerKeys {
    pub ek: Arc<EvalKey>,
    pub ck: Arc<CircuitKey>,
    pub params_name: String,
    pub key_id: KeyId,
}

pub fn generate_secret(params_name: &str, params: &Params) -> Result<ClientKey> {
    let sk = SecretKey::generate(params)?;
    let key_id = key_id_of(&sk.to_bytes());
    Ok(ClientKey {
        sk,
        params_name: params_name.to_string(),
        key_id,
    })
}

/// The key id of a secret key: the first 16 bytes of SHA3-256 over a domain label and the key's
/// encoding (which names its parameter set). Public: it reveals nothing of the key (a preimage
/// would be the key), and every file made under the key carries it.
pub fn key_id_of(secret_key_bytes: &[u8]) -> KeyId {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update(b"vsp secret key id v1\0");
    h.update(secret_key_bytes);
    let d = h.finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&d[..16]);
    KeyId(id)
}

impl ClientKey {
    /// The stamp of what is encrypted under this key (requests).
    pub fn stamp(&self) -> Stamp {
        Stamp {
            params_name: self.params_name.clone(),
            key_id: self.key_id,
        }
    }

    /// Checks that `what` (a result, a trace) in `env` was made under this key and parameter set.
    pub fn check_file(&self, what: &str, env: &Envelope) -> Result<()> {
        crate::wire::envelope::check_same_key(
            what,
            env.key_id,
            &env.params,
            self.key_id,
            &self.params_name,
        )
    }

    /// Writes the secret key file (created 0600); returns its size.
    pub fn save(&self, path: &Path) -> Result<u64> {
        envelope::save(self, path, &())
    }

    /// Reads a secret key file: the key, its label and its id checked against the key inside.
    pub fn load(path: &Path) -> Result<ClientKey> {
        envelope::load(path, &())
    }

    /// Generates the compressed evaluation key (gate key + circuit key) and writes it.
    pub fn save_eval_key(&self, path: &Path) -> Result<u64> {
        let file = EvalKeyFile {
            stamp: self.stamp(),
            gate: CompressedEvalKey::generate(&self.sk),
            circuit: CompressedCircuitKey::generate(&self.sk),
        };
        envelope::save(&file, path, &())
    }
}

/// The secret key file: vsp-tfhe's encoding of the key, under the key's label and id.
impl FileCodec for ClientKey {
    const FORMAT: &'static Format = &FORMAT;
    const KIND: u16 = Kind::SecretKey as u16;
    const ACCESS: Access = Access::Private;
    type Context = ();
    type Error = PlatformError;

    fn param_id(&self, _: &()) -> Vec<u8> {
        envelope::param_id(self.key_id, &self.params_name)
    }

    fn write_body(&self, w: &mut Writer) {
        w.bytes(&self.sk.to_bytes());
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, _: &()) -> Result<ClientKey> {
        let (key_id, params_name) = envelope::parse_param(param)?;
        let body = r.take(r.remaining(), "secret key")?;
        let sk = SecretKey::from_bytes(body).map_err(load_error("secret key"))?;
        check_label("secret key", &params_name, sk.params())?;
        let derived = key_id_of(&sk.to_bytes());
        if derived != key_id {
            return Err(PlatformError::KeyMismatch(format!(
                "the secret key's id {key_id} is not the id of the key inside ({derived}): the key \
                 was modified, or made by a build before key ids were derived from keys (make a new \
                 one with `vsp genkey`)"
            )));
        }
        Ok(ClientKey {
            sk,
            params_name,
            key_id,
        })
    }
}

/// The evaluation key file as stored: the compressed gate key (bootstrapping key level 0→1 + key
/// switching 1→0) and circuit key (level 0→2 bootstrapping key + private key switching 2→1), under
/// the secret key's label and id. Body: gate key length u64 ‖ gate key ‖ circuit key.
pub struct EvalKeyFile {
    pub stamp: Stamp,
    pub gate: CompressedEvalKey,
    pub circuit: CompressedCircuitKey,
}

impl FileCodec for EvalKeyFile {
    vsp_file!(EvalKey, ());

    fn write_body(&self, w: &mut Writer) {
        let gate = self.gate.to_bytes();
        w.u64(gate.len() as u64);
        w.bytes(&gate);
        w.bytes(&self.circuit.to_bytes());
    }

    /// The two compressed keys, their parameter set checked against the label (before the slow
    /// decompression).
    fn read_body(param: &[u8], r: &mut Reader<'_>, _: &()) -> Result<EvalKeyFile> {
        let stamp = Stamp::parse(param)?;
        let framing = || PlatformError::format("corrupt evaluation key (bad framing)");
        let len = r.array::<8>("gate key length").map_err(|_| framing())?;
        let gate_len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| framing())?;
        let gate = r.take(gate_len, "gate key").map_err(|_| framing())?;
        let circuit = r.take(r.remaining(), "circuit key")?;
        let gate = CompressedEvalKey::from_bytes(gate).map_err(load_error("evaluation key"))?;
        let circuit =
            CompressedCircuitKey::from_bytes(circuit).map_err(load_error("evaluation key"))?;
        check_label("evaluation key", &stamp.params_name, gate.params())?;
        check_label("circuit key", &stamp.params_name, circuit.params())?;
        Ok(EvalKeyFile {
            stamp,
            gate,
            circuit,
        })
    }
}

impl ServerKeys {
    /// Checks that `what` (a request, a snapshot) was made under this key and parameter set.
    pub fn check_stamp(&self, what: &str, stamp: &Stamp) -> Result<()> {
        crate::wire::envelope::check_same_key(
            what,
            stamp.key_id,
            &stamp.params_name,
            self.key_id,
            &self.params_name,
        )
    }

    /// The stamp of what runs under these keys (snapshots, results).
    pub fn stamp(&self) -> Stamp {
        Stamp {
            params_name: self.params_name.clone(),
            key_id: self.key_id,
        }
    }

    /// Checks, from the evaluation key file's header alone (before the key is read and
    /// decompressed, which takes seconds), that `what` — made under `key_id`/`params_name` — can run
    /// with it: a request under another key is refused at once.
    pub fn check_header(path: &Path, what: &str, key_id: KeyId, params_name: &str) -> Result<()> {
        let (ek_id, ek_params) = envelope::read_header::<EvalKeyFile>(path)?;
        if params_name != ek_params {
            return Err(PlatformError::KeyMismatch(format!(
                "{what} was made with parameter set {params_name:?}, the evaluation key {} uses \
                 {ek_params:?}",
                path.display()
            )));
        }
        if key_id != ek_id {
            return Err(PlatformError::KeyMismatch(format!(
                "{what} was encrypted under another key than the evaluation key {} (key id \
                 {key_id}, the evaluation key's is {ek_id})",
                path.display()
            )));
        }
        Ok(())
    }

    /// Loads and decompresses an evaluation key file (regenerating the masks from their seeds).
    pub fn load(path: &Path) -> Result<ServerKeys> {
        let file: EvalKeyFile = envelope::load(path, &())?;
        let decompress = || -> Result<(EvalKey, CircuitKey)> {
            let ek = file.gate.decompress();
            let ck = file.circuit.decompress();
            let e = load_error("evaluation key");
            Ok((ek.map_err(&e)?, ck.map_err(&e)?))
        };
        let (ek, ck) = decompress().map_err(|e| e.in_file(path))?;
        Ok(ServerKeys {
            ek: Arc::new(ek),
            ck: Arc::new(ck),
            params_name: file.stamp.params_name,
            key_id: file.stamp.key_id,
        })
    }
}

/// "corrupt `what`" around a vsp-tfhe error (the file is named by the caller); an intact key made
/// by a build whose parameter values differ is not called corrupt, and the message says how to go
/// on.
fn load_error(what: &str) -> impl Fn(vsp_tfhe::Error) -> PlatformError + '_ {
    move |e| {
        let context = match e {
            vsp_tfhe::Error::ParamsChanged(_) => format!(
                "{what} made by another version of vsp (make new keys with `vsp genkey` and `vsp \
                 genbkey`)"
            ),
            _ => format!("corrupt {what}"),
        };
        PlatformError::from(e).context(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::error_line;

    /// Issue 25: a secret key whose seed was changed and whose envelope was sealed again used to
    /// load (and decrypt silently wrong); the id is now the key's own and checked.
    #[test]
    fn a_modified_and_resealed_secret_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sk");
        let key = generate_secret("default", &Params::default_128()).unwrap();
        key.save(&path).unwrap();
        let loaded = ClientKey::load(&path).unwrap();
        assert_eq!(loaded.key_id, key.key_id);
        assert_eq!(key.key_id, key_id_of(&key.sk.to_bytes()));
        // Other key material (inner encoding sealed again, as a tamperer would) under the old id.
        let other = generate_secret("default", &Params::default_128()).unwrap();
        let mut env = Envelope::read(&path, Kind::SecretKey).unwrap();
        env.body = zeroize::Zeroizing::new(other.sk.to_bytes().to_vec());
        env.write(&path).unwrap();
        let e = error_line(&ClientKey::load(&path).err().unwrap());
        assert!(e.contains("is not the id of the key inside"), "{e}");
        // The key's own material under another id (a key passing as someone else's): refused too.
        let mut env = Envelope::read(&path, Kind::SecretKey).unwrap();
        env.body = zeroize::Zeroizing::new(key.sk.to_bytes().to_vec());
        env.key_id = KeyId([9; 16]);
        env.write(&path).unwrap();
        let e = error_line(&ClientKey::load(&path).err().unwrap());
        assert!(e.contains("is not the id of the key inside"), "{e}");
    }

    /// The secret key file through [`FileCodec`] is the envelope it always was: the key's
    /// encoding under its label and id, byte for byte.
    #[test]
    fn secret_key_files_keep_their_bytes() {
        let key = generate_secret("default", &Params::default_128()).unwrap();
        let before = Envelope::new(
            Kind::SecretKey,
            "default",
            key.key_id,
            key.sk.to_bytes().to_vec(),
        );
        assert_eq!(key.encode(&()), *before.to_bytes());
        let back = ClientKey::decode(&before.to_bytes(), &()).unwrap();
        assert_eq!(
            (back.key_id, back.params_name),
            (key.key_id, key.params_name)
        );
    }

    /// The evaluation key file through [`FileCodec`] keeps its layout (gate key length u64 ‖ gate
    /// key ‖ circuit key in the envelope) and reads back to the same keys; its header names the key.
    #[test]
    fn evaluation_key_files_keep_their_bytes() {
        let key = generate_secret("default", &Params::default_128()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ek");
        key.save_eval_key(&path).unwrap();
        let file: EvalKeyFile = envelope::load(&path, &()).unwrap();
        let (gate, circuit) = (file.gate.to_bytes(), file.circuit.to_bytes());
        let mut body = (gate.len() as u64).to_le_bytes().to_vec();
        body.extend_from_slice(&gate);
        body.extend_from_slice(&circuit);
        let before = Envelope::new(Kind::EvalKey, "default", key.key_id, body);
        assert_eq!(std::fs::read(&path).unwrap(), *before.to_bytes());
        let header = envelope::read_header::<EvalKeyFile>(&path).unwrap();
        assert_eq!(header, (key.key_id, "default".to_string()));
        let e = error_line(&envelope::read_header::<ClientKey>(&path).unwrap_err());
        assert!(
            e.ends_with("found evaluation key, expected secret key"),
            "{e}"
        );
    }

    /// A key made by a build whose `default` had other values (n0 = 805 before 2026-12-04) is intact:
    /// refused as from another version, with what to do, not called corrupt.
    #[test]
    fn a_secret_key_from_a_build_with_other_default_values_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.key");
        let before = Params {
            n0: 805,
            sigma0: 5.86e-6,
            ..Params::default_128()
        };
        generate_secret("default", &before)
            .unwrap()
            .save(&path)
            .unwrap();
        let e = error_line(&ClientKey::load(&path).err().unwrap());
        assert!(
            e.contains("old.key: secret key made by another version of vsp (make new keys with"),
            "{e}"
        );
        assert!(e.contains("parameter fingerprint mismatch"), "{e}");
        assert!(!e.contains("corrupt"), "{e}");
        // A damaged key is still called corrupt.
        let key = generate_secret("default", &Params::default_128()).unwrap();
        let mut env = Envelope::read(&path, Kind::SecretKey).unwrap();
        let mut body = key.sk.to_bytes().to_vec();
        body.truncate(body.len() - 1);
        env.body = zeroize::Zeroizing::new(body);
        env.write(&path).unwrap();
        let e = error_line(&ClientKey::load(&path).err().unwrap());
        assert!(e.contains("old.key: corrupt secret key"), "{e}");
    }
}
