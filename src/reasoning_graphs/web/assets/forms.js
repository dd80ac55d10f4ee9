// The forms of the page: a run's options, made from the graph's run-option schema, and the
// decisions on a turn's pending calls, made from the approval request the run paused with.
import { el } from "./render.js";

/** The one non-null shape of a property (``int | None`` is given as anyOf). */
function shapeOf(property) {
  const shapes = property.anyOf || property.oneOf;
  if (Array.isArray(shapes)) return shapes.find((s) => s && s.type !== "null") || {};
  return property;
}

/** A field for each run option of ``schema``; unset fields leave the graph's value. */
export function optionFields(schema) {
  const properties = (schema && schema.properties) || {};
  return Object.entries(properties).map(([name, property]) => optionField(name, property));
}

function optionField(name, property) {
  const shape = shapeOf(property);
  const help = property.description || shape.description || "";
  const label = el("span", {}, name);
  let input;
  if (Array.isArray(shape.enum)) {
    input = el("select", {}, el("option", { value: "" }, "(the graph's)"), ...shape.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))));
    input.dataset.kind = "json";
  } else if (shape.type === "boolean") {
    input = el("select", {}, el("option", { value: "" }, "(the graph's)"), el("option", { value: "true" }, "on"), el("option", { value: "false" }, "off"));
    input.dataset.kind = "json";
  } else if (shape.type === "integer" || shape.type === "number") {
    input = el("input", { type: "number", step: shape.type === "integer" ? "1" : "any" });
    input.dataset.kind = "number";
  } else if (shape.type === "array") {
    const choices = shape.items && Array.isArray(shape.items.enum) ? shape.items.enum : null;
    if (choices) {
      const box = el("fieldset", { "data-option": name, "data-kind": "choices" }, el("legend", {}, name),
        ...choices.map((choice) => el("label", {}, el("input", { type: "checkbox", value: choice }), ` ${choice}`)),
        el("small", { class: "note" }, help));
      return box;
    }
    input = el("input", { type: "text", placeholder: "comma-separated" });
    input.dataset.kind = "list";
  } else if (shape.type === "object") {
    input = el("textarea", { rows: 2, placeholder: "JSON" });
    input.dataset.kind = "json";
  } else {
    input = el("input", { type: "text" });
    input.dataset.kind = "text";
  }
  input.setAttribute("data-option", name);
  input.setAttribute("aria-label", name);
  return el("label", { class: "option" }, label, input, el("small", { class: "note" }, help));
}

/** The options a person set in ``container``'s fields, as the run's context. Values are
 * sent as typed; the server checks them and refuses what a run may not set. */
export function readOptions(container) {
  const options = {};
  for (const field of container.querySelectorAll("[data-option]")) {
    const name = field.getAttribute("data-option");
    const kind = field.dataset.kind;
    if (kind === "choices") {
      const picked = [...field.querySelectorAll("input:checked")].map((box) => box.value);
      if (picked.length) options[name] = picked;
      continue;
    }
    const value = field.value.trim();
    if (!value) continue;
    if (kind === "number") options[name] = Number.isNaN(Number(value)) ? value : Number(value);
    else if (kind === "list") options[name] = value.split(",").map((s) => s.trim()).filter(Boolean);
    else if (kind === "json") options[name] = parsedOr(value);
    else options[name] = value;
  }
  return options;
}

function parsedOr(text) {
  try { return JSON.parse(text); } catch { return text; }
}

const LABELS = { approve: "Approve", edit: "Edit", reject: "Reject", respond: "Respond in its place" };

/** The panel for an approval request: one choice per pending call, sent together. */
export function decisionPanel(request, send) {
  const calls = request.calls || [];
  const rows = calls.map((call, index) => callRow(call, index));
  const button = el("button", { type: "submit", disabled: true }, calls.length > 1 ? "Send the decisions" : "Send the decision");
  const error = el("p", { class: "error", role: "alert" }, request.error ? `The last answer could not be used: ${request.error}` : "");
  const form = el("form", { class: "decisions", "data-panel": "approval" },
    el("h3", {}, calls.length > 1 ? `${calls.length} calls wait for your decision` : "A call waits for your decision"),
    error, ...rows.map((row) => row.node), button);
  const check = () => { button.disabled = !rows.every((row) => row.ready()); };
  form.addEventListener("change", check);
  form.addEventListener("input", check);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    send(rows.map((row) => row.decision()));
  });
  return form;
}

