//! What the server answers: a [`Script`] of [`Exchange`]s.
//!
//! An agent CLI holds a conversation: it sends the prompt, the model asks
//! for a tool, the CLI runs it and sends the result back, and so on until
//! the model gives its final answer. The server is stateless about that:
//! the *step* of a request is the number of tool results it already carries
//! (0 for the first request of a conversation), so parallel conversations
//! (Shepherd's fixers run at once) never get each other's answers. Which
//! exchange answers is decided by [`Match`] on the request's user text,
//! first match wins.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

/// One thing the model does at one step of a conversation.
#[derive(Clone)]
pub enum Step {
    /// Ask the CLI to run a tool; the next request carries its result.
    Tool(ToolCall),
    /// The final answer as text (for codex: the message matching its
    /// `--output-schema`; for claude without a schema tool: the result).
    Text(String),
    /// The final answer as a structured object: for Anthropic, a call of
    /// Claude Code's `StructuredOutput` tool (what `--json-schema` asks
    /// for), followed by a short closing text; for the other APIs the
    /// object's JSON as the answer text.
    Structured(serde_json::Value),
    /// A final answer computed from the request (for example ids read out
    /// of the prompt): its text, or for Anthropic its `StructuredOutput`
    /// when the closure returns a JSON object.
    Dynamic(Arc<dyn Fn(&Conversation) -> serde_json::Value + Send + Sync>),
    /// An HTTP-level failure instead of an answer.
    Fail(Failure),
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Tool(t) => f.debug_tuple("Tool").field(t).finish(),
            Step::Text(t) => f.debug_tuple("Text").field(t).finish(),
            Step::Structured(v) => f.debug_tuple("Structured").field(v).finish(),
            Step::Dynamic(_) => f.write_str("Dynamic(..)"),
            Step::Fail(x) => f.debug_tuple("Fail").field(x).finish(),
        }
    }
}

impl Step {
    /// [`Step::Dynamic`] from a closure.
    pub fn dynamic(f: impl Fn(&Conversation) -> serde_json::Value + Send + Sync + 'static) -> Self {
        Step::Dynamic(Arc::new(f))
    }
}

/// A tool call, in terms every CLI has; each API module names it as its CLI
/// does (`Read`/`Edit`/`Write`/`Bash` for Claude Code, `exec_command` for
/// codex, ...). A relative path is resolved against the working directory
/// the CLI states in its request (see [`Conversation::cwd`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// Read a file.
    Read {
        /// The file.
        path: String,
    },
    /// Replace `old` by `new` in a file.
    Edit {
        /// The file.
        path: String,
        /// The text to replace (must occur once).
        old: String,
        /// Its replacement.
        new: String,
    },
    /// Write a whole file.
    Write {
        /// The file.
        path: String,
        /// Its new content.
        content: String,
    },
    /// Run a shell command.
    Shell {
        /// The command line.
        command: String,
    },
    /// A tool by its name in this CLI, with its input as the CLI expects it.
    Raw {
        /// The tool's name (`Grep`, `exec_command`, ...).
        name: String,
        /// Its input object.
        input: serde_json::Value,
    },
}

/// How one CLI names its file and shell tools and their arguments, for
/// [`ToolCall::named`].
pub(crate) struct ToolNames {
    /// The tool that reads a file.
    pub read: &'static str,
    /// The tool that replaces text in a file.
    pub edit: &'static str,
    /// The tool that writes a whole file.
    pub write: &'static str,
    /// The tool that runs a shell command.
    pub shell: &'static str,
    /// The argument naming the file (`file_path`).
    pub path: &'static str,
    /// An edit's argument holding the text to replace.
    pub old: &'static str,
    /// An edit's argument holding its replacement.
    pub new: &'static str,
    /// A write's argument holding the file's content.
    pub content: &'static str,
    /// One fixed argument more of an edit (Gemini's `instruction`).
    pub edit_extra: Option<(&'static str, &'static str)>,
    /// One fixed argument more of a shell command (a `description`).
    pub shell_extra: Option<(&'static str, &'static str)>,
}

