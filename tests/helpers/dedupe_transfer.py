import sqlite3
from typing import Annotated

from langchain_core.tools import InjectedToolCallId

from reasoning_graphs.tools.spec import tool_spec

bank = sqlite3.connect("bank.db", check_same_thread=False)  # tools run on worker threads
bank.execute("CREATE TABLE IF NOT EXISTS payments (call_id TEXT PRIMARY KEY, amount, payee)")


def transfer(amount: int, to: str, call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Send money to an account."""
    with bank:  # a payment is one row, keyed by the call that made it
        paid = bank.execute(
            "INSERT OR IGNORE INTO payments VALUES (?, ?, ?)", (call_id, amount, to)
        )
    if paid.rowcount == 0:  # this very call paid before a crash: do not pay twice
        return f"already sent {amount} to {to}"
    return f"sent {amount} to {to}"


tools = [tool_spec(transfer, idempotent=True)]  # it dedupes by its call id: safe to run again
