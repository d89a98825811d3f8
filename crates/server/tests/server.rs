//! The server in-process on 127.0.0.1 (OS-assigned port) with its client: the encrypted fib run
//! through the service equals a direct run byte for byte; a second client sees nothing of the
//! first's jobs; oversized and corrupt uploads are refused with nothing left on disk; concurrent
//! submissions against a small queue are accepted or answered 503, and every accepted one ends.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{client, client_key, job_and_key_files, keys, server, url};
use vsp_platform::{decrypt_result, plain_state_after, Core, Envelope, KeyId, Kind, Machine};
use vsp_platform::{Request, ServerKeys};
use vsp_server::client::Client;
use vsp_server::{JobState, ServerError};

/// A raw HTTP/1.1 exchange: the head, then the body in chunks (chunked encoding when the head has
/// no Content-Length); returns status, head and body of the answer. Writes that fail (the server
/// refused and closed) end the sending.
fn raw(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let chunked = !head.to_ascii_lowercase().contains("content-length");
    for part in body.chunks(256 << 10) {
        let ok = if chunked {
            s.write_all(format!("{:x}\r\n", part.len()).as_bytes())
                .and_then(|()| s.write_all(part))
                .and_then(|()| s.write_all(b"\r\n"))
        } else {
            s.write_all(part)
        };
        if ok.is_err() {
            break;
        }
    }
    if chunked {
        let _ = s.write_all(b"0\r\n\r\n");
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).to_string();
    let (h, b) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = h
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    (status, h.to_string(), b.to_string())
}

fn head(method: &str, path: &str, token: &str, length: Option<usize>) -> String {
    let len = length
        .map(|n| format!("Content-Length: {n}\r\n"))
        .unwrap_or_else(|| "Transfer-Encoding: chunked\r\n".into());
    format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n{len}\r\n"
    )
}

fn hex(k: KeyId) -> String {
    k.0.iter().map(|b| format!("{b:02x}")).collect()
}

