//! `shepherd approve`: approve a paused run's reply-only decisions,
//! possibly changing decisions and replies.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};
use shepherd_engine::ApprovalChange;

use crate::error::CliResult;
use crate::exit_codes;

use crate::approver::parse_decision;
use crate::runs::engine_error;
use crate::setup::state_dir;
use crate::ui::outln;

/// The flags of `shepherd approve`. `--thread ID` starts a change; the
/// `--decision` and `--reply` after it apply to that item. (Hand-written
/// clap glue: the grouping depends on the flags' order.)
#[derive(Debug)]
pub(crate) struct ApproveArgs {
    run: String,
    changes: Vec<ApprovalChange>,
    state_dir: Option<PathBuf>,
    json: bool,
}

const ABOUT: &str = "Approve a paused run's triage, optionally changing decisions and replies";
const LONG_ABOUT: &str = "Approve a paused run's triage, optionally changing decisions and replies

Every pending approval of the round the run paused in is approved. Each
`--thread ID` may be followed by `--decision D` (code-change, metadata-change,
question, wontfix, already-addressed, invalid, needs-human) and `--reply TEXT`
for that item. Then continue with `shepherd resume RUN`.";

impl clap::Args for ApproveArgs {
    fn augment_args(cmd: Command) -> Command {
        cmd.about(ABOUT)
            .long_about(LONG_ABOUT)
            .arg(
                Arg::new("run")
                    .value_name("RUN")
                    .required(true)
                    .help("The run id (see `shepherd status`)"),
            )
            .arg(
                Arg::new("thread")
                    .long("thread")
                    .value_name("ID")
                    .action(ArgAction::Append)
                    .help("An item (thread or comment id) whose decision or reply changes"),
            )
            .arg(
                Arg::new("decision")
                    .long("decision")
                    .value_name("D")
                    .action(ArgAction::Append)
                    .help("The decision for the preceding --thread"),
            )
            .arg(
                Arg::new("reply")
                    .long("reply")
                    .value_name("TEXT")
                    .action(ArgAction::Append)
                    .help("The reply for the preceding --thread"),
            )
            .arg(
                Arg::new("state_dir")
                    .long("state-dir")
                    .value_name("DIR")
                    .env("SHEPHERD_STATE_DIR")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help("Where the state lives"),
            )
            .arg(
                Arg::new("json")
                    .long("json")
                    .action(ArgAction::SetTrue)
                    .help("Print the outcome as JSON"),
            )
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for ApproveArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let run = m.get_one::<String>("run").cloned().ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::MissingRequiredArgument,
                "RUN is required\n",
            )
        })?;
        let mut flags: Vec<(usize, &str, String)> = Vec::new();
        for name in ["thread", "decision", "reply"] {
            if let (Some(indices), Some(values)) = (m.indices_of(name), m.get_many::<String>(name))
            {
                for (i, v) in indices.zip(values) {
                    flags.push((i, name, v.clone()));
                }
            }
        }
        flags.sort_by_key(|(i, _, _)| *i);
        let mut changes: Vec<ApprovalChange> = Vec::new();
        for (_, name, value) in flags {
            let usage = |msg: String| {
                clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{msg}\n"))
            };
            match name {
                "thread" => changes.push(ApprovalChange {
                    item_id: value,
                    decision: None,
                    reply: None,
                }),
                "decision" => {
                    let decision = parse_decision(&value)
                        .ok_or_else(|| usage(format!("`{value}` is not a decision")))?;
                    changes
                        .last_mut()
                        .ok_or_else(|| usage("--decision must follow a --thread".into()))?
                        .decision = Some(decision);
                }
                _ => {
                    changes
                        .last_mut()
                        .ok_or_else(|| usage("--reply must follow a --thread".into()))?
                        .reply = Some(value);
                }
            }
        }
        Ok(ApproveArgs {
            run,
            changes,
            state_dir: m.get_one::<PathBuf>("state_dir").cloned(),
            json: m.get_flag("json"),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

pub(crate) fn cmd_approve(args: ApproveArgs) -> CliResult<u8> {
    let state = state_dir(args.state_dir)?;
    let approver = std::env::var("USER").unwrap_or_else(|_| "cli".to_owned());
    let n =
        shepherd_engine::approve_run(&state, &args.run, &args.changes, &approver).map_err(|e| {
            let unknown = matches!(e, shepherd_engine::EngineError::UnknownItem { .. });
            let err = engine_error(e);
            if unknown {
                err.with_hint(format!(
                    "`shepherd status {}` lists the items awaiting approval",
                    args.run
                ))
            } else {
                err
            }
        })?;
    if args.json {
        let value = serde_json::json!({
            "run_id": args.run,
            "approved": n,
            "changes": args.changes.iter().map(|c| serde_json::json!({
                "item_id": c.item_id,
                "decision": c.decision,
                "reply": c.reply,
            })).collect::<Vec<_>>(),
            "next": format!("shepherd resume {}", args.run),
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        outln!(
            "Approved {n} decision(s) of run {}. Continue with: shepherd resume {}",
            args.run,
            args.run
        );
    }
    Ok(exit_codes::SUCCESS)
}
