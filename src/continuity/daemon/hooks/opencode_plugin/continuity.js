// continuity for OpenCode: posts this session's events to the continuity daemon.
// Installed by `continuity hooks install opencode`; removed by `continuity hooks uninstall opencode`.
// marker: continuity-opencode-plugin v1
//
// OpenCode (1.x) loads every .js/.ts file of <config>/opencode/plugin/ as a plugin: a module
// whose exported async functions return hooks. Each of our events runs the fast hook command
// (`continuity hook EVENT --harness opencode`) with a JSON object on stdin that uses Claude
// Code's field names (session_id, cwd, prompt, source, trigger, last_assistant_message,
// reason). The command forwards it to the daemon, or spools it durably when the daemon is down,
// and always exits 0. OpenCode keeps no transcript file (its sessions live in its SQLite
// database), so transcript_path is OpenCode's data folder: the daemon mirrors the session
// from it to JSONL (as `continuity import` of that folder does) and imports the mirror.
//
//   event session.created            -> session-start (source "startup"); a session first
//                                       seen at a prompt (`--session`, `--continue`) starts
//                                       with source "resume"
//   chat.message                     -> user-prompt-submit (awaited; its recall is added to
//                                       the system prompt of that turn's requests)
//   experimental.chat.system.transform  the session-start answer (the recovery brief) is
//                                       appended to the system prompt of every request of
//                                       the session: OpenCode never stores the system
//                                       prompt, so the brief is not written into its session
//   experimental.session.compacting  -> pre-compaction (awaited; its answer is added to the
//                                       compaction's context)
//   event session.compacted          -> post-compaction
//   event session.idle               -> stop (the last assistant text of the session)
//   event session.deleted, dispose   -> session-end
//
// Plain JavaScript: OpenCode runs it with Bun, no build. Nothing here throws into OpenCode,
// and no handler waits longer than its timeout.

import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { join } from "node:path";

const HOOK_COMMAND = __CONTINUITY_HOOK_COMMAND__;
const TIMEOUT_MS = { "session-start": 6000, "pre-compaction": 6000, "session-end": 2000 };
const DEFAULT_TIMEOUT_MS = 4000;
// OpenCode's data folder (its opencode.db), as OpenCode finds it: $XDG_DATA_HOME/opencode or
// ~/.local/share/opencode. Sent as transcript_path: the daemon mirrors the session from it.
const DATA_DIR = join(process.env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "opencode");

function contextOf(out) {
  const text = out && out.additionalContext;
  return typeof text === "string" && text.trim() ? text : null;
}

function runHook(event, payload) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (!done) {
        done = true;
        resolve(value);
      }
    };
    try {
      const [command, ...args] = HOOK_COMMAND;
      const child = spawn(command, [...args, event, "--harness", "opencode"], {
        stdio: ["pipe", "pipe", "ignore"],
      });
      const chunks = [];
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish(null);
      }, TIMEOUT_MS[event] ?? DEFAULT_TIMEOUT_MS);
      child.stdout.on("data", (chunk) => chunks.push(chunk));
      child.on("error", () => {
        clearTimeout(timer);
        finish(null);
      });
      child.on("close", () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString("utf8").trim();
        if (!text) return finish({});
        try {
          finish(JSON.parse(text));
        } catch (_error) {
          finish(null);
        }
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ transcript_path: DATA_DIR, ...payload }));
    } catch (_error) {
      finish(null);
    }
  });
}

export const ContinuityPlugin = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const starts = new Map(); // session id -> Promise of the brief (string or null)
  const recall = new Map(); // session id -> the recall of its newest prompt
  const assistant = new Set(); // ids of assistant messages
  const lastText = new Map(); // session id -> the newest assistant text
  const ended = new Set();

  const start = (sessionID, source) => {
    if (!starts.has(sessionID)) {
      starts.set(
        sessionID,
        runHook("session-start", { session_id: sessionID, cwd, source }).then(contextOf),
      );
    }
    return starts.get(sessionID);
  };
  const end = async (sessionID, reason) => {
    if (ended.has(sessionID)) return;
    ended.add(sessionID);
    await runHook("session-end", { session_id: sessionID, cwd, reason });
  };

  return {
    event: async ({ event }) => {
      try {
        const type = event && event.type;
        const p = (event && event.properties) || {};
        if (type === "session.created" && p.info && p.info.id) {
          await start(p.info.id, "startup");
        } else if (type === "message.updated" && p.info && p.info.role === "assistant") {
          assistant.add(p.info.id);
        } else if (type === "message.part.updated" && p.part && p.part.type === "text") {
          if (assistant.has(p.part.messageID) && typeof p.part.text === "string") {
            lastText.set(p.part.sessionID, p.part.text);
          }
        } else if (type === "session.idle" && p.sessionID) {
          await runHook("stop", {
            session_id: p.sessionID,
            cwd,
            last_assistant_message: lastText.get(p.sessionID) || "",
          });
        } else if (type === "session.compacted" && p.sessionID) {
          await runHook("post-compaction", { session_id: p.sessionID, cwd, trigger: "auto" });
        } else if (type === "session.deleted" && p.info && p.info.id) {
          await end(p.info.id, "deleted");
        }
      } catch (_error) {
        // never into OpenCode
      }
    },
    "chat.message": async (input, output) => {
      try {
        const sessionID = input.sessionID;
        await start(sessionID, "resume");
        const parts = (output && output.parts) || [];
        const prompt = parts
          .filter((part) => part && part.type === "text" && !part.synthetic)
          .map((part) => part.text)
          .join("\n");
        const out = await runHook("user-prompt-submit", { session_id: sessionID, cwd, prompt });
        const text = contextOf(out);
        if (text) recall.set(sessionID, text);
        else recall.delete(sessionID);
      } catch (_error) {
        // never into OpenCode
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const sessionID = input && input.sessionID;
        if (!sessionID || !output || !Array.isArray(output.system)) return;
        const brief = await start(sessionID, "resume");
        if (brief) output.system.push(brief);
        const found = recall.get(sessionID);
        if (found) output.system.push(found);
      } catch (_error) {
        // never into OpenCode
      }
    },
    "experimental.session.compacting": async (input, output) => {
      try {
        const out = await runHook("pre-compaction", {
          session_id: input.sessionID,
          cwd,
          trigger: "auto",
        });
        const text = contextOf(out);
        if (text && output && Array.isArray(output.context)) output.context.push(text);
      } catch (_error) {
        // never into OpenCode
      }
    },
    dispose: async () => {
      try {
        await Promise.all([...starts.keys()].map((id) => end(id, "exit")));
      } catch (_error) {
        // never into OpenCode
      }
    },
  };
};
