//! The revalidate stage: the hard gate on the HEAD to push
//! (`revalidate.json`, `revalidate.log`).

use serde::Serialize;
use shepherd_core::config::Config;

use super::command::{discover, VerifyCommand};
use super::stage::verify_once;
use crate::error::Result;
use crate::options::Stage;
use crate::round::runner::Books;
use crate::round::state::{Changes, Flow, Revalidated, Reviewed, Round, RoundEnd, Step, Verified};
use crate::round::workspace::Workspace;

/// The verify command on the HEAD to push (reused when validate ran it
/// there), or the end of the round when it did not pass.
pub(crate) async fn stage(
    books: &mut Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    reviewed: Reviewed,
) -> Result<Step<Revalidated>> {
    let Reviewed(mut changes) = reviewed;
    let flow = revalidate(books, config, round, ws, &mut changes).await?;
    Ok(flow.map(|()| Revalidated(changes)))
}

async fn revalidate(
    books: &mut Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    changes: &mut Changes,
) -> Result<Flow> {
    if changes.commits.is_empty() {
        return Ok(Ok(()));
    }
    let head = ws.git(|wt| wt.head_sha()).await?.0;
    let at = Revalidate {
        head: &head,
        reused: false,
        passed: false,
        command: None,
        exit_code: None,
        reason: None,
    };
    if let Some(v) = changes.verified.clone().filter(|v| v.head == head) {
        let record = Revalidate {
            reused: true,
            passed: v.passed,
            reason: v.reason.as_deref(),
            ..at
        };
        books.artifact(round, "revalidate.json", &record)?;
        if v.passed {
            books.stage_done(
                round,
                Stage::Revalidate,
                "HEAD unchanged since the verify command passed".to_owned(),
            )?;
            return Ok(Ok(()));
        }
        let reason = v
            .reason
            .unwrap_or_else(|| "the verify command failed".to_owned());
        return refused(books, round, reason);
    }
    let root = ws.path().to_path_buf();
    let Some(cmd) = discover(config, &root) else {
        let reason = "no verify command: nothing unverified is pushed, so the push was refused";
        let record = Revalidate {
            reason: Some(reason),
            ..at
        };
        books.artifact(round, "revalidate.json", &record)?;
        return refused(books, round, reason.to_owned());
    };
    let (attempt, run) = verify_once(
        books,
        config,
        round,
        ws,
        &cmd,
        "revalidate",
        "revalidate.log",
    )
    .await?;
    let reason = (!attempt.passed).then(|| {
        format!(
            "the verify command `{}` {} on the commits to push (after the pre-push review); \
             the push was refused (see {})",
            cmd.shown(),
            run.failure_words(),
            round.dir.join("revalidate.log").display()
        )
    });
    let record = Revalidate {
        passed: attempt.passed,
        command: Some(cmd.clone()),
        exit_code: attempt.exit_code,
        reason: reason.as_deref(),
        ..at
    };
    books.artifact(round, "revalidate.json", &record)?;
    changes.verified = Some(Verified {
        head,
        passed: attempt.passed,
        reason: reason.clone(),
    });
    match reason {
        None => {
            books.stage_done(
                round,
                Stage::Revalidate,
                format!("`{}` passed on the commits to push", cmd.shown()),
            )?;
            Ok(Ok(()))
        }
        Some(reason) => refused(books, round, reason),
    }
}

/// `revalidate.json`.
#[derive(Clone, Serialize)]
struct Revalidate<'a> {
    head: &'a str,
    reused: bool,
    passed: bool,
    command: Option<VerifyCommand>,
    exit_code: Option<i32>,
    reason: Option<&'a str>,
}

/// The end of the round when the push is refused for `reason`.
fn refused(books: &mut Books, round: &Round, reason: String) -> Result<Flow> {
    books.stage_done(round, Stage::Revalidate, "push refused".to_owned())?;
    Ok(Err(RoundEnd::Failed { reason }))
}
