"""Tree-of-Thoughts: thoughts along the gold steps, valued and voted by how far along they are.

The gold steps of a Game-of-24 task are its solution one operation at a time
(``4 + 7 = 11 (left: 8 8 11)``, from :func:`reasoning_graphs.bench.game24.steps`);
any other task has one gold step, its worked reasoning, which solves it. A
proposal lists the next gold step and an alternative a model would also try;
of several samples of one prompt, the first takes the gold step and the others
the alternative. The value call reads the path and the candidate from its
request: a path that follows the gold steps is ``sure``, any other
``impossible``; a voter chooses the candidate that follows the gold steps. The
answer is the task's (its draft, when it has one: nothing corrects it).
"""

from __future__ import annotations

from reasoning_graphs.bench.game24 import steps
from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.prompt import OracleError, Prompt, template_fields
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.tot.prompts import (
    NO_STEPS,
    PATH_JOIN,
    PATH_REQUEST,
    PROPOSE_REQUEST,
    SAMPLE_REQUEST,
    VALUE_REQUEST,
    VOTE_REQUEST,
)
from reasoning_graphs.graphs.tot.replies import (
    Ballot,
    FinalAnswer,
    NextStep,
    Proposals,
    Valuation,
)

NO_REASONING = "I work it out step by step."
ALTERNATIVE = "Guess the result without working it out."
"""The step a sampled model also tries, which the gold steps never take."""
UNREADABLE = "the Tree-of-Thoughts request no longer matches its template: {template!r}"
ANSWER_LINE = "Answer: {answer}"


def gold_steps(task: Task) -> list[str]:
    """The steps that solve the task, in order."""
    numbers = task.scorer_options.get("numbers")
    if task.scorer == "game24" and isinstance(numbers, list):
        return steps(task.answer, numbers)
    return [" ".join((task.reasoning or NO_REASONING).split())]


def reply(
    task: Task, prompt: Prompt
) -> Proposals | NextStep | Valuation | Ballot | FinalAnswer | str:
    """The reply to one call of the search, its answer, or its closing call."""
    gold = gold_steps(task)
    text = prompt.last_human()
    if prompt.binds(Proposals):
        done = _steps_of(_fields(PROPOSE_REQUEST, text)["path"])
        return Proposals(steps=[*_gold_next(gold, done), NextStep(step=ALTERNATIVE, solves=False)])
    if prompt.binds(NextStep):
        done = _steps_of(_fields(SAMPLE_REQUEST, text)["path"])
        sampled = _gold_next(gold, done) if prompt.repeat == 0 else []
        return sampled[0] if sampled else NextStep(step=ALTERNATIVE, solves=False)
    if prompt.binds(Valuation):
        fields = _fields(VALUE_REQUEST, text)
        line = [*_steps_of(fields["path"]), fields["candidate"]]
        on_track = _follows(gold, line)
        return Valuation(
            reason="It follows a solution." if on_track else "It leads nowhere.",
            verdict="sure" if on_track else "impossible",
        )
    if prompt.binds(Ballot):
        choices = _numbered(_fields(VOTE_REQUEST, text)["choices"])
        lines = [choice.split(PATH_JOIN) for choice in choices]
        chosen = next((n for n, line in enumerate(lines, 1) if _follows(gold, line)), 1)
        return Ballot(reason="It follows a solution.", choice=chosen)
    if prompt.binds(FinalAnswer):
        return FinalAnswer(answer=final_answer(task))
    return ANSWER_LINE.format(answer=final_answer(task))


def _gold_next(gold: list[str], done: list[str]) -> list[NextStep]:
    """The next gold step after ``done``, when ``done`` follows the gold steps."""
    if len(done) >= len(gold) or not _follows(gold, done):
        return []
    return [NextStep(step=gold[len(done)], solves=len(done) == len(gold) - 1)]


def _follows(gold: list[str], line: list[str]) -> bool:
    return [_key(step) for step in line] == [_key(step) for step in gold[: len(line)]]


def _fields(template: str, text: str) -> dict[str, str]:
    fields = template_fields(template, text)
    if fields is None:
        raise OracleError(UNREADABLE.format(template=template))
    return fields


def _steps_of(path: str) -> list[str]:
    """The steps a rendered path shows (see ``tot.view.render_path``)."""
    shown = _fields(PATH_REQUEST, path)["steps"]
    return [] if shown == NO_STEPS else _numbered(shown)


def _numbered(block: str) -> list[str]:
    return [line.split(". ", 1)[1] for line in block.splitlines() if ". " in line]


def _key(step: str) -> str:
    return " ".join(step.split()).casefold()
