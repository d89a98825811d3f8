//! The client of the API (`vsp remote`): blocking, plain HTTP (TLS is a reverse proxy's job on
//! the server's side; see docs/server.md). Every refusal of the server is a
//! [`ServerError::Refused`] with its one-line reason; files are checked before they are sent
//! (envelope, kind, size against the server's limit) and a fetched result is checked before it is
//! written, atomically.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use vsp_codec::text::{fmt_bytes, fmt_secs};
use vsp_codec::Access;
use vsp_platform::{ClientKey, Decrypted, Envelope, Kind};

use crate::error::{Result, ServerError};
use crate::store::{hex, is_id, JobStatus};

mod submit;
pub use submit::{Follower, SubmitFollow, Submitted, UntilFinished};

/// Longest JSON answer read.
const MAX_JSON: u64 = 16 << 20;
/// Largest result fetched.
const MAX_RESULT: u64 = 1 << 30;
/// Longest token file.
const MAX_TOKEN_FILE: u64 = 4096;

/// What a key upload did.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyUpload {
    pub key_id: String,
    pub params: String,
    pub bytes: u64,
    /// False when the server had the key already (nothing was sent).
    pub created: bool,
    /// Seconds the upload (or the check that the server has the key) took.
    #[serde(skip)]
    pub seconds: f64,
}

impl std::fmt::Display for KeyUpload {
    /// `uploaded key ID (default, 216.0 MiB) in 12s`, or `the server has key ID already`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = &self.key_id;
        if !self.created {
            return write!(f, "the server has key {id} already");
        }
        let (size, secs) = (fmt_bytes(self.bytes), fmt_secs(self.seconds));
        write!(f, "uploaded key {id} ({}, {size}) in {secs}", self.params)
    }
}

/// The server's limits (`GET /v1/info`).
#[derive(Debug, Clone, Deserialize)]
pub struct Info {
    pub max_key_bytes: u64,
    pub max_request_bytes: u64,
    pub max_cycles: u64,
    pub jobs: usize,
    pub queue: usize,
}

/// A job to submit (`vsp remote submit`): a request for the processor on `core`, or with
/// `netlist` a circuit request (`vsp circuit enc`) for that Yosys JSON netlist, after one public
/// reset cycle when `reset`.
pub struct Submission<'a> {
    pub request: &'a Path,
    pub cycles: u64,
    pub core: &'a str,
    pub netlist: Option<&'a Path>,
    pub reset: bool,
}

/// How far [`Client::follow`] follows a job.
pub enum Follow<'a> {
    /// Until it is done; then its result is fetched.
    Done,
    /// Until the program finishes ([`Client::until_finished`]).
    UntilFinished {
        key: &'a ClientKey,
        step: u64,
        max_cycles: u64,
    },
}

/// What [`Client::follow`] ended with (the result is written either way).
pub enum Followed {
    /// The done job's result, of this many bytes.
    Fetched(u64),
    /// The finished program's decrypted state.
    Finished(Decrypted),
}

/// Where `vsp remote submit --wait` writes job `id`'s result by default.
pub fn result_path(id: &str) -> PathBuf {
    PathBuf::from(format!("{id}.result.enc"))
}

/// A connection to one server with one token.
pub struct Client {
    base: String,
    token: String,
    agent: ureq::Agent,
}

