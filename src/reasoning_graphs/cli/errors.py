"""The error every command part raises for bad input: one line for the user, exit code 2."""


class UsageError(Exception):
    """A bad command line, pattern, model, thread or decision: one line, exit code 2."""
