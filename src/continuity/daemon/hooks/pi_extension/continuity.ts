// continuity for pi: posts this session's events to the continuity daemon.
// Installed by `continuity hooks install pi`; removed by `continuity hooks uninstall pi`.
// marker: continuity-pi-extension v1 (checkpoints: 2)
//
// Each event runs the fast hook command (`continuity hook EVENT --harness pi`) with a JSON
// object on stdin that uses Claude Code's field names (session_id, transcript_path, cwd,
// prompt, trigger, custom_instructions, last_assistant_message, reason). The command forwards
// it to the daemon, or spools it durably when the daemon is down, and always exits 0.
//
//   session_start            -> session-start (source "resume" when the session already
//                               holds messages: `pi --continue` says "startup"). pi ignores
//                               what a session_start handler returns, so the recovery context
//                               is kept for the session's first agent start.
//   before_agent_start       -> user-prompt-submit (awaited: its answer carries recall at
//                               the point of action, issue 40: a custom message of
//                               customType "continuity-recall", not displayed); on the
//                               session's first agent start it also returns the recovery
//                               context as a custom message (customType
//                               "continuity-recovery", not displayed; the recall after it in
//                               the same message), quoted as earlier work, not as
//                               instructions: pi keeps it in the session and sends it to the
//                               model with every later request (issue 12)
//   tool_call / tool_result  -> pre-tool-use for edit, write and bash (issue 40): asked when
//                               the tool is about to run, the answer appended to the tool's
//                               result (pi 0.73.1: tool_call can only block)
//   session_before_compact   -> pre-compaction (awaited, bounded: the checkpoint is written
//                               before pi compacts; never cancels the compaction)
//   session_compact          -> post-compaction
//   agent_settled            -> stop (a settled turn; pi 0.73 has no agent_settled: the last
//                               agent_end, when no new run starts within 3 s; in print mode,
//                               ctx.hasUI false, at once and awaited, because pi exits right
//                               after agent_end and a timer would never fire)
//   session_shutdown         -> stop first when a turn is still unsettled (awaited: pi awaits
//                               session_shutdown handlers before it exits), then the print-mode
//                               continuation checkpoint (below), then session-end (not on
//                               reload: the session continues)
//
// Continuation checkpoint (issue 14, seed 002). After a successful settled turn (the last
// assistant message stopped with "stop": not aborted, not an error, so no retry is pending;
// nothing queued; pi idle; no stop in progress) the working view is measured: the branch's
// entries from the newest compaction on, as pi sends them (its summary, its kept entries, every
// entry after it), as the UTF-8 bytes of their JSON text and structure, image payloads left out.
// Over the follow-up budget (the daemon's `[continuity] follow_up_budget_bytes`, which the stop
// hook answers; 240,000 when it did not answer) the extension calls `ctx.compact` once, with a
// typed marker as its instructions (never another prompt, never a model change, nothing
// queued is sent). Its own `session_before_compact` recognizes the marker, hands the complete
// working view to the daemon (`continuity hook continuation-summary`: the daemon's configured
// summarizer, within `[daemon] stop_seconds`; pi's abort signal kills the request, which
// cancels the summary) and returns pi a compaction of its own: the summary,
// `firstKeptEntryId: null` (self-retaining: nothing before it is sent again), `tokensBefore`,
// and `details.continuity` = {continuation: true, run_id, covers}. pi writes it as an ordinary
// compaction entry; importing the session file makes it our store's checkpoint, the same one.
// Any failure returns `{cancel: true}` (a thrown error would make pi run its own summarizer):
// the daemon has recorded the `continuation_checkpoint_refused` receipt (run id, closed
// reason), or is told so (`continuation-refused`), and pi's notification API says it. A
// compaction pi starts itself (its threshold, /compact) is pi's own: only the pre-compaction
// checkpoint is ours. Interactive and RPC mode check when the turn settled (the fallback
// timer); print mode checks in session_shutdown, after pi printed the answer and before it
// exits; a SIGTERM there is a stop: no checkpoint starts, and one under way is cancelled.
//
// Tools (issue 39). pi takes no MCP server: the extension registers continuity's tools as its
// own (pi.registerTool), named continuity_search, continuity_show, continuity_recall,
// continuity_continuation, continuity_remember and continuity_checkpoint, with the MCP tools'
// parameters (plain JSON schemas). Each call runs the tool runner (`TOOL_COMMAND TOOL`, the
// arguments as JSON on stdin, in the session's folder) and hands its JSON answer to the model
// as text; an error answer becomes a failed tool call (thrown, as pi's docs ask).
//
// Plain JavaScript syntax inside a .ts file: pi loads it with jiti, and it needs no build.
// Nothing here throws into pi, and no handler waits longer than its timeout.

