"""The `gemini` backend: Google's OpenAI-compatible endpoint, spoken by the openai
backend's code over wire.py (no LiteLLM, which takes seconds to import).

`gemini/<model>` goes to `https://generativelanguage.googleapis.com/v1beta/openai/`
as `<model>`, with `GEMINI_API_KEY` as its Bearer key (or to an `--api-base` that
serves the same API: a proxy, which may hold the key). Prices and windows are
litellm's map's entries for `gemini/<model>`.
"""

from __future__ import annotations

from skillchat.engine.backends.openai_backend import OpenAIBackend

GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/openai"


class GeminiBackend(OpenAIBackend):
    """Gemini's chat completions; everything but where and whose key is OpenAI's."""

    name = "gemini"
    url = GEMINI_URL
    key_env = "GEMINI_API_KEY"
    prefix = "gemini/"
    base_env = None
    own_fields = False  # max_tokens, and no prompt_cache_key (Gemini caches by itself)

    @property
    def priced_as(self) -> str:
        return f"gemini/{self.model}"
