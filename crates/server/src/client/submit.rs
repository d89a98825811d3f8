//! `vsp remote submit` as one call: the job submitted (its id said at once) and followed as far
//! as asked, to a result file; and what the command says when it is done.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use vsp_codec::text::{fmt_bytes, fmt_secs};
use vsp_platform::processor::client::load_client_key;
use vsp_platform::server::Watch;

use super::{result_path, Client, Follow, Followed, Submission};
use crate::error::{Result, ServerError};
use crate::store::JobStatus;

/// What follows a job ([`Client::submit_followed`]): what a command shows ([`Watch`]), and the
/// job's statuses as they come (`vsp remote` draws them as `vsp run`'s cycle bar).
pub trait Follower: Watch {
    /// A status of the followed job, from its progress stream.
    fn status(&mut self, s: &JobStatus);
}

/// A job to submit, and how far [`Client::submit_followed`] follows it.
pub struct SubmitFollow<'a> {
    pub job: Submission<'a>,
    /// Follow the job until it is done, then fetch its result.
    pub wait: bool,
    /// Follow the job until its program finishes ([`Client::until_finished`]).
    pub until_finished: Option<UntilFinished<'a>>,
    /// Where the result is written (default: [`result_path`] of the job); only with `wait` or
    /// `until_finished`.
    pub output: Option<&'a Path>,
}

/// `--until-finished`: the secret key's file, the cycles added while the program has not
/// finished, the most cycles in all.
pub struct UntilFinished<'a> {
    pub key: &'a Path,
    pub step: u64,
    pub max_cycles: u64,
}

/// The result of a followed job: where it was written, what following it ended with, and the
/// seconds from the submit to the result.
pub struct Submitted {
    pub output: PathBuf,
    pub followed: Followed,
    pub seconds: f64,
}

impl Submitted {
    /// The line of a finished program (`finished after 12 cycles: x8 = 5`), if it was followed
    /// until it finished.
    pub fn finished_line(&self) -> Option<String> {
        match &self.followed {
            Followed::Finished(d) => Some(format!(
                "finished after {} cycles: x8 = {}",
                d.cycles, d.result
            )),
            Followed::Fetched(_) => None,
        }
    }
}

impl fmt::Display for Submitted {
    /// `wrote result ID.result.enc (1.2 MiB); 3m05s from submit to result`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wrote result {}", self.output.display())?;
        if let Followed::Fetched(n) = self.followed {
            write!(f, " ({})", fmt_bytes(n))?;
        }
        write!(f, "; {} from submit to result", fmt_secs(self.seconds))
    }
}

impl Client {
    /// Submits `s.job` and says its id ([`Watch::say`]); then, if asked, follows it (`f` sees
    /// every status, then [`Watch::ran`]) to its result, written to `s.output`. A secret key for
    /// `until_finished` is loaded before the submit (its warnings go to `f`). `None` when the job
    /// is not followed.
    pub fn submit_followed(
        &self,
        s: &SubmitFollow<'_>,
        f: &mut dyn Follower,
    ) -> Result<Option<Submitted>> {
        if s.output.is_some() && !s.wait && s.until_finished.is_none() {
            let e = "--output needs --wait or --until-finished";
            return Err(ServerError::Usage(e.into()));
        }
        let until = s.until_finished.as_ref();
        let key = until.map(|u| load_client_key(u.key, f)).transpose()?;
        let t = Instant::now();
        let id = self.submit_job(&s.job)?.id;
        f.say(&id);
        let how = match (until, &key) {
            (Some(u), Some(key)) => Follow::UntilFinished {
                key,
                step: u.step,
                max_cycles: u.max_cycles,
            },
            _ if s.wait => Follow::Done,
            _ => return Ok(None),
        };
        let output = s.output.map_or_else(|| result_path(&id), Path::to_path_buf);
        let followed = self.follow(&id, how, &output, &mut |st| f.status(st));
        f.ran();
        let followed = followed?;
        let seconds = t.elapsed().as_secs_f64();
        Ok(Some(Submitted {
            output,
            followed,
            seconds,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the command said (its stdout lines).
    #[derive(Default)]
    struct Said(Vec<String>);

    impl Watch for Said {
        fn say(&mut self, line: &str) {
            self.0.push(line.to_string());
        }
    }

    impl Follower for Said {
        fn status(&mut self, s: &JobStatus) {
            self.0.push(s.line());
        }
    }

    fn job(request: &Path) -> Submission<'_> {
        Submission {
            request,
            cycles: 1,
            core: "pearl",
            netlist: None,
            reset: false,
        }
    }

    /// Refused before anything is sent (the server at this address does not exist): an output
    /// without following, a secret key that cannot be read.
    #[test]
    fn bad_follow_options_are_refused_before_the_submit() {
        let c = Client::new("http://127.0.0.1:9", "token").expect("a client");
        let (request, out) = (Path::new("req.enc"), Path::new("out.enc"));
        let mut s = SubmitFollow {
            job: job(request),
            wait: false,
            until_finished: None,
            output: Some(out),
        };
        let mut said = Said::default();
        let e = c.submit_followed(&s, &mut said);
        let e = e.err().expect("refused").to_string();
        assert_eq!(e, "--output needs --wait or --until-finished");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let key = dir.path().join("absent.key");
        s.until_finished = Some(UntilFinished {
            key: &key,
            step: 8,
            max_cycles: 100,
        });
        let e = c.submit_followed(&s, &mut said);
        let e = e.err().expect("refused").to_string();
        assert!(e.contains("absent.key"), "{e}");
        assert!(said.0.is_empty(), "no job id: nothing was submitted");
    }

    #[test]
    fn the_closing_note_says_where_the_result_went() {
        let fetched = Submitted {
            output: PathBuf::from("r.enc"),
            followed: Followed::Fetched(2048),
            seconds: 65.0,
        };
        assert_eq!(
            fetched.to_string(),
            "wrote result r.enc (2.0 KiB); 1m05s from submit to result"
        );
        assert_eq!(fetched.finished_line(), None);
        let d = vsp_platform::Decrypted {
            cycles: 12,
            finished: true,
            regs: vec![0; 16],
            result: 5,
            ram: Vec::new(),
        };
        let finished = Submitted {
            output: PathBuf::from("r.enc"),
            followed: Followed::Finished(d),
            seconds: 3.0,
        };
        let line = finished.finished_line();
        assert_eq!(line.as_deref(), Some("finished after 12 cycles: x8 = 5"));
        let note = "wrote result r.enc; 3s from submit to result";
        assert_eq!(finished.to_string(), note);
    }
}
