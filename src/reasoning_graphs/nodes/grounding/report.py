"""``report``: which claims of a final answer rest on what the tools returned.

After a question is answered, the answer's checkable claims — names, numbers
and dates, in English and Chinese — are looked up in the question's tool
observations. A claim found there is supported, and the report names the call
that backs it; one found only in the model's own thoughts or in the answer
itself rests on the model's word. No model is called: the report is a few
regular expressions over text the state already holds, so every pattern can
afford it after every answer.

Names are found by shape (capitalised words, acronyms, titles in 《》 or
quotes, transliterations joined by "·", places and bodies ending in 市, 大学,
公司 …), so the report is a guide for a reader, not a proof. Numbers and dates
are compared by value: "1,234", "1234" and "一千二百三十四" are one number;
"2024-05-05", "5 May 2024" and "2024年5月5日" one date.

Examples:
    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> messages = [
    ...     HumanMessage("When did Apollo 11 land, and how far is the Moon?"),
    ...     AIMessage("", tool_calls=[{"name": "search", "args": {"q": "Apollo 11"}, "id": "c1"}]),
    ...     ToolMessage("Apollo 11 landed on 1969-07-20.", tool_call_id="c1", name="search"),
    ... ]
    >>> answer = "It landed on 20 July 1969; the Moon is 384,400 km away."
    >>> report = grounding_report(answer, messages)
    >>> [(c["text"], c["found_in"]) for c in report["claims"]]
    [('20 July 1969', 'observation'), ('Moon', 'question'), ('384,400', 'answer')]
    >>> report["claims"][0]["support"]["call_id"]
    'c1'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, TypeVar, cast

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import outcome_of, raw_reply_of
from reasoning_graphs.question import (
    latest_request,
    question_messages,
    question_number,
    this_question,
    was_executed,
)
from reasoning_graphs.state import (
    EXECUTED,
    AgentState,
    AgentUpdate,
    Claim,
    ClaimKind,
    ClaimSource,
    ClaimSupport,
    GroundingReport,
    TrajectoryEvent,
    add_messages_batches,
    append_batches,
    merge_batches,
)
from reasoning_graphs.tools.execute import observation_ref
from reasoning_graphs.tools.output import content_text

State = TypeVar("State", bound=AgentState)

EXCERPT_CHARS = 60
"""Characters of the observation shown on each side of a supported claim."""


@dataclass(frozen=True)
class Found:
    """A claim found in a text: what it says, where, and the key it is compared by."""

    text: str
    kind: ClaimKind
    key: str
    start: int
    end: int


@dataclass(frozen=True)
class Observation:
    """What one tool call that really ran returned (its full text when it was cut)."""

    call_id: str
    tool: str
    text: str


# --- dates -------------------------------------------------------------------

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sep", "Sept"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_HAN_DIGIT = "零〇一二两三四五六七八九"
_HAN_SMALL = _HAN_DIGIT + "十"

DATE_PATTERNS = [
    re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"),
    re.compile(rf"(?<![A-Za-z0-9])(?P<d>{_DAY})\s+(?P<mn>{_MONTH}),?\s+(?P<y>\d{{4}})(?!\d)"),
    re.compile(rf"(?<![A-Za-z])(?P<mn>{_MONTH})\s+(?P<d>{_DAY}),?\s+(?P<y>\d{{4}})(?!\d)"),
    re.compile(rf"(?<![A-Za-z])(?P<mn>{_MONTH})\s+(?P<y>\d{{4}})(?!\d)"),
    re.compile(
        rf"(?P<y>\d{{4}}|[{_HAN_DIGIT}]{{4}})\s*年\s*(?P<m>\d{{1,2}}|[{_HAN_SMALL}]{{1,3}})\s*月"
        rf"(?:\s*(?P<d>\d{{1,2}}|[{_HAN_SMALL}]{{1,3}})\s*[日号])?"
    ),
]


def find_dates(text: str) -> list[Found]:
    """The dates in ``text``, keyed ``YYYY-MM-DD`` (``YYYY-MM`` without a day)."""
    found: list[Found] = []
    taken = bytearray(len(text))  # the fuller spellings are tried first and win
    for pattern in DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            key = _date_key(match)
            if key is None or any(taken[start:end]):
                continue
            taken[start:end] = b"\x01" * (end - start)
            found.append(Found(match.group(), "date", key, start, end))
    return sorted(found, key=lambda f: f.start)


def _date_key(match: re.Match[str]) -> str | None:
    parts = match.groupdict()
    year = _small_number(parts["y"])
    month = MONTHS[parts["mn"].rstrip(".")] if parts.get("mn") else _small_number(parts["m"])
    day = _small_number(re.sub("(st|nd|rd|th)$", "", parts["d"])) if parts.get("d") else None
    if year is None or month is None or not 1 <= month <= 12:
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}" if 1 <= day <= 31 else None


def _small_number(text: str) -> int | None:
    """A year, month or day written in digits or Chinese numerals (二〇二四, 十二)."""
    if re.fullmatch(r"\d+", text):
        return int(text)
    if all(ch in HAN_DIGITS for ch in text):  # digit by digit: 二〇二四
        return int("".join(str(HAN_DIGITS[ch]) for ch in text))
    value = chinese_number(text)
    return None if value is None else int(value)


# --- numbers -----------------------------------------------------------------

HAN_DIGITS = {**{ch: value for value, ch in enumerate("零一二三四五六七八九")}, "〇": 0, "两": 2}
HAN_UNITS = {"十": 10, "百": 100, "千": 1000}
HAN_SECTIONS = {"万": 10**4, "亿": 10**8}
SCALES = {
    "万": 10**4,
    "亿": 10**8,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}
NOT_NUMBERS = frozenset({"千万", "万一", "一一"})
"""Runs of numeral characters that are words ("by no means", "just in case")."""

ARABIC_NUMBER = re.compile(
    r"(?:(?<![A-Za-z0-9_])-)?(?<![A-Za-z0-9_])(?<!\d[.,:])(?<![A-Za-z]-)"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s?(?P<cjk_scale>万|亿)|\s+(?P<scale>thousand|million|billion|trillion)\b)?"
    r"(?![A-Za-z0-9_]|:\d)%?"
)
"""A number in digits, not one stuck to a word (H2O, COVID-19, 1st) or a time of day (10:30)."""
CHINESE_NUMBER = re.compile(f"[{_HAN_DIGIT}十百千万亿]{{2,}}")
LIST_MARKER = re.compile(r"^[ \t]*(\d+)[.)][ \t]", re.MULTILINE)
"""A numbered list's item number, which is no claim."""


