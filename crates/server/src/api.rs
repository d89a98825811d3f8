//! The HTTP API (docs/server.md). JSON for metadata, binary bodies for keys, requests and results.
//!
//! Processor jobs run a request of `vsp enc`; circuit jobs a request of `vsp circuit enc` on a
//! Yosys JSON netlist uploaded before (`/v1/designs/SHA3`).
//!
//! Every route but `/` and `/v1/info` needs `Authorization: Bearer TOKEN`; a client sees only its
//! own keys and jobs, and another client's job gets the answer a job that does not exist gets.
//! Uploads are bounded (`Content-Length` and the envelope's announced length checked against the
//! limit before the body is read, the bytes counted as they arrive), held in memory while they are
//! checked (envelope, checksum, key id, the body's parse) and written atomically only once they
//! passed, so a refused upload leaves nothing on disk. Errors are `{"error": "one line"}`.

use std::convert::Infallible;
use std::os::unix::fs::DirBuilderExt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, BodyDataStream};
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use vsp_codec::{Access, FileCodec};
use vsp_platform::design::{load_design, netlist_blueprint, CircuitRequest};
use vsp_platform::keys::EvalKeyFile;
use vsp_platform::processor::program;
use vsp_platform::wire::envelope::FORMAT;
use vsp_platform::{keys, Envelope, Kind, Request};

use crate::error::ServerError;
use crate::store::{hex, is_hash, is_id, random_hex, sha3_hex, Job, JobStatus};
use crate::worker::Shared;
use crate::MAX_CYCLES;

/// An error answer: status, one line, and `Retry-After` for a full queue.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<u64>,
}

fn err(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError {
        status,
        message: message.into(),
        retry_after: None,
    }
}

fn no_job() -> ApiError {
    err(StatusCode::NOT_FOUND, "no such job")
}

fn queue_full() -> ApiError {
    ApiError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        message: "the queue is full; try again later".into(),
        retry_after: Some(30),
    }
}

impl From<ServerError> for ApiError {
    fn from(e: ServerError) -> Self {
        let message = e.chain();
        eprintln!("error: {message}");
        err(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// The API's routes over the shared state.
pub fn router(sh: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/v1/info", get(info))
        .route("/v1/keys/{key_id}", get(key_get).put(key_put))
        .route("/v1/designs/{hash}", get(design_get).put(design_put))
        .route("/v1/jobs", get(jobs_list).post(job_submit))
        .route("/v1/jobs/{id}", get(job_status).delete(job_delete))
        .route("/v1/jobs/{id}/events", get(job_events))
        .route("/v1/jobs/{id}/cancel", post(job_cancel))
        .route("/v1/jobs/{id}/extend", post(job_extend))
        .route("/v1/jobs/{id}/result", get(job_result))
        // Bodies are bounded by the upload reader, per kind.
        .layer(DefaultBodyLimit::disable())
        .with_state(sh)
}

/// The client a request's bearer token belongs to.
fn client(sh: &Shared, headers: &HeaderMap) -> ApiResult<String> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.len() <= 256)
        .ok_or_else(|| {
            err(
                StatusCode::UNAUTHORIZED,
                "missing bearer token (Authorization: Bearer TOKEN; `vsp serve token add NAME` makes one)",
            )
        })?;
    sh.store()
        .client_of(token)?
        .ok_or_else(|| err(StatusCode::UNAUTHORIZED, "unknown or revoked token"))
}

/// Job `id` of `client`, or the same 404 for a job of another client and a job that is not.
fn owned(sh: &Shared, client: &str, id: &str) -> ApiResult<JobStatus> {
    if !is_id(id) {
        return Err(no_job());
    }
    sh.status(client, id)?.ok_or_else(no_job)
}

async fn page() -> Html<&'static str> {
    Html(crate::page::PAGE)
}

async fn info(State(sh): State<Arc<Shared>>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "server": "vsp-server",
        "version": env!("CARGO_PKG_VERSION"),
        "max_key_bytes": sh.cfg.max_key_bytes,
        "max_request_bytes": sh.cfg.max_request_bytes,
        "max_cycles": MAX_CYCLES,
        "jobs": sh.cfg.jobs,
        "queue": sh.cfg.queue,
    }))
}

fn key_json(key_id: &str, params: &str, bytes: u64, created: bool) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "key_id": key_id, "params": params, "bytes": bytes, "created": created,
    }))
}

