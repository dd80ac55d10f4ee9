"""Every shell command and JSON block in the README and on the site is one we accept.

The Python snippets run in ``test_readme.py``. The commands mostly take minutes or need
what a test cannot give (a terminal, a network, Docker), and they run for real elsewhere:
the README's two in CI (``.ci/run``), ``langgraph dev`` in ``test_dev_server.py``,
llama.cpp's server in ``test_openai_server.py``. Here each is read as the tool it names
would read it, so a flag renamed or dropped, or an extra that is gone, fails here and not
in a reader's terminal:

- ``reasoning-graphs …`` by the CLI's own parser (a usage synopsis, with its brackets, for
  its flags);
- ``python benchmarks/….py …`` by the script's own parser, stopped once it has parsed;
- ``pip install ….[extras]`` against the extras the installed project declares;
- a JSON block by :func:`~reasoning_graphs.tools.mcp.read_servers` when it names MCP
  servers (their ``approve`` setting too), else by ``json.loads``;
- a YAML block (a Compose file) by PyYAML (LangChain's own dependency), each service
  naming its image.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import runpy
import shlex
import sys
from collections.abc import Iterator

import pytest
import yaml

from reasoning_graphs.cli.main import build_parser
from reasoning_graphs.tools.mcp import APPROVALS, read_servers
from tests.test_readme import ROOT, pages

SEPARATORS = {"&&", "||", ";", "|", "&"}
SYNOPSIS = re.compile(r"\[")
"""A command written as a usage synopsis (``[--pattern react]``) rather than to be run."""


def blocks(language: str) -> list[tuple[str, str]]:
    """Every ``language`` block of the README and the site's pages, with its page's name."""
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for body in re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S):
            found.append((page.name, body))
    return found


def commands() -> Iterator[tuple[str, list[str], str]]:
    """Each simple command of every shell block: its page, its words and its line."""
    for page, body in blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            if SYNOPSIS.search(line):  # prose in brackets: not for a shell to read
                yield page, line.split(), line
                continue
            words = shlex.split(line, comments=True)
            command: list[str] = []
            for word in [*words, ";"]:
                if word in SEPARATORS:
                    if command:
                        yield page, command, line
                    command = []
                else:
                    command.append(word)


def named(program: str) -> list[tuple[str, list[str], str]]:
    return [c for c in commands() if c[1][0] == program]


def ids(found: list[tuple[str, list[str], str]]) -> list[str]:
    return [f"{page}: {' '.join(words)[:60]}" for page, words, _ in found]


CLI = named("reasoning-graphs")
SCRIPTS = [c for c in named("python") if c[1][1].startswith("benchmarks/")]
INSTALLS = [c for c in named("pip") if c[1][1] == "install"]


def test_the_pages_hold_commands_of_every_kind() -> None:
    assert len(CLI) >= 5
    assert len(SCRIPTS) >= 3
    assert len(INSTALLS) >= 3
    assert blocks("json")


def options_of(command: str) -> set[str]:
    """The option strings ``reasoning-graphs <command>`` takes."""
    parser = build_parser()
    found = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    subparser = next(found).choices[command]
    return set(subparser._option_string_actions) | set(parser._option_string_actions)


@pytest.mark.parametrize(("page", "words", "line"), CLI, ids=ids(CLI))
def test_every_cli_command_is_one_the_cli_parses(page: str, words: list[str], line: str) -> None:
    if SYNOPSIS.search(line):
        flags = set(re.findall(r"--[a-z][a-z-]*", line))
        unknown = flags - options_of(words[1])
        assert not unknown, f"{page}: {sorted(unknown)}"
        return
    build_parser().parse_args(words[1:])  # a usage error raises


class Parsed(Exception):
    """Raised in place of running a script once its own parser has read the command."""


@pytest.mark.parametrize(("page", "words", "line"), SCRIPTS, ids=ids(SCRIPTS))
def test_every_benchmark_command_is_one_its_script_parses(
    page: str, words: list[str], line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        parse(self, *args, **kwargs)  # type: ignore[arg-type]
        raise Parsed

    script = ROOT / words[1]
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [str(script), *words[2:]])
    monkeypatch.syspath_prepend(str(script.parent))
    with pytest.raises(Parsed):  # a usage error exits with 2 instead
        runpy.run_path(str(script), run_name="__main__")


@pytest.mark.parametrize(("page", "words", "line"), INSTALLS, ids=ids(INSTALLS))
def test_every_install_names_extras_the_project_declares(
    page: str, words: list[str], line: str
) -> None:
    declared = importlib.metadata.metadata("reasoning-graphs").get_all("Provides-Extra") or []
    for word in words[2:]:
        for extras in re.findall(r"^\.\[([^\]]+)\]$", word):
            assert set(extras.split(",")) <= set(declared), f"{page}: {word}"


@pytest.mark.parametrize(("page", "body"), blocks("json"))
def test_every_json_block_reads(page: str, body: str) -> None:
    value = json.loads(body)
    if isinstance(value, dict) and "mcpServers" in value:
        assert read_servers(value)
        for entry in value["mcpServers"].values():
            assert entry.get("approve", APPROVALS[0]) in APPROVALS


@pytest.mark.parametrize(("page", "body"), blocks("yaml"))
def test_every_yaml_block_reads(page: str, body: str) -> None:
    services = yaml.safe_load(body)["services"]
    assert services
    assert all(service.get("image") for service in services.values()), page