def find_numbers(text: str) -> list[Found]:
    """The numbers in ``text``, keyed by their value (scales such as 万 or million applied)."""
    markers = {m.start(1) for m in LIST_MARKER.finditer(text)}
    found = [
        Found(m.group(), "number", key, *m.span())
        for m in ARABIC_NUMBER.finditer(text)
        if m.start() not in markers and (key := _arabic_key(m)) is not None
    ]
    for match in CHINESE_NUMBER.finditer(text):
        value = None if match.group() in NOT_NUMBERS else _chinese_numeral(match.group())
        if value is not None:
            found.append(Found(match.group(), "number", _number_key(value), *match.span()))
    return sorted(found, key=lambda f: f.start)


def _arabic_key(match: re.Match[str]) -> str | None:
    try:
        value = Decimal(match.group("digits").replace(",", ""))
    except InvalidOperation:
        return None
    if match.group().startswith("-"):
        value = -value
    scale = match.group("cjk_scale") or match.group("scale")
    return _number_key(value * SCALES[scale] if scale else value)


def _chinese_numeral(text: str) -> Decimal | None:
    """A run of Chinese numerals that reads as a number: with a unit, or digit by digit."""
    if any(ch in HAN_UNITS or ch in HAN_SECTIONS for ch in text):
        return chinese_number(text)
    if len(text) == 4 and text[0] in "一二":  # 一九九八, 二〇二四: a year, digit by digit
        return Decimal("".join(str(HAN_DIGITS[ch]) for ch in text))
    return None