async fn key_get(
    State(sh): State<Arc<Shared>>,
    UrlPath(key_id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let client = client(&sh, &headers)?;
    let no_key = || err(StatusCode::NOT_FOUND, "no such key");
    if !is_id(&key_id) {
        return Err(no_key());
    }
    let (params, bytes) = sh.store().key(&client, &key_id)?.ok_or_else(no_key)?;
    Ok(key_json(&key_id, &params, bytes, false).into_response())
}

async fn key_put(
    State(sh): State<Arc<Shared>>,
    UrlPath(key_id): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let client = client(&sh, &headers)?;
    if !is_id(&key_id) {
        drain(&mut body.into_data_stream(), sh.cfg.max_key_bytes).await;
        return Err(err(
            StatusCode::BAD_REQUEST,
            "a key is named by its key id: 32 lowercase hex digits",
        ));
    }
    // Named by its id: a second upload is a no-op, answered before its body is read.
    if let Some((params, bytes)) = sh.store().key(&client, &key_id)? {
        return Ok(key_json(&key_id, &params, bytes, false).into_response());
    }
    let _slot = upload_slot(&sh).await?;
    let bytes = read_body(&headers, body, sh.cfg.max_key_bytes, Kind::EvalKey).await?;
    let sh2 = sh.clone();
    let name = key_id.clone();
    let r = tokio::task::spawn_blocking(move || -> ApiResult<(String, u64)> {
        let bad = |e: vsp_platform::PlatformError| {
            err(
                StatusCode::BAD_REQUEST,
                format!("not a valid evaluation key: {}", crate::error::chain(&e)),
            )
        };
        let env = Envelope::from_bytes(&bytes, Kind::EvalKey).map_err(bad)?;
        let id = hex(&env.key_id.0);
        if id != key_id {
            return Err(err(
                StatusCode::BAD_REQUEST,
                format!("the uploaded key's id is {id}, not {key_id} as the URL says"),
            ));
        }
        keys::params_by_name(&env.params, true).map_err(bad)?;
        EvalKeyFile::decode(&bytes, &()).map_err(|e| bad(e.in_file("the uploaded key")))?;
        let store = sh2.store();
        write_upload(&store.key_path(&client, &key_id), &bytes)?;
        store.add_key(&client, &key_id, &env.params, bytes.len() as u64)?;
        Ok((env.params.clone(), bytes.len() as u64))
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let (params, n) = r?;
    Ok((StatusCode::CREATED, key_json(&name, &params, n, true)).into_response())
}

/// Writes an upload at `path` of the client's store, its folder created (0700) first.
fn write_upload(path: &std::path::Path, bytes: &[u8]) -> Result<(), ServerError> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| ServerError::io("cannot create", dir, e))?;
    }
    Ok(vsp_codec::write_atomic(path, bytes, Access::Public)?)
}

/// One of the upload slots (uploads at once are bounded), held until dropped.
async fn upload_slot(sh: &Shared) -> ApiResult<tokio::sync::SemaphorePermit<'_>> {
    sh.uploads
        .acquire()
        .await
        .map_err(|_| err(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"))
}

/// Largest netlist accepted.
pub const MAX_DESIGN_BYTES: u64 = 64 << 20;

fn design_json(hash: &str, bytes: u64, created: bool) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "hash": hash, "bytes": bytes, "created": created }))
}