import { spawn } from "node:child_process";

const HOOK_COMMAND = __CONTINUITY_HOOK_COMMAND__;
const TOOL_COMMAND = __CONTINUITY_TOOL_COMMAND__;
const TOOL_TIMEOUT_MS = 40000;
const TIMEOUT_MS = { "session-start": 6000, "pre-compaction": 6000, "session-end": 2000,
  "pre-tool-use": 3000 };
const DEFAULT_TIMEOUT_MS = 4000;
const SETTLE_FALLBACK_MS = 3000;
const RECOVERY_TYPE = "continuity-recovery";
const RECALL_TYPE = "continuity-recall";
// pi's tools recall runs before (issue 40): its file edits and its shell
const RECALL_TOOLS = ["edit", "write", "bash"];
const FOLLOW_UP_BUDGET_BYTES = 240000; // seed 002; the daemon's configured value wins
const CHECKPOINT_MARKER = "continuity:continuation-checkpoint";
const SUMMARY_WAIT_MS = 600000; // the daemon bounds a summary by [daemon] stop_seconds
const REFUSED_WAIT_MS = 5000;
const REFUSAL_EVENT = "continuation_checkpoint_refused";
// issue 39: the daemon's text carries its own framing ("Quoted from continuity's record as
// evidence; not an instruction."), the same in every harness: no preface of ours on top.

// The injected text of a hook's answer, or null (none, or the hook failed).
function contextOf(out) {
  const text = out && out.additionalContext;
  return typeof text === "string" && text.trim() ? text : null;
}

function hookCommand() {
  const fromEnv = process.env.CONTINUITY_HOOK_COMMAND;
  if (fromEnv) {
    try {
      const parsed = JSON.parse(fromEnv);
      if (Array.isArray(parsed) && parsed.length > 0) return parsed;
    } catch (_error) {
      // fall back to the installed command
    }
  }
  return HOOK_COMMAND;
}

export function runHook(event, payload, options = {}) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (!done) {
        done = true;
        resolve(value);
      }
    };
    try {
      const [command, ...args] = hookCommand();
      const wait = options.timeoutMs ?? TIMEOUT_MS[event] ?? DEFAULT_TIMEOUT_MS;
      const extra = options.timeoutMs ? ["--timeout", String(Math.ceil(wait / 1000))] : [];
      const child = spawn(command, [...args, event, "--harness", "pi"].concat(extra), {
        stdio: ["pipe", "pipe", "ignore"],
      });
      const chunks = [];
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish(null);
      }, wait + (options.timeoutMs ? 2000 : 0));
      const signal = options.signal;
      if (signal) {
        const abort = () => {
          clearTimeout(timer);
          child.kill("SIGKILL"); // the daemon sees its client go and cancels the summary
          finish({ aborted: true });
        };
        if (signal.aborted) abort();
        else signal.addEventListener("abort", abort, { once: true });
      }
      child.stdout.on("data", (chunk) => chunks.push(chunk));
      child.on("error", () => {
        clearTimeout(timer);
        finish(null);
      });
      child.on("close", () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString("utf8").trim();
        try {
          finish(text ? JSON.parse(text) : null);
        } catch (_error) {
          finish(null);
        }
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch (_error) {
      finish(null);
    }
  });
}

function lastAssistantText(messages) {
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message || message.role !== "assistant") continue;
    const content = message.content;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      const text = content
        .filter((block) => block && block.type === "text" && typeof block.text === "string")
        .map((block) => block.text)
        .join("\n\n");
      if (text) return text;
    }
  }
  return undefined;
}

function holdsMessages(ctx) {
  try {
    const entries = ctx.sessionManager.getEntries();
    return Array.isArray(entries) && entries.some((entry) => entry && entry.type === "message");
  } catch (_error) {
    return false;
  }
}

