"""LATS: Monte Carlo tree search over the model's actions, valued by a model judge.

``select`` walks the search tree from the root by UCT to the most promising
leaf; ``expand`` samples several next actions there (tool calls or final
answers); ``act`` settles their calls — one interrupt for the dangerous ones,
earlier rejections answered without asking — and runs them through the tool
layer, one stateful call per pass so each is saved before the next starts;
``evaluate`` has a judge score each new branch from 0 to 1;
``backpropagate`` backs the scores up the tree and stops the search when a
final answer reaches the threshold or the expansions, depth or tokens are
spent. ``finish`` answers with the best answer and its score — incomplete,
with the reason, when it is below the threshold. The tree is plain data in
the state, so a search pauses, checkpoints and resumes like any run. (Zhou et
al., 2024, "Language Agent Tree Search Unifies Reasoning, Acting, and
Planning in Language Models".)

::

    START → select ──leaf──→ expand → act → evaluate → backpropagate ──go on──→ select
              │                        ↺ while cleared calls wait  │
              └── nothing left ──→ finish ←──────── solved / spent ┘
                                     ↓
                                    END      (finish also stores the grounding report)

A stopped sampling or judge call, and a tool-call limit that ends the question
(from ``act``), go to ``finish`` as well.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.lats.act import cleared_to_run, make_act
from reasoning_graphs.graphs.lats.context import LatsContext
from reasoning_graphs.graphs.lats.evaluate import make_backpropagate, make_evaluate
from reasoning_graphs.graphs.lats.expand import make_expand, make_select
from reasoning_graphs.graphs.lats.finish import make_lats_finish
from reasoning_graphs.graphs.lats.progress import search_progress
from reasoning_graphs.graphs.lats.prompts import LATS_SYSTEM
from reasoning_graphs.graphs.lats.state import LatsState, selected_leaf
from reasoning_graphs.graphs.lats.tree import SearchSettings
from reasoning_graphs.nodes.grounding.report import always
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node
from reasoning_graphs.nodes.steps.progress import with_progress
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.tool_loop import agent_graph_builder


def after_select(state: LatsState) -> Literal["expand", "finish"]:
    """Expand the chosen leaf, or finish when no branch can grow."""
    return "finish" if state.get("outcome") else "expand"


def after_expand(state: LatsState) -> Literal["act", "finish"]:
    """Run the new candidates' calls; a stopped sampling call ends the search."""
    return "finish" if call_stopped(state) else "act"


def after_grading(state: LatsState) -> Literal["backpropagate", "finish"]:
    """Back the scores up the tree; a stopped judge call ends the search."""
    return "finish" if call_stopped(state) else "backpropagate"


def after_act(state: LatsState) -> Literal["act", "evaluate", "finish"]:
    """Run the next stateful call in a pass of its own; evaluate when every call has run;
    finish when a tool-call limit ended the question."""
    if state.get("outcome"):
        return "finish"
    return "act" if cleared_to_run(state["tree"], selected_leaf(state)) else "evaluate"


def after_backpropagate(state: LatsState) -> Literal["select", "finish"]:
    """Search on until solved or a budget is spent."""
    return "finish" if state.get("outcome") else "select"


@pattern_builder(context=LatsContext)
def build_graph(
    shared: SharedArgs,
    *,
    candidates: int,
    max_expansions: int,
    max_depth: int,
    threshold: float,
    exploration: float = 1.0,
) -> CompiledStateGraph:
    """Build the LATS graph.

    Args:
        exploration: The UCT constant: higher revisits less-explored branches more.

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> grade = {"feedback": "Correct.", "score": 0.9}
        >>> graph = build_graph(ScriptedChatModel(script=["42", grade]), tools=[], candidates=1)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    shared.options.setdefault("system_prompt", LATS_SYSTEM)
    setup = shared.setup()
    settings = SearchSettings(
        candidates=candidates,
        max_expansions=max_expansions,
        max_depth=max_depth,
        threshold=threshold,
        exploration=exploration,
    )

    progress = search_progress(settings)  # told as each step on the selected leaf starts
    builder = agent_graph_builder(LatsState, setup=setup, context_schema=LatsContext)
    builder.add_node("select", make_select(settings))
    expand = with_progress(make_expand(setup, settings), progress)
    builder.add_node("expand", model_node("expand", expand))
    builder.add_node("act", effect_node("act", with_progress(make_act(setup), progress)))
    builder.add_node(
        "evaluate", model_node("evaluate", with_progress(make_evaluate(setup), progress))
    )
    builder.add_node("backpropagate", make_backpropagate(setup, settings))
    finish = verified(setup, make_lats_finish(setup, settings), always)
    builder.add_node("finish", model_node("finish", finish))  # it gives the search's answer
    builder.add_edge(START, "select")
    builder.add_conditional_edges("select", after_select, ["expand", "finish"])
    builder.add_conditional_edges("expand", after_expand, ["act", "finish"])
    builder.add_conditional_edges("act", after_act, ["act", "evaluate", "finish"])
    builder.add_conditional_edges("evaluate", after_grading, ["backpropagate", "finish"])
    builder.add_conditional_edges("backpropagate", after_backpropagate, ["select", "finish"])
    builder.add_edge("finish", END)
    return shared.compile(builder, "lats", setup)


graph = served(build_graph)
