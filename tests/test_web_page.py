"""The page at ``/page/``, driven in a real Chromium against a real ``langgraph dev``.

The server runs the scripted graphs of ``tests/browser_app``; Playwright drives Debian's
Chromium headless (``/usr/bin/chromium``). Without a browser these tests are skipped,
unless ``REASONING_GRAPHS_REQUIRE_BROWSER`` is set (CI sets it), which makes a missing
browser a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.dev_server import REPO, DevServer, dev_server

pytestmark = pytest.mark.server

BROWSER_CONFIG = REPO / "tests" / "browser_app" / "langgraph.json"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRE_ENV = "REASONING_GRAPHS_REQUIRE_BROWSER"
SCREENSHOT_ENV = "REASONING_GRAPHS_SCREENSHOT"
"""A file to save the approval view's screenshot in (the picture on the docs' server page)."""
WAIT_MS = 20_000

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - the test extra brings it
    sync_playwright = None  # type: ignore[assignment]

if sync_playwright is None or not Path(CHROMIUM).exists():
    if os.environ.get(REQUIRE_ENV):
        raise RuntimeError(f"{REQUIRE_ENV} is set, but Playwright or {CHROMIUM} is missing")
    pytest.skip("needs Playwright and Chromium (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with dev_server(BROWSER_CONFIG, tmp_path_factory.mktemp("browser_server")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"], headless=True
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, server: DevServer) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    requests: list[str] = []
    opened.on("request", lambda request: requests.append(request.url))
    opened.goto(f"{server.url}/page/")
    expect(opened.locator("#pattern option").first).to_be_attached(timeout=WAIT_MS)
    yield opened
    # the page asks nothing of anyone but the server that served it
    assert all(url.startswith(server.url) for url in requests), requests
    context.close()


def ask(page: Page, pattern: str, question: str, options: dict[str, str] | None = None) -> None:
    page.select_option("#pattern", pattern)
    page.fill("#question", question)
    if options:
        page.click("#options summary")
        for name, value in options.items():
            page.fill(f'[data-option="{name}"]', value)
    page.click("#ask-button")


def panel_for(page: Page, tool: str = "write_file") -> Any:
    panel = page.locator('form[data-panel="approval"]')
    expect(panel).to_be_visible(timeout=WAIT_MS)
    expect(panel.locator(f'.call[data-tool="{tool}"]').first).to_be_visible()
    return panel


def decide(call: Any, kind: str) -> None:
    call.locator(f'input[type=radio][value="{kind}"]').check()


def answered(page: Page) -> Any:
    answer = page.locator("[data-answer]")
    expect(answer).to_be_visible(timeout=WAIT_MS)
    return answer


def test_the_page_and_its_files_come_with_a_policy_that_allows_only_the_server(
    server: DevServer,
) -> None:
    for name in ("", "app.js", "render.js", "forms.js", "style.css"):
        with urllib.request.urlopen(f"{server.url}/page/{name}") as response:
            policy = response.headers["Content-Security-Policy"]
            assert "script-src 'self'" in policy
            assert "connect-src 'self'" in policy
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{server.url}/page/..%2Fpage.py")
    assert missing.value.code == 404


def test_an_approved_call_runs_and_the_answer_shows(page: Page, server: DevServer) -> None:
    ask(page, "writer", "Write hello to note.txt")
    panel = panel_for(page)
    if os.environ.get(SCREENSHOT_ENV):
        page.screenshot(path=os.environ[SCREENSHOT_ENV], full_page=True)
    assert not (server.workspace / "note.txt").exists()  # nothing runs before the decision

    decide(panel.locator(".call").first, "approve")
    panel.locator("button[type=submit]").click()

    expect(answered(page)).to_have_text("Written.")
    expect(page.locator('[data-kind="action"]')).to_contain_text("write_file")
    assert "hello" in [path.read_text() for path in server.workspace.rglob("note.txt")]


def test_an_edit_runs_with_the_edited_argument(page: Page, server: DevServer) -> None:
    ask(page, "writer", "Write hello to note.txt")
    call = panel_for(page).locator(".call").first
    decide(call, "edit")
    content = call.locator('[data-arg="content"]')
    expect(content).to_have_value("hello")
    content.fill("edited in the browser")
    page.locator('form[data-panel="approval"] button[type=submit]').click()

    expect(answered(page)).to_have_text("Written.")
    expect(page.locator('[data-kind="action"]')).to_contain_text("edited in the browser")
    written = [path.read_text() for path in server.workspace.rglob("note.txt")]
    assert "edited in the browser" in written


def test_a_rejection_with_a_reason_runs_nothing_and_the_model_sees_why(
    page: Page, server: DevServer
) -> None:
    before = {path.stat().st_mtime_ns for path in server.workspace.rglob("note.txt")}
    ask(page, "writer", "Write hello to note.txt")
    call = panel_for(page).locator(".call").first
    decide(call, "reject")
    call.locator('[data-field="reason"]').fill("not today")
    page.locator('form[data-panel="approval"] button[type=submit]').click()

    answered(page)
    expect(page.locator('[data-kind="not-run"]')).to_contain_text("not today")
    expect(page.locator('[data-kind="action"]')).to_have_count(0)
    assert {path.stat().st_mtime_ns for path in server.workspace.rglob("note.txt")} == before


def test_a_response_takes_the_place_of_the_tools_result(page: Page, server: DevServer) -> None:
    ask(page, "writer", "Write hello to note.txt")
    call = panel_for(page).locator(".call").first
    decide(call, "respond")
    submit = page.locator('form[data-panel="approval"] button[type=submit]')
    expect(submit).to_be_disabled()  # a response needs its text
    call.locator('[data-field="content"]').fill("the disk is full")
    submit.click()

    answered(page)
    expect(page.locator('[data-kind="not-run"]')).to_contain_text("the disk is full")
    expect(page.locator('[data-kind="action"]')).to_have_count(0)


def test_a_two_call_turn_is_decided_call_by_call(page: Page, server: DevServer) -> None:
    ask(page, "pair", "Write both files")
    panel = panel_for(page)
    calls = panel.locator(".call")
    expect(calls).to_have_count(2)
    submit = panel.locator("button[type=submit]")
    decide(calls.nth(0), "approve")
    expect(submit).to_be_disabled()  # the second call is not decided yet
    decide(calls.nth(1), "reject")
    calls.nth(1).locator('[data-field="reason"]').fill("only the first")
    submit.click()

    expect(answered(page)).to_have_text("Both are handled.")
    assert [path.read_text() for path in server.workspace.rglob("a.txt")] == ["first"]
    assert not list(server.workspace.rglob("b.txt"))
    expect(page.locator('[data-kind="not-run"]')).to_contain_text("only the first")


def test_hostile_text_is_shown_as_text_and_runs_nothing(page: Page) -> None:
    ask(page, "hostile", "What does the note say?")
    answer = answered(page)

    expect(page.locator('[data-kind="observation"]')).to_contain_text("<img src=x")
    expect(answer).to_contain_text("javascript:window.__pwned=2")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#thread img, #thread script, #thread a, #thread b").count() == 0


def test_an_option_the_graph_does_not_take_is_refused_with_the_servers_reason(
    page: Page,
) -> None:
    ask(page, "writer", "Write hello", {"max_model_calls": "0"})
    error = page.locator("#ask-error")
    expect(error).to_contain_text("max_model_calls", timeout=WAIT_MS)
    expect(error).to_contain_text("Refused")
    page.fill('[data-option="max_model_calls"]', "")

    page.fill("#extra-options", '{"max_step": 3}')
    page.click("#ask-button")
    expect(error).to_contain_text("max_step", timeout=WAIT_MS)


def test_a_plan_streams_its_steps_and_the_budget_spent(page: Page) -> None:
    ask(page, "plan_execute", "What is 6*7+1?")

    expect(answered(page)).to_have_text("43")
    expect(page.locator('[data-kind="plan"]').first).to_contain_text("Compute 6*7.")
    expect(page.locator('[data-kind="action"]')).to_have_count(2)
    expect(page.locator(".spent")).to_contain_text("model calls")


def test_a_compiled_plan_shows_its_tasks_times_and_the_join_asking_for_another_round(
    page: Page,
) -> None:
    ask(page, "llm_compiler", "What is 6*7+4?")

    expect(answered(page)).to_have_text("46")
    expect(page.locator('[data-kind="plan"]')).to_have_count(2)
    expect(page.locator('[data-kind="join"]')).to_contain_text("one more sum is needed")
    observations = page.locator('[data-kind="observation"]')
    expect(observations).to_have_count(3)
    expect(observations.first).to_contain_text(re.compile(r"\(\d+ ms\)"))


def test_threads_show_their_status_and_reopen_with_their_steps(page: Page) -> None:
    ask(page, "writer", "Write hello to note.txt")
    panel_for(page)
    page.reload()
    waiting = page.locator('#threads [data-status="waiting"]').first
    expect(waiting).to_be_visible(timeout=WAIT_MS)
    waiting.click()

    panel = panel_for(page)
    expect(page.locator(".spent")).to_contain_text("1 model call,")  # counted once on reopening
    decide(panel.locator(".call").first, "approve")
    panel.locator("button[type=submit]").click()
    answered(page)
    expect(page.locator("#threads [data-status]").first).not_to_have_attribute(
        "data-status", "waiting", timeout=WAIT_MS
    )


AUTH_CONFIG = REPO / "tests" / "browser_auth_app" / "langgraph.json"


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """The ``writer`` graph behind LangGraph auth: a bearer token per user, each user's
    threads their own (tests/browser_auth_app)."""
    with dev_server(AUTH_CONFIG, tmp_path_factory.mktemp("auth_server")) as running:
        yield running


def signed_in(browser: Browser, server: DevServer, token: str) -> Page:
    opened = browser.new_context().new_page()
    opened.goto(f"{server.url}/page/")
    form = opened.locator("#auth")
    expect(form).to_be_visible(timeout=WAIT_MS)  # the server asked who this is
    expect(opened.locator("#pattern option")).to_have_count(0)
    opened.fill("#token", token)
    opened.click("#auth button[type=submit]")
    expect(opened.locator("#pattern option").first).to_be_attached(timeout=WAIT_MS)
    return opened


def test_behind_auth_the_page_asks_who_you_are_and_shows_only_your_threads(
    browser: Browser, auth_server: DevServer
) -> None:
    alice = signed_in(browser, auth_server, "alice-token")
    ask(alice, "writer", "Write hello to note.txt")
    panel_for(alice)
    alice.click("#refresh")
    expect(alice.locator("#threads li")).to_have_count(1, timeout=WAIT_MS)

    bob = signed_in(browser, auth_server, "bob-token")
    bob.click("#refresh")
    expect(bob.locator("#threads li")).to_have_count(0)

    wrong = browser.new_context().new_page()
    wrong.goto(f"{auth_server.url}/page/")
    wrong.fill("#token", "mallory-token")
    wrong.click("#auth button[type=submit]")
    expect(wrong.locator("#auth-note")).to_contain_text("refused", timeout=WAIT_MS)
    expect(wrong.locator("#threads li")).to_have_count(0)


def test_an_edit_that_does_not_fit_the_tool_is_refused_with_why_and_asked_again(
    page: Page,
) -> None:
    ask(page, "payer", "Pay Ann 5")
    call = panel_for(page, "pay").locator(".call").first
    decide(call, "edit")
    call.locator('[data-arg="amount"]').fill("lots")
    page.locator('form[data-panel="approval"] button[type=submit]').click()

    error = page.locator('form[data-panel="approval"] .error')
    expect(error).to_contain_text("amount", timeout=WAIT_MS)
    call = panel_for(page, "pay").locator(".call").first
    decide(call, "edit")
    call.locator('[data-arg="amount"]').fill("7")
    page.locator('form[data-panel="approval"] button[type=submit]').click()

    expect(answered(page)).to_have_text("Paid.")
    expect(page.locator('[data-kind="observation"]')).to_contain_text("paid 7 to Ann")


def test_a_tools_own_question_is_answered_on_the_page(page: Page) -> None:
    ask(page, "asker", "What colour?")
    panel = page.locator('form[data-panel="question"]')
    expect(panel).to_contain_text("Which colour do you like best?", timeout=WAIT_MS)
    panel.locator("textarea").fill("green")
    panel.locator("button[type=submit]").click()

    expect(answered(page)).to_have_text("Noted.")
    expect(page.locator('[data-kind="observation"]')).to_contain_text("The person said: green")


def paid_lines(server: DevServer) -> list[str]:
    payments = server.workspace / "payments.log"
    return payments.read_text().splitlines() if payments.exists() else []


def approved_slow_payment(page: Page, server: DevServer) -> int:
    """Ask ``slow_payer`` to pay, approve, and return once the payment is made and its call
    still runs (it waits for a ``release``); the number of payments made so far."""
    before = len(paid_lines(server))
    ask(page, "slow_payer", "Pay Ann 5")
    panel = panel_for(page, "slow_pay")
    expect(panel.locator(".possibly-ran")).to_have_count(0)
    decide(panel.locator(".call").first, "approve")
    panel.locator("button[type=submit]").click()
    expect(page.locator("[data-stop]")).to_be_enabled(timeout=WAIT_MS)
    deadline = time.monotonic() + WAIT_MS / 1000
    while len(paid_lines(server)) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert paid_lines(server)[before:] == ["paid 5 to Ann"]
    return before + 1


def test_a_call_stopped_after_it_started_is_flagged_and_never_run_again_unseen(
    page: Page, server: DevServer
) -> None:
    """Stop a run while its approved payment runs: on Continue the payment is put to the
    person again, marked as possibly run, and their rejection runs nothing more."""
    made = approved_slow_payment(page, server)

    page.click("[data-stop]")
    expect(page.locator('[data-outcome="stopped"]')).to_be_visible(timeout=WAIT_MS)
    expect(page.locator('#threads [data-status="stopped"]').first).to_be_visible()
    (server.workspace / "release").touch()  # the cut-off call's thread may end now
    page.click("[data-continue]")

    call = panel_for(page, "slow_pay").locator(".call").first
    expect(call.locator(".possibly-ran")).to_be_visible()
    expect(call.locator('input[type=radio][value="edit"]')).to_have_count(0)
    decide(call, "reject")
    call.locator('[data-field="reason"]').fill("it went through")
    page.locator('form[data-panel="approval"] button[type=submit]').click()

    expect(answered(page)).to_have_text("Paid.")
    expect(page.locator('[data-kind="not-run"]')).to_contain_text("it went through")
    assert len(paid_lines(server)) == made


def test_a_second_page_joins_a_running_thread_and_sees_it_end(
    browser: Browser, page: Page, server: DevServer
) -> None:
    made = approved_slow_payment(page, server)
    other = browser.new_context().new_page()
    other.goto(f"{server.url}/page/")
    running = other.locator('#threads [data-status="running"]').first
    expect(running).to_be_visible(timeout=WAIT_MS)
    running.click()
    expect(other.locator("[data-stop]")).to_be_enabled(timeout=WAIT_MS)  # it may stop it too

    (server.workspace / "release").touch()

    for seen in (page, other):
        expect(answered(seen)).to_have_text("Paid.")
        expect(seen.locator('[data-kind="observation"]')).to_contain_text("paid 5 to Ann")
    assert len(paid_lines(server)) == made
    other.context.close()


@pytest.mark.parametrize(
    ("graph", "answer"),
    [
        ("slow_planner", "Not paid."),
        ("slow_in_context", "I give up."),
        ("slow_trial", "I give up."),
    ],
)
def test_a_step_stopped_after_its_question_was_answered_asks_nothing_more(
    page: Page, server: DevServer, graph: str, answer: str
) -> None:
    """A rejected payment, then the run is stopped while the step goes on (a slow lookup):
    the thread is stopped, not waiting, and nothing is asked again (a plan step or a trial
    is one task of its graph until it ends, so the graph still lists the answered
    question)."""
    (server.workspace / "news").unlink(missing_ok=True)
    ask(page, graph, "Pay Ann 5")
    panel = panel_for(page, "pay")
    decide(panel.locator(".call").first, "reject")
    panel.locator('[data-field="reason"]').fill("not today")
    panel.locator("button[type=submit]").click()
    expect(page.locator("[data-stop]")).to_be_enabled(timeout=WAIT_MS)

    page.click("[data-stop]")

    expect(page.locator('[data-outcome="stopped"]')).to_be_visible(timeout=WAIT_MS)
    expect(page.locator('form[data-panel="approval"]')).to_have_count(0)
    page.reload()
    expect(page.locator('#threads [data-status="stopped"]').first).to_be_visible(timeout=WAIT_MS)
    expect(page.locator('#threads [data-status="waiting"]')).to_have_count(0)
    page.locator('#threads [data-status="stopped"]').first.click()
    expect(page.locator("[data-continue]")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator('form[data-panel="approval"]')).to_have_count(0)
    (server.workspace / "news").touch()
    page.click("[data-continue]")
    expect(answered(page)).to_have_text(answer)