impl ToolCall {
    /// The name and arguments of this call for the CLI that names its
    /// tools `names` (a [`ToolCall::Raw`] is passed as it is).
    pub(crate) fn named(&self, names: &ToolNames, conv: &Conversation) -> (String, Value) {
        let text = |s: &str| Value::String(s.to_owned());
        let (name, args, extra) = match self {
            ToolCall::Read { path } => (
                names.read,
                vec![(names.path, conv.resolve(path).into())],
                None,
            ),
            ToolCall::Edit { path, old, new } => (
                names.edit,
                vec![
                    (names.path, conv.resolve(path).into()),
                    (names.old, text(old)),
                    (names.new, text(new)),
                ],
                names.edit_extra,
            ),
            ToolCall::Write { path, content } => (
                names.write,
                vec![
                    (names.path, conv.resolve(path).into()),
                    (names.content, text(content)),
                ],
                None,
            ),
            ToolCall::Shell { command } => (
                names.shell,
                vec![("command", text(command))],
                names.shell_extra,
            ),
            ToolCall::Raw { name, input } => return (name.clone(), input.clone()),
        };
        let args = args
            .into_iter()
            .chain(extra.map(|(key, value)| (key, text(value))))
            .map(|(key, value)| (key.to_owned(), value))
            .collect();
        (name.to_owned(), Value::Object(args))
    }
}

/// An HTTP-level failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// An error status with the API's error body; `retry_after` (seconds)
    /// adds a `Retry-After` header.
    Status {
        /// 401, 429, 500, ...
        status: u16,
        /// Seconds for `Retry-After`.
        retry_after: Option<u64>,
        /// The error message in the body.
        message: String,
    },
    /// Accept the request and never answer (until the server stops).
    Hang,
    /// A 200 whose body is not valid JSON (or a broken event stream).
    Malformed,
}

impl Failure {
    /// 401 with an "invalid x-api-key" style message.
    pub fn unauthorized() -> Self {
        Failure::Status {
            status: 401,
            retry_after: None,
            message: "invalid api key (shepherd-model-server)".to_owned(),
        }
    }

    /// 429 with `Retry-After: seconds`.
    pub fn rate_limited(seconds: u64) -> Self {
        Failure::Status {
            status: 429,
            retry_after: Some(seconds),
            message: "rate limited (shepherd-model-server)".to_owned(),
        }
    }

    /// 500.
    pub fn server_error() -> Self {
        Failure::Status {
            status: 500,
            retry_after: None,
            message: "internal error (shepherd-model-server)".to_owned(),
        }
    }
}

/// Which requests an exchange answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// Every request.
    Any,
    /// Requests whose user text contains this string.
    Contains(String),
    /// Requests whose user text contains all of these.
    All(Vec<String>),
    /// Requests whose user text does not contain this string.
    NotContains(String),
}

impl Match {
    fn matches(&self, text: &str) -> bool {
        match self {
            Match::Any => true,
            Match::Contains(s) => text.contains(s.as_str()),
            Match::All(all) => all.iter().all(|s| text.contains(s.as_str())),
            Match::NotContains(s) => !text.contains(s.as_str()),
        }
    }
}

/// Token counts reported with every answer of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenUsage {
    /// Input tokens per response.
    pub input: u64,
    /// Output tokens per response.
    pub output: u64,
}

impl Default for TokenUsage {
    fn default() -> Self {
        TokenUsage {
            input: 100,
            output: 10,
        }
    }
}

/// A model computed from each request: the step to take, or `None` when
/// the conversation is over (the model says "Done.").
pub type Plan = Arc<dyn Fn(&Conversation) -> Option<Step> + Send + Sync>;