async fn design_get(
    State(sh): State<Arc<Shared>>,
    UrlPath(hash): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Json<serde_json::Value>> {
    let client = client(&sh, &headers)?;
    let none = || err(StatusCode::NOT_FOUND, "no such netlist");
    if !is_hash(&hash) {
        return Err(none());
    }
    let bytes = sh.store().design(&client, &hash)?.ok_or_else(none)?;
    Ok(design_json(&hash, bytes, false))
}

/// Uploads a circuit's Yosys JSON netlist, named by its SHA3-256 (a blueprint would name other
/// files: only self-contained netlists are taken). It must compile.
async fn design_put(
    State(sh): State<Arc<Shared>>,
    UrlPath(hash): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let client = client(&sh, &headers)?;
    if !is_hash(&hash) {
        drain(&mut body.into_data_stream(), MAX_DESIGN_BYTES).await;
        return Err(err(
            StatusCode::BAD_REQUEST,
            "a netlist is named by its SHA3-256: 64 lowercase hex digits",
        ));
    }
    if let Some(bytes) = sh.store().design(&client, &hash)? {
        return Ok(design_json(&hash, bytes, false).into_response());
    }
    let _slot = upload_slot(&sh).await?;
    let mut stream = body.into_data_stream();
    let mut seen = 0;
    let bytes = read_stream(&headers, &mut stream, MAX_DESIGN_BYTES, None, &mut seen).await?;
    let sh2 = sh.clone();
    let name = hash.clone();
    let n = tokio::task::spawn_blocking(move || -> ApiResult<u64> {
        let bad = |m: String| err(StatusCode::BAD_REQUEST, format!("not a valid netlist: {m}"));
        let got = sha3_hex(&bytes);
        if got != hash {
            return Err(bad(format!(
                "its SHA3-256 is {got}, not {hash} as the URL says"
            )));
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| bad("not UTF-8 text".into()))?;
        if !text.trim_start().starts_with('{') {
            return Err(bad(
                "not a Yosys JSON netlist (a blueprint names other files: upload its netlist)"
                    .into(),
            ));
        }
        let bp = netlist_blueprint(text).map_err(|e| bad(crate::error::chain(&e)))?;
        let bp = vsp_circuit::Blueprint::from_str_with_resolver(&bp, |_| Ok(text.to_string()))
            .map_err(|e| bad(crate::error::chain(&e)))?;
        vsp_circuit::Circuit::compile(&bp).map_err(|e| bad(crate::error::chain(&e)))?;
        let store = sh2.store();
        write_upload(&store.design_path(&client, &hash), &bytes)?;
        store.add_design(&client, &hash, bytes.len() as u64)?;
        Ok(bytes.len() as u64)
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    Ok((StatusCode::CREATED, design_json(&name, n, true)).into_response())
}

#[derive(Deserialize)]
struct SubmitQuery {
    cycles: u64,
    core: Option<String>,
    /// A circuit job: the uploaded netlist's SHA3-256.
    design: Option<String>,
    /// A circuit job: one public reset cycle first.
    #[serde(default)]
    reset: bool,
}

/// What a submission asks for.
struct Submit {
    cycles: u64,
    core: String,
    design: Option<String>,
    reset: bool,
}

/// What a submission asks for; a full queue is refused here, before the body is checked.
fn submit_args(
    sh: &Shared,
    client: &str,
    query: Result<Query<SubmitQuery>, QueryRejection>,
) -> ApiResult<Submit> {
    let Query(q) = query.map_err(|e| {
        err(
            StatusCode::BAD_REQUEST,
            format!(
                "{} (submit with ?cycles=N[&core=pearl|ruby] or ?cycles=N&design=SHA3[&reset=true])",
                e.body_text()
            ),
        )
    })?;
    if !(1..=MAX_CYCLES).contains(&q.cycles) {
        return Err(err(
            StatusCode::BAD_REQUEST,
            format!("a job runs from 1 to {MAX_CYCLES} cycles"),
        ));
    }
    let core = match (&q.design, q.core) {
        (Some(d), None) => {
            if !is_hash(d) || sh.store().design(client, d)?.is_none() {
                return Err(err(
                    StatusCode::BAD_REQUEST,
                    format!("no netlist {d} of yours: upload it first (PUT /v1/designs/SHA3)"),
                ));
            }
            "circuit".to_string()
        }
        (Some(_), Some(_)) => {
            return Err(err(
                StatusCode::BAD_REQUEST,
                "a circuit job (design=…) runs no core",
            ))
        }
        (None, core) => {
            if q.reset {
                return Err(err(
                    StatusCode::BAD_REQUEST,
                    "reset=true is for circuit jobs (the cores power up in their reset state)",
                ));
            }
            program::parse_core(core.as_deref().unwrap_or("pearl"))
                .map_err(|e| err(StatusCode::BAD_REQUEST, e.to_string()))?
                .name()
                .to_string()
        }
    };
    if sh.store().queued()? >= sh.cfg.queue {
        return Err(queue_full());
    }
    Ok(Submit {
        cycles: q.cycles,
        core,
        design: q.design,
        reset: q.reset,
    })
}

async fn job_submit(
    State(sh): State<Arc<Shared>>,
    query: Result<Query<SubmitQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let client = client(&sh, &headers)?;
    let max = sh.cfg.max_request_bytes;
    // Refusals before the body is read drain it (bounded), so that a client still sending it
    // reads the answer rather than a reset connection.
    let sub = match submit_args(&sh, &client, query) {
        Ok(a) => a,
        Err(e) => {
            drain(&mut body.into_data_stream(), max).await;
            return Err(e);
        }
    };
    let _slot = upload_slot(&sh).await?;
    if sh.store().queued()? >= sh.cfg.queue {
        drain(&mut body.into_data_stream(), max).await;
        return Err(queue_full());
    }
    let bytes = read_body(&headers, body, sh.cfg.max_request_bytes, Kind::Request).await?;
    let sh2 = sh.clone();
    let owner = client.clone();
    let id = tokio::task::spawn_blocking(move || -> ApiResult<String> {
        let bad = |e: vsp_platform::PlatformError| {
            err(
                StatusCode::BAD_REQUEST,
                format!("not a valid request: {}", crate::error::chain(&e)),
            )
        };
        let env = Envelope::from_bytes(&bytes, Kind::Request).map_err(bad)?;
        let key_id = hex(&env.key_id.0);
        let (params_name, _) = sh2.store().key(&client, &key_id)?.ok_or_else(|| {
            err(
                StatusCode::BAD_REQUEST,
                format!(
                    "the request is encrypted under key {key_id}, which you have not uploaded (`vsp remote key-upload`)"
                ),
            )
        })?;
        if params_name != env.params {
            return Err(err(
                StatusCode::BAD_REQUEST,
                format!(
                    "the request says parameter set {:?}, its key {key_id} is {params_name:?}",
                    env.params
                ),
            ));
        }
        let params = keys::params_by_name(&env.params, true).map_err(bad)?;
        match &sub.design {
            None => drop(Request::from_envelope(&env, &params).map_err(bad)?),
            Some(d) => {
                let circuit = load_design(&sh2.store().design_path(&client, d)).map_err(bad)?;
                if sub.reset && circuit.input("reset").is_none_or(|p| p.bits.len() != 1) {
                    return Err(err(
                        StatusCode::BAD_REQUEST,
                        "reset=true needs a 1-bit @reset input, which this netlist does not have",
                    ));
                }
                CircuitRequest::from_envelope(&env, &circuit, &params).map_err(bad)?;
            }
        }
        drop(env);
        let id = random_hex();
        let mut store = sh2.store();
        let dir = store.job_dir(&id);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| ServerError::io("cannot create", &dir, e))?;
        let job = Job {
            id: id.clone(),
            client,
            key_id,
            core: sub.core,
            cycles: sub.cycles,
            design: sub.design,
            reset: sub.reset,
        };
        let written = vsp_codec::write_atomic(&dir.join("request.enc"), &bytes, Access::Public)
            .map_err(ServerError::from)
            .and_then(|()| store.add_job(&job, sh2.cfg.queue));
        match written {
            Ok(Some(())) => Ok(id),
            Ok(None) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(queue_full())
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e.into())
            }
        }
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    sh.wake_one();
    let st = owned(&sh, &owner, &id)?;
    Ok((StatusCode::CREATED, Json(st)).into_response())
}

async fn jobs_list(
    State(sh): State<Arc<Shared>>,
    headers: HeaderMap,
) -> ApiResult<Json<Vec<JobStatus>>> {
    let client = client(&sh, &headers)?;
    Ok(Json(sh.list(&client)?))
}

async fn job_status(
    State(sh): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Json<JobStatus>> {
    let client = client(&sh, &headers)?;
    Ok(Json(owned(&sh, &client, &id)?))
}

async fn job_cancel(
    State(sh): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Json<JobStatus>> {
    let client = client(&sh, &headers)?;
    let st = owned(&sh, &client, &id)?;
    if st.state.is_final() {
        return Err(err(
            StatusCode::CONFLICT,
            format!("the job is {} already", st.state.as_str()),
        ));
    }
    sh.cancel(&id)?;
    Ok(Json(owned(&sh, &client, &id)?))
}

#[derive(Deserialize)]
struct ExtendQuery {
    cycles: u64,
}

/// More cycles for a done job: it is queued again and resumes from its final state.
async fn job_extend(
    State(sh): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    query: Result<Query<ExtendQuery>, QueryRejection>,
    headers: HeaderMap,
) -> ApiResult<Json<JobStatus>> {
    let client = client(&sh, &headers)?;
    let st = owned(&sh, &client, &id)?;
    let Query(q) = query.map_err(|e| {
        err(
            StatusCode::BAD_REQUEST,
            format!("{} (extend with ?cycles=N)", e.body_text()),
        )
    })?;
    if q.cycles == 0 || st.cycles.saturating_add(q.cycles) > MAX_CYCLES {
        return Err(err(
            StatusCode::BAD_REQUEST,
            format!("a job runs from 1 to {MAX_CYCLES} cycles in all"),
        ));
    }
    let extended = sh.store().extend(&id, q.cycles, sh.cfg.queue)?;
    match extended {
        None => return Err(queue_full()),
        Some(false) => {
            return Err(err(
                StatusCode::CONFLICT,
                format!(
                    "the job is {}: only a done job is extended",
                    st.state.as_str()
                ),
            ))
        }
        Some(true) => {}
    }
    sh.wake_one();
    Ok(Json(owned(&sh, &client, &id)?))
}

async fn job_delete(
    State(sh): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    let client = client(&sh, &headers)?;
    owned(&sh, &client, &id)?;
    sh.delete(&id)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn job_result(
    State(sh): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let client = client(&sh, &headers)?;
    let st = owned(&sh, &client, &id)?;
    if st.state != crate::JobState::Done {
        return Err(err(
            StatusCode::CONFLICT,
            format!("the job is {}: it has no result", st.state.as_str()),
        ));
    }
    let path = sh.store().job_dir(&id).join("result.enc");
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| ServerError::io("cannot open", &path, e))?;
    let len = file
        .metadata()
        .await
        .map_err(|e| ServerError::io("cannot read", &path, e))?
        .len();
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file));
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (header::CONTENT_LENGTH, HeaderValue::from(len)),
        ],
        body,
    )
        .into_response())
}