impl Client {
    /// A client of `server` (`http://HOST:PORT`) with `token`.
    pub fn new(server: &str, token: &str) -> Result<Client> {
        let base = server.trim_end_matches('/').to_string();
        if base.starts_with("https://") {
            return Err(ServerError::Usage(format!(
                "{server}: this client speaks plain HTTP; reach a TLS proxy through a tunnel (docs/server.md)"
            )));
        }
        if !base.starts_with("http://") {
            return Err(ServerError::Usage(format!(
                "{server}: the server URL starts with http:// (e.g. http://127.0.0.1:8470)"
            )));
        }
        let token = token.trim().to_string();
        if token.is_empty() || token.len() > 256 || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ServerError::Usage(
                "the token is empty or not a token (`vsp serve token add NAME` prints one)".into(),
            ));
        }
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout_read(Duration::from_secs(120))
            .timeout_write(Duration::from_secs(600))
            .build();
        Ok(Client { base, token, agent })
    }

    /// A client whose token is the first line of `path`.
    pub fn with_token_file(server: &str, path: &Path) -> Result<Client> {
        let f = std::fs::File::open(path).map_err(|e| ServerError::io("cannot read", path, e))?;
        let mut s = String::new();
        f.take(MAX_TOKEN_FILE)
            .read_to_string(&mut s)
            .map_err(|e| ServerError::io("cannot read", path, e))?;
        let token = s.lines().next().unwrap_or("");
        Client::new(server, token).map_err(|e| match e {
            ServerError::Usage(m) => ServerError::Usage(format!("{}: {m}", path.display())),
            e => e,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn req(&self, method: &str, path: &str) -> ureq::Request {
        self.agent
            .request(method, &self.url(path))
            .set("Authorization", &format!("Bearer {}", self.token))
    }

    /// The answer, or the server's refusal / the transport's failure as one line.
    fn check(&self, r: std::result::Result<ureq::Response, ureq::Error>) -> Result<ureq::Response> {
        match r {
            Ok(r) => Ok(r),
            Err(ureq::Error::Status(status, resp)) => {
                let mut body = String::new();
                let _ = resp.into_reader().take(64 << 10).read_to_string(&mut body);
                let message = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v["error"].as_str().map(str::to_string))
                    .unwrap_or_else(|| body.lines().next().unwrap_or("").to_string());
                Err(ServerError::Refused { status, message })
            }
            Err(ureq::Error::Transport(t)) => Err(ServerError::Http(format!(
                "cannot talk to {}: {}",
                self.base,
                t.to_string().replace('\n', " ")
            ))),
        }
    }

    fn json<T: DeserializeOwned>(&self, r: ureq::Response) -> Result<T> {
        let mut body = String::new();
        r.into_reader()
            .take(MAX_JSON)
            .read_to_string(&mut body)
            .map_err(|e| {
                ServerError::Http(format!("the answer of {} broke off: {e}", self.base))
            })?;
        serde_json::from_str(&body)
            .map_err(|e| ServerError::Http(format!("unexpected answer from {}: {e}", self.base)))
    }

    /// The server's limits.
    pub fn info(&self) -> Result<Info> {
        let r = self.check(self.req("GET", "/v1/info").call())?;
        self.json(r)
    }

    /// Uploads the evaluation key at `path` unless the server has it (named by its key id).
    pub fn key_upload(&self, path: &Path) -> Result<KeyUpload> {
        let t = std::time::Instant::now();
        let mut up = self.upload_key_file(path)?;
        up.seconds = t.elapsed().as_secs_f64();
        Ok(up)
    }

    fn upload_key_file(&self, path: &Path) -> Result<KeyUpload> {
        let env = Envelope::read(path, Kind::EvalKey)?;
        let key_id = hex(&env.key_id.0);
        drop(env);
        match self.check(self.req("GET", &format!("/v1/keys/{key_id}")).call()) {
            Ok(r) => return self.json(r),
            Err(ServerError::Refused { status: 404, .. }) => {}
            Err(e) => return Err(e),
        }
        let size = self.check_size(path, Kind::EvalKey, |i| i.max_key_bytes)?;
        let file =
            std::fs::File::open(path).map_err(|e| ServerError::io("cannot read", path, e))?;
        let r = self.check(
            self.req("PUT", &format!("/v1/keys/{key_id}"))
                .set("Content-Type", "application/octet-stream")
                .set("Content-Length", &size.to_string())
                .send(file),
        )?;
        self.json(r)
    }

    /// Refuses a file larger than the server takes; returns its size.
    fn check_size(&self, path: &Path, kind: Kind, limit: fn(&Info) -> u64) -> Result<u64> {
        let size = std::fs::metadata(path)
            .map_err(|e| ServerError::io("cannot read", path, e))?
            .len();
        let max = limit(&self.info()?);
        if size > max {
            return Err(ServerError::Usage(format!(
                "{}: the {kind} is {size} bytes, more than the server's limit of {max}",
                path.display()
            )));
        }
        Ok(size)
    }

    /// Submits the request at `path` for `cycles` cycles on `core`.
    pub fn submit(&self, path: &Path, cycles: u64, core: &str) -> Result<JobStatus> {
        self.post_job(path, cycles, &[("core", core.to_string())])
    }

    /// Uploads the Yosys JSON netlist at `path` unless the server has it (named by its
    /// SHA3-256); returns that name.
    pub fn design_upload(&self, path: &Path) -> Result<String> {
        let f = std::fs::File::open(path).map_err(|e| ServerError::io("cannot read", path, e))?;
        let mut text = Vec::new();
        f.take(crate::api::MAX_DESIGN_BYTES + 1)
            .read_to_end(&mut text)
            .map_err(|e| ServerError::io("cannot read", path, e))?;
        if text.len() as u64 > crate::api::MAX_DESIGN_BYTES {
            return Err(ServerError::Usage(format!(
                "{}: more than the {} bytes a netlist may have",
                path.display(),
                crate::api::MAX_DESIGN_BYTES
            )));
        }
        let hash = crate::store::sha3_hex(&text);
        let url = format!("/v1/designs/{hash}");
        match self.check(self.req("GET", &url).call()) {
            Ok(_) => return Ok(hash),
            Err(ServerError::Refused { status: 404, .. }) => {}
            Err(e) => return Err(e),
        }
        self.check(
            self.req("PUT", &url)
                .set("Content-Type", "application/json")
                .send_bytes(&text),
        )?;
        Ok(hash)
    }

    /// Submits a circuit request (`vsp circuit enc`) for the netlist at `design` (uploaded first
    /// unless the server has it), for `cycles` cycles, after a public reset cycle when `reset`.
    pub fn submit_circuit(
        &self,
        path: &Path,
        design: &Path,
        cycles: u64,
        reset: bool,
    ) -> Result<JobStatus> {
        let hash = self.design_upload(design)?;
        self.post_job(
            path,
            cycles,
            &[("design", hash), ("reset", reset.to_string())],
        )
    }

    /// Submits `s` (uploading its netlist first unless the server has it).
    pub fn submit_job(&self, s: &Submission<'_>) -> Result<JobStatus> {
        match s.netlist {
            Some(n) => self.submit_circuit(s.request, n, s.cycles, s.reset),
            None => self.submit(s.request, s.cycles, s.core),
        }
    }

    /// Follows job `id` as far as `how` says (`on` sees every status) and writes its result to
    /// `out`.
    pub fn follow(
        &self,
        id: &str,
        how: Follow<'_>,
        out: &Path,
        on: &mut dyn FnMut(&JobStatus),
    ) -> Result<Followed> {
        match how {
            Follow::Done => {
                self.wait_done(id, on)?;
                Ok(Followed::Fetched(self.fetch(id, out)?))
            }
            Follow::UntilFinished {
                key,
                step,
                max_cycles,
            } => self
                .until_finished(id, key, step, max_cycles, out, on)
                .map(Followed::Finished),
        }
    }

    fn post_job(&self, path: &Path, cycles: u64, query: &[(&str, String)]) -> Result<JobStatus> {
        if cycles == 0 {
            return Err(ServerError::Usage("a job runs at least 1 cycle".into()));
        }
        Envelope::read(path, Kind::Request)?;
        let size = self.check_size(path, Kind::Request, |i| i.max_request_bytes)?;
        let file =
            std::fs::File::open(path).map_err(|e| ServerError::io("cannot read", path, e))?;
        let mut req = self
            .req("POST", "/v1/jobs")
            .query("cycles", &cycles.to_string());
        for (k, v) in query {
            req = req.query(k, v);
        }
        let r = self.check(
            req.set("Content-Type", "application/octet-stream")
                .set("Content-Length", &size.to_string())
                .send(file),
        )?;
        self.json(r)
    }

    fn job_path(id: &str, tail: &str) -> Result<String> {
        if !is_id(id) {
            return Err(ServerError::Usage(format!(
                "{id:?} is not a job id (32 hex digits, as `vsp remote submit` prints)"
            )));
        }
        Ok(format!("/v1/jobs/{id}{tail}"))
    }

    /// A job's status.
    pub fn status(&self, id: &str) -> Result<JobStatus> {
        let r = self.check(self.req("GET", &Self::job_path(id, "")?).call())?;
        self.json(r)
    }

    /// This client's jobs.
    pub fn list(&self) -> Result<Vec<JobStatus>> {
        let r = self.check(self.req("GET", "/v1/jobs").call())?;
        self.json(r)
    }

    /// Job `id`'s status, or (without an id) every job of this client's (`vsp remote status`).
    pub fn statuses(&self, id: Option<&str>) -> Result<Vec<JobStatus>> {
        match id {
            Some(id) => Ok(vec![self.status(id)?]),
            None => self.list(),
        }
    }

    /// Cancels a job.
    pub fn cancel(&self, id: &str) -> Result<JobStatus> {
        let r = self.check(self.req("POST", &Self::job_path(id, "/cancel")?).call())?;
        self.json(r)
    }

    /// Gives a done job `cycles` more cycles (it resumes from where it ended).
    pub fn extend(&self, id: &str, cycles: u64) -> Result<JobStatus> {
        let r = self.check(
            self.req("POST", &Self::job_path(id, "/extend")?)
                .query("cycles", &cycles.to_string())
                .call(),
        )?;
        self.json(r)
    }

    /// Runs job `id` until its program finishes, which only the secret key can tell: waits,
    /// fetches the result into `out`, decrypts its finish flag, and while it is not set extends
    /// the job by `step` cycles (at most `max_cycles` in all). Returns the decrypted state.
    pub fn until_finished(
        &self,
        id: &str,
        key: &ClientKey,
        step: u64,
        max_cycles: u64,
        out: &Path,
        on: &mut dyn FnMut(&JobStatus),
    ) -> Result<Decrypted> {
        loop {
            let st = self.wait(id, Duration::from_secs(300), on)?;
            if st.state != crate::JobState::Done {
                return Err(ServerError::Job(format!(
                    "job {id} ended {}{}",
                    st.state.as_str(),
                    st.error.map(|e| format!(": {e}")).unwrap_or_default()
                )));
            }
            self.fetch(id, out)?;
            let env = Envelope::read(out, Kind::Result)?;
            let d = vsp_platform::decrypt_result(key, &env)?;
            if d.finished {
                return Ok(d);
            }
            if st.cycles >= max_cycles {
                return Err(ServerError::Job(format!(
                    "the program has not finished after {} cycles (the limit)",
                    st.cycles
                )));
            }
            self.extend(id, step.min(max_cycles - st.cycles).max(1))?;
        }
    }

    /// Deletes a job and its files on the server.
    pub fn delete(&self, id: &str) -> Result<()> {
        self.check(self.req("DELETE", &Self::job_path(id, "")?).call())?;
        Ok(())
    }

    /// Follows a job's progress stream once: `on` sees every status; returns the last one (final
    /// unless the stream broke off).
    pub fn watch_once(&self, id: &str, on: &mut dyn FnMut(&JobStatus)) -> Result<JobStatus> {
        let r = self.check(
            self.req("GET", &Self::job_path(id, "/events")?)
                .set("Accept", "text/event-stream")
                .call(),
        )?;
        let mut last: Option<JobStatus> = None;
        let mut event = String::new();
        let mut data = String::new();
        let reader = BufReader::new(r.into_reader());
        for line in reader.lines() {
            let Ok(line) = line else { break };
            if line.len() > MAX_JSON as usize {
                break;
            }
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            } else if line.is_empty() {
                match event.as_str() {
                    "status" => {
                        let st: JobStatus = serde_json::from_str(&data).map_err(|e| {
                            ServerError::Http(format!("unexpected event from {}: {e}", self.base))
                        })?;
                        on(&st);
                        let end = st.state.is_final();
                        last = Some(st);
                        if end {
                            break;
                        }
                    }
                    "gone" => return Err(ServerError::Job(format!("job {id} was deleted"))),
                    _ => {}
                }
                event.clear();
                data.clear();
            }
        }
        match last {
            Some(st) => Ok(st),
            None => self.status(id),
        }
    }

    /// Follows a job until it is done, failed or cancelled, reconnecting while the server
    /// restarts (for up to `patience`).
    pub fn wait(
        &self,
        id: &str,
        patience: Duration,
        on: &mut dyn FnMut(&JobStatus),
    ) -> Result<JobStatus> {
        let mut since = std::time::Instant::now();
        loop {
            match self.watch_once(id, on) {
                Ok(st) if st.state.is_final() => return Ok(st),
                Ok(_) => since = std::time::Instant::now(),
                Err(ServerError::Http(m)) => {
                    if since.elapsed() > patience {
                        return Err(ServerError::Http(m));
                    }
                }
                Err(e) => return Err(e),
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// [`Client::wait`] (five minutes' patience), refusing a job that ended other than done.
    pub fn wait_done(&self, id: &str, on: &mut dyn FnMut(&JobStatus)) -> Result<JobStatus> {
        let st = self.wait(id, Duration::from_secs(300), on)?;
        match st.state {
            crate::JobState::Done => Ok(st),
            _ => Err(ServerError::Job(format!("job {id} ended {}", st.line()))),
        }
    }

    /// Fetches a done job's result into `out` (checked, then written atomically); returns its size.
    pub fn fetch(&self, id: &str, out: &Path) -> Result<u64> {
        vsp_codec::check_output(out, &[])?;
        let r = self.check(self.req("GET", &Self::job_path(id, "/result")?).call())?;
        let announced = r
            .header("Content-Length")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        if announced > MAX_RESULT {
            return Err(ServerError::Http(format!(
                "the result is {announced} bytes, more than this client takes ({MAX_RESULT})"
            )));
        }
        let mut bytes = Vec::with_capacity(announced as usize);
        r.into_reader()
            .take(MAX_RESULT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ServerError::Http(format!("the result broke off: {e}")))?;
        if bytes.len() as u64 > MAX_RESULT {
            return Err(ServerError::Http(format!(
                "the result is more than this client takes ({MAX_RESULT} bytes)"
            )));
        }
        Envelope::from_bytes(&bytes, Kind::Result).map_err(|e| {
            ServerError::Http(format!(
                "the server sent a bad result: {}",
                crate::error::chain(&e)
            ))
        })?;
        vsp_codec::write_atomic(out, &bytes, Access::Public)?;
        Ok(bytes.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::KeyUpload;

    #[test]
    fn a_key_upload_says_what_it_did() {
        let mut up = KeyUpload {
            key_id: "ab".repeat(16),
            params: "default".into(),
            bytes: 3 << 20,
            created: true,
            seconds: 75.0,
        };
        let id = "ab".repeat(16);
        let note = format!("uploaded key {id} (default, 3.0 MiB) in 1m15s");
        assert_eq!(up.to_string(), note);
        up.created = false;
        assert_eq!(up.to_string(), format!("the server has key {id} already"));
    }
}
