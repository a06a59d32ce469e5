"""How a model is called: `ModelConfig`, shared by every client."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from harness.kernel import secrets
from harness.kernel.core import StateActError

MIN_THINKING_BUDGET = 1024  # the Messages API's smallest `budget_tokens`


class ModelConfig(BaseModel):
    """How to call a model; every field has a sensible default."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_tokens: int = Field(8192, gt=0)
    """Most tokens the model may write in one turn."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default. OpenAI-compatible APIs only:
    Anthropic's Messages API refuses any, so an anthropic/ model with one set says so."""
    base_url: str | None = None
    """API endpoint; None uses ANTHROPIC_BASE_URL / OPENAI_BASE_URL or the provider's default."""
    api_key: str | None = Field(None, exclude=True)
    """API key; None uses ANTHROPIC_API_KEY / OPENAI_API_KEY. Never written to a run record."""
    provider: str | None = None
    """The provider `base_url`, `api_key` and `extra_headers` are for (the main model's); a model
    of another provider uses its own environment variables instead. None: any provider."""
    context_window: int | None = Field(None, gt=0)
    """Tokens the model can read; None means the model's known window."""
    max_retries: int = Field(6, ge=0)
    """Retries on rate limits, overloads and server errors before giving up."""
    timeout_s: float = Field(600.0, gt=0)
    """Seconds to wait for one API response."""
    prices: dict[str, float] = Field(default_factory=dict)
    """Price override in USD per million tokens: keys input, output, cache_read, cache_write."""
    thinking_budget: int | None = Field(None, gt=0)
    """Extended-thinking token budget (Anthropic); None turns thinking off."""
    adaptive_thinking: bool = False
    """Anthropic adaptive thinking (`{"type": "adaptive"}`; Claude 4.6 and later): the model decides
    how much to think. Takes precedence over `thinking_budget`."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers added to every request (auth-like values are [redacted] in run records)."""

    def with_thinking(self, setting: str) -> ModelConfig:
        """A copy with `--thinking adaptive|off|N` applied; StateActError names a bad value."""
        setting = str(setting).strip().lower()
        if setting == "adaptive":
            return self.model_copy(update={"adaptive_thinking": True, "thinking_budget": None})
        if setting == "off":
            return self.model_copy(update={"adaptive_thinking": False, "thinking_budget": None})
        if not setting.isdigit() or int(setting) < MIN_THINKING_BUDGET:
            raise StateActError(
                f"--thinking must be adaptive, off or a token budget of at least "
                f"{MIN_THINKING_BUDGET}, not {setting!r}."
            )
        return self.model_copy(update={"adaptive_thinking": False, "thinking_budget": int(setting)})

    @field_serializer("extra_headers")
    def _hide_auth_headers(self, headers: dict[str, str]) -> dict[str, str]:
        return secrets.redact_headers(headers)

    def for_provider(self, provider: str) -> ModelConfig:
        """These settings as a model of `provider` gets them: endpoint settings stay with their
        own."""
        if self.provider in (None, provider):
            return self
        return self.model_copy(update={"base_url": None, "api_key": None, "extra_headers": {}})