/// The job's status as server-sent events: one `status` event (the status JSON) at once and one
/// per change, ending after a final state; `gone` when the job is deleted.
async fn job_events(
    State(sh): State<Arc<Shared>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let client = client(&sh, &headers)?;
    owned(&sh, &client, &id)?;
    let rx = sh.changed.subscribe();
    let state = (sh, client, id, rx, None::<String>, false);
    let stream = futures_util::stream::unfold(state, |s| async move {
        let (sh, client, id, mut rx, last, ended) = s;
        if ended {
            return None;
        }
        loop {
            if sh.stop.load(Ordering::SeqCst) {
                return None;
            }
            let st = match sh.status(&client, &id) {
                Ok(st) => st,
                Err(_) => return None,
            };
            let Some(st) = st else {
                let ev = Event::default().event("gone").data("{}");
                return Some((Ok(ev), (sh, client, id, rx, last, true)));
            };
            let json = serde_json::to_string(&st).unwrap_or_default();
            if last.as_deref() != Some(json.as_str()) {
                let end = st.state.is_final();
                let ev = Event::default().event("status").data(json.clone());
                return Some((Ok(ev), (sh, client, id, rx, Some(json), end)));
            }
            // A change, or every 2 s; a closed channel means the server is stopping.
            let waited = tokio::time::timeout(Duration::from_secs(2), rx.changed()).await;
            if let Ok(Err(_)) = waited {
                return None;
            }
        }
    });
    Ok(Sse::new(stream.boxed()).keep_alive(KeepAlive::default()))
}