/// One scripted conversation: which requests it answers, and what the model
/// does at each step.
pub struct Exchange {
    /// A name, recorded with every request it answered.
    pub label: String,
    /// Which requests.
    pub when: Match,
    /// What the model does at step 0, 1, ...; past the last step a short
    /// closing text ("Done.").
    pub steps: Vec<Step>,
    /// Instead of `steps`: the step computed from the request.
    pub plan: Option<Plan>,
    /// The first `n` requests it matches get this failure instead.
    pub fail_first: Option<(usize, Failure)>,
    /// Answer at most this many conversations (counted on step-0 requests
    /// that were not failed), then stop matching; `None`: any number.
    pub limit: Option<usize>,
    /// Reported with every response.
    pub usage: TokenUsage,
    /// Wait this long before answering (slow models).
    pub delay: Duration,
    failed: AtomicUsize,
    started: AtomicUsize,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange")
            .field("label", &self.label)
            .field("when", &self.when)
            .field("steps", &self.steps)
            .field("planned", &self.plan.is_some())
            .field("fail_first", &self.fail_first)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Exchange {
    /// An exchange `label` answering requests that match `when` with `steps`.
    pub fn new(label: impl Into<String>, when: Match, steps: Vec<Step>) -> Self {
        Exchange {
            label: label.into(),
            when,
            steps,
            plan: None,
            fail_first: None,
            limit: None,
            usage: TokenUsage::default(),
            delay: Duration::ZERO,
            failed: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
        }
    }

    /// An exchange whose every step is computed from the request by `plan`
    /// (which sees the step as [`Conversation::tool_results`]).
    pub fn planned(
        label: impl Into<String>,
        when: Match,
        plan: impl Fn(&Conversation) -> Option<Step> + Send + Sync + 'static,
    ) -> Self {
        let mut exchange = Exchange::new(label, when, Vec::new());
        exchange.plan = Some(Arc::new(plan));
        exchange
    }

    /// Requests whose user text contains `needle`.
    pub fn when_contains(label: impl Into<String>, needle: &str, steps: Vec<Step>) -> Self {
        Exchange::new(label, Match::Contains(needle.to_owned()), steps)
    }

    /// The first `n` matching requests fail with `failure`.
    pub fn failing_first(mut self, n: usize, failure: Failure) -> Self {
        self.fail_first = Some((n, failure));
        self
    }

    /// At most `n` conversations, then this exchange stops matching.
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Report these token counts.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage = TokenUsage { input, output };
        self
    }

    /// Wait before every answer.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    fn exhausted(&self) -> bool {
        self.limit
            .is_some_and(|n| self.started.load(Ordering::SeqCst) >= n)
    }
}

/// What the server makes of one request, whatever its API.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conversation {
    /// All user text of the request, joined (the prompt, and system
    /// reminders the CLI adds).
    pub user_text: String,
    /// How many tool results the request carries: the step.
    pub tool_results: usize,
    /// The working directory the CLI states (Claude Code's "Primary working
    /// directory", codex's `<cwd>`), if found.
    pub cwd: Option<String>,
    /// The model asked for.
    pub model: Option<String>,
    /// Whether the answer is to be streamed.
    pub stream: bool,
    /// The names of the tools the request offers (Chat Completions and
    /// Gemini; empty where not read): which CLI is asking, and what it
    /// allows the model.
    pub tools: Vec<String>,
}

impl Conversation {
    /// An empty conversation of a JSON request `body` that names its
    /// `model` and asks for streaming with `"stream": true` (the OpenAI and
    /// Anthropic APIs): what the messages say is read by the caller.
    pub(crate) fn of_request(body: &Value) -> Self {
        Conversation {
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            stream: body.get("stream").and_then(Value::as_bool) == Some(true),
            ..Conversation::default()
        }
    }

    /// `text` added to [`Self::user_text`], on a line of its own.
    pub(crate) fn push_user_text(&mut self, text: &str) {
        if !self.user_text.is_empty() {
            self.user_text.push('\n');
        }
        self.user_text.push_str(text);
    }

    /// `path` made absolute against [`Self::cwd`] when it is relative.
    pub fn resolve(&self, path: &str) -> String {
        match &self.cwd {
            Some(cwd) if !path.starts_with('/') => {
                format!("{}/{}", cwd.trim_end_matches('/'), path)
            }
            _ => path.to_owned(),
        }
    }
}

/// What to answer to one request, as the API modules get it.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// A step of the model.
    Step {
        step: Step,
        usage: TokenUsage,
        /// A distinct id for tool calls and messages.
        id: String,
    },
    /// Past the last step: a short closing text.
    Done { usage: TokenUsage, id: String },
}

/// A scripted server's behaviour: exchanges tried in order.
#[derive(Debug, Default)]
pub struct Script {
    exchanges: Vec<Exchange>,
    counter: AtomicUsize,
}

impl Script {
    /// A script of `exchanges`, tried in order.
    pub fn new(exchanges: Vec<Exchange>) -> Self {
        Script {
            exchanges,
            counter: AtomicUsize::new(0),
        }
    }

    /// Adds an exchange after the others.
    pub fn push(&mut self, exchange: Exchange) {
        self.exchanges.push(exchange);
    }