function callRow(call, index) {
  const group = `decision-${index}`;
  const detail = el("div", { class: "detail" });
  const choices = (call.allowed_decisions || ["approve", "reject"]).map((kind) =>
    el("label", {}, el("input", { type: "radio", name: group, value: kind }), ` ${LABELS[kind] || kind}`));
  const node = el("div", { class: "call", "data-call-id": call.id, "data-tool": call.name },
    el("strong", {}, call.name),
    call.possibly_ran ? el("p", { class: "possibly-ran" }, "This call may already have run: it started before the run stopped and its result was lost.") : null,
    call.description ? el("p", { class: "note" }, call.description) : null,
    el("pre", {}, JSON.stringify(call.args, null, 2)),
    el("div", { class: "choices" }, ...choices),
    detail);
  let fields = null;
  const chosen = () => { const box = node.querySelector(`input[name="${group}"]:checked`); return box ? box.value : null; };
  node.addEventListener("change", (event) => {
    if (event.target.name !== group) return;
    detail.replaceChildren();
    fields = null;
    const kind = chosen();
    if (kind === "edit") { fields = editFields(call); detail.append(...fields.nodes); }
    else if (kind === "reject") detail.append(el("label", {}, "Reason (the model sees it)", el("input", { type: "text", "data-field": "reason" })));
    else if (kind === "respond") detail.append(el("label", {}, "What the model sees instead of the tool's result", el("textarea", { rows: 2, "data-field": "content" })));
  });
  const valueOf = (field) => (detail.querySelector(`[data-field="${field}"]`) || { value: "" }).value;
  return {
    node,
    ready() {
      const kind = chosen();
      if (!kind) return false;
      if (kind === "respond") return valueOf("content").trim() !== "";
      return true;
    },
    decision() {
      const kind = chosen();
      if (kind === "edit") return { type: "edit", args: fields.changed() };
      if (kind === "reject") return { type: "reject", reason: valueOf("reason").trim() || "Rejected by a person." };
      if (kind === "respond") return { type: "respond", content: valueOf("content") };
      return { type: "approve" };
    },
  };
}

/** A field per argument, from the tool's argument schema where the request gives it; an
 * edit names only the arguments changed (the rest stay as proposed). */
function editFields(call) {
  const properties = (call.args_schema && call.args_schema.properties) || {};
  const names = [...new Set([...Object.keys(properties), ...Object.keys(call.args || {})])];
  const inputs = names.map((name) => {
    const shape = shapeOf(properties[name] || {});
    const current = call.args ? call.args[name] : undefined;
    const text = current === undefined ? "" : shape.type === "string" || typeof current === "string" ? String(current) : JSON.stringify(current);
    const input = (text.length > 60 || text.includes("\n")) ? el("textarea", { rows: 3 }) : el("input", { type: "text" });
    input.value = text;
    input.setAttribute("data-arg", name);
    input.dataset.initial = text;
    input.dataset.kind = shape.type === "string" || (!shape.type && typeof current === "string") ? "text" : "json";
    return el("label", {}, name, properties[name] && properties[name].description ? el("small", { class: "note" }, ` ${properties[name].description}`) : null, input);
  });
  return {
    nodes: inputs,
    changed() {
      const args = {};
      for (const input of inputs.map((label) => label.querySelector("[data-arg]"))) {
        if (input.value === input.dataset.initial) continue;
        args[input.getAttribute("data-arg")] = input.dataset.kind === "text" ? input.value : parsedOr(input.value);
      }
      return args;
    },
  };
}

/** The panel for a question a tool or node asked with its own ``interrupt()``. */
export function questionPanel(value, send) {
  const shown = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const answer = el("textarea", { rows: 3, "aria-label": "Your answer" });
  const button = el("button", { type: "submit" }, "Answer");
  const form = el("form", { class: "decisions", "data-panel": "question" }, el("h3", {}, "The run asks you"), el("pre", {}, shown), answer, button);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    send(answer.value);
  });
  return form;
}

