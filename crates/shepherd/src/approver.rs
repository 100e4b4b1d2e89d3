//! The approval prompt on a terminal (SPEC section 3): approve, change a
//! decision, edit a reply, reject, or decide later.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use shepherd_core::escape::visible;
use shepherd_core::Decision;
use shepherd_engine::{ApprovalChange, ApprovalRequest, ApprovalVerdict, Approver};

/// The approval prompt on a terminal: approve all, change a decision, edit
/// a reply, reject, or decide later (pause).
pub(crate) struct TtyApprover {
    lock: Mutex<()>,
}

impl TtyApprover {
    /// A prompt when stdin and stderr are terminals.
    pub(crate) fn if_terminal() -> Option<Arc<dyn Approver>> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then(|| {
            Arc::new(TtyApprover {
                lock: Mutex::new(()),
            }) as Arc<dyn Approver>
        })
    }
}

fn decision_word(d: Decision) -> &'static str {
    d.as_str()
}

/// The decision a user typed (`already-addressed`), if it names one.
pub(crate) fn parse_decision(text: &str) -> Option<Decision> {
    Decision::from_name(text.trim())
}

impl Approver for TtyApprover {
    fn review(&self, request: &ApprovalRequest) -> ApprovalVerdict {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut changes: Vec<ApprovalChange> = Vec::new();
        let stdin = std::io::stdin();
        let mut err = std::io::stderr();
        let mut read_line = |prompt: &str| -> Option<String> {
            let _ = write!(err, "{prompt}");
            let _ = err.flush();
            let mut line = String::new();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(line.trim().to_owned()),
            }
        };
        loop {
            eprintln!(
                "\nRound {} triage (reply-only decisions need approval):",
                request.round
            );
            for (i, item) in request.items.iter().enumerate() {
                let change = changes.iter().find(|c| c.item_id == item.item_id);
                let decision = change.and_then(|c| c.decision).unwrap_or(item.decision);
                let reply = match change.and_then(|c| c.reply.clone()) {
                    Some(text) => text,
                    // The drafted reply was written for the triaged decision.
                    None if decision != item.decision => "(a reply is needed)".to_owned(),
                    None => item.reply.clone(),
                };
                // Paths, logins, reasons and replies are untrusted: no raw
                // control or bidi character reaches the terminal.
                let place = match (&item.path, item.line) {
                    (Some(p), Some(l)) => visible(&format!("{p}:{l}")),
                    (Some(p), None) => visible(p),
                    (None, _) => "(conversation)".to_owned(),
                };
                eprintln!(
                    "  [{}] {place} by @{} -> {}{}",
                    i + 1,
                    visible(item.author.as_deref().unwrap_or("ghost")),
                    decision_word(decision),
                    if item.needs_approval {
                        "  (needs approval)"
                    } else {
                        ""
                    }
                );
                eprintln!(
                    "      why:   {}",
                    visible(item.reasoning.lines().next().unwrap_or(""))
                );
                eprintln!(
                    "      reply: {}",
                    visible(reply.lines().next().unwrap_or(""))
                );
            }
            let Some(choice) = read_line(
                "[a]pprove all, [c]hange a decision, [e]dit a reply, [r]eject, [l]ater: ",
            ) else {
                return ApprovalVerdict::Defer;
            };
            match choice.as_str() {
                "a" | "approve" => return ApprovalVerdict::Approve(changes),
                "r" | "reject" => return ApprovalVerdict::Reject,
                "l" | "later" | "" => return ApprovalVerdict::Defer,
                "c" | "e" => {
                    let Some(n) = read_line("item number: ")
                        .and_then(|s| s.parse::<usize>().ok())
                        .and_then(|n| request.items.get(n.wrapping_sub(1)))
                    else {
                        eprintln!("no such item");
                        continue;
                    };
                    let entry = match changes.iter().position(|c| c.item_id == n.item_id) {
                        Some(i) => &mut changes[i],
                        None => {
                            changes.push(ApprovalChange {
                                item_id: n.item_id.clone(),
                                decision: None,
                                reply: None,
                            });
                            let last = changes.len() - 1;
                            &mut changes[last]
                        }
                    };
                    if choice == "c" {
                        let words: Vec<&str> =
                            Decision::ALL.iter().map(|d| decision_word(*d)).collect();
                        match read_line(&format!("decision ({}): ", words.join(", ")))
                            .as_deref()
                            .and_then(parse_decision)
                        {
                            Some(d)
                                if entry.reply.is_none()
                                    && shepherd_engine::changed_decision_needs_reply(
                                        n.decision, d,
                                    ) =>
                            {
                                // The drafted reply was written for the old
                                // decision: the new one needs its own.
                                match read_line(&format!(
                                    "reply for {} (one line; required): ",
                                    decision_word(d)
                                ))
                                .filter(|t| !t.is_empty())
                                {
                                    Some(text) => {
                                        entry.decision = Some(d);
                                        entry.reply = Some(text);
                                    }
                                    None => eprintln!(
                                        "a changed decision needs its own reply; decision not changed"
                                    ),
                                }
                            }
                            Some(d) => entry.decision = Some(d),
                            None => eprintln!("not a decision"),
                        }
                    } else if let Some(text) =
                        read_line("reply (one line): ").filter(|t| !t.is_empty())
                    {
                        entry.reply = Some(text);
                    }
                }
                _ => eprintln!("choose a, c, e, r or l"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_parse_by_their_names() {
        assert_eq!(
            parse_decision("already-addressed"),
            Some(Decision::AlreadyAddressed)
        );
        assert_eq!(parse_decision("nope"), None);
    }
}
