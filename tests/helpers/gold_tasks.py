"""Gold trajectories: tasks solved by a known-correct sequence of model turns.

Each task is what an external agent benchmark gives: a small world, plain
LangChain tools over it (none marked read-only, idempotent or dangerous, as
such a benchmark's tools arrive), and for each question the exact turns a
correct model makes — tool calls, then the final answer — with the world the
run must leave behind. Replaying them (:mod:`gold_runs`) shows whether an
agent lets a correct run through untouched: reads again after a write, repeats
while making progress, odd result types, long and non-Latin text, empty
results and an empty answer.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, ToolException, tool

from reasoning_graphs.testing import tool_calls
from reasoning_graphs.tools.arithmetic import evaluate

LOG_LINE = "2024-05-01 12:00:00 INFO request served in 12 ms\n"
SERVER_LOG = (LOG_LINE * 250)[:9_950] + "ERROR disk full\n"
"""A log of just over 10,000 characters whose one error sits at the very end."""


@dataclass
class World:
    """Everything the tools of a task can read and change."""

    files: dict[str, str] = field(default_factory=dict)
    channels: dict[str, list[str]] = field(default_factory=dict)
    todos: list[dict[str, Any]] = field(default_factory=list)
    stock: dict[str, int] = field(default_factory=dict)


def world_tools(world: World) -> dict[str, BaseTool]:
    """Plain tools over ``world``, by name: files, chat channels, todos, stock, arithmetic."""

    @tool
    def list_files() -> str:
        """List the files, one name a line."""
        return "\n".join(sorted(world.files))

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        if path not in world.files:
            raise ToolException(f"no such file: {path}")
        return world.files[path]

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file, replacing what it held."""
        world.files[path] = content
        return f"Wrote {len(content)} characters to {path}."

    @tool
    def delete_file(path: str) -> None:
        """Delete a file."""
        world.files.pop(path, None)

    @tool
    def search_files(text: str) -> list[str]:
        """The names of the files that contain a text."""
        return sorted(name for name, content in world.files.items() if text in content)

    @tool
    def grep(path: str, text: str) -> str:
        """The lines of a file that contain a text."""
        return "\n".join(line for line in world.files[path].splitlines() if text in line)

    @tool
    def file_stats(path: str) -> dict[str, Any]:
        """Size of a file in characters and lines."""
        content = world.files[path]
        return {"path": path, "chars": len(content), "lines": content.count("\n")}

    @tool
    def get_channels() -> list[dict[str, Any]]:
        """The chat channels and how many messages each holds."""
        return [{"name": name, "messages": len(world.channels[name])} for name in world.channels]

    @tool
    def create_channel(name: str) -> str:
        """Create an empty chat channel."""
        world.channels.setdefault(name, [])
        return f"Created #{name}."

    @tool
    def read_channel(channel: str) -> list[dict[str, str]]:
        """The messages of a channel, as text blocks."""
        return [{"type": "text", "text": message} for message in world.channels[channel]]

    @tool
    def send_message(channel: str, text: str) -> str:
        """Post a message to a channel."""
        world.channels[channel].append(text)
        return "Message sent."

    @tool
    def list_todos() -> dict[str, list[str]]:
        """The open and the done todos, by title."""
        return {
            "open": [t["title"] for t in world.todos if not t["done"]],
            "done": [t["title"] for t in world.todos if t["done"]],
        }

    @tool
    def add_todo(title: str) -> dict[str, Any]:
        """Add an open todo; returns it with its id."""
        todo = {"id": len(world.todos) + 1, "title": title, "done": False}
        world.todos.append(todo)
        return todo

    @tool
    def complete_todo(todo_id: int) -> str:
        """Mark a todo done."""
        world.todos[todo_id - 1]["done"] = True
        return f"Todo {todo_id} done."

    @tool(response_format="content_and_artifact")
    def stock_level(item: str) -> tuple[str, dict[str, Any]]:
        """How many of an item are in stock (the record comes as the artifact)."""
        count = world.stock.get(item, 0)
        return f"{count} {item} in stock", {"item": item, "count": count}

    @tool
    def reserve(item: str, count: int, call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Take items out of stock for an order; the reservation comes as the artifact."""
        world.stock[item] -= count
        left = world.stock[item]
        reservation = {"item": item, "count": count, "left": left}
        return ToolMessage(
            f"Reserved {count} {item}; {left} left.", artifact=reservation, tool_call_id=call_id
        )

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return evaluate(expression)

    read_file.handle_tool_error = True
    return {
        t.name: t
        for t in (
            list_files,
            read_file,
            write_file,
            delete_file,
            search_files,
            grep,
            file_stats,
            get_channels,
            create_channel,
            read_channel,
            send_message,
            list_todos,
            add_todo,
            complete_todo,
            stock_level,
            reserve,
            calculator,
        )
    }


@dataclass(frozen=True)
class Question:
    """One question of a task: what is asked, the model's tool-call turns, its final answer."""

    ask: str
    turns: tuple[AIMessage, ...]
    answer: str

    @property
    def script(self) -> list[AIMessage]:
        """Every model reply of the question, in order: the turns, then the answer."""
        return [*self.turns, AIMessage(self.answer)]


@dataclass(frozen=True)
class GoldTask:
    """A task with its gold trajectory: the world before, the questions, the world after."""

    name: str
    tools: tuple[str, ...]
    start: World
    end: World
    questions: tuple[Question, ...]

    def fresh_world(self) -> tuple[World, list[BaseTool]]:
        """A copy of the starting world and this task's tools over it."""
        world = copy.deepcopy(self.start)
        available = world_tools(world)
        return world, [available[name] for name in self.tools]

    @property
    def script(self) -> list[AIMessage]:
        """Every model reply of the whole task, question after question."""
        return [reply for question in self.questions for reply in question.script]


_call_ids = itertools.count(1)


def turn(*calls: tuple[str, dict[str, Any]], say: str = "") -> AIMessage:
    """A model turn making ``calls`` in order, with call ids unique across the suite."""
    return tool_calls(
        *((name, args, f"gold_{next(_call_ids)}") for name, args in calls), content=say
    )


def call(tool_name: str, /, **args: Any) -> AIMessage:
    """A model turn making one call."""
    return turn((tool_name, args))


def task(
    name: str,
    tools: Sequence[str],
    start: World,
    end: World,
    *questions: tuple[str, Sequence[AIMessage], str],
) -> GoldTask:
    """A gold task from ``(question, turns, answer)`` triples."""
    return GoldTask(
        name,
        tuple(tools),
        start,
        end,
        tuple(Question(ask, tuple(turns), answer) for ask, turns, answer in questions),
    )


FILES = ("list_files", "read_file", "write_file", "delete_file", "search_files")
CHAT = ("get_channels", "create_channel", "read_channel", "send_message")
TODOS = ("list_todos", "add_todo", "complete_todo")
STOCK = ("stock_level", "reserve")
AB = {"a.txt": "alpha", "b.txt": "beta"}

TASKS: list[GoldTask] = [
    task(
        "list_write_list",
        FILES,
        World(files=dict(AB)),
        World(files={**AB, "c.txt": "gamma"}),
        (
            "Add c.txt holding 'gamma' and tell me which files exist then.",
            [
                call("list_files"),
                call("write_file", path="c.txt", content="gamma"),
                call("list_files"),
            ],
            "a.txt, b.txt and c.txt",
        ),
    ),
    task(
        "list_delete_list",
        FILES,
        World(files=dict(AB)),
        World(files={"b.txt": "beta"}),
        (
            "Delete a.txt and confirm what is left.",
            [call("list_files"), call("delete_file", path="a.txt"), call("list_files")],
            "Only b.txt is left.",
        ),
    ),
    task(
        "search_modify_search",
        FILES,
        World(files={"plan.md": "TODO: ship", "notes.md": "TODO: test", "done.md": "shipped"}),
        World(files={"plan.md": "DONE: ship", "notes.md": "TODO: test", "done.md": "shipped"}),
        (
            "Mark the plan as done and tell me which files still mention TODO.",
            [
                call("search_files", text="TODO"),
                call("read_file", path="plan.md"),
                call("write_file", path="plan.md", content="DONE: ship"),
                call("search_files", text="TODO"),
            ],
            "Only notes.md still mentions TODO.",
        ),
    ),
    task(
        "channels_create_channels",
        CHAT,
        World(channels={"general": ["hello"]}),
        World(channels={"general": ["hello"], "random": []}),
        (
            "Create a #random channel and list the channels.",
            [
                call("get_channels"),
                call("create_channel", name="random"),
                call("get_channels"),
            ],
            "general and random",
        ),
    ),
    task(
        "channel_read_post_read",
        CHAT,
        World(channels={"general": ["deploy at 5"]}),
        World(channels={"general": ["deploy at 5", "ack"]}),
        (
            "Acknowledge the latest message in #general and show me the channel.",
            [
                call("read_channel", channel="general"),
                call("send_message", channel="general", text="ack"),
                call("read_channel", channel="general"),
            ],
            "#general: 'deploy at 5', then 'ack'.",
        ),
    ),
    task(
        "same_read_twice_then_more",
        FILES,
        World(files=dict(AB)),
        World(files={**AB, "copy.txt": "alpha"}),
        (
            "Copy a.txt to copy.txt and list the files.",
            [
                call("read_file", path="a.txt"),
                call("read_file", path="a.txt"),
                call("write_file", path="copy.txt", content="alpha"),
                call("list_files"),
            ],
            "a.txt, b.txt, copy.txt",
        ),
    ),
    task(
        "same_listing_twice_in_one_turn",
        FILES,
        World(files=dict(AB)),
        World(files=dict(AB)),
        (
            "Which files are there, and what does b.txt say?",
            [
                turn(("list_files", {}), ("list_files", {})),
                call("read_file", path="b.txt"),
            ],
            "a.txt and b.txt; b.txt says beta.",
        ),
    ),
    task(
        "turn_of_repeats_while_progressing",
        FILES,
        World(files={**AB, "c.txt": "gamma"}),
        World(files={**AB, "c.txt": "gamma"}),
        (
            "Read every file and tell me their contents.",
            [
                call("list_files"),
                call("read_file", path="a.txt"),
                turn(("list_files", {}), ("read_file", {"path": "a.txt"}), say="Where was I?"),
                call("read_file", path="b.txt"),
                call("read_file", path="c.txt"),
            ],
            "alpha, beta, gamma",
        ),
    ),
    task(
        "write_then_read_in_one_turn",
        FILES,
        World(files=dict(AB)),
        World(files={"a.txt": "NEW", "b.txt": "beta"}),
        (
            "Replace a.txt with NEW and show me it took.",
            [
                call("read_file", path="a.txt"),
                turn(
                    ("write_file", {"path": "a.txt", "content": "NEW"}),
                    ("read_file", {"path": "a.txt"}),
                ),
            ],
            "a.txt now says NEW.",
        ),
    ),
    task(
        "same_read_in_two_questions",
        FILES,
        World(files=dict(AB)),
        World(files=dict(AB)),
        ("Which files are there?", [call("list_files")], "a.txt and b.txt"),
        ("Check again: which files are there?", [call("list_files")], "Still a.txt and b.txt."),
    ),
    task(
        "read_again_next_question_after_write",
        FILES,
        World(files=dict(AB)),
        World(files={**AB, "d.txt": "delta"}),
        ("Which files are there?", [call("list_files")], "a.txt and b.txt"),
        (
            "Add d.txt with 'delta', then list the files again.",
            [call("write_file", path="d.txt", content="delta"), call("list_files")],
            "a.txt, b.txt and d.txt",
        ),
    ),
    task(
        "todos_across_questions",
        TODOS,
        World(todos=[{"id": 1, "title": "pay rent", "done": False}]),
        World(
            todos=[
                {"id": 1, "title": "pay rent", "done": True},
                {"id": 2, "title": "buy milk", "done": False},
            ]
        ),
        (
            "Add 'buy milk' to my todos.",
            [call("list_todos"), call("add_todo", title="buy milk")],
            "Added 'buy milk' (todo 2).",
        ),
        (
            "I paid the rent. What is still open?",
            [call("list_todos"), call("complete_todo", todo_id=1), call("list_todos")],
            "buy milk",
        ),
    ),
    task(
        "tool_returns_none",
        FILES,
        World(files={**AB, "old.txt": "stale"}),
        World(files=dict(AB)),
        (
            "Remove old.txt and list the files.",
            [call("delete_file", path="old.txt"), call("list_files")],
            "a.txt and b.txt",
        ),
    ),
    task(
        "tool_returns_empty_string",
        ("read_file", "grep"),
        World(files={"app.log": "INFO start\nINFO stop\n"}),
        World(files={"app.log": "INFO start\nINFO stop\n"}),
        (
            "Are there warnings in app.log?",
            [call("grep", path="app.log", text="WARN")],
            "No warnings.",
        ),
    ),
    task(
        "tool_returns_empty_list",
        FILES,
        World(files=dict(AB)),
        World(files=dict(AB)),
        (
            "Does any file mention omega?",
            [call("search_files", text="omega")],
            "No file mentions omega.",
        ),
    ),
    task(
        "tool_returns_dict",
        ("read_file", "file_stats"),
        World(files={"poem.txt": "one\ntwo\nthree\n"}),
        World(files={"poem.txt": "one\ntwo\nthree\n"}),
        ("How many lines has poem.txt?", [call("file_stats", path="poem.txt")], "3"),
    ),
    task(
        "tool_returns_content_blocks",
        CHAT,
        World(channels={"ops": ["disk at 91%", "disk at 97%"]}),
        World(channels={"ops": ["disk at 91%", "disk at 97%"]}),
        (
            "What is the latest disk reading in #ops?",
            [call("read_channel", channel="ops")],
            "97%",
        ),
    ),
    task(
        "tool_returns_no_blocks",
        CHAT,
        World(channels={"quiet": []}),
        World(channels={"quiet": ["anyone here?"]}),
        (
            "If #quiet is empty, ask whether anyone is there.",
            [
                call("read_channel", channel="quiet"),
                call("send_message", channel="quiet", text="anyone here?"),
            ],
            "It was empty; I asked.",
        ),
    ),
    task(
        "artifact_read_twice",
        STOCK,
        World(stock={"apples": 12}),
        World(stock={"apples": 12}),
        (
            "How many apples are in stock? Double-check.",
            [call("stock_level", item="apples"), call("stock_level", item="apples")],
            "12",
        ),
    ),
    task(
        "tool_message_with_artifact",
        STOCK,
        World(stock={"pears": 10}),
        World(stock={"pears": 4}),
        (
            "Reserve 3 pears twice, one order after the other, and check the stock.",
            [
                call("stock_level", item="pears"),
                call("reserve", item="pears", count=3),
                call("stock_level", item="pears"),
                call("reserve", item="pears", count=3),
                call("stock_level", item="pears"),
            ],
            "4 pears left.",
        ),
    ),
    task(
        "long_result",
        ("read_file", "grep"),
        World(files={"server.log": SERVER_LOG}),
        World(files={"server.log": SERVER_LOG}),
        (
            "What went wrong at the end of server.log?",
            [call("read_file", path="server.log")],
            "The disk is full.",
        ),
    ),
    task(
        "chinese_text",
        (*FILES, *CHAT),
        World(files={"会议.txt": "会议改到周五下午三点。"}, channels={"公告": []}),
        World(
            files={"会议.txt": "会议改到周五下午三点。"},
            channels={"公告": ["会议改到周五下午三点。"]},
        ),
        (
            "把会议通知发到公告频道。",
            [
                call("read_file", path="会议.txt"),
                call("send_message", channel="公告", text="会议改到周五下午三点。"),
                call("read_channel", channel="公告"),
            ],
            "已发送：会议改到周五下午三点。",
        ),
    ),
    task(
        "three_empty_then_found",
        (*FILES, "grep"),
        World(files={"faq.md": "Refunds take 5 days.\nShipping is free."}),
        World(files={"faq.md": "Refunds take 5 days.\nShipping is free."}),
        (
            "How long do refunds take?",
            [
                call("search_files", text="refund policy"),
                call("grep", path="faq.md", text="Return"),
                call("search_files", text="money back"),
                call("search_files", text="Refunds"),
                call("grep", path="faq.md", text="Refunds"),
            ],
            "5 days",
        ),
    ),
    task(
        "repeated_reads_between_writes",
        CHAT,
        World(channels={"ops": ["rotate keys"], **{f"team{n}": [] for n in range(1, 6)}}),
        World(
            channels={"ops": ["rotate keys"], **{f"team{n}": ["rotate keys"] for n in range(1, 6)}}
        ),
        (
            "Forward the instruction in #ops to team1 … team5, checking it before each post.",
            [
                step
                for n in range(1, 6)
                for step in (
                    call("read_channel", channel="ops"),
                    call("send_message", channel=f"team{n}", text="rotate keys"),
                )
            ],
            "Forwarded to all five teams.",
        ),
    ),
    task(
        "stateful_read_after_failed_read",
        FILES,
        World(files={}),
        World(files={"todo.txt": "call Ann"}),
        (
            "Make sure todo.txt says 'call Ann' and show it.",
            [
                call("read_file", path="todo.txt"),
                call("write_file", path="todo.txt", content="call Ann"),
                call("read_file", path="todo.txt"),
            ],
            "todo.txt: call Ann",
        ),
    ),
    task(
        "rewrite_keeps_same_listing",
        FILES,
        World(files=dict(AB)),
        World(files={"a.txt": "ALPHA", "b.txt": "beta"}),
        (
            "Upper-case a.txt and check nothing else changed.",
            [
                call("list_files"),
                call("read_file", path="a.txt"),
                call("write_file", path="a.txt", content="ALPHA"),
                call("list_files"),
                call("read_file", path="a.txt"),
            ],
            "a.txt now says ALPHA; the files are unchanged.",
        ),
    ),
    task(
        "many_steps",
        FILES,
        World(files={f"part{n}.txt": str(n) for n in range(1, 13)}),
        World(files={f"part{n}.txt": str(n) for n in range(1, 13)}),
        (
            "Add up the numbers in all the part files.",
            [call("list_files"), *(call("read_file", path=f"part{n}.txt") for n in range(1, 13))],
            "78",
        ),
    ),
    task(
        "short_numeric_answer",
        ("calculator",),
        World(),
        World(),
        ("What is 23*17+4?", [call("calculator", expression="23*17+4")], "395"),
    ),
    task(
        "calculation_checked_twice",
        ("calculator",),
        World(),
        World(),
        (
            "What is 23*17+4? Check it twice.",
            [call("calculator", expression="23*17+4"), call("calculator", expression="23*17+4")],
            "395",
        ),
    ),
    task(
        "empty_final_answer",
        FILES,
        World(files={**AB, "tmp.txt": "x"}),
        World(files=dict(AB)),
        (
            "Delete tmp.txt. Reply with nothing at all.",
            [call("list_files"), call("delete_file", path="tmp.txt")],
            "",
        ),
    ),
    task(
        "text_beside_calls_and_parallel_reads",
        FILES,
        World(files=dict(AB)),
        World(files={**AB, "ab.txt": "alphabeta"}),
        (
            "Join a.txt and b.txt into ab.txt.",
            [
                turn(
                    ("read_file", {"path": "a.txt"}),
                    ("read_file", {"path": "b.txt"}),
                    say="I will read both files first.",
                ),
                call("write_file", path="ab.txt", content="alphabeta"),
                call("read_file", path="ab.txt"),
            ],
            "ab.txt holds alphabeta.",
        ),
    ),
]
"""The suite, in the order the report lists it."""