    /// The reply to `conv`, the label of the exchange that gave it, and how
    /// long to wait first; `None` when no exchange matches.
    pub(crate) fn reply(&self, conv: &Conversation) -> Option<(String, Reply, Duration)> {
        let exchange = self
            .exchanges
            .iter()
            .find(|e| !e.exhausted() && e.when.matches(&conv.user_text))?;
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let id = format!("{:06}", n + 1);
        if let Some((times, failure)) = &exchange.fail_first {
            if exchange.failed.fetch_add(1, Ordering::SeqCst) < *times {
                let reply = Reply::Step {
                    step: Step::Fail(failure.clone()),
                    usage: exchange.usage,
                    id,
                };
                return Some((exchange.label.clone(), reply, exchange.delay));
            }
        }
        if conv.tool_results == 0 {
            exchange.started.fetch_add(1, Ordering::SeqCst);
        }
        let step = match &exchange.plan {
            Some(plan) => plan(conv),
            None => exchange.steps.get(conv.tool_results).cloned(),
        };
        let reply = match step {
            Some(step) => Reply::Step {
                step,
                usage: exchange.usage,
                id,
            },
            None => Reply::Done {
                usage: exchange.usage,
                id,
            },
        };
        Some((exchange.label.clone(), reply, exchange.delay))
    }
}

/// The final answer of a [`Step::Structured`] or [`Step::Dynamic`] step.
pub(crate) fn structured(step: &Step, conv: &Conversation) -> Option<serde_json::Value> {
    match step {
        Step::Structured(v) => Some(v.clone()),
        Step::Dynamic(f) => Some(f(conv)),
        _ => None,
    }
}

/// A JSON value as answer text: strings as they are, the rest as JSON.
pub(crate) fn as_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn conv(text: &str, tool_results: usize) -> Conversation {
        Conversation {
            user_text: text.to_owned(),
            tool_results,
            ..Conversation::default()
        }
    }

    #[test]
    fn the_step_is_the_number_of_tool_results_and_the_first_match_wins() {
        let script = Script::new(vec![
            Exchange::when_contains(
                "triage",
                "triage agent",
                vec![
                    Step::Tool(ToolCall::Shell {
                        command: "ls".into(),
                    }),
                    Step::Text("{}".into()),
                ],
            ),
            Exchange::new("any", Match::Any, vec![Step::Text("other".into())]),
        ]);
        let (label, reply, _) = script.reply(&conv("the triage agent", 0)).unwrap();
        assert_eq!(label, "triage");
        assert!(matches!(
            reply,
            Reply::Step {
                step: Step::Tool(_),
                ..
            }
        ));
        let (_, reply, _) = script.reply(&conv("the triage agent", 1)).unwrap();
        assert!(matches!(reply, Reply::Step { step: Step::Text(t), .. } if t == "{}"));
        let (_, reply, _) = script.reply(&conv("the triage agent", 2)).unwrap();
        assert!(matches!(reply, Reply::Done { .. }));
        let (label, _, _) = script.reply(&conv("a fix agent", 0)).unwrap();
        assert_eq!(label, "any");
    }

    #[test]
    fn failures_come_first_and_limits_end_an_exchange() {
        let script = Script::new(vec![Exchange::new(
            "x",
            Match::Any,
            vec![Step::Text("ok".into())],
        )
        .failing_first(1, Failure::rate_limited(1))
        .limit(1)]);
        let (_, first, _) = script.reply(&conv("p", 0)).unwrap();
        assert!(matches!(
            first,
            Reply::Step {
                step: Step::Fail(_),
                ..
            }
        ));
        let (_, second, _) = script.reply(&conv("p", 0)).unwrap();
        assert!(matches!(
            second,
            Reply::Step {
                step: Step::Text(_),
                ..
            }
        ));
        assert!(script.reply(&conv("p", 0)).is_none());
    }

    #[test]
    fn relative_paths_resolve_against_the_cwd() {
        let mut c = conv("", 0);
        assert_eq!(c.resolve("a.txt"), "a.txt");
        c.cwd = Some("/wt/".into());
        assert_eq!(c.resolve("src/a.rs"), "/wt/src/a.rs");
        assert_eq!(c.resolve("/abs"), "/abs");
    }
}
