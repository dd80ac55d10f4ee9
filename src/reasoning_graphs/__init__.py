"""Classic LLM-agent reasoning patterns as LangGraph state machines."""

__version__ = "0.1.0"
