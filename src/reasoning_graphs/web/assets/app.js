// The page's run of things: the server's API (the one that served the page), the list of
// threads, a question's stream, and the decisions a person sends back.
import { el, EventLog, textOf } from "./render.js";
import { decisionPanel, optionFields, questionPanel, readOptions } from "./forms.js";

const TOKEN_KEY = "reasoning-graphs-token";
const page = {
  token: sessionStorage.getItem(TOKEN_KEY) || "",
  assistants: new Map(), // graph name → assistant id
  open: null, // the thread on show
};
const $ = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

function headers(extra = {}) {
  const given = { "content-type": "application/json", ...extra };
  if (page.token) given.authorization = `Bearer ${page.token}`;
  return given;
}

async function failure(response) {
  const text = await response.text();
  let detail = text || response.statusText;
  try {
    const data = JSON.parse(text);
    const said = data.detail ?? data.message ?? data;
    detail = typeof said === "string" ? said : JSON.stringify(said);
  } catch { /* not JSON: the text as it came */ }
  if (response.status === 401 || response.status === 403) askForToken(detail);
  return new ApiError(response.status, detail);
}

async function api(method, path, body) {
  const response = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** The server-sent events of a run's stream, parsed, as they arrive: a new run's (``body``
 * given: POST) or one already running that this page joins (GET). */
async function* stream(path, body) {
  const init = body === undefined ? { method: "GET" } : { method: "POST", body: JSON.stringify(body) };
  const response = await fetch(path, { ...init, headers: headers({ accept: "text/event-stream" }) });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) {
        let parsed = data.join("\n");
        try { parsed = JSON.parse(parsed); } catch { /* a plain line */ }
        yield { event, data: parsed };
      }
    }
  }
}

function askForToken(detail) {
  const form = $("auth");
  form.hidden = false;
  $("auth-note").textContent = page.token ? `The server refused the token: ${detail}` : "This server asks who you are.";
}

// ---- patterns and their run options

async function loadPatterns() {
  const assistants = await api("POST", "/assistants/search", { limit: 100 });
  const select = $("pattern");
  select.replaceChildren();
  page.assistants.clear();
  for (const assistant of assistants) {
    if (page.assistants.has(assistant.graph_id)) continue;
    page.assistants.set(assistant.graph_id, assistant.assistant_id);
    select.append(el("option", { value: assistant.graph_id }, assistant.graph_id));
  }
  await loadOptions();
}

async function loadOptions() {
  const graph = $("pattern").value;
  const holder = $("option-fields");
  holder.replaceChildren();
  if (!graph) return;
  const schemas = await api("GET", `/assistants/${encodeURIComponent(page.assistants.get(graph))}/schemas`);
  holder.append(...optionFields(schemas.context_schema || schemas.config_schema));
}

// ---- threads

const STATUS = { interrupted: ["waiting", "waiting for a person"], busy: ["running", "running"], error: ["error", "failed"] };

function statusOf(thread) {
  // a stopped run leaves its thread "interrupted" too, with nobody asked anything
  const asking = Object.values(thread.interrupts || {}).some((list) => list && list.length);
  if (thread.status === "interrupted" && !asking) return ["stopped", "stopped"];
  if (STATUS[thread.status]) return STATUS[thread.status];
  const outcome = thread.values && thread.values.outcome;
  if (outcome && outcome.status === "incomplete") return ["incomplete", `incomplete: ${outcome.reason || ""}`.trim()];
  if (outcome && outcome.status === "answered") return ["answered", "answered"];
  return ["idle", thread.status || "idle"];
}

function questionOf(thread) {
  const messages = (thread.values && thread.values.messages) || [];
  const first = messages.find((m) => m && m.type === "human");
  return first ? textOf(first.content) : "(no question yet)";
}

async function loadThreads() {
  const threads = await api("POST", "/threads/search", { limit: 50, sort_by: "updated_at", sort_order: "desc" });
  const list = $("threads");
  list.replaceChildren(...threads.map((thread) => {
    const [kind, text] = statusOf(thread);
    const graph = (thread.metadata && thread.metadata.graph_id) || "";
    return el("li", {}, el("button", {
      type: "button",
      "data-thread": thread.thread_id,
      "aria-current": page.open === thread.thread_id ? "true" : "false",
      onclick: () => openThread(thread.thread_id, graph),
    }, questionOf(thread), el("span", { class: `status ${kind}`, "data-status": kind }, `${graph} · ${text}`)));
  }));
}

// ---- one thread

function threadView(threadId, graph) {
  page.open = threadId;
  const events = el("ol", { class: "events" });
  const spent = el("p", { class: "spent" });
  const end = el("div", { class: "end" });
  const section = $("thread");
  section.replaceChildren(el("h2", {}, `Thread ${threadId}`, el("span", { class: "note" }, ` · ${graph}`)), events, spent, end);
  section.dataset.thread = threadId;
  return { threadId, graph, log: new EventLog(events, spent), end };
}

async function openThread(threadId, graph) {
  const view = threadView(threadId, graph);
  const state = await api("GET", `/threads/${threadId}/state`);
  view.log.update({ history: state.values || {} }); // its trajectory counts the spending too
  const running = await api("GET", `/threads/${threadId}/runs?status=running&limit=1`);
  if (running.length) await follow(view, stream(`/threads/${threadId}/runs/${running[0].run_id}/stream`), running[0].run_id);
  else await showEnd(view, state);
  await loadThreads();
}

/** Run on ``view``'s thread with ``body`` (a new question, a resume, or ``input: null`` to
 * go on from where a stopped run left off). */
async function runOn(view, body) {
  const request = { ...body, assistant_id: page.assistants.get(view.graph) || view.graph, stream_mode: ["updates", "custom"], stream_subgraphs: true };
  await follow(view, stream(`/threads/${view.threadId}/runs/stream`, request));
}