fn too_large(kind: impl std::fmt::Display, n: u64, max: u64) -> ApiError {
    err(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the {kind} is {n} bytes, more than this server's limit of {max}"),
    )
}

/// The whole file length a prefix of an envelope announces, once enough of it has arrived
/// (`None` until then); a wrong magic, version or kind is refused as soon as its bytes are there.
pub fn announced_length(buf: &[u8], kind: Kind) -> ApiResult<Option<u64>> {
    let bad = |m: String| err(StatusCode::BAD_REQUEST, m);
    let m = FORMAT.magic.len();
    let have = buf.len().min(m);
    if buf[..have] != FORMAT.magic[..have] {
        return Err(bad(format!("not a {kind} file (bad magic)")));
    }
    let Some(v) = buf.get(m..m + 2) else {
        return Ok(None);
    };
    let version = u16::from_le_bytes([v[0], v[1]]);
    if version != FORMAT.version {
        return Err(bad(format!(
            "unsupported vsp format version {version}: this server reads version {}",
            FORMAT.version
        )));
    }
    let Some(k) = buf.get(m + 2..m + 4) else {
        return Ok(None);
    };
    let found = u16::from_le_bytes([k[0], k[1]]);
    if found != kind as u16 {
        return Err(bad(format!(
            "found {}, expected {kind}",
            FORMAT.kind_name(found)
        )));
    }
    let Some(&plen) = buf.get(m + 4) else {
        return Ok(None);
    };
    let at = m + 5 + usize::from(plen);
    let Some(b) = buf.get(at..at + 8) else {
        return Ok(None);
    };
    let body = u64::from_le_bytes(b.try_into().unwrap_or([0xff; 8]));
    let total = body.saturating_add((at + 8 + vsp_codec::envelope::CHECKSUM_LEN) as u64);
    Ok(Some(total))
}