fn refused(r: Result<impl std::fmt::Debug, ServerError>) -> (u16, String) {
    match r {
        Err(ServerError::Refused { status, message }) => (status, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn fib_through_the_service_equals_a_direct_run_byte_for_byte() {
    const CYCLES: u64 = 2;
    let k = keys();
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let srv = server(data.path(), |_| {});
    let (_, c) = client(&srv, data.path(), "alice");

    let t = Instant::now();
    let up = c.key_upload(&k.ek).unwrap();
    let upload_s = t.elapsed().as_secs_f64();
    assert!(up.created);
    let again = c.key_upload(&k.ek).unwrap();
    assert!(!again.created, "a second upload is a no-op");
    assert_eq!(again.key_id, up.key_id);

    let t = Instant::now();
    let st = c.submit(&k.request, CYCLES, "pearl").unwrap();
    assert!(matches!(st.state, JobState::Queued | JobState::Running));
    assert_eq!(
        refused(c.fetch(&st.id, &out_dir.path().join("early"))).0,
        409
    );
    let mut seen = Vec::new();
    let end = c
        .wait(&st.id, Duration::from_secs(60), &mut |s| {
            seen.push(s.clone())
        })
        .unwrap();
    assert_eq!(end.state, JobState::Done, "{end:?}");
    assert_eq!(end.cycles_done, CYCLES);
    assert!(end.seconds_per_cycle.is_some_and(|s| s > 0.0));
    assert!(
        seen.iter()
            .any(|s| s.state == JobState::Running && s.cycles_done < CYCLES),
        "the stream shows the running job: {seen:?}"
    );
    let out = out_dir.path().join("result.enc");
    c.fetch(&st.id, &out).unwrap();
    let service_s = t.elapsed().as_secs_f64();

    // Alice decrypts the state of the plain run after the same cycles.
    let env = Envelope::read(&out, Kind::Result).unwrap();
    let d = decrypt_result(&client_key(), &env).unwrap();
    let (finished, regs, ram) = plain_state_after(&k.plain, Core::Pearl, CYCLES).unwrap();
    assert_eq!(
        (d.cycles, d.finished, &d.regs, &d.ram),
        (CYCLES, finished, &regs, &ram)
    );

    // Byte for byte the result of the machine run directly (key load included, as in the job).
    let t = Instant::now();
    let keys = ServerKeys::load(&k.ek).unwrap();
    let env = Envelope::read(&k.request, Kind::Request).unwrap();
    let req = Request::from_envelope(&env, keys.ek.params()).unwrap();
    let mut m = Machine::start(&keys, &req, Core::Pearl, Some(2)).unwrap();
    m.run(CYCLES, None, &mut |_| {}).unwrap();
    let direct = m.result().unwrap().to_bytes();
    let direct_s = t.elapsed().as_secs_f64();
    assert!(
        std::fs::read(&out).unwrap() == *direct,
        "service result differs from the direct run"
    );
    eprintln!(
        "fib, {CYCLES} cycles: key upload {upload_s:.1} s; submit -> fetched result {service_s:.1} s; \
         direct run (key load, start, {CYCLES} cycles, result) {direct_s:.1} s"
    );

    // Delete removes the job's files.
    let dir = data.path().join("jobs").join(&st.id);
    assert!(dir.join("result.enc").exists() && dir.join("request.enc").exists());
    c.delete(&st.id).unwrap();
    assert!(!dir.exists());
    assert_eq!(refused(c.status(&st.id)), (404, "no such job".into()));
    assert!(c.list().unwrap().is_empty());
}

#[test]
fn a_second_client_sees_nothing_of_the_first_clients_job() {
    let k = keys();
    let data = tempfile::tempdir().unwrap();
    let srv = server(data.path(), |_| {});
    let (_, alice) = client(&srv, data.path(), "alice");
    let (_, bob) = client(&srv, data.path(), "bob");
    let up = alice.key_upload(&k.ek).unwrap();
    let e = alice
        .submit(&k.request, 0, "pearl")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "a job runs at least 1 cycle");
    let job = alice.submit(&k.request, 1, "pearl").unwrap();

    let unknown = "0123456789abcdef0123456789abcdef";
    let tmp = tempfile::tempdir().unwrap();
    for id in [job.id.as_str(), unknown] {
        let nothing = (404, "no such job".to_string());
        assert_eq!(refused(bob.status(id)), nothing);
        assert_eq!(refused(bob.cancel(id)), nothing);
        assert_eq!(refused(bob.delete(id)), nothing);
        assert_eq!(refused(bob.fetch(id, &tmp.path().join("r"))), nothing);
        assert_eq!(refused(bob.watch_once(id, &mut |_| {})), nothing);
    }
    assert!(bob.list().unwrap().is_empty());
    // Bob has not uploaded Alice's key: her request is not his to run.
    let (status, msg) = refused(bob.submit(&k.request, 1, "pearl"));
    assert_eq!(status, 400);
    assert!(msg.contains("not uploaded"), "{msg}");
    let addr = srv.addr();
    let (status, _, body) = raw(addr, &format!("GET /v1/keys/{} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n", up.key_id, "vsp_nope"), b"");
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = raw(
        addr,
        "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"",
    );
    assert_eq!(status, 401);
    assert!(body.contains("missing bearer token"), "{body}");
    // Revoked tokens stop working at once.
    let carol_token = vsp_server::token_add(data.path(), "carol").unwrap();
    let carol = Client::new(&url(&srv), &carol_token).unwrap();
    assert!(carol.list().unwrap().is_empty());
    assert_eq!(vsp_server::token_revoke(data.path(), "carol").unwrap(), 1);
    assert_eq!(refused(carol.list()).0, 401);

    // Alice's job is untouched and ends.
    let end = alice
        .wait(&job.id, Duration::from_secs(60), &mut |_| {})
        .unwrap();
    assert_eq!(end.state, JobState::Done, "{end:?}");
    assert_eq!(alice.list().unwrap().len(), 1);
    alice.fetch(&job.id, &tmp.path().join("r")).unwrap();
    let env = Envelope::read(&tmp.path().join("r"), Kind::Result).unwrap();
    let d = decrypt_result(&client_key(), &env).unwrap();
    let (finished, regs, ram) = plain_state_after(&k.plain, Core::Pearl, 1).unwrap();
    assert_eq!(
        (d.cycles, d.finished, d.regs, d.ram),
        (1, finished, regs, ram)
    );

    // Extended by one cycle, the job continues from its final state: the plain run's after 2.
    assert_eq!(refused(bob.extend(&job.id, 1)), (404, "no such job".into()));
    let st = alice.extend(&job.id, 1).unwrap();
    assert_eq!((st.cycles, st.cycles_done), (2, 1));
    assert!(matches!(st.state, JobState::Queued | JobState::Running));
    let (status, msg) = refused(alice.extend(&job.id, 1));
    assert!(status == 409 && msg.contains("only a done job"), "{msg}");
    let end = alice
        .wait(&job.id, Duration::from_secs(60), &mut |_| {})
        .unwrap();
    assert_eq!((end.state, end.cycles_done), (JobState::Done, 2), "{end:?}");
    alice.fetch(&job.id, &tmp.path().join("r")).unwrap();
    let env = Envelope::read(&tmp.path().join("r"), Kind::Result).unwrap();
    let d = decrypt_result(&client_key(), &env).unwrap();
    let (finished, regs, ram) = plain_state_after(&k.plain, Core::Pearl, 2).unwrap();
    assert_eq!(
        (d.cycles, d.finished, d.regs, d.ram),
        (2, finished, regs, ram)
    );
}

#[test]
fn oversized_and_corrupt_uploads_are_refused_with_nothing_left_on_disk() {
    let k = keys();
    let request = std::fs::read(&k.request).unwrap();
    let ek = std::fs::read(&k.ek).unwrap();
    let key_id = hex(Envelope::read(&k.request, Kind::Request).unwrap().key_id);
    let data = tempfile::tempdir().unwrap();
    // The limit is just below the fib request's size.
    let limit = request.len() - 1;
    let srv = server(data.path(), |c| c.max_request_bytes = limit as u64);
    let (token, c) = client(&srv, data.path(), "alice");
    let addr = srv.addr();
    let key_url = format!("/v1/keys/{key_id}");

    // Oversized: announced, streamed without a length, and refused by the client before sending.
    let (s, _, b) = raw(
        addr,
        &head("POST", "/v1/jobs?cycles=1", &token, Some(request.len())),
        b"",
    );
    assert_eq!(s, 413, "{b}");
    assert!(b.contains("more than this server's limit"), "{b}");
    let (s, _, b) = raw(
        addr,
        &head("POST", "/v1/jobs?cycles=1", &token, None),
        &request,
    );
    assert_eq!(s, 413, "{b}");
    let (s, _, b) = raw(addr, &head("PUT", &key_url, &token, Some(1 << 40)), b"");
    assert_eq!(s, 413, "{b}");
    let e = c.submit(&k.request, 1, "pearl").unwrap_err().to_string();
    assert!(
        e.contains("more than the server's limit") && !e.contains('\n'),
        "{e}"
    );

    // Corrupt keys: a flipped byte, truncated, of another kind, under another id, not a vsp file.
    let mut flipped = ek.clone();
    flipped[ek.len() / 2] ^= 0x10;
    let (s, _, b) = raw(
        addr,
        &head("PUT", &key_url, &token, Some(ek.len())),
        &flipped,
    );
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("checksum"), "{b}");
    let half = &ek[..ek.len() / 2];
    let (s, _, b) = raw(addr, &head("PUT", &key_url, &token, Some(half.len())), half);
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("announces"), "{b}");
    let (s, _, b) = raw(addr, &head("PUT", &key_url, &token, None), half);
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("truncated"), "{b}");
    let (s, _, b) = raw(
        addr,
        &head("PUT", &key_url, &token, Some(1000)),
        &request[..1000],
    );
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("expected evaluation key"), "{b}");
    let other = format!("/v1/keys/{}", "ab".repeat(16));
    let (s, _, b) = raw(addr, &head("PUT", &other, &token, Some(ek.len())), &ek);
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("as the URL says"), "{b}");
    let (s, _, b) = raw(addr, &head("PUT", &key_url, &token, Some(5)), b"hello");
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("bad magic"), "{b}");
    assert_eq!(job_and_key_files(data.path()), Vec::<String>::new());

    // With the key in place: a request cut short whose header still announces more than the
    // limit (refused on its header), truncated and flipped requests, one whose body is garbage.
    assert!(c.key_upload(&k.ek).unwrap().created);
    let cut = &request[..limit - 100];
    let (s, _, b) = raw(addr, &head("POST", "/v1/jobs?cycles=1", &token, None), cut);
    assert_eq!(s, 413, "{b}");
    let env = Envelope::read(&k.request, Kind::Request).unwrap();
    let garbage = Envelope {
        kind: Kind::Request,
        params: env.params.clone(),
        key_id: env.key_id,
        body: vec![7u8; 4096].into(),
    }
    .to_bytes();
    let short = &garbage[..garbage.len() - 7];
    let mut flipped = garbage.to_vec();
    flipped[100] ^= 4;
    // (query, body, whether the header announces its length, what the 400 says)
    let refusals: [(&str, &[u8], bool, &str); 5] = [
        ("cycles=1", &garbage, true, "not a valid request"),
        ("cycles=1", short, false, "truncated"),
        ("cycles=1", &flipped, true, "checksum"),
        ("cycles=lots", &garbage, true, "cycles"),
        ("cycles=0", &garbage, true, "a job runs from 1 to"),
    ];
    for (query, body, announced, says) in refusals {
        let length = announced.then_some(body.len());
        let path = format!("/v1/jobs?{query}");
        let (s, _, b) = raw(addr, &head("POST", &path, &token, length), body);
        assert_eq!(s, 400, "{query}: {b}");
        assert!(b.contains(says), "{query}: {b}");
    }
    assert_eq!(
        job_and_key_files(data.path()),
        vec![format!("keys/alice/{key_id}.key")],
        "only the key that was accepted"
    );
    assert!(c.list().unwrap().is_empty());
}

