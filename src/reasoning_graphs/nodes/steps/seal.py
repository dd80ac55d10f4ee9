"""A person's decision, sealed so that no write to the thread's state can forge one.

The state of a thread can be written by anyone who can reach the thread
(``update_state``, the server's state route, a ``Command`` update), and the
approval protocol must not rest on it. So when the approve step applies a
person's answer it seals the call it clears: an HMAC-SHA256, with a key only
this deployment holds, over the thread, the call id, the tool and the exact
arguments that will run. The step that runs a tool (:func:`unapproved`) runs a
call that needs a person only when it carries a valid seal for exactly that
call; anything else — a forged ``to_run``, a forged ``Send`` to ``act``, an
approval copied from another thread, arguments changed after the decision — is
answered as refused and never runs.

The key: ``$REASONING_GRAPHS_SECRET`` when set (every process of one deployment
must share it, e.g. several servers behind one database); otherwise a random key
written on first use, readable by its owner only (mode 0600), in the user's data
directory (``$REASONING_GRAPHS_SECRET_FILE`` names another file).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping, Sequence, Set
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.runnables import ensure_config
from langgraph.config import get_config
from typing_extensions import TypedDict

from reasoning_graphs.effects import Body
from reasoning_graphs.history import Fold, folded
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.steps.call_request import CallOutcome, CallRequest, Next
from reasoning_graphs.state import ClearedCall
from reasoning_graphs.tools.output import ToolResult

SECRET_ENV = "REASONING_GRAPHS_SECRET"
SECRET_FILE_ENV = "REASONING_GRAPHS_SECRET_FILE"
PERSON_DECISIONS = frozenset({"approved", "edited"})

NOT_APPROVED = (
    "Not run: {name!r} needs a person's approval, and this call carries no valid approval "
    "for exactly these arguments on this thread. Propose it again to have it put to a person."
)


def seal(call: ClearedCall) -> str:
    """The seal of ``call`` as a person cleared it, on the current run's thread.

    It covers the decision's own nonce too, so a later approval of the very same call
    (same id and arguments, a new question) is a new seal, not a spent one.
    """
    payload = json.dumps(
        [_thread_id(), call["id"], call["name"], call["args"], call["decision"], call["nonce"]],
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hmac.new(_key(), payload.encode(), hashlib.sha256).hexdigest()


def sealed(call: ClearedCall) -> ClearedCall:
    """``call`` with its seal when a person cleared it (a call cleared by policy has none)."""
    if call["decision"] not in PERSON_DECISIONS:
        return call
    fresh = ClearedCall(**{**call, "nonce": secrets.token_hex(8)})
    return ClearedCall(**{**fresh, "seal": seal(fresh)})


class Proof(TypedDict, total=False):
    """A person's clearance of one call: the nonce and the seal over it."""

    nonce: str
    seal: str


def proof(holder: Mapping[str, Any]) -> Proof:
    """The nonce and seal ``holder`` (a cleared call, or a record that keeps its clearance)
    carries; empty for a call no person cleared."""
    found: Proof = {}
    if "nonce" in holder:
        found["nonce"] = holder["nonce"]
    if "seal" in holder:
        found["seal"] = holder["seal"]
    return found


def unapproved(call: ClearedCall, needs_person: bool) -> str | None:
    """Why ``call`` may not run: it needs a person (``needs_person``: the policy's answer for
    it where it runs, a ``when`` setting asked again, so a call it let through at triage runs
    only if it still does) and has no valid seal; ``None`` if it may."""
    name = call["name"]
    if not needs_person:
        return None
    given = call.get("seal")
    if (
        call["decision"] in PERSON_DECISIONS
        and isinstance(given, str)
        and isinstance(call.get("nonce"), str)
        and hmac.compare_digest(given, seal(call))
    ):
        return None
    return NOT_APPROVED.format(name=name)


def sealed_only(request: CallRequest, then: Next) -> Body[CallOutcome]:
    """The chain's first link: a call that needs a person runs only with a valid seal of
    their decision (:func:`unapproved`); any other is answered as refused, and blocked."""
    refused = unapproved(request.call, request.needs_person)
    if refused is not None:
        return CallOutcome(ToolResult(refused, "error", 0.0), "blocked")
    return (yield from then(request))


def _add_seal(seals: set[str], event: Any) -> set[str]:
    if event.get("kind") == "action" and event.get("seal"):
        seals.add(event["seal"])
    return seals


SPENT = Fold("spent seals", set, _add_seal)


def spent_seals(trajectory: Sequence[Any] | None) -> Set[str]:
    """Approvals already used by a call that ran (read only): one approval runs one call,
    even when a client removes that call's observation from the conversation."""
    return folded(trajectory or [], SPENT)


def _thread_id() -> str:
    try:
        config = get_config()
    except RuntimeError:  # outside a run: no thread
        config = ensure_config()
    return str(config.get("configurable", {}).get("thread_id", ""))


@cache
def _key() -> bytes:
    """The deployment's key: from the environment, else from (or into) the key file."""
    secret = os.environ.get(SECRET_ENV)
    if secret:
        return secret.encode()
    return _key_file(Path(os.environ.get(SECRET_FILE_ENV) or _default_key_path()))


def _default_key_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("reasoning-graphs")) / "approval.key"


def _key_file(path: Path) -> bytes:
    """Read the key at ``path``, making it first (0600, never overwritten) if there is none.

    The new key is written to a private file and linked into place, so a process that
    races this one reads either no file or a whole key.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_hex(32))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # another process made it first: use theirs
        finally:
            draft.unlink()
    return path.read_text().strip().encode()


own_texts(NOT_APPROVED)
