"""A GBNF grammar for the text ReAct format, for llama.cpp models (grammar mode).

Without a grammar a small local model drifts out of the format; with it, every
reply is one Thought line followed by either one Action (a known tool name and a
flat JSON object of arguments) or a Final Answer. Lines and strings are bounded
so a runaway reply ends instead of filling the context.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from reasoning_graphs.text_format.labels import ENGLISH, Labels

MAX_LINE_CHARS = 160
MAX_STRING_CHARS = 200

_TEMPLATE = r"""root ::= {thought} line "\n" ( action | final )
action ::= {action} tool "\n" {action_input} object
final ::= {final_answer} line
tool ::= {tools}
line ::= [^\n]{{1,{line}}}
object ::= "{{" ws ( pair ( "," ws pair )* )? ws "}}"
pair ::= string ws ":" ws value
value ::= string | number | "true" | "false" | "null"
string ::= "\"" ( [^"\\\n] | "\\" ["\\/nt] ){{0,{string}}} "\""
number ::= "-"? [0-9]{{1,15}} ( "." [0-9]{{1,10}} )?
ws ::= " "?
"""


def react_text_gbnf(tool_names: Sequence[str], labels: Labels = ENGLISH) -> str:
    """The grammar text for one step with these tools and labels."""
    if not tool_names:
        raise ValueError("The text ReAct grammar needs at least one tool name.")

    def literal(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    return _TEMPLATE.format(
        thought=literal(f"{labels.thought}: "),
        action=literal(f"{labels.action}: "),
        action_input=literal(f"{labels.action_input}: "),
        final_answer=literal(f"{labels.final_answer}: "),
        tools=" | ".join(literal(name) for name in tool_names),
        line=MAX_LINE_CHARS,
        string=MAX_STRING_CHARS,
    )