/** Show each step of a run's ``events`` as it streams, then what the thread waits for or
 * how it ended. A person may stop the run meanwhile (its id known, or read from the
 * stream's first event). */
async function follow(view, events, runId = null) {
  const stop = el("button", { type: "button", "data-stop": "", disabled: true }, "Stop");
  const stoppable = (id) => {
    stop.disabled = false;
    stop.addEventListener("click", () => stopRun(view, id, stop));
  };
  view.end.replaceChildren(el("p", { class: "note", "data-running": "" }, "Running… ", stop));
  if (runId) stoppable(runId);
  try {
    for await (const { event, data } of events) {
      const mode = event.split("|")[0];
      if (mode === "metadata" && data && data.run_id && stop.disabled) stoppable(data.run_id);
      else if (mode === "updates") view.log.update(data);
      else if (mode === "custom") view.log.progress(data);
      else if (mode === "error") view.log.line("error", "Error:", typeof data === "string" ? data : data.message || JSON.stringify(data));
    }
  } finally {
    const state = await api("GET", `/threads/${view.threadId}/state`);
    await showEnd(view, state);
    await loadThreads();
  }
}

/** Ask the server to stop a run where it is; its thread keeps every step saved so far. */
async function stopRun(view, runId, button) {
  button.disabled = true;
  button.textContent = "Stopping…";
  try {
    await api("POST", `/threads/${view.threadId}/runs/${runId}/cancel?action=interrupt`);
  } catch (error) {
    view.end.prepend(el("p", { class: "error", role: "alert" }, error.message));
  }
}

function pendingInterrupts(state) {
  return (state.tasks || []).flatMap((task) => task.interrupts || []);
}

async function showEnd(view, state) {
  const pending = pendingInterrupts(state);
  view.end.replaceChildren();
  if (pending.length) {
    for (const waiting of pending) {
      // named for its question: a second click, or a retry, never answers the next one
      const answer = (value) => go(view, { command: { resume: { [waiting.id]: value } } });
      const value = waiting.value;
      const panel = value && value.kind === "approval" && Array.isArray(value.calls) ? decisionPanel(value, answer) : questionPanel(value, answer);
      view.end.append(panel);
    }
    return;
  }
  if ((state.next || []).length) { // stopped with steps still to take
    view.end.append(
      el("p", { class: "status stopped", "data-outcome": "stopped" }, "Stopped before the run finished."),
      el("button", { type: "button", "data-continue": "", onclick: () => go(view, { input: null }) }, "Continue"),
    );
    return;
  }
  const values = state.values || {};
  const outcome = values.outcome || {};
  const messages = values.messages || [];
  const last = [...messages].reverse().find((m) => m && m.type === "ai" && !(m.tool_calls || []).length);
  if (last && !outcome.no_answer) view.log.markAnswer(textOf(last.content));
  if (outcome.status === "incomplete") view.end.append(el("p", { class: "status incomplete", "data-outcome": "incomplete" }, `Incomplete: ${outcome.reason || ""}`));
  else if (outcome.status === "answered") view.end.append(el("p", { class: "status answered", "data-outcome": "answered" }, "Answered."));
}

/** Run on with ``body``; a refusal (a decision the server would not take) shows above. */
async function go(view, body) {
  try {
    await runOn(view, body);
  } catch (error) {
    view.end.prepend(el("p", { class: "error", role: "alert" }, error.message));
  }
}

// ---- a new question

async function ask(event) {
  event.preventDefault();
  const error = $("ask-error");
  error.textContent = "";
  const graph = $("pattern").value;
  const question = $("question").value.trim();
  if (!graph || !question) return;
  let context;
  try {
    context = { ...readOptions($("option-fields")), ...extraOptions() };
  } catch (failed) {
    error.textContent = failed.message;
    return;
  }
  const button = $("ask-button");
  button.disabled = true;
  let thread = null;
  try {
    thread = await api("POST", "/threads", { metadata: { graph_id: graph } });
    const view = threadView(thread.thread_id, graph);
    view.log.line("question", "Question:", question);
    await runOn(view, { input: { messages: [{ role: "user", content: question }] }, context });
    $("question").value = "";
  } catch (failed) {
    error.textContent = failed.status === 422 ? `Refused: ${failed.message}` : failed.message;
    if (thread && failed.status === 422) {
      await api("DELETE", `/threads/${thread.thread_id}`).catch(() => null);
      $("thread").replaceChildren(el("p", { class: "note" }, "Nothing ran."));
    }
  } finally {
    button.disabled = false;
    await loadThreads().catch(() => null);
  }
}

/** The options typed as JSON beside the form's fields (any the server takes, or refuses). */
function extraOptions() {
  const text = $("extra-options").value.trim();
  if (!text) return {};
  let given;
  try { given = JSON.parse(text); } catch { throw new Error("More options: this is not JSON."); }
  if (!given || typeof given !== "object" || Array.isArray(given)) throw new Error("More options: give a JSON object.");
  return given;
}

async function start() {
  try {
    await loadPatterns();
    await loadThreads();
  } catch (error) {
    $("ask-error").textContent = error.message;
  }
}

$("auth").addEventListener("submit", async (event) => {
  event.preventDefault();
  page.token = $("token").value;
  sessionStorage.setItem(TOKEN_KEY, page.token);
  $("auth").hidden = true;
  $("ask-error").textContent = "";
  await start();
});
$("pattern").addEventListener("change", () => loadOptions().catch((error) => { $("ask-error").textContent = error.message; }));
$("ask").addEventListener("submit", ask);
$("refresh").addEventListener("click", () => loadThreads().catch(() => null));
start();
