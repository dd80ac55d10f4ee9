"""LangGraph auth for the page's tests: two users, each seeing only their own threads.

A request names its user by a bearer token; every thread a user makes is marked as
theirs, and every read of threads (and of their runs) is filtered to what is marked so.
The graphs' assistants are everyone's.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

TOKENS = {"alice-token": "alice", "bob-token": "bob"}

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    user = TOKENS.get(token)
    if scheme.lower() != "bearer" or user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown token.")
    return user


@auth.on.threads
async def own_only(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    mine = {"owner": ctx.user.identity}
    if isinstance(value, dict):
        metadata = value.get("metadata")
        if isinstance(metadata, dict):
            metadata.update(mine)
        elif "metadata" in value or ctx.action == "create":
            value["metadata"] = dict(mine)
    return mine
