"""Tree-of-Thoughts: breadth-first search over thoughts, with a beam and backtracking.

``generate`` grows candidate thoughts from every state of the frontier
(``propose``: one call lists ``breadth`` next steps; ``sample``: ``breadth``
calls give one each); ``evaluate`` scores them (``value``: each rated sure,
likely or impossible; ``vote``: ``votes`` calls choose the most promising);
``select`` keeps the best ``beam`` as the next frontier, drops the impossible
ones, goes back to the previous levels' reserve when a whole level is
impossible, and decides: grow another level, answer (a thought solved the
problem, or the depth is reached), or stop. ``answer`` gives the typed final
answer from the best path; ``finish`` is the honest stop with the best path so
far. The search is plain data in the state, so every level is checkpointed and
a resumed run redoes no finished level. No tools. (Yao et al., 2023, "Tree of
Thoughts: Deliberate Problem Solving with Large Language Models".)

::

    START → generate → evaluate → select ──grow──→ generate
                │          │         ├──done──→ answer → END
                └──────────┴─stop────┴──stop──→ finish → END
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.tot.answer import make_answer, make_tot_finish
from reasoning_graphs.graphs.tot.context import TotContext
from reasoning_graphs.graphs.tot.evaluate import make_evaluate
from reasoning_graphs.graphs.tot.generate import make_generate
from reasoning_graphs.graphs.tot.progress import level_progress
from reasoning_graphs.graphs.tot.prompts import TOT_SYSTEM
from reasoning_graphs.graphs.tot.search import Evaluator, Generator, TotSettings
from reasoning_graphs.graphs.tot.select import make_select
from reasoning_graphs.graphs.tot.state import TotState
from reasoning_graphs.nodes.grounding.report import always
from reasoning_graphs.nodes.guards.stop import model_node, not_stopped
from reasoning_graphs.nodes.model.setup import agent_setup
from reasoning_graphs.nodes.steps.progress import with_progress
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.tool_loop import agent_graph_builder


def after_generate(state: TotState) -> Literal["evaluate", "finish"]:
    """Score the new candidates; a stopped call ends the search in ``finish``."""
    return "finish" if state.get("outcome") else "evaluate"


def after_evaluate(state: TotState) -> Literal["select", "finish"]:
    """Keep the best; a stopped call or a spent budget ends the search in ``finish``."""
    return "finish" if state.get("outcome") else "select"


def after_select(state: TotState) -> Literal["generate", "answer", "finish"]:
    """Grow another level, answer from the best path, or stop honestly."""
    if state.get("outcome"):
        return "finish"
    return "answer" if state["search"]["done"] else "generate"


@pattern_builder(context=TotContext)
def build_graph(
    shared: SharedArgs,
    *,
    breadth: int,
    depth: int,
    beam: int,
    votes: int,
    generator: Generator,
    evaluator: Evaluator,
) -> CompiledStateGraph:
    """Build the Tree-of-Thoughts graph.

    The pattern calls no tools: ``tools`` is accepted so that every pattern builds
    alike. A level costs one call per kept state (``propose``) or ``breadth`` per
    kept state (``sample``), plus one per candidate (``value``) or ``votes``
    (``vote``); the answer is one more.

    Raises:
        ValueError: A count is below 1, or a generator or evaluator is unknown.

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> script = [
        ...     {"steps": [{"step": "6*7 = 42", "solves": True}]},
        ...     {"reason": "It multiplies.", "verdict": "sure"},
        ...     {"answer": "42"},
        ... ]
        >>> graph = build_graph(ScriptedChatModel(script=script), breadth=1)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    settings = TotSettings(
        breadth=breadth,
        depth=depth,
        beam=beam,
        votes=votes,
        generator=generator,
        evaluator=evaluator,
    )
    shared.options.setdefault("system_prompt", TOT_SYSTEM)
    setup = agent_setup(shared.model, (), shared.retry, **shared.options)

    builder = agent_graph_builder(TotState, setup=setup, context_schema=TotContext)
    generate = with_progress(make_generate(setup, settings), level_progress(settings))
    builder.add_node("generate", model_node("generate", generate))
    builder.add_node("evaluate", model_node("evaluate", make_evaluate(setup, settings)))
    builder.add_node("select", make_select(setup, settings))
    answer = verified(setup, make_answer(setup), not_stopped)
    builder.add_node("answer", model_node("answer", answer))
    finish = verified(setup, make_tot_finish(setup), always)
    builder.add_node("finish", effect_node("finish", finish))
    builder.add_edge(START, "generate")
    builder.add_conditional_edges("generate", after_generate, ["evaluate", "finish"])
    builder.add_conditional_edges("evaluate", after_evaluate, ["select", "finish"])
    builder.add_conditional_edges("select", after_select, ["generate", "answer", "finish"])
    builder.add_edge("answer", END)
    builder.add_edge("finish", END)
    return shared.compile(builder, "tot", setup)


graph = served(build_graph)