def chinese_number(text: str) -> Decimal | None:
    """The value of a Chinese numeral with units: 三百九十五 → 395, 一亿二千万 → 120000000.

    Examples:
        >>> chinese_number("三百零五"), chinese_number("十五"), chinese_number("两万")
        (Decimal('305'), Decimal('15'), Decimal('20000'))
    """
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in HAN_DIGITS:
            digit = HAN_DIGITS[ch]
        elif ch in HAN_UNITS:
            section += (digit or 1) * HAN_UNITS[ch]
            digit = 0
        elif ch == "万":
            total += (section + digit) * HAN_SECTIONS[ch]
            section, digit = 0, 0
        elif ch == "亿":
            total = (total + section + digit) * HAN_SECTIONS[ch]
            section, digit = 0, 0
        else:
            return None
    return Decimal(total + section + digit)


def _number_key(value: Decimal) -> str:
    """One spelling per value: 1234, 1234.0 and 1,234 share ``1234``."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


# --- names -------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NOT_NAMES = _words(
    """a an the and but or so yet if then than as at by for from in into of on onto to
    with without about after before during since until upon via per this that these those
    there here it its he she they we you i me my our your their his her them us
    is are was were be been am do does did has have had will would can could should may
    might must shall not no yes ok okay also however therefore thus hence because while
    although though when where what which who whom whose why how all any each every some
    most many much more few both either neither one two three first second third last next
    final answer thought action observation question result results step steps note
    according based given using let sure well overall finally today tomorrow yesterday
    monday tuesday wednesday thursday friday saturday sunday
    january february march april june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec"""
)
"""Words that start a sentence or a heading with a capital, rather than name something."""

_CAP_WORD = r"[A-Z][A-Za-z'’\-]*[A-Za-z]|[A-Z]"
_LINK = r"(?:[ \t]+(?:of|the|de|da|del|di|du|la|le|van|von|der|den))*"
LATIN_NAME = re.compile(
    rf"(?<![A-Za-z0-9])(?:{_CAP_WORD})(?:{_LINK}[ \t]+(?:{_CAP_WORD}))*(?![A-Za-z0-9])"
)
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff"
_HAN_BREAK_CHARS = "的是在于和与及从到向对把被为了也都就而并或即由将以有位叫称约共达占"
"""Function words and common verbs: a Chinese name does not run across them."""
QUOTED_NAME = re.compile(rf"《(?P<a>[^》\n]{{1,30}})》|[「『“](?P<b>[{_HAN}·・]{{2,15}})[」』”]")
DOTTED_NAME = re.compile(rf"[{_HAN}]{{1,6}}(?:[·•・][{_HAN}]{{1,5}})+")
"""A transliterated name, its parts joined by a middle dot: 艾萨克·牛顿."""
DOTTED_NAME_END = re.compile(f"[{_HAN_BREAK_CHARS}出说曾生]")
"""Where the text after a transliterated name starts: 艾萨克·牛顿|出生于…"""
KATAKANA_NAME = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")
HAN_RUN = re.compile(rf"[{_HAN}]+")
HAN_BREAKS = re.compile(f"[{_HAN_BREAK_CHARS}]")
HAN_NAME_ENDINGS = _words(
    "市 省 县 区 国 州 镇 村 岛 山 河 江 湖 海 港 湾 路 街 寺 宫 桥 机场 大学 学院 中学 "
    "公司 集团 银行 医院 博物馆 研究所 研究院 委员会 协会 大厦 广场 公园"
)
HAN_NAME = re.compile(
    rf"^[{_HAN}]{{1,6}}(?:" + "|".join(sorted(HAN_NAME_ENDINGS, key=len, reverse=True)) + ")"
)
"""A place or a body, at the start of a run between function words: 北京市, 清华大学."""
HAN_NOT_STARTS = tuple("这那该此本每各某哪其我你他她它全")


def find_names(text: str) -> list[Found]:
    """The proper names in ``text``, keyed case-blind with spacing made single."""
    found = [*_latin_names(text), *_cjk_names(text)]
    return _without_overlaps(found)


def _latin_names(text: str) -> Iterator[Found]:
    for match in LATIN_NAME.finditer(text):
        words = match.group().split()
        start = match.start()
        while words and words[0].lower() in NOT_NAMES:
            start = text.index(words[1], start + len(words[0])) if len(words) > 1 else start
            words = words[1:]
        if not words or len(" ".join(words)) < 2:  # a lone letter names nothing
            continue
        name = re.sub(r"['’]s$", "", text[start : match.end()])
        yield Found(name, "name", _name_key(name), start, start + len(name))


def _cjk_names(text: str) -> Iterator[Found]:
    for match in QUOTED_NAME.finditer(text):
        group = "a" if match.group("a") is not None else "b"
        name = match.group(group).strip()
        if name:
            yield Found(name, "name", _name_key(name), *match.span(group))
    for match in DOTTED_NAME.finditer(text):
        last_dot = max(match.group().rfind(dot) for dot in "·•・")
        end = DOTTED_NAME_END.search(match.group(), last_dot + 2)
        name = match.group()[: end.start() if end else None]
        yield Found(name, "name", name, match.start(), match.start() + len(name))
    for match in KATAKANA_NAME.finditer(text):
        yield Found(match.group(), "name", match.group(), *match.span())
    for run in HAN_RUN.finditer(text):
        position = run.start()
        for piece in HAN_BREAKS.split(run.group()):
            han = HAN_NAME.match(piece)
            if han and not piece.startswith(HAN_NOT_STARTS) and "个" not in han.group():
                name = han.group()
                yield Found(name, "name", name, position, position + len(name))
            position += len(piece) + 1


def _name_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _without_overlaps(found: list[Found]) -> list[Found]:
    """The longest of overlapping finds, in text order."""
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -(f.end - f.start))):
        if not kept or item.start >= kept[-1].end:
            kept.append(item)
    return kept


# --- claims and where they are found -----------------------------------------


def find_claims(text: str) -> list[Found]:
    """The checkable claims of ``text``: dates, then names and numbers outside them.

    Examples:
        >>> [(f.text, f.kind) for f in find_claims("Paris had 2,102,650 people on 1 Jan 2023.")]
        [('Paris', 'name'), ('2,102,650', 'number'), ('1 Jan 2023', 'date')]
        >>> [(f.text, f.key) for f in find_claims("北京市有两千一百八十四万人，3.5万辆车。")]
        [('北京市', '北京市'), ('两千一百八十四万', '21840000'), ('3.5万', '35000')]
    """
    dates = find_dates(text)
    rest = _masked(text, dates)
    names = find_names(rest)
    numbers = find_numbers(_masked(rest, names, "a"))
    claims: list[Found] = []
    seen: set[tuple[str, str]] = set()
    for item in sorted([*dates, *names, *numbers], key=lambda f: f.start):
        if (item.kind, item.key) not in seen:
            seen.add((item.kind, item.key))
            claims.append(item)
    return claims


def _masked(text: str, found: Sequence[Found], fill: str = " ") -> str:
    """``text`` with the found spans overwritten by ``fill``, offsets kept.

    A name is overwritten with letters, so that it still reads as a word and a
    number stuck to it (COVID-19) stays part of it.
    """
    chars = list(text)
    for item in found:
        chars[item.start : item.end] = fill * (item.end - item.start)
    return "".join(chars)


def locate(claim: Found, text: str) -> Found | None:
    """Where ``text`` says what ``claim`` says (same name, value or date), if it does."""
    if claim.kind == "name":
        return _locate_name(claim, text)
    values = _values_in(text)
    if claim.kind == "number":
        return values.get(("number", claim.key))
    month = claim.key[:7]  # a date backs the claim of its month as well as its own
    return values.get(("date", claim.key)) or (
        values.get(("month", month)) if claim.key == month else None
    )


@lru_cache(maxsize=64)
def _values_in(text: str) -> dict[tuple[str, str], Found]:
    """The first place each number, date and month appears in an observation.

    Found once per text and looked up by key, so a long observation is read
    once for all the answer's claims.
    """
    index: dict[tuple[str, str], Found] = {}
    for found in find_numbers(text):
        index.setdefault(("number", found.key), found)
    for found in find_dates(text):
        index.setdefault(("date", found.key), found)
        index.setdefault(("month", found.key[:7]), found)
    return index


def _locate_name(claim: Found, text: str) -> Found | None:
    words = [re.escape(word) for word in claim.text.split()]
    edge_before = r"(?<![A-Za-z])" if claim.text[0].isascii() else ""
    edge_after = r"(?![A-Za-z])" if claim.text[-1].isascii() else ""
    pattern = edge_before + r"\s+".join(words) + edge_after
    match = re.search(pattern, text, re.IGNORECASE)
    return None if match is None else Found(match.group(), "name", claim.key, *match.span())


def excerpt(text: str, at: Found) -> str:
    """The observation around what backs a claim, on one line."""
    start, end = max(at.start - EXCERPT_CHARS, 0), min(at.end + EXCERPT_CHARS, len(text))
    shown = " ".join(text[start:end].split())
    return ("…" if start else "") + shown + ("…" if end < len(text) else "")


# --- the report --------------------------------------------------------------


def grounding_report(
    answer: str,
    messages: Sequence[AnyMessage],
    *,
    trajectory: Sequence[TrajectoryEvent] = (),
    full_texts: Mapping[str, str] | None = None,
) -> GroundingReport:
    """Which claims of ``answer`` the latest question's tool observations back.

    Args:
        answer: The question's final answer.
        messages: The conversation; only the latest question's part is read.
        trajectory: The run's events: tool calls a pattern ran outside the
            conversation (a plan step, a trial, a search branch) count too.
        full_texts: Full texts of cut observations, by reference id.
    """
    found = find_claims(answer)
    claims: list[Claim] = []
    if found:  # an answer without claims needs nothing of the question read
        observations = question_observations(messages, trajectory, full_texts or {})
        question = latest_request(messages)
        thoughts = question_thoughts(messages, trajectory, answer)
        claims = [_judge(item, observations, question, thoughts) for item in found]
    supported = sum(claim["supported"] for claim in claims)
    unsupported = sum(claim["found_in"] in ("thought", "answer") for claim in claims)
    return GroundingReport(
        turn=question_number(messages), claims=claims, supported=supported, unsupported=unsupported
    )


def _judge(
    item: Found, observations: Sequence[Observation], question: str, thoughts: Sequence[str]
) -> Claim:
    for observation in observations:
        at = locate(item, observation.text)
        if at is not None:
            support = ClaimSupport(
                call_id=observation.call_id,
                tool=observation.tool,
                excerpt=excerpt(observation.text, at),
            )
            return Claim(
                text=item.text,
                kind=item.kind,
                supported=True,
                found_in="observation",
                support=support,
            )
    found_in: ClaimSource
    if locate(item, question) is not None:
        found_in = "question"
    elif any(locate(item, thought) is not None for thought in thoughts):
        found_in = "thought"
    else:
        found_in = "answer"
    return Claim(text=item.text, kind=item.kind, supported=False, found_in=found_in, support=None)


def question_observations(
    messages: Sequence[AnyMessage],
    trajectory: Sequence[TrajectoryEvent],
    full_texts: Mapping[str, str],
) -> list[Observation]:
    """The latest question's successful results of tools that really ran, in order.

    What a person wrote in place of a result, a refused call and an error are
    not evidence; a reused result is, through the call it repeats.
    """
    turn = question_messages(messages)
    tools = {c["id"]: c["name"] for m in turn if isinstance(m, AIMessage) for c in m.tool_calls}
    found: dict[str, Observation] = {}
    for message in turn:
        if was_executed(message) and message.status == "success":
            tool = message.name or tools.get(message.tool_call_id, "")
            text = _full_text(message.tool_call_id, content_text(message.content), full_texts)
            found[message.tool_call_id] = Observation(message.tool_call_id, tool, text)
    for event in this_question(trajectory, messages):
        if event["kind"] != "action" or event["id"] in found:
            continue
        if event["decision"] in EXECUTED and event["status"] == "success":
            text = _full_text(event["id"], event["observation"], full_texts)
            found[event["id"]] = Observation(event["id"], event["tool"], text)
    return list(found.values())


def _full_text(call_id: str, shown: str, full_texts: Mapping[str, str]) -> str:
    return full_texts.get(observation_ref(call_id), shown)


def question_thoughts(
    messages: Sequence[AnyMessage], trajectory: Sequence[TrajectoryEvent], answer: str
) -> list[str]:
    """What the model wrote for the latest question besides its answer.

    The reply that gave the answer is left out in every spelling it has: a
    text-format reply keeps the text it was parsed from, and its thought event
    records that text.
    """
    replies = [m for m in question_messages(messages) if isinstance(m, AIMessage)]
    answer_replies = {answer.strip()} | {
        (raw_reply_of(m) or "").strip() for m in replies if m.text.strip() == answer.strip()
    }
    written: list[str] = [m.text for m in replies]
    written += [e["text"] for e in this_question(trajectory, messages) if e["kind"] == "thought"]
    return [text for text in dict.fromkeys(written) if text.strip() not in answer_replies | {""}]


def final_answer(messages: Sequence[AnyMessage]) -> AIMessage | None:
    """The latest question's answer: its last model message, when that calls no tool."""
    for message in reversed(question_messages(messages)):
        if isinstance(message, ToolMessage):
            return None
        if isinstance(message, AIMessage):
            return None if message.tool_calls else message
    return None