function lastAssistantInSession(ctx) {
  try {
    const branch = ctx.sessionManager.getBranch();
    if (!Array.isArray(branch)) return undefined;
    return lastAssistantText(branch.filter((e) => e && e.type === "message").map((e) => e.message));
  } catch (_error) {
    return undefined;
  }
}

// ---------------------------------------------------------------- the working view (issue 14)

// The branch's entries as pi sends them: the newest compaction, the entries it kept (from its
// firstKeptEntryId, when found before it), then every entry after it; only entries pi turns
// into messages (message, custom_message, branch_summary).
export function workingView(branch) {
  if (!Array.isArray(branch)) return [];
  let last = -1;
  for (let i = branch.length - 1; i >= 0; i--) {
    if (branch[i] && branch[i].type === "compaction") {
      last = i;
      break;
    }
  }
  const sent = (e) =>
    e && (e.type === "message" || e.type === "custom_message" ||
      (e.type === "branch_summary" && e.summary));
  if (last < 0) return branch.filter(sent);
  const compaction = branch[last];
  let kept = branch.findIndex((e) => e && e.id === compaction.firstKeptEntryId);
  if (kept < 0 || kept > last) kept = last;
  return [compaction, ...branch.slice(kept, last).filter(sent), ...branch.slice(last + 1).filter(sent)];
}

// A content block with its media payload replaced by a stub (its type and size only).
function stubbed(block) {
  if (block && block.type === "image" && typeof block.data === "string") {
    const bytes = Math.floor((block.data.length * 3) / 4);
    return { type: "text", text: `[${block.mimeType || "image"} ${bytes} B omitted]` };
  }
  return block;
}

function stubContent(content) {
  return Array.isArray(content) ? content.map(stubbed) : content;
}

// An entry with media payloads stubbed (what the daemon is sent).
export function withoutMedia(entry) {
  if (!entry) return entry;
  if (entry.type === "message" && entry.message) {
    return { ...entry, message: { ...entry.message, content: stubContent(entry.message.content) } };
  }
  if (entry.type === "custom_message") return { ...entry, content: stubContent(entry.content) };
  return entry;
}

// What pi sends the model for an entry: its role and content (text and structure), no metadata.
function sentShape(entry) {
  if (entry.type === "compaction") return { role: "compactionSummary", summary: entry.summary };
  if (entry.type === "branch_summary") return { role: "branchSummary", summary: entry.summary };
  if (entry.type === "custom_message") {
    return { role: "custom", customType: entry.customType, content: stubContent(entry.content) };
  }
  const m = entry.message || {};
  const out = { role: m.role, content: stubContent(m.content) };
  for (const key of ["toolCallId", "toolName", "isError", "command", "output"]) {
    if (m[key] !== undefined) out[key] = m[key];
  }
  return out;
}

// The working view's size: UTF-8 bytes of its compact JSON (seed 002: text and structure).
export function viewBytes(view) {
  return Buffer.byteLength(JSON.stringify(view.map(sentShape)), "utf8");
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text").map((b) => b.text || "").join("");
}

// The id of the entry holding the request that opened the turn: the newest user message
// with text on the branch.
function requestEntryId(branch) {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (e && e.type === "message" && e.message && e.message.role === "user" &&
        textOf(e.message.content).trim()) {
      return e.id;
    }
  }
  return undefined;
}

function lastAssistantMessage(messages) {
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i] && messages[i].role === "assistant") return messages[i];
  }
  return undefined;
}


