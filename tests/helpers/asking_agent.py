"""A user's graphs whose tool asks the person a question, for ``reasoning-graphs run --graph``.

Each graph is ReAct on a scripted model with one plain LangChain tool that
calls ``interrupt()`` and deploys whatever branch the person names. The model
decides from the prompt, not from its place in a script, so a ``resume`` in a
process of its own (which loads this file afresh) goes on where the run stopped:
no observation yet, it calls the tool; after the observation, it reports it.

- ``text_question``: the tool asks with a string;
- ``dict_question``: the tool asks with a dict (a question and its choices);
- ``approved_question``: a zero-argument factory of a graph that also needs the
  person's approval before the tool runs, then asks its question;
- ``two_questions``: a plain StateGraph whose two branches ask at the same time.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.testing import ScriptedChatModel, tool_call

QUESTION = "Which branch?"
CHOICES = ["main", "release"]
REPORT = "Done: {observation}"


@tool
def deploy(service: str) -> str:
    """Deploy ``service`` from the branch the person names."""
    branch = interrupt(QUESTION)
    return f"deployed {service} from {branch}"


@tool
def deploy_choice(service: str) -> str:
    """Deploy ``service`` from one of the offered branches, as the person chooses."""
    branch = interrupt({"question": QUESTION, "choices": CHOICES})
    return f"deployed {service} from {branch}"


def scripted_deployer(tool_name: str) -> ScriptedChatModel:
    """A model that calls ``tool_name`` once, then reports its observation as the answer."""

    def reply(messages: list[BaseMessage]) -> object:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return REPORT.format(observation=last.content)
        return tool_call(tool_name, service="shop")

    return ScriptedChatModel(script=[reply], cycle=True)


text_question = build_graph(scripted_deployer("deploy"), [deploy])
dict_question = build_graph(scripted_deployer("deploy_choice"), [deploy_choice])


def approved_question():
    return build_graph(scripted_deployer("deploy"), [deploy], approve=["deploy"])


class Conversation(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def asking(question: str):
    """A node that asks ``question`` and says what it was told."""

    def ask(state: Conversation) -> Conversation:
        return {"messages": [AIMessage(f"{question} {interrupt(question)}")]}

    return ask


def two_questions():
    builder = StateGraph(Conversation)
    for name, question in (("size", "Which size?"), ("colour", "Which colour?")):
        builder.add_node(name, asking(question))
        builder.add_edge(START, name)
    return builder.compile()
