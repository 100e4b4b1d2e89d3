//! `shepherd doctor --probe`: one real call to each configured provider.

use std::time::Duration;

use serde::Serialize;
use shepherd_agent::Probe;
use shepherd_core::config::{AgentRole, AgentSettings, Config, Provider};
use shepherd_core::escape::visible;

use crate::error::{CliError, CliResult};
use crate::forge_setup::runtime;
use crate::ui::outln;

/// One probe, and the roles that use what it probed.
#[derive(Debug, Serialize)]
pub(crate) struct RoleProbe {
    /// The roles configured with this provider and model.
    pub roles: Vec<&'static str>,
    #[serde(flatten)]
    pub probe: Probe,
}

/// Roles that run the same provider the same way share one probe: the
/// same provider, model, extra arguments, command and passed variables.
fn same_call(a: &AgentSettings, b: &AgentSettings) -> bool {
    a.provider == b.provider
        && a.model == b.model
        && a.extra_args == b.extra_args
        && a.command == b.command
        && a.env == b.env
}

/// Probe every distinct provider the configuration uses, one after the
/// other, each within `timeout`. The builtin provider calls no model and is
/// not probed.
pub(crate) fn probe_roles(config: &Config, timeout: Duration) -> CliResult<Vec<RoleProbe>> {
    let mut groups: Vec<(AgentSettings, Vec<&'static str>)> = Vec::new();
    for role in AgentRole::ALL {
        let settings = config.agent.for_role(role);
        if settings.provider == Provider::Builtin {
            continue;
        }
        match groups.iter_mut().find(|(s, _)| same_call(s, &settings)) {
            Some((_, roles)) => roles.push(role.as_str()),
            None => groups.push((settings, vec![role.as_str()])),
        }
    }
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let rt = runtime()?;
    let mut probes = Vec::with_capacity(groups.len());
    for (settings, roles) in groups {
        let dir = tempfile::Builder::new()
            .prefix("shepherd-probe-")
            .tempdir()
            .map_err(|e| {
                CliError::failure(anyhow::anyhow!("cannot make a probe directory: {e}"))
            })?;
        let probe = rt.block_on(shepherd_agent::probe(&settings, timeout, dir.path()));
        probes.push(RoleProbe { roles, probe });
    }
    Ok(probes)
}

/// The probes as text, after the rest of doctor's report.
pub(crate) fn print_probes(probes: &[RoleProbe]) {
    outln!();
    outln!("Probes (one triage call each):");
    if probes.is_empty() {
        outln!("  nothing to probe: every role uses the builtin provider, which calls no model");
        return;
    }
    for p in probes {
        let who = format!(
            "{}{}",
            p.probe.provider,
            p.probe
                .model
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        );
        let secs = p.probe.elapsed.as_secs_f64();
        let roles = p.roles.join(", ");
        if p.probe.answered {
            let tokens = match (p.probe.usage.input_tokens, p.probe.usage.output_tokens) {
                (Some(i), Some(o)) => format!(", {i} tokens in, {o} out"),
                _ => String::new(),
            };
            outln!("ok   {who} for {roles}: answered in {secs:.1} s{tokens}");
        } else {
            outln!(
                "FAIL {who} for {roles}: no valid answer after {secs:.1} s: {}",
                visible(p.probe.error.as_deref().unwrap_or("unknown error"))
            );
        }
    }
}