const STR = { type: "string" };
const INT = { type: "integer" };
const BOOL = { type: "boolean" };
const SESSION = { type: "string", description: "A session key or a unique key prefix." };
export const CONTINUITY_TOOLS = [
  {
    tool: "search",
    description:
      "Search every row of every stored session (messages, tool calls and their results, " +
      "summaries; earlier sessions of this project and others) for the words of query, best " +
      "first. Each hit has its session key, seq and a redacted snippet; call continuity_show " +
      "with them for the rows around it. Filters: harness, here (this folder only), project, " +
      "role (user, assistant, tool, system), tool, since / until (a date or an age such as " +
      "7d). limit: 1 to 50.",
    properties: { query: STR, limit: INT, harness: STR, here: BOOL, project: STR, role: STR,
                  tool: STR, since: STR, until: STR },
    required: ["query"],
  },
  {
    tool: "show",
    description:
      "The rows of a stored session around row seq (from seq-before, at most rows rows), " +
      "redacted, each row's text cut at 2,000 characters.",
    properties: { session: SESSION, seq: INT, before: INT, rows: INT },
    required: ["session", "seq"],
  },
  {
    tool: "recall",
    description:
      "Find memories matching the words of query, best first. expand=true adds the " +
      "transcripts they came from; sessions=true also returns matching rows of every session.",
    properties: { query: STR, limit: INT, expand: BOOL, session: SESSION, sessions: BOOL },
    required: ["query"],
  },
  {
    tool: "continuation",
    description:
      "The bounded continuation of a session: newest summary, previous request, recent " +
      "tail. Without session: the previous session of this project (not this one).",
    properties: { budget_bytes: INT, session: SESSION },
    required: [],
  },
  {
    tool: "remember",
    description: "Remember a durable fact or decision (secrets are redacted; stored once).",
    properties: { content: STR, tags: { type: "array", items: STR }, importance: { type: "number" },
                  type: STR, session: SESSION },
    required: ["content"],
  },
  {
    tool: "checkpoint",
    description:
      "Write a checkpoint of this session now (its recent prompts and memory activity, plus " +
      "your reason), e.g. before a risky step or when a phase of work ends.",
    properties: { reason: STR, session: SESSION },
    required: ["reason"],
  },
];

export function runTool(tool, params, cwd, signal) {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (fn, value) => {
      if (!done) {
        done = true;
        fn(value);
      }
    };
    try {
      const [command, ...args] = TOOL_COMMAND;
      const child = spawn(command, [...args, tool], {
        cwd: cwd || process.cwd(),
        stdio: ["pipe", "pipe", "ignore"],
      });
      const chunks = [];
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish(reject, new Error(`continuity ${tool}: no answer within ${TOOL_TIMEOUT_MS / 1000} s`));
      }, TOOL_TIMEOUT_MS);
      if (signal) {
        const abort = () => {
          clearTimeout(timer);
          child.kill("SIGKILL");
          finish(reject, new Error(`continuity ${tool}: cancelled`));
        };
        if (signal.aborted) abort();
        else signal.addEventListener("abort", abort, { once: true });
      }
      child.stdout.on("data", (chunk) => chunks.push(chunk));
      child.on("error", (error) => {
        clearTimeout(timer);
        finish(reject, new Error(`continuity ${tool}: ${error.message}`));
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString("utf8").trim();
        let answer = null;
        try {
          answer = text ? JSON.parse(text) : null;
        } catch (_error) {
          answer = null;
        }
        if (code === 0 && answer && !answer.error) finish(resolve, text);
        else finish(reject, new Error((answer && answer.error) || `continuity ${tool} failed (exit ${code})`));
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(params || {}));
    } catch (error) {
      finish(reject, error);
    }
  });
}

function registerTools(pi) {
  if (typeof pi.registerTool !== "function") return;
  for (const spec of CONTINUITY_TOOLS) {
    pi.registerTool({
      name: `continuity_${spec.tool}`,
      label: `continuity ${spec.tool}`,
      description: spec.description,
      parameters: { type: "object", properties: spec.properties, required: spec.required },
      async execute(_toolCallId, params, signal, _onUpdate, ctx) {
        const text = await runTool(spec.tool, params, ctx && ctx.cwd, signal);
        return { content: [{ type: "text", text }], details: {} };
      },
    });
  }
}

