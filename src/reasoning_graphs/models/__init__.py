"""Chat-model resolution: any LangChain provider, the embedded local model, or your own."""

from reasoning_graphs.models.resolve import (
    ModelSpecError,
    check_available,
    default_model_spec,
    resolve_model,
)

__all__ = ["ModelSpecError", "check_available", "default_model_spec", "resolve_model"]