/// Reads and drops what remains of a refused upload, up to `budget` bytes and a minute, so that a
/// client still sending it reads the refusal instead of a reset connection.
async fn drain(stream: &mut BodyDataStream, budget: u64) {
    let mut left = budget;
    let _ = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(Ok(c)) = stream.next().await {
            match left.checked_sub(c.len() as u64) {
                Some(l) => left = l,
                None => break,
            }
        }
    })
    .await;
}

/// Reads an upload of `kind` of at most `max` bytes, checking its length as it streams; a
/// refused upload is drained up to `max` (an oversized one is not).
async fn read_body(headers: &HeaderMap, body: Body, max: u64, kind: Kind) -> ApiResult<Vec<u8>> {
    let mut stream = body.into_data_stream();
    let mut seen = 0u64;
    let r = read_stream(headers, &mut stream, max, Some(kind), &mut seen).await;
    if let Err(e) = &r {
        if e.status != StatusCode::PAYLOAD_TOO_LARGE {
            drain(&mut stream, max.saturating_sub(seen)).await;
        }
    }
    r
}

async fn read_stream(
    headers: &HeaderMap,
    stream: &mut BodyDataStream,
    max: u64,
    kind: Option<Kind>,
    seen: &mut u64,
) -> ApiResult<Vec<u8>> {
    // What is uploaded: an envelope of `kind`, checked as it arrives, or a netlist.
    let what = kind.map_or_else(|| "netlist".to_string(), |k| k.to_string());
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    if let Some(n) = announced.filter(|&n| n > max) {
        return Err(too_large(&what, n, max));
    }
    let cap = announced.unwrap_or(1 << 20).min(max).min(64 << 20);
    let mut buf = Vec::with_capacity(cap as usize);
    let mut total: Option<u64> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            err(
                StatusCode::BAD_REQUEST,
                format!("the upload broke off: {}", crate::error::chain(&e)),
            )
        })?;
        let len = (buf.len() as u64).saturating_add(chunk.len() as u64);
        *seen = len;
        if len > max {
            return Err(too_large(&what, len, max));
        }
        buf.extend_from_slice(&chunk);
        let Some(kind) = kind else { continue };
        if total.is_none() {
            total = announced_length(&buf, kind)?;
            if let Some(t) = total {
                if t > max {
                    return Err(too_large(kind, t, max));
                }
                if announced.is_some_and(|n| n != t) {
                    return Err(err(
                        StatusCode::BAD_REQUEST,
                        format!(
                            "corrupt {kind}: its header announces {t} bytes, the upload is {} bytes",
                            announced.unwrap_or(0)
                        ),
                    ));
                }
            }
        }
        if let Some(t) = total.filter(|&t| buf.len() as u64 > t) {
            return Err(err(
                StatusCode::BAD_REQUEST,
                format!("corrupt {kind}: longer than the {t} bytes its header announces"),
            ));
        }
    }
    match (kind, total) {
        (None, _) => Ok(buf),
        (Some(_), Some(t)) if t == buf.len() as u64 => Ok(buf),
        (Some(kind), _) => Err(err(
            StatusCode::BAD_REQUEST,
            format!(
                "truncated {kind}: the upload ended after {} bytes",
                buf.len()
            ),
        )),
    }
}