#[test]
fn concurrent_submissions_against_a_small_queue_are_accepted_or_503_and_every_accepted_one_ends() {
    const QUEUE: usize = 8;
    let k = keys();
    let data = tempfile::tempdir().unwrap();
    let srv = server(data.path(), |c| {
        c.queue = QUEUE;
        c.jobs = 1;
    });
    let (token, c) = client(&srv, data.path(), "alice");
    c.key_upload(&k.ek).unwrap();
    let counter = counter(data.path());
    // A long circuit job takes the only runner, so that the queue fills.
    let blocker = c
        .submit_circuit(&counter.req, &counter.net, 1 << 30, true)
        .unwrap();
    let t = Instant::now();
    while c.status(&blocker.id).unwrap().cycles_done == 0 {
        assert!(t.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(50));
    }
    // 32 small circuit jobs at once.
    let base = url(&srv);
    let answers: Vec<Result<String, (u16, String)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..32)
            .map(|_| {
                let (base, token, counter) = (&base, &token, &counter);
                s.spawn(move || {
                    let c = Client::new(base, token).unwrap();
                    match c.submit_circuit(&counter.req, &counter.net, 3, true) {
                        Ok(st) => Ok(st.id),
                        Err(ServerError::Refused { status, message }) => Err((status, message)),
                        Err(e) => panic!("neither accepted nor refused: {e}"),
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let accepted: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
    for a in &answers {
        if let Err((status, msg)) = a {
            assert_eq!(
                (*status, msg.as_str()),
                (503, "the queue is full; try again later")
            );
        }
    }
    assert_eq!(accepted.len(), QUEUE, "{answers:?}");
    // A full queue says when to come back.
    let (s, h, _) = raw(
        srv.addr(),
        &head("POST", "/v1/jobs?cycles=1", &token, Some(10)),
        &[0; 10],
    );
    assert_eq!(s, 503);
    assert!(h.to_ascii_lowercase().contains("retry-after: 30"), "{h}");

    // Cancelled, the blocker has no result; the accepted jobs then all run to the end.
    assert_eq!(c.cancel(&blocker.id).unwrap().state, JobState::Cancelled);
    assert_eq!(refused(c.fetch(&blocker.id, &data.path().join("x"))).0, 409);
    assert_eq!(refused(c.cancel(&blocker.id)).0, 409);
    let want = counter.plain(3);
    for id in &accepted {
        let end = c.wait(id, Duration::from_secs(60), &mut |_| {}).unwrap();
        assert_eq!(end.state, JobState::Done, "{end:?}");
        let out = data.path().join("r.enc");
        c.fetch(id, &out).unwrap();
        assert_eq!(counter.decrypt(&out), want);
    }
    let blocked = c.status(&blocker.id).unwrap();
    assert!(blocked.cycles_done < 1 << 30 && blocked.state == JobState::Cancelled);
}

/// The counter of crates/circuit/testdata with `en` = 1: its netlist, circuit and a request for it.
struct Counter {
    net: std::path::PathBuf,
    circuit: std::sync::Arc<vsp_circuit::Circuit>,
    inputs: vsp_platform::design::CircuitInputs,
    req: std::path::PathBuf,
}

fn counter(dir: &std::path::Path) -> Counter {
    let net =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuit/testdata/counter.json");
    let circuit = vsp_platform::design::load_design(&net).unwrap();
    let inputs: vsp_platform::design::CircuitInputs =
        serde_json::from_str(r#"{"inputs": {"en": 1}}"#).unwrap();
    let key = client_key();
    let req = dir.join("counter.req");
    inputs
        .encrypt(&key, &circuit)
        .unwrap()
        .to_envelope()
        .write(&req)
        .unwrap();
    Counter {
        net,
        circuit,
        inputs,
        req,
    }
}

impl Counter {
    /// The plain run after the reset cycle and `cycles` cycles.
    fn plain(&self, cycles: u64) -> vsp_platform::design::CircuitOutputs {
        let mut plain = vsp_circuit::Engine::new(vsp_circuit::PlainBackend, self.circuit.clone());
        self.inputs.load_plain(&mut plain).unwrap();
        assert!(plain.reset().unwrap());
        let opts = vsp_circuit::RunOptions {
            max_cycles: cycles,
            ..Default::default()
        };
        plain.run(&opts, &mut |_| {}).unwrap();
        vsp_platform::design::plain_outputs(&plain, cycles).unwrap()
    }

    fn decrypt(&self, result: &std::path::Path) -> vsp_platform::design::CircuitOutputs {
        let env = Envelope::read(result, Kind::Result).unwrap();
        vsp_platform::design::decrypt_circuit_result(&client_key(), &env, &self.circuit).unwrap()
    }
}

#[test]
fn one_server_per_data_folder() {
    let data = tempfile::tempdir().unwrap();
    let first = server(data.path(), |_| {});
    let mut cfg = vsp_server::Config::new(data.path().to_path_buf());
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    let e = vsp_server::Server::start(cfg.clone())
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        format!("another vsp serve is using {}", data.path().display())
    );
    drop(first);
    let again = vsp_server::Server::start(cfg).unwrap();
    let (_, c) = client(&again, data.path(), "alice");
    assert!(c.list().unwrap().is_empty());
    assert_eq!(c.info().unwrap().queue, 16);
}

#[test]
fn a_circuit_job_runs_on_its_uploaded_netlist_like_the_plain_run() {
    const CYCLES: u64 = 5;
    let k = keys();
    let data = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let srv = server(data.path(), |_| {});
    let (token, c) = client(&srv, data.path(), "alice");
    c.key_upload(&k.ek).unwrap();
    let testdata = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuit/testdata");
    let counter = counter(tmp.path());
    let (req, net) = (&counter.req, &counter.net);

    let st = c.submit_circuit(req, net, CYCLES, true).unwrap();
    assert_eq!(st.core, "circuit");
    let end = c
        .wait(&st.id, Duration::from_secs(60), &mut |_| {})
        .unwrap();
    assert_eq!(
        (end.state, end.cycles_done),
        (JobState::Done, CYCLES),
        "{end:?}"
    );
    let out = tmp.path().join("c.res");
    c.fetch(&st.id, &out).unwrap();
    let got = counter.decrypt(&out);
    assert_eq!(got, counter.plain(CYCLES));
    assert!(got.outputs["count"] > 0, "{got:?}");

    // The request is for the counter: on another netlist it is refused.
    let (status, msg) = refused(c.submit_circuit(req, &testdata.join("lfsr.json"), 1, false));
    assert!(status == 400 && msg.contains("another circuit"), "{msg}");
    let (status, msg) = refused(c.submit_circuit(req, &testdata.join("lfsr.json"), 1, true));
    assert!(
        status == 400 && msg.contains("needs a 1-bit @reset input"),
        "{msg}"
    );
    // A netlist that does not compile, or not under its hash, is refused and not kept.
    let bad = b"{\"modules\": 7}";
    let hash: String = {
        use sha3::Digest;
        sha3::Sha3_256::digest(bad)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let path = format!("/v1/designs/{hash}");
    let (s, _, b) = raw(
        srv.addr(),
        &head("PUT", &path, &token, Some(bad.len())),
        bad,
    );
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("not a valid netlist"), "{b}");
    let other = format!("/v1/designs/{}", "0".repeat(64));
    let (s, _, b) = raw(
        srv.addr(),
        &head("PUT", &other, &token, Some(bad.len())),
        bad,
    );
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("as the URL says"), "{b}");
    let designs: Vec<String> = common::files(&data.path().join("designs"));
    assert_eq!(designs.len(), 2, "counter and lfsr only: {designs:?}");
    assert!(!designs.iter().any(|d| d.contains(&hash)));
}