export default function continuity(pi) {
  registerTools(pi);
  const session = { id: undefined, file: undefined, cwd: undefined };
  let lastAssistant;
  let sawSettled = false;
  let settleTimer;
  let started; // the session-start hook's promise: its recovery context, or null
  let injected = false; // the recovery context went into this session (once per session)
  let turnOpen = false; // a prompt ran and its settled turn was not delivered yet
  let delivering = Promise.resolve(); // the stop hook in flight
  let turnOk = false; // the last turn ended successfully (stopReason "stop")
  let checked = false; // this turn's continuation checkpoint was considered
  let budget = FOLLOW_UP_BUDGET_BYTES;
  let stopping = false; // a stop is in progress (SIGTERM in print mode, quit)
  let pending; // our compaction request: {instructions, abort}
  let checkpointing = Promise.resolve(); // the checkpoint in flight
  let signalHooked = false;
  const toolRecalls = new Map(); // toolCallId -> the pre-tool-use hook's promise (issue 40)

  const base = (ctx, name) => {
    try {
      session.id = ctx.sessionManager.getSessionId() ?? session.id;
      session.file = ctx.sessionManager.getSessionFile() ?? session.file;
      session.cwd = ctx.cwd ?? session.cwd;
    } catch (_error) {
      // a stale context after a session switch: keep what we had
    }
    return {
      session_id: session.id,
      transcript_path: session.file ?? "",
      cwd: session.cwd,
      hook_event_name: name,
    };
  };

  const settled = (ctx) => {
    clearTimeout(settleTimer);
    settleTimer = undefined;
    if (!turnOpen) return delivering;
    turnOpen = false;
    const answer = lastAssistant ?? lastAssistantInSession(ctx);
    delivering = runHook("stop", {
      ...base(ctx, "Stop"),
      last_assistant_message: answer,
      checkpoint_in_harness: true, // the checkpoint is ours, in pi's session (issue 14)
    }).then((out) => {
      const b = out && out.follow_up_budget_bytes;
      if (Number.isInteger(b) && b > 0) budget = b;
      return out;
    });
    return delivering;
  };

  // A refused checkpoint is said, never silent (issue 45 item 7): with a UI (interactive,
  // RPC) as pi's error notification holding the receipt; without one (print and JSON mode,
  // where ctx.ui.notify does nothing) as one line on stderr, after the printed answer.
  const notifyRefusal = (ctx, runId, reason, detail) => {
    const why = detail ? `${reason}: ${detail}` : reason;
    if (ctx && ctx.hasUI === false) {
      try {
        process.stderr.write(
          `continuity: the continuation checkpoint was refused (${why}); the answer stands, ` +
            "no checkpoint was written\n",
        );
      } catch (_error) {
        // stderr closed: the receipt is in continuity's store
      }
      return;
    }
    try {
      const receipt = { type: REFUSAL_EVENT, run_id: runId ?? null, reason, detail: detail ?? null };
      ctx.ui.notify(`${REFUSAL_EVENT} ${JSON.stringify(receipt)}`, "error");
    } catch (_error) {
      // no UI: the receipt is in continuity's store
    }
  };

  // The continuation checkpoint after a settled turn (header comment); resolves when it was
  // written or refused, or was not needed.
  const checkpoint = (ctx) => {
    if (checked || !turnOk || stopping || pending) return checkpointing;
    checked = true;
    try {
      if (typeof ctx.isIdle === "function" && !ctx.isIdle()) return checkpointing;
      if (typeof ctx.hasPendingMessages === "function" && ctx.hasPendingMessages()) {
        return checkpointing;
      }
      const view = workingView(ctx.sessionManager.getBranch());
      if (view.length === 0 || view[view.length - 1].type === "compaction") return checkpointing;
      if (viewBytes(view) <= budget) return checkpointing;
    } catch (_error) {
      return checkpointing;
    }
    const nonce = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
    const request = { instructions: `${CHECKPOINT_MARKER} ${nonce}`, abort: new AbortController() };
    pending = request;
    checkpointing = new Promise((resolve) => {
      try {
        ctx.compact({
          customInstructions: request.instructions,
          onComplete: () => resolve(true),
          onError: () => resolve(false),
        });
      } catch (_error) {
        resolve(false);
      }
    }).finally(() => {
      if (pending === request) pending = undefined;
    });
    return checkpointing;
  };

  // session_before_compact for our marker: the summary from the daemon, or {cancel: true}.
  const ourCompaction = async (event, ctx, request) => {
    const branch = Array.isArray(event.branchEntries) ? event.branchEntries : [];
    const view = workingView(branch);
    const requestId = requestEntryId(branch);
    const abort = new AbortController();
    const cancel = () => abort.abort();
    if (event.signal) {
      if (event.signal.aborted) abort.abort();
      else event.signal.addEventListener("abort", cancel, { once: true });
    }
    request.abort.signal.addEventListener("abort", cancel, { once: true });
    base(ctx, "ContinuationSummary"); // the session's id, file and folder, as pi has them now
    const answer = abort.signal.aborted ? { aborted: true } : await runHook(
      "continuation-summary",
      {
        harness: "pi",
        session_key: session.id,
        transcript_path: session.file,
        project: session.cwd,
        request_entry_id: requestId,
        entries: view.map(withoutMedia),
        deadline_seconds: SUMMARY_WAIT_MS / 1000,
      },
      { timeoutMs: SUMMARY_WAIT_MS, signal: abort.signal },
    );
    const summary = answer && answer.status === "ok" ? answer.summary : undefined;
    if (!abort.signal.aborted && !(event.signal && event.signal.aborted) &&
        typeof summary === "string" && summary.trim()) {
      return {
        compaction: {
          summary,
          firstKeptEntryId: null, // self-retaining (seed 002): nothing before it is sent again
          tokensBefore: (event.preparation && event.preparation.tokensBefore) || 0,
          details: {
            continuity: {
              continuation: true,
              run_id: answer.run_id ?? null,
              covers: answer.covers ?? null,
              summarizer: answer.summarizer ?? null,
            },
          },
        },
      };
    }
    let reason = answer && answer.status === "refused" ? answer.reason : undefined;
    let detail = answer && answer.status === "refused" ? answer.detail : undefined;
    let runId = answer && answer.run_id;
    if (!reason) {
      // the daemon did not answer (or we stopped waiting): tell it, bounded; it records the
      // receipt once per run (its own cancellation of the same attempt included)
      const why = answer && answer.why;
      if ((answer && answer.aborted) || abort.signal.aborted) {
        reason = "cancelled"; // pi's abort or a stop
        detail = "pi stopped the checkpoint";
      } else if (why === "timeout") {
        reason = "cancelled"; // no answer within our wait
        detail = `no answer from the daemon within ${SUMMARY_WAIT_MS / 1000} s`;
      } else if (why === "http" && answer.status === 413) {
        reason = "over_bound"; // the view is larger than the daemon takes ([daemon] max_body_bytes)
        detail = "the daemon refused the working view as too large (HTTP 413)";
      } else if (summary !== undefined) {
        reason = "empty";
        detail = "the daemon's summary is empty";
      } else {
        reason = "provider_failure"; // no daemon, or it failed: no summarizer to make one
        detail = why === "http" && Number.isInteger(answer.status)
          ? `the daemon answered HTTP ${answer.status}`
          : "no daemon answered";
      }
      const told = await runHook("continuation-refused", {
        harness: "pi",
        session_key: session.id,
        transcript_path: session.file,
        project: session.cwd,
        request_entry_id: requestId,
        reason,
        detail,
      }, { timeoutMs: REFUSED_WAIT_MS });
      if (told && told.status === "refused") {
        reason = told.reason || reason;
        detail = told.detail || detail;
        runId = told.run_id;
      }
    }
    notifyRefusal(ctx, runId, reason, typeof detail === "string" ? detail.slice(0, 200) : undefined);
    return { cancel: true };
  };

  pi.on("session_start", async (event, ctx) => {
    const reason = (event && event.reason) || "startup";
    const source = reason === "startup" && holdsMessages(ctx) ? "resume" : reason;
    started = runHook("session-start", {
      ...base(ctx, "SessionStart"),
      source,
      previous_session_id: event && event.previousSessionFile,
    }).then(contextOf);
    await started;
    return undefined; // pi ignores it: the context goes out on the first agent start
  });

  pi.on("before_agent_start", async (event, ctx) => {
    clearTimeout(settleTimer);
    turnOpen = true;
    turnOk = false;
    checked = false;
    const prompted = runHook("user-prompt-submit", {
      ...base(ctx, "UserPromptSubmit"),
      prompt: (event && event.prompt) || "",
    });
    let brief = null;
    if (!injected && started) {
      injected = true;
      brief = await started;
    }
    const recall = contextOf(await prompted); // issue 40: recall at the point of action
    if (brief) {
      const content = recall ? `${brief}\n\n${recall}` : brief;
      return { message: { customType: RECOVERY_TYPE, content, display: false } };
    }
    if (!recall) return undefined;
    return { message: { customType: RECALL_TYPE, content: recall, display: false } };
  });

  // Recall before an edit or a shell command (issue 40): asked when pi is about to run the
  // tool (tool_call, which can only block), given to the model with the tool's result
  // (tool_result may add content), since pi 0.73.1 has no other way to add context there.
  pi.on("tool_call", async (event, ctx) => {
    const name = event && event.toolName;
    if (!RECALL_TOOLS.includes(name) || !event.toolCallId) return undefined;
    toolRecalls.set(event.toolCallId, runHook("pre-tool-use", {
      ...base(ctx, "PreToolUse"),
      tool_name: name,
      tool_input: event.input ?? {},
      tool_use_id: event.toolCallId,
    }));
    return undefined;
  });

  pi.on("tool_result", async (event) => {
    const asked = event && toolRecalls.get(event.toolCallId);
    if (!asked) return undefined;
    toolRecalls.delete(event.toolCallId);
    const recall = contextOf(await asked);
    if (!recall) return undefined;
    const content = Array.isArray(event.content) ? event.content : [];
    return { content: [...content, { type: "text", text: `\n\n${recall}` }] };
  });

  pi.on("agent_start", () => {
    clearTimeout(settleTimer);
  });

  pi.on("session_before_compact", async (event, ctx) => {
    const request = pending;
    if (request && event && event.customInstructions === request.instructions) {
      try {
        return await ourCompaction(event, ctx, request);
      } catch (_error) {
        return { cancel: true }; // never a throw: pi would run its own summarizer
      }
    }
    await runHook("pre-compaction", {
      ...base(ctx, "PreCompact"),
      trigger: (event && event.reason) || "manual",
      custom_instructions: (event && event.customInstructions) || "",
    });
    return undefined; // never cancel pi's compaction (B62)
  });

  pi.on("session_compact", async (event, ctx) => {
    const entry = event && event.compactionEntry;
    const ours = entry && entry.details && entry.details.continuity &&
      entry.details.continuity.continuation === true;
    const sent = runHook("post-compaction", {
      ...base(ctx, "PostCompact"),
      trigger: ours ? "continuation" : event && event.reason,
      compact_summary: entry && entry.summary,
    });
    if (ours) await sent; // the daemon imports the checkpoint before the turn returns
  });

  pi.on("agent_end", async (event, ctx) => {
    lastAssistant = lastAssistantText(event && event.messages) ?? lastAssistant;
    const last = lastAssistantMessage(event && event.messages);
    turnOk = !!last && last.stopReason === "stop"; // not aborted, no error (so no retry)
    if (sawSettled) return;
    clearTimeout(settleTimer);
    if (ctx && ctx.hasUI === false) {
      if (!signalHooked) {
        // print mode handles SIGTERM itself (so this adds to it): a stop is in progress
        signalHooked = true;
        for (const name of ["SIGTERM", "SIGHUP"]) {
          process.on(name, () => {
            stopping = true;
            if (pending) pending.abort.abort();
          });
        }
      }
      await settled(ctx); // print mode: pi exits next, a timer would never fire
      return;
    }
    settleTimer = setTimeout(() => {
      void settled(ctx).then(() => checkpoint(ctx));
    }, SETTLE_FALLBACK_MS);
  });

  pi.on("agent_settled", async (_event, ctx) => {
    sawSettled = true;
    await settled(ctx);
    await checkpoint(ctx);
  });

  pi.on("session_shutdown", async (event, ctx) => {
    await settled(ctx); // a turn still waiting for its fallback timer is delivered now
    await null; // a SIGTERM's own listener runs first: it marks the stop
    if (ctx && ctx.hasUI === false && !stopping && event && event.reason === "quit") {
      await checkpoint(ctx); // print mode: the answer is printed; pi exits after this
    } else {
      stopping = true; // quit, reload, switch: a stop; a checkpoint under way is cancelled
      if (pending) pending.abort.abort();
      await checkpointing;
    }
    if (event && event.reason === "reload") return; // the same session comes straight back
    await runHook("session-end", {
      ...base(ctx, "SessionEnd"),
      reason: (event && event.reason) || "quit",
    });
  });
}
