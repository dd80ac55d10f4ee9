"""``approve``: decide the fate of every call of a model turn before any of them runs.

The turn is triaged once (:func:`triage_turn`), by the router that leaves the
node which wrote the turn: a turn with nothing to decide or record goes straight
to ``act``; any other comes here with that triage (:class:`Settling`), and this
node records it and puts what needs a person to them. Each call's arguments
are checked against its tool's schema in the triage, before a person is asked
and before anything runs, so what a person approves is exactly what runs and
the tool layer takes a cleared call as it is.

First, a turn that repeats a call which failed, with the same arguments, in
the rounds just before (``repeat_failure_limit`` rounds in a row with this
one) runs nothing: the run stops with the reason, stateful tools too, since
running a failing call again is no way forward. Otherwise, order of checks
per call: the per-turn call limit, an earlier rejection of
the same call, the policy's block rules, an identical earlier call of a tool
declared pure (:func:`~reasoning_graphs.question.current_results`: it is answered
with that result, exactly as the tool gave it, marked ``reused``, and the next
prompt says so), the arguments against the tool's schema, and finally approval
by a person for dangerous calls. Every other call runs, repeats included: a
tool's world changes without us, and a dangerous repeat is a new effect, put to
a person again. All dangerous calls of the turn go into one interrupt. A repeat
never ends the question by itself: the loop's progress guards judge by results
whether rounds still bring something new. The node has no side effects, so
LangGraph may re-run it on resume; it re-runs with the same triage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from langgraph.types import interrupt
from typing_extensions import TypedDict

from reasoning_graphs.metadata import EARLIER_REJECTION, REUSED_FROM, decision_of
from reasoning_graphs.nodes.guards.call_limits import Tally
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.loops import STOPPED_CALL
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.trajectory import record_call
from reasoning_graphs.nodes.steps.edits import merged_edits
from reasoning_graphs.nodes.steps.per_call import ask_per_call
from reasoning_graphs.nodes.steps.seal import sealed
from reasoning_graphs.nodes.steps.turn_facts import TurnFacts, turn_facts
from reasoning_graphs.question import (
    call_signature,
    describe_call,
    last_ai_message,
    runtime_id,
)
from reasoning_graphs.review import (
    ApprovalError,
    PendingCall,
    ReviewDecision,
    approval_request,
    parse_decisions,
)
from reasoning_graphs.state import (
    ActionEvent,
    AgentState,
    AgentUpdate,
    CallDecision,
    ClearedCall,
    EffectDone,
    Node,
)
from reasoning_graphs.tools.asking import Asking
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec

OVER_CALL_LIMIT = "Not run: at most {limit} tool calls per turn. Call it again next turn if needed."
OVER_QUESTION_LIMIT = "Not run: the question's budget of {limit} tool calls is spent."
REJECTED_BEFORE = (
    "Not run: the reviewer already rejected this exact call ({reason}). "
    "Do not propose it again; choose another way or answer."
)
REJECTED_NOW = "Not run: the reviewer rejected this call. Reason: {reason}"
INVALID_CALL = (
    "Error: the arguments of this {name!r} call are not valid JSON ({error}). "
    "Call it again with a JSON object of arguments."
)
POSSIBLY_RAN = (
    "It may already have run: it started before the run stopped, and its result was lost. "
    "Approve to run it again, reject to never run it, or respond with what happened."
)
AGAIN_DECISIONS = ("approve", "reject", "respond")
"""What a person may decide about a call that may already have run: an edit would run
other arguments under a call whose first run the model never learns of."""


@dataclass
class TurnTriage:
    """What the approve step decides for each call of one turn.

    Attributes:
        cleared: Calls cleared to run, each with its place in the model's order.
        answered: Observations of calls settled without running.
        events: Trajectory events of the calls settled without running.
        rejected: Calls a person rejected now, by signature, with the reason.
        places: Each call's place in the model's order, and the call, by call id.
        to_ask: The calls a person must decide, each with its place.
        described: What the person reads about a call of ``to_ask`` whose tool's setting
            describes it, by call id (made where the state is at hand: a description setting
            may read it); the others read the call as :func:`_described` shows it.
        stop: Why nothing of the turn runs (a repeated failure), when that is so.
    """

    turn: int
    step: int
    cleared: list[tuple[int, ClearedCall]] = field(default_factory=list)
    answered: list[ToolMessage] = field(default_factory=list)
    events: list[ActionEvent] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    places: dict[str, tuple[int, ToolCall]] = field(default_factory=dict)
    to_ask: list[tuple[int, ToolCall]] = field(default_factory=list)
    described: dict[str, str] = field(default_factory=dict)
    stop: str | None = None

    def runs_as_proposed(self) -> list[ClearedCall] | None:
        """The calls in order when every one runs as proposed with nothing to decide or
        record first; else ``None``: the turn needs ``approve``."""
        if self.answered or self.to_ask or self.stop is not None or not self.cleared:
            return None
        return [call for _, call in sorted(self.cleared, key=lambda item: item[0])]

    def in_model_order(self) -> tuple[list[ClearedCall], list[ToolMessage]]:
        """What runs, and the observations to record now, keeping the model's order of calls.

        A call settled without running that comes before every call that runs is
        answered now; one that comes after is handed to ``act`` with its answer
        (``ClearedCall.answer``), so its observation lands in its place, as under
        LangGraph's ``ToolNode``.
        """
        first = min((index for index, _ in self.cleared), default=None)
        now: list[ToolMessage] = []
        later: list[tuple[int, ClearedCall]] = []
        for answer in self.answered:
            place, call = self.places.get(answer.tool_call_id, (-1, None))
            if call is None or first is None or place < first:
                now.append(answer)
                continue
            settled_call = ClearedCall(
                id=runtime_id(call),
                name=call["name"],
                args=call["args"],
                decision=decision_of(answer),
                answer=answer,
            )
            later.append((place, settled_call))
        order = sorted([*self.cleared, *later], key=lambda item: item[0])
        return [call for _, call in order], now

    def clear_to_run(
        self,
        index: int,
        call: ToolCall,
        args: dict[str, Any],
        decision: CallDecision,
        *,
        name: str | None = None,
        notice: str | None = None,
    ) -> None:
        """Clear a call to run, keeping its place in the model's order: ``name`` and
        ``args`` are what runs (a person's edit may change both), ``notice`` what its
        observation begins with."""
        cleared = ClearedCall(
            id=runtime_id(call), name=name or call["name"], args=dict(args), decision=decision
        )
        if notice:
            cleared["notice"] = notice
        self.cleared.append((index, sealed(cleared)))

    def run_nothing(self, calls: Sequence[ToolCall] = ()) -> None:
        """Answer ``calls``, and every call cleared or set aside for a person, without
        running them, saying why the question stops (:attr:`stop`)."""
        settled = [self.places[call["id"]][1] for _, call in self.cleared]
        settled += [call for _, call in self.to_ask]
        self.cleared.clear()
        self.to_ask.clear()
        for call in [*settled, *calls]:
            self.answer_without_running(call, STOPPED_CALL.format(reason=self.stop), "skipped")

    def answer_without_running(
        self,
        call: ToolCall,
        content: str,
        decision: CallDecision,
        status: Literal["success", "error"] = "error",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Settle a call without running it: its observation is ``content`` (with ``metadata``)."""
        message = ToolMessage(
            content,
            tool_call_id=call["id"],
            name=call["name"],
            status=status,
            response_metadata=metadata or {},
        )
        self._settle(call, message, decision)

    def reuse(self, call: ToolCall, earlier: EffectDone, message: ToolMessage | None) -> None:
        """Answer ``call`` of a pure tool with the result of the identical ``earlier`` call: its
        observation as the tool gave it (content, artifact, status, name) when this
        conversation holds it, marked ``reused`` with the earlier call's id."""
        if message is None:
            message = ToolMessage(earlier["result"], name=call["name"], tool_call_id=call["id"])
        answer = ToolMessage(
            message.content,
            artifact=message.artifact,
            status=message.status,
            name=message.name,
            tool_call_id=call["id"],
            response_metadata={REUSED_FROM: earlier["call_id"]},
        )
        self._settle(call, answer, "reused", observation=earlier["result"])

    def _settle(
        self,
        call: ToolCall,
        answer: ToolMessage,
        decision: CallDecision,
        observation: str | None = None,
    ) -> None:
        """Record a call settled without running: its trajectory event, and its observation
        marked from it."""
        message, event = record_call(
            call, answer, decision, turn=self.turn, step=self.step, observation=observation
        )
        self.answered.append(message)
        self.events.append(event)


class Settling(TypedDict):
    """What ``approve`` receives from the router: the turn's one triage.

    Attributes:
        triage: The :class:`TurnTriage` of the latest model turn, as plain fields, so a
            checkpoint keeps it while a person decides.
    """

    triage: dict[str, Any]


def triage_turn(run: RunScope, state: AgentState, facts: TurnFacts | None = None) -> TurnTriage:
    """The one triage of the latest model turn: every call settled, cleared, or set aside
    for a person (nothing asked yet, nothing run). ``facts``: the turn's, when the caller
    read them already."""
    reply = last_ai_message(state["messages"])
    facts = facts or turn_facts(run, state, reply)
    triage = TurnTriage(turn=facts.turn, step=facts.step)
    for bad in reply.invalid_tool_calls:
        name = bad.get("name") or "unknown"
        call = ToolCall(name=name, args={}, id=bad.get("id") or "", type="tool_call")
        triage.answer_without_running(
            call, INVALID_CALL.format(name=name, error=bad.get("error")), "invalid"
        )
    triage.stop = facts.repeated
    calls = _unanswered(state["messages"], reply)
    if triage.stop is None:
        _triage_calls(run, state, calls, triage, facts)
    else:  # nothing of this turn runs: the run stops before repeating the failure
        triage.run_nothing(calls)
    return triage


def _unanswered(messages: Sequence[AnyMessage], reply: AIMessage) -> list[ToolCall]:
    """The calls of ``reply`` with no observation yet: a middleware's ``after_model`` hook
    may answer some itself (a call limit does), and those are settled."""
    place = next(i for i in range(len(messages) - 1, -1, -1) if messages[i] is reply)
    answered = {m.tool_call_id for m in messages[place + 1 :] if isinstance(m, ToolMessage)}
    return [call for call in reply.tool_calls if call["id"] not in answered or not call["id"]]


def settling(state: AgentState, triage: TurnTriage) -> Settling:
    """The router's hand-over of a triaged turn to ``approve``."""
    return Settling(triage=vars(triage).copy())


def make_approve(setup: AgentSetup) -> Node[Settling | AgentState]:
    """Build the ``approve`` node for ``setup``.

    It takes the router's :class:`Settling`; a thread saved while this node asked, before
    the router triaged, resumes with the state instead, and the turn is triaged here.
    """

    def approve(state: Settling | AgentState) -> AgentUpdate:
        run = setup.for_run()
        if "triage" in state:
            given = cast(Settling, state)
            # a hand-over saved by an earlier release may carry its edits: they are made here
            handed = {key: value for key, value in given["triage"].items() if key != "edited"}
            triage = TurnTriage(**handed)
        else:
            triage = triage_turn(run, state)
        if triage.to_ask:
            _ask_person(triage.to_ask, triage, run)
        to_run, answered = triage.in_model_order()
        update: AgentUpdate = {"to_run": to_run}
        # an empty write would still mark the channel changed
        if answered:
            update["messages"] = list(answered)
        if triage.events:
            update["trajectory"] = triage.events
        if triage.rejected:
            update["rejected"] = triage.rejected
        if triage.stop is not None:
            update["outcome"] = {"status": "incomplete", "reason": triage.stop}
        return update

    return approve


def settle_calls(
    run: RunScope,
    state: AgentState,
    calls: Sequence[ToolCall],
    triage: TurnTriage,
    tally: Tally | None = None,
) -> bool:
    """Decide the fate of ``calls`` into ``triage``, asking one interrupt for the dangerous ones;
    return whether a person answered.

    The approve node settles a model turn with it; a pattern that runs a whole
    plan of calls itself (LLM Compiler) settles the plan with it before any call runs.
    A node that got a person's answer should end its step with the decisions, before
    running anything: the answer is saved with the step, and LangGraph keeps a resume
    value only until the node that asked ends, so a crash in between would ask again.
    ``tally``: the tool-call limits' count shared by calls settled apart (a plan's tasks);
    by default, the state's.
    """
    facts = turn_facts(run, state)
    if tally is not None:
        facts = replace(facts, tally=tally)
    _triage_calls(run, state, calls, triage, facts)
    if triage.to_ask:
        _ask_person(triage.to_ask, triage, run)
    return bool(triage.to_ask)


def _described(call: ToolCall, spec: ToolSpec | None) -> str:
    """The call as the person approving it reads it, with where it acts when the tool says."""
    text = describe_call(call["name"], call["args"])
    where = spec.where(call["args"]) if spec is not None and spec.where is not None else None
    return f"{text} {where}" if where else text


def _triage_calls(
    run: RunScope,
    state: AgentState,
    calls: Sequence[ToolCall],
    triage: TurnTriage,
    facts: TurnFacts,
) -> None:
    """Settle every call that needs no person, and set aside (``triage.to_ask``) the ones
    that do. A call whose arguments its tool cannot take is answered with why, before
    anyone is asked: approving a call that can only fail wastes a person's attention."""
    limit = facts.calls_left
    over_limit = (
        OVER_CALL_LIMIT.format(limit=limit)
        if limit == run.limits.max_tool_calls_per_turn
        else OVER_QUESTION_LIMIT.format(limit=run.limits.max_tool_calls)
    )
    rejected_before, current, answers = facts.rejected, facts.results, facts.answers
    tally = facts.tally
    counted = 0  # the turn's calls the limit counts: an upkeep tool's are not
    for index, call in enumerate(calls):
        triage.places[runtime_id(call)] = (index, call)
        signature = call_signature(call["name"], call["args"])
        blocked = run.policy.block_reason(call["name"], call["args"])
        upkeep = run.registry.is_upkeep(call["name"])
        counted += not upkeep
        if not upkeep and counted > limit:
            triage.answer_without_running(call, over_limit, "skipped")
        elif signature in rejected_before:
            triage.answer_without_running(
                call,
                REJECTED_BEFORE.format(reason=rejected_before[signature]),
                "rejected",
                metadata={EARLIER_REJECTION: True},
            )
        elif blocked:
            triage.answer_without_running(call, blocked, "blocked")
        elif signature in current:
            triage.reuse(call, current[signature], answers.get(current[signature]["call_id"]))
        elif (refused := run.registry.call_error(call["name"], call["args"])) and not (
            run.setup.tool_hooks and call["name"] not in run.registry  # a hook may bring it
        ):
            triage.answer_without_running(call, refused, "invalid")
        elif tally is not None and (passed := tally.take(call["name"])) is not None:
            triage.answer_without_running(call, passed.refusal(), "skipped")
            triage.stop = triage.stop or tally.ended
        elif run.policy.needs_approval(run.registry.get(call["name"]), call["name"], call, state):
            triage.to_ask.append((index, call))
            described = run.policy.description(call, state)
            if described:
                triage.described[runtime_id(call)] = described
        else:
            triage.clear_to_run(index, call, call["args"], "auto")
    if triage.stop is not None:  # a call limit ends the question: nothing of the turn runs
        triage.run_nothing()


def _ask_person(to_ask: list[tuple[int, ToolCall]], triage: TurnTriage, run: RunScope) -> None:
    """One interrupt for all dangerous calls of the turn (then one per call a per-call
    setting asks about, :mod:`~.per_call`); apply each decision (an edit's arguments merged
    over the proposed ones and checked, see :mod:`~.edits`). What the person reads and may
    decide follows the tool's approval setting, when it has one."""
    pending = {
        runtime_id(call): with_schema(
            PendingCall(
                id=runtime_id(call),
                name=call["name"],
                args=call["args"],
                description=triage.described.get(runtime_id(call))
                or _described(call, run.registry.get(call["name"])),
                allowed_decisions=run.policy.decisions(call["name"]),
            ),
            run.registry,
        )
        for _, call in to_ask
    }
    asked = [pending[runtime_id(call)] for _, call in to_ask if not _per_call(run, call)]
    found = (
        _decisions_for(asked, lambda answer: merged_edits(answer, asked, run.registry, run.policy))
        if asked
        else []
    )
    decided = {call["id"]: decision for call, decision in zip(asked, found, strict=True)}
    for _, call in to_ask:
        one = pending[runtime_id(call)]
        if one["id"] not in decided:
            spec = run.registry.get(call["name"])
            tool = spec.tool if spec is not None else None
            decided[one["id"]] = ask_per_call(one, tool, _fit_one(one, run))
    for index, call in to_ask:
        decision = decided[runtime_id(call)]
        kind = decision["type"]
        if kind == "approve":
            triage.clear_to_run(index, call, call["args"], "approved")
        elif kind == "edit":
            name, args = decision.get("name", call["name"]), decision["args"]
            notice = edit_notice(run.setup.asking.get(call["name"]), name, args)
            triage.clear_to_run(index, call, args, "edited", name=name, notice=notice)
        elif kind == "reject":
            reason = decision["reason"]
            triage.rejected[call_signature(call["name"], call["args"])] = reason
            triage.answer_without_running(call, REJECTED_NOW.format(reason=reason), "rejected")
        else:
            triage.answer_without_running(call, decision["content"], "responded", "success")


EXECUTED_INSTEAD = "{notice} Executed instead: {name} with arguments {args}."


def _fit_one(pending: PendingCall, run: RunScope) -> Callable[[ReviewDecision], ReviewDecision]:
    """The check of one call's decision (an edit merged and checked, :mod:`~.edits`)."""
    return lambda decision: merged_edits([decision], [pending], run.registry, run.policy)[0]


def _per_call(run: RunScope, call: ToolCall) -> bool:
    """Whether the call's tool setting asks one call at a time (``interrupt_mode``)."""
    asking = run.setup.asking.get(call["name"])
    return asking is not None and asking.per_call


def edit_notice(asking: Asking | None, name: str, args: Mapping[str, Any]) -> str | None:
    """What the observation of an edited call begins with: the tool's setting's notice
    (a ``HumanInTheLoopMiddleware``'s ``edit_notice``; ``None`` there: no notice), else ours,
    and what ran instead of the model's call."""
    notice = Asking().edit_notice if asking is None else asking.edit_notice
    if not notice:
        return None
    return EXECUTED_INSTEAD.format(notice=notice, name=name, args=json.dumps(dict(args)))


def ask_again(call: ClearedCall, registry: ToolRegistry) -> ReviewDecision:
    """Put a call that started before a crash, and has no saved result, to the person again,
    marked as possibly run (``possibly_ran``); their decision on it."""
    tool_call = ToolCall(name=call["name"], args=call["args"], id=call["id"], type="tool_call")
    pending = with_schema(
        PendingCall(
            id=call["id"],
            name=call["name"],
            args=call["args"],
            description=f"{_described(tool_call, registry.get(call['name']))} {POSSIBLY_RAN}",
            allowed_decisions=list(AGAIN_DECISIONS),
            possibly_ran=True,
        ),
        registry,
    )
    (decision,) = _decisions_for([pending])
    return decision


def with_schema(pending: PendingCall, registry: ToolRegistry) -> PendingCall:
    """``pending`` with its tool's argument schema, from which a page makes an edit's form."""
    spec = registry.get(pending["name"])
    if spec is not None:
        pending["args_schema"] = spec.argument_schema()
    return pending


def _decisions_for(
    pending: list[PendingCall],
    fit: Callable[[list[ReviewDecision]], list[ReviewDecision]] = list,
) -> list[ReviewDecision]:
    """Ask until the answer fits: a malformed resume, or decisions that ``fit`` refuses
    (:class:`ApprovalError`), re-asks with the error, losing nothing.

    LangGraph replays earlier resume values to earlier ``interrupt()`` calls of a
    re-run node, so a bad answer cannot simply be raised and retried; each
    correction is a further interrupt of the same node instead.
    """
    request = approval_request(pending)
    answer = interrupt(request)
    while True:
        try:
            return fit(parse_decisions(answer, pending))
        except ApprovalError as error:
            answer = interrupt({**request, "error": str(error)})


own_texts(
    OVER_CALL_LIMIT, OVER_QUESTION_LIMIT, REJECTED_BEFORE, REJECTED_NOW, INVALID_CALL, POSSIBLY_RAN
)
