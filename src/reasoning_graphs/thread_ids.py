"""Names made from a thread id, which a client chooses freely."""

from __future__ import annotations

import hashlib


def thread_digest(thread_id: str) -> str:
    """The SHA-256 hex digest of the exact id, lone surrogates included: no other thread id
    shares it, and any file system takes it as a name.

    Examples:
        >>> thread_digest("a/b") == thread_digest("a b")
        False
    """
    return hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()
