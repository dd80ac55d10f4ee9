"""LangChain's own agent-middleware tests, run against our patterns (see :mod:`.run`)."""
