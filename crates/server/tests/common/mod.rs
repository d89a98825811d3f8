//! Shared by the server's tests: one secret key, its evaluation key and fib's request, made once
//! per test binary; a server on 127.0.0.1 with an OS-assigned port over a fresh data folder.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use vsp_platform::keys::{self, ClientKey};
use vsp_platform::{Memory, PlainRequest};
use vsp_server::client::Client;
use vsp_server::{Config, Server};

pub struct Keys {
    pub dir: tempfile::TempDir,
    pub sk: PathBuf,
    pub ek: PathBuf,
    pub request: PathBuf,
    pub plain: PlainRequest,
}

/// fib(5)'s request under a fresh key (default parameters), made once.
pub fn keys() -> &'static Keys {
    static K: OnceLock<Keys> = OnceLock::new();
    K.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let params = keys::params_by_name("default", false).unwrap();
        let key = keys::generate_secret("default", &params).unwrap();
        let sk = dir.path().join("sk.key");
        let ek = dir.path().join("ek.key");
        key.save(&sk).unwrap();
        key.save_eval_key(&ek).unwrap();
        let p = &vsp_cahp::programs::FIB;
        let image = vsp_cahp::assemble(p.source, p.name).unwrap();
        let args: Vec<String> = p.args.iter().map(|s| s.to_string()).collect();
        let plain = PlainRequest::new(&image, &args, Memory::Cmux).unwrap();
        let request = dir.path().join("fib.enc");
        plain
            .encrypt(&key)
            .unwrap()
            .to_envelope()
            .write(&request)
            .unwrap();
        Keys {
            dir,
            sk,
            ek,
            request,
            plain,
        }
    })
}

pub fn client_key() -> ClientKey {
    ClientKey::load(&keys().sk).unwrap()
}

/// A server on 127.0.0.1:0 over `data`, configured by `f`.
pub fn server(data: &Path, f: impl FnOnce(&mut Config)) -> Server {
    let mut cfg = Config::new(data.to_path_buf());
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.snapshot_secs = 0;
    cfg.threads = Some(2);
    f(&mut cfg);
    Server::start(cfg).unwrap()
}

/// A token for `name` on the server whose data folder is `data`, and a client of `srv` with it.
pub fn client(srv: &Server, data: &Path, name: &str) -> (String, Client) {
    let token = vsp_server::token_add(data, name).unwrap();
    let c = Client::new(&url(srv), &token).unwrap();
    (token, c)
}

pub fn url(s: &Server) -> String {
    format!("http://{}", s.addr())
}

/// Every file under `dir` (recursively), relative names.
pub fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// The files of the data folder other than the database's.
pub fn job_and_key_files(data: &Path) -> Vec<String> {
    files(data)
        .into_iter()
        .filter(|f| !f.starts_with("vsp-server."))
        .collect()
}
