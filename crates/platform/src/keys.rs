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

use std::path::Path;
use std::sync::Arc;

use vsp_tfhe::{
    CircuitKey, CompressedCircuitKey, CompressedEvalKey, EvalKey, ParamId, Params, SecretKey,
};

use crate::error::{PlatformError, Result};
use crate::wire::envelope::{Envelope, KeyId, Kind};

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
fn check_label(path: &Path, what: &str, label: &str, inside: &Params) -> Result<()> {
    match label_id(label) {
        Some(id) if id == inside.id => Ok(()),
        Some(_) => Err(PlatformError::KeyMismatch(format!(
            "{}: the file says parameter set {label:?} but the {what} inside uses {:?}",
            path.display(),
            inside.id
        ))),
        None => Err(PlatformError::format(format!(
            "{}: unknown parameter set {label:?}",
            path.display()
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

    pub fn save(&self, path: &Path) -> Result<u64> {
        let body = self.sk.to_bytes();
        let env = Envelope::new(
            Kind::SecretKey,
            &self.params_name,
            self.key_id,
            body.to_vec(),
        );
        env.write(path)
    }

    pub fn load(path: &Path) -> Result<ClientKey> {
        let env = Envelope::read(path, Kind::SecretKey)?;
        Self::from_envelope(env, path)
    }

    /// The key in a verified secret-key envelope read from `path` (named in errors).
    pub fn from_envelope(env: Envelope, path: &Path) -> Result<ClientKey> {
        let sk = SecretKey::from_bytes(&env.body).map_err(load_error(path, "secret key"))?;
        check_label(path, "secret key", &env.params, sk.params())?;
        let derived = key_id_of(&sk.to_bytes());
        if derived != env.key_id {
            return Err(PlatformError::KeyMismatch(format!(
                "{}: the secret key's id {} is not the id of the key inside ({derived}): the key was \
                 modified, or made by a build before key ids were derived from keys (make a new one \
                 with `vsp genkey`)",
                path.display(),
                env.key_id
            )));
        }
        Ok(ClientKey {
            sk,
            params_name: env.params,
            key_id: env.key_id,
        })
    }

    /// Generates the compressed evaluation key (gate key + circuit key) and writes it.
    pub fn save_eval_key(&self, path: &Path) -> Result<u64> {
        let gate = CompressedEvalKey::generate(&self.sk).to_bytes();
        let circuit = CompressedCircuitKey::generate(&self.sk).to_bytes();
        let mut body = Vec::with_capacity(gate.len() + circuit.len() + 8);
        body.extend_from_slice(&(gate.len() as u64).to_le_bytes());
        body.extend_from_slice(&gate);
        body.extend_from_slice(&circuit);
        let env = Envelope::new(Kind::EvalKey, &self.params_name, self.key_id, body);
        env.write(path)
    }
}

impl ServerKeys {
    /// Checks that `what` (a request, a snapshot) was made under this key and parameter set.
    pub fn check_key_of(&self, what: &str, key_id: KeyId, params_name: &str) -> Result<()> {
        crate::wire::envelope::check_same_key(
            what,
            key_id,
            params_name,
            self.key_id,
            &self.params_name,
        )
    }

    /// Checks, from the evaluation key file's header alone (before the key is read and
    /// decompressed, which takes seconds), that `what` — made under `key_id`/`params_name` — can run
    /// with it: a request under another key is refused at once.
    pub fn check_header(path: &Path, what: &str, key_id: KeyId, params_name: &str) -> Result<()> {
        let (ek_id, ek_params) = Envelope::read_header(path, Kind::EvalKey)?;
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
        let env = Envelope::read(path, Kind::EvalKey)?;
        let (ek, ck) = Self::parse_compressed(&env, path)?;
        let ek = ek
            .decompress()
            .map_err(load_error(path, "evaluation key"))?;
        let ck = ck
            .decompress()
            .map_err(load_error(path, "evaluation key"))?;
        Ok(ServerKeys {
            ek: Arc::new(ek),
            ck: Arc::new(ck),
            params_name: env.params,
            key_id: env.key_id,
        })
    }

    /// The compressed gate and circuit keys of a verified evaluation-key envelope, their parameter
    /// set checked against the label.
    pub fn parse_compressed(
        env: &Envelope,
        path: &Path,
    ) -> Result<(CompressedEvalKey, CompressedCircuitKey)> {
        let framing = || {
            PlatformError::format(format!(
                "{}: corrupt evaluation key (bad framing)",
                path.display()
            ))
        };
        let len_bytes: [u8; 8] = env
            .body
            .get(..8)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(framing)?;
        let gate_len = usize::try_from(u64::from_le_bytes(len_bytes)).map_err(|_| framing())?;
        let gate = env
            .body
            .get(8..8usize.saturating_add(gate_len))
            .ok_or_else(framing)?;
        let circuit = &env.body[8 + gate_len..];
        let ek = CompressedEvalKey::from_bytes(gate).map_err(load_error(path, "evaluation key"))?;
        let ck = CompressedCircuitKey::from_bytes(circuit)
            .map_err(load_error(path, "evaluation key"))?;
        // Before the (slow) decompression: the label must name the keys' parameter set.
        check_label(path, "evaluation key", &env.params, ek.params())?;
        check_label(path, "circuit key", &env.params, ck.params())?;
        Ok((ek, ck))
    }
}

/// "`path`: corrupt `what`" around a vsp-tfhe error; an intact key made by a build whose parameter
/// values differ is not called corrupt, and the message says how to go on.
fn load_error<'a>(path: &'a Path, what: &'a str) -> impl Fn(vsp_tfhe::Error) -> PlatformError + 'a {
    move |e| {
        let context = match e {
            vsp_tfhe::Error::ParamsChanged(_) => format!(
                "{}: {what} made by another version of vsp (make new keys with `vsp genkey` and \
                 `vsp genbkey`)",
                path.display()
            ),
            _ => format!("{}: corrupt {what}", path.display()),
        };
        PlatformError::from(e).context(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = ClientKey::load(&path).err().unwrap().to_string();
        assert!(e.contains("is not the id of the key inside"), "{e}");
        // The key's own material under another id (a key passing as someone else's): refused too.
        let mut env = Envelope::read(&path, Kind::SecretKey).unwrap();
        env.body = zeroize::Zeroizing::new(key.sk.to_bytes().to_vec());
        env.key_id = KeyId([9; 16]);
        env.write(&path).unwrap();
        let e = ClientKey::load(&path).err().unwrap().to_string();
        assert!(e.contains("is not the id of the key inside"), "{e}");
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
        let err = ClientKey::load(&path).err().unwrap();
        let e = err.to_string();
        assert!(
            e.contains("old.key: secret key made by another version of vsp (make new keys with"),
            "{e}"
        );
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert!(cause.contains("parameter fingerprint mismatch"), "{cause}");
        assert!(
            !e.contains("corrupt") && !cause.contains("corrupt"),
            "{e}: {cause}"
        );
        // A damaged key is still called corrupt.
        let key = generate_secret("default", &Params::default_128()).unwrap();
        let mut env = Envelope::read(&path, Kind::SecretKey).unwrap();
        let mut body = key.sk.to_bytes().to_vec();
        body.truncate(body.len() - 1);
        env.body = zeroize::Zeroizing::new(body);
        env.write(&path).unwrap();
        let e = ClientKey::load(&path).err().unwrap().to_string();
        assert!(e.contains("old.key: corrupt secret key"), "{e}");
    }
}
