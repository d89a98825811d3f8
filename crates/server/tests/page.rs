//! The status page at `/` in headless Chromium (Debian's `chromium`): with a client's token it
//! lists that client's jobs, their state and progress; with another client's token it lists none.

mod common;
#[path = "../../circuit/tests/tool/mod.rs"]
mod tool;

use std::process::Command;
use std::time::Duration;

use common::{keys, server, url};
use vsp_server::client::Client;
use vsp_server::JobState;

/// The page's DOM after its scripts ran (a few seconds of virtual time) with `token`.
fn page_dom(base: &str, token: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    tool::run(
        Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--virtual-time-budget=5000",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("{base}/#token={token}")),
    )
}

#[test]
#[ignore = "needs chromium"]
fn the_status_page_lists_the_tokens_jobs_in_chromium() {
    let k = keys();
    let data = tempfile::tempdir().unwrap();
    let srv = server(data.path(), |_| {});
    let alice = vsp_server::token_add(data.path(), "alice").unwrap();
    let bob = vsp_server::token_add(data.path(), "bob").unwrap();
    let c = Client::new(&url(&srv), &alice).unwrap();
    c.key_upload(&k.ek).unwrap();
    let job = c.submit(&k.request, 1, "pearl").unwrap();
    let end = c
        .wait(&job.id, Duration::from_secs(60), &mut |_| {})
        .unwrap();
    assert_eq!(end.state, JobState::Done);

    let dom = page_dom(&url(&srv), &alice);
    assert!(dom.contains("1 job(s)"), "{dom}");
    let row = dom
        .split("<tr")
        .find(|r| r.contains(&job.id))
        .unwrap_or_else(|| panic!("no row for the job: {dom}"));
    assert!(row.contains("data-state=\"done\""), "{row}");
    assert!(row.contains(">1/1<"), "{row}");

    let dom = page_dom(&url(&srv), &bob);
    assert!(dom.contains("0 job(s)") && !dom.contains(&job.id), "{dom}");
    let dom = page_dom(&url(&srv), "vsp_not_a_token");
    assert!(dom.contains("unknown or revoked token"), "{dom}");
}
