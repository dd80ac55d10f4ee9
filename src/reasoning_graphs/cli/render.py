"""How a run looks at the terminal: Thought / Action / Observation lines, or JSON lines."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from reasoning_graphs.nodes.turn import describe_call
from reasoning_graphs.text_format.transcript import FORMAT_ERROR_KEY


class Printer:
    """Prints graph updates as they stream in."""

    def __init__(self, *, as_json: bool, out: TextIO | None = None) -> None:
        self.as_json = as_json
        self.out = out or sys.stdout

    def emit(self, event: str, text: str, **fields: Any) -> None:
        if self.as_json:
            print(json.dumps({"event": event, "text": text, **fields}, default=str), file=self.out)
        else:
            label = event.replace("_", " ").capitalize()
            print(f"{label}: {text}" if text else label, file=self.out)
        self.out.flush()

    def update(self, node: str, update: dict[str, Any] | None, *, inner: bool = False) -> None:
        """Print what one node contributed; ``inner`` for a subgraph's node (a plan step)."""
        update = update or {}
        steps = update.get("plan")
        if isinstance(steps, list) and steps and all(isinstance(s, str) for s in steps):
            self.emit("plan", " → ".join(steps), steps=steps)
        for message in update.get("messages", []):
            self.message(node, message, inner=inner)

    def message(self, node: str, message: BaseMessage, *, inner: bool = False) -> None:
        if isinstance(message, ToolMessage):
            decision = message.response_metadata.get("decision", "auto")
            self.emit(
                "observation",
                str(message.content),
                tool=message.name,
                call_id=message.tool_call_id,
                status=message.status,
                decision=decision,
            )
        elif isinstance(message, AIMessage):
            if message.response_metadata.get("kind") == "plan":
                self.emit("plan", message.text.strip())
                return
            if node == "approve":
                return  # an edited proposal, already shown when the decision was made
            text = message.text.strip()
            correction = message.response_metadata.get(FORMAT_ERROR_KEY)
            if correction:
                self.emit("format_error", str(correction))
            elif message.tool_calls or message.invalid_tool_calls:
                if text:
                    self.emit("thought", text)
                for call in message.tool_calls:
                    self.emit(
                        "action",
                        describe_call(call["name"], call["args"]),
                        tool=call["name"],
                        args=call["args"],
                        call_id=call["id"],
                    )
                for bad in message.invalid_tool_calls:
                    self.emit("action", f"{bad.get('name')}(<malformed arguments>)")
            else:
                outcome = message.response_metadata.get("outcome") or {"status": "answered"}
                self.emit("result" if inner else "answer", text, outcome=outcome)

    def notice(self, text: str, **fields: Any) -> None:
        self.emit("note", text, **fields)