def models_words(answer: AIMessage) -> str:
    """What the model said in a final answer: nothing when the runtime wrote the
    message in place of a reply (its text is then the outcome's note). The note an
    incomplete answer carries beside the model's words is not read."""
    outcome = outcome_of(answer)
    return "" if outcome and outcome.get("note") == answer.text else answer.text


def report_for(state: AgentState) -> GroundingReport | None:
    """The grounding report of the question ``state`` has just answered (``None``: no answer)."""
    answer = final_answer(state["messages"])
    if answer is None:
        return None
    return grounding_report(
        models_words(answer),
        state["messages"],
        trajectory=state.get("trajectory") or [],
        full_texts=state.get("observations") or {},
    )


def report(state: AgentState) -> AgentUpdate:
    """The ``report`` node: the grounding report of the answer just given.

    It sits between a question's final answer and the end of the graph and
    calls no model; a pattern whose answering step knows that it ends the
    question writes the report in that step instead (:func:`reported`).
    """
    return {"grounding": report_for(state)}


def state_after(state: AgentState, update: Mapping[str, Any]) -> AgentState:
    """``state`` once ``update`` is written: its messages, trajectory and observations
    merged by their reducers, any other key it writes replaced."""
    after: dict[str, Any] = {**state, **update}
    after["messages"] = state["messages"]
    if update.get("messages"):
        after["messages"] = add_messages_batches(state["messages"], [update["messages"]])
    after["trajectory"] = state.get("trajectory") or []
    if update.get("trajectory"):
        after["trajectory"] = append_batches(after["trajectory"], [update["trajectory"]])
    after["observations"] = state.get("observations") or {}
    if update.get("observations"):
        after["observations"] = merge_batches(after["observations"], [update["observations"]])
    return cast(AgentState, after)


def with_report(state: AgentState, update: Mapping[str, Any]) -> dict[str, Any]:
    """``update``, which ends the question, with the grounding report of its answer."""
    return {**update, "grounding": report_for(state_after(state, update))}


def always(update: Mapping[str, Any]) -> bool:
    """For a step that ends every question it runs in (a ``finish``)."""
    return True


def gives_answer(update: Mapping[str, Any]) -> bool:
    """Whether a step's update answers the question (its outcome is ``answered``)."""
    outcome = update.get("outcome")
    return bool(outcome and outcome["status"] == "answered")


def reported(
    make_body: Callable[[State], Body[Mapping[str, Any]]],
    ends: Callable[[Mapping[str, Any]], bool] = gives_answer,
) -> Callable[[State], Body[Mapping[str, Any]]]:
    """``make_body`` whose update carries the grounding report when it ``ends`` the question.

    The step that gives the answer writes its report, so a question needs no
    step of its own after the answer (one graph step less per question).
    """

    def body(state: State) -> Body[Mapping[str, Any]]:
        update = yield from make_body(state)
        return with_report(state, update) if ends(update) else update

    return body
