// How a run reads on the page: each step as a line of text, never as HTML.
// Every string from the server (model text, tool output, arguments) reaches the page
// through el(), which adds it as a text node, so markup in it stays inert.

/** An element with attributes and children; a child that is not a node becomes text. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** The text of a message's content, which may be a string or a list of parts. */
export function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "string" ? part : part && part.type === "text" ? part.text : ""))
      .join("");
  }
  return content === null || content === undefined ? "" : JSON.stringify(content);
}

/** A call as the command line shows it: name(key=value, …). */
export function shownCall(name, args) {
  if (!args || typeof args !== "object") return `${name}(…)`;
  const parts = Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `${name}(${parts.join(", ")})`;
}

const RAN = new Set(["auto", "approved", "edited"]);
const NOT_RUN = {
  rejected: "Rejected:",
  responded: "Answered in its place:",
  reused: "Reused:",
  skipped: "Skipped:",
  blocked: "Blocked:",
  invalid: "Invalid:",
};
const PLAN_KINDS = new Set(["plan", "replan"]);

/** The steps of one thread as they stream, and what they have cost so far. */
export class EventLog {
  constructor(list, spent) {
    this.list = list;
    this.spent = spent;
    this.proposed = new Map();
    this.seen = new Set();
    this.calls = 0;
    this.tokens = 0;
    this.lastReply = null;
    this.durations = new Map(); // call id → how long its task ran (LLM Compiler's tasks)
  }

  line(kind, label, text, ...extra) {
    const shown = el("span", { class: "text" }, text);
    this.list.append(el("li", { class: kind, "data-kind": kind }, el("span", { class: "label" }, label), shown, ...extra));
    if (kind === "reply") this.lastReply = shown;
    return shown;
  }

  /** Show ``text`` as the thread's answer: the reply line that says it, or a new one. */
  markAnswer(text) {
    const shown = this.lastReply && this.lastReply.textContent === text.trim() ? this.lastReply : this.line("reply", "Answer:", text);
    shown.classList.add("answer");
    shown.setAttribute("data-answer", "");
  }

  /** One ``updates`` event of the stream: what each node wrote. */
  update(data) {
    for (const [node, update] of Object.entries(data || {})) {
      if (node === "__interrupt__" || !update || typeof update !== "object") continue;
      this.node(node, update);
    }
  }

  node(node, update) {
    if (update.message && typeof update.duration_ms === "number") {
      this.durations.set(update.message.tool_call_id, update.duration_ms);
    }
    if (Array.isArray(update.plan) && update.plan.length && update.plan.every((s) => typeof s === "string")) {
      this.line("plan", "Plan:", update.plan.join(" → "));
    }
    for (const lesson of update.remembered || []) {
      this.line("recalled", "Recalled:", `Task: ${lesson.task}\nWhat went wrong: ${lesson.diagnosis}\nNext time: ${lesson.advice}`);
    }
    for (const event of update.trajectory || []) this.event(event, update);
    const messages = Array.isArray(update.messages) ? update.messages : update.messages ? [update.messages] : [];
    for (const message of messages) this.message(node, message);
  }

  event(event, update) {
    if (!event || typeof event !== "object") return;
    if (event.kind === "thought") {
      this.calls += 1 + (Array.isArray(event.seam_calls) ? event.seam_calls.length : 0);
      this.tokens += (event.input_tokens || 0) + (event.output_tokens || 0);
      this.showSpent();
      if (event.reflection) this.line("reflection", "Reflection:", textOf(event.text));
    } else if (event.kind === "tot_level") {
      const thoughts = (update.search && update.search.thoughts) || [];
      const kept = (event.kept || [])
        .map((i) => thoughts[i])
        .filter(Boolean)
        .map((t) => `"${t.text}"` + (t.verdict ? ` (${t.verdict})` : ""));
      const text = `(${event.calls} model calls): kept ${kept.join("; ") || "nothing"}` + (event.backtracked ? ", back to an earlier level" : "");
      this.line("level", `Level ${event.level}`, text);
    }
  }

  message(node, message) {
    if (!message || typeof message !== "object") return;
    const key = message.id ? `${message.type}:${message.id}` : null;
    if (key && this.seen.has(key)) return;  // the same message, streamed again
    if (key) this.seen.add(key);
    const meta = message.response_metadata || {};
    const text = textOf(message.content).trim();
    if (message.type === "human") {
      this.line("question", "Question:", text);
    } else if (message.type === "tool") {
      this.settled(message, meta, text);
    } else if (message.type === "ai") {
      const calls = message.tool_calls || [];
      for (const call of calls) this.proposed.set(call.id, call);
      if (PLAN_KINDS.has(meta.kind)) this.line("plan", "Plan:", text);
      else if (meta.kind === "join") this.line("join", "Join:", text);
      else if (node === "approve") return;
      else if (calls.length) { if (text) this.line("thought", "Thought:", text); }
      else if (text && meta.outcome && meta.outcome.no_answer) this.line("no-answer", "Reply, no answer:", text);
      else if (text) this.line("reply", meta.kind === "answer" || meta.outcome ? "Answer:" : "Reply:", text);
    }
  }

  settled(message, meta, text) {
    // a call a person edited ran as they decided; the model's message keeps its proposal
    const call = meta.edited_call || this.proposed.get(message.tool_call_id);
    const name = (call && call.name) || message.name || "unknown";
    const shown = shownCall(name, call && call.args);
    const decision = meta.decision;
    if (!decision || RAN.has(decision)) {
      this.line("action", "Action:", shown, decision && decision !== "auto" ? ` (${decision})` : "");
      const ms = this.durations.get(message.tool_call_id);
      this.line("observation", "Observation:", text, ms === undefined ? "" : ` (${Math.round(ms)} ms)`);
    } else {
      this.line("not-run", NOT_RUN[decision] || "Not run:", `${shown} → ${text}`);
    }
  }

  progress(data) {
    if (data && typeof data === "object" && data.text) this.line("progress", "…", String(data.text));
    else if (typeof data === "string") this.line("progress", "…", data);
  }

  showSpent() {
    this.spent.textContent = `Spent so far: ${this.calls} model call${this.calls === 1 ? "" : "s"}, ${this.tokens} tokens`;
  }
}
