//! Token and cost arithmetic: what agent calls spent, summed over a run.
//!
//! A provider reports tokens and cost or does not. A sum keeps what was
//! reported: a known figure plus an unknown one is the known figure, and
//! only unknowns stay unknown ([`known_sum`]). Wall time is always known
//! (Shepherd measures it) and saturates instead of wrapping.

use std::ops::Add;

use crate::report::{AgentUsage, RoleUsage};

/// The sum of two figures that may be unreported: what is known of both.
pub fn known_sum<T: Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// What one agent call (or a batch of them) spent, as the provider said.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    /// Input (prompt) tokens.
    pub input_tokens: Option<u64>,
    /// Output (completion) tokens.
    pub output_tokens: Option<u64>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
}

impl Spent {
    /// Input and output tokens together, when either is known.
    pub fn tokens(&self) -> Option<u64> {
        known_sum(self.input_tokens, self.output_tokens)
    }
}

impl AgentUsage {
    /// Count one agent call of `role` on `provider` that took `millis` and
    /// spent `spent`: in the run's totals and in its role's line (added,
    /// in first-use order, when the role is new).
    pub fn add_call(&mut self, role: &str, provider: &str, millis: u64, spent: &Spent) {
        self.calls += 1;
        self.millis = self.millis.saturating_add(millis);
        add_provider(&mut self.providers, provider);
        self.tokens = known_sum(self.tokens, spent.tokens());
        self.cost_usd = known_sum(self.cost_usd, spent.cost_usd);
        let idx = match self.roles.iter().position(|r| r.role == role) {
            Some(i) => i,
            None => {
                self.roles.push(RoleUsage {
                    role: role.to_owned(),
                    ..RoleUsage::default()
                });
                self.roles.len() - 1
            }
        };
        let r = &mut self.roles[idx];
        r.calls += 1;
        r.millis = r.millis.saturating_add(millis);
        add_provider(&mut r.providers, provider);
        r.input_tokens = known_sum(r.input_tokens, spent.input_tokens);
        r.output_tokens = known_sum(r.output_tokens, spent.output_tokens);
        r.cost_usd = known_sum(r.cost_usd, spent.cost_usd);
    }
}

fn add_provider(providers: &mut Vec<String>, provider: &str) {
    if !providers.iter().any(|p| p == provider) {
        providers.push(provider.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sums() {
        let cases: [(Option<u64>, Option<u64>, Option<u64>); 4] = [
            (None, None, None),
            (Some(3), None, Some(3)),
            (None, Some(4), Some(4)),
            (Some(3), Some(4), Some(7)),
        ];
        for (a, b, want) in cases {
            assert_eq!(known_sum(a, b), want, "{a:?} + {b:?}");
        }
        assert_eq!(known_sum(Some(0.25), Some(0.5)), Some(0.75));
        assert_eq!(known_sum(None, Some(0.5)), Some(0.5));
    }

    #[test]
    fn tokens_of_a_call() {
        let cases = [
            ((None, None), None),
            ((Some(10), None), Some(10)),
            ((None, Some(5)), Some(5)),
            ((Some(10), Some(5)), Some(15)),
        ];
        for ((input_tokens, output_tokens), want) in cases {
            let spent = Spent {
                input_tokens,
                output_tokens,
                cost_usd: None,
            };
            assert_eq!(spent.tokens(), want, "{spent:?}");
        }
    }

    fn spent(input: Option<u64>, output: Option<u64>, cost: Option<f64>) -> Spent {
        Spent {
            input_tokens: input,
            output_tokens: output,
            cost_usd: cost,
        }
    }

    #[test]
    fn calls_add_up_per_run_and_per_role() {
        // (role, provider, millis, spent) in call order.
        let calls = [
            ("triage", "claude", 100, spent(Some(10), Some(2), Some(0.5))),
            ("fix", "command", 50, spent(None, None, None)),
            ("triage", "builtin", 10, spent(None, Some(3), None)),
            ("fix", "command", u64::MAX, spent(Some(1), None, Some(0.25))),
        ];
        let mut usage = AgentUsage::default();
        for (role, provider, millis, s) in &calls {
            usage.add_call(role, provider, *millis, s);
        }
        assert_eq!(usage.calls, 4);
        assert_eq!(usage.millis, u64::MAX, "wall time saturates");
        assert_eq!(usage.providers, ["claude", "command", "builtin"]);
        assert_eq!(usage.tokens, Some(16));
        assert_eq!(usage.cost_usd, Some(0.75));
        // (role, calls, providers, (input, output, cost)), in first-use order.
        type Figures = (Option<u64>, Option<u64>, Option<f64>);
        let want: [(&str, u32, &[&str], Figures); 2] = [
            (
                "triage",
                2,
                &["claude", "builtin"],
                (Some(10), Some(5), Some(0.5)),
            ),
            ("fix", 2, &["command"], (Some(1), None, Some(0.25))),
        ];
        assert_eq!(usage.roles.len(), want.len());
        for (r, (role, calls, providers, figures)) in usage.roles.iter().zip(want) {
            assert_eq!(r.role, role);
            assert_eq!(r.calls, calls, "{role}");
            assert_eq!(r.providers, providers, "{role}");
            assert_eq!(
                (r.input_tokens, r.output_tokens, r.cost_usd),
                figures,
                "{role}"
            );
        }
        assert_eq!(usage.roles[0].millis, 110);
    }

    #[test]
    fn nothing_reported_stays_unknown() {
        let mut usage = AgentUsage::default();
        usage.add_call("review", "command", 5, &Spent::default());
        usage.add_call("review", "command", 5, &Spent::default());
        assert_eq!((usage.calls, usage.millis), (2, 10));
        assert_eq!((usage.tokens, usage.cost_usd), (None, None));
        let r = &usage.roles[0];
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.cost_usd),
            (None, None, None)
        );
    }
}
