"""Model clients: `make_model("anthropic/claude-sonnet-4-5")` and friends.

Specs: `anthropic/<model>` (official SDK), `openai/<model>` (any OpenAI-compatible chat API),
`script/<path>` (a JSON/JSONL file of scripted turns) and `replay/<run-dir>` (a recorded run).
"""

from __future__ import annotations

import os

from harness.kernel import secrets
from harness.kernel.core import Model, StateActError

from .config import MIN_THINKING_BUDGET, ModelConfig

ENDPOINT_PROVIDERS = ("anthropic", "openai")
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def endpoint_provider(spec: str | None) -> str | None:
    """The provider of `spec` when it calls an API endpoint (anthropic, openai), else None."""
    provider = (spec or "").partition("/")[0].strip().lower()
    return provider if provider in ENDPOINT_PROVIDERS else None


PROVIDERS = ("anthropic", "openai", "script", "replay")


def make_model(spec: str, config: ModelConfig | None = None) -> Model:
    """Build the model a `PROVIDER/NAME` spec names."""
    config = config or ModelConfig()
    provider, sep, name = (spec or "").partition("/")
    provider = provider.strip().lower()
    name = name.strip()
    if not sep or not provider or not name:
        raise StateActError(
            f"invalid model spec {spec!r}; use PROVIDER/NAME, for example "
            "anthropic/claude-sonnet-4-5"
        )
    if provider in ENDPOINT_PROVIDERS:
        config = config.for_provider(provider)
        secrets.remember(config.api_key or os.environ.get(KEY_VARIABLES[provider]))
        secrets.remember_headers(config.extra_headers)
    if provider == "anthropic":
        from harness.models.anthropic_model import AnthropicModel

        return AnthropicModel(name, config)
    if provider == "openai":
        from harness.models.openai_model import OpenAIModel

        return OpenAIModel(name, config)
    if provider == "script":
        from harness.models.scripted import ScriptedModel

        model = ScriptedModel.from_file(name)
        if config.context_window:
            model.context_window = config.context_window
        return model
    if provider == "replay":
        from harness.models.scripted import ReplayModel

        return ReplayModel(name)
    raise StateActError(f"unknown model provider {provider!r}; use one of {', '.join(PROVIDERS)}")


__all__ = ["MIN_THINKING_BUDGET", "ModelConfig", "endpoint_provider", "make_model", "PROVIDERS"]
