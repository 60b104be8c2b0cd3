"""A missing provider key is reported before any model library is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from skillchat.backend_table import missing_key


@pytest.mark.parametrize(
    ("model", "api_base", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", None, "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.5-pro", None, "GEMINI_API_KEY"),
        ("openrouter/meta/llama", None, "OPENROUTER_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "http://127.0.0.1:4000", None),  # a proxy
        ("ollama_chat/llama3.1", None, None),  # no key needed
        ("bedrock/anthropic.claude", None, None),  # other credentials
        ("openai/gpt-4.1", None, None),  # the openai backend says it itself
        ("claude-sonnet-4-5", None, None),  # no prefix: litellm decides
    ],
)
def test_missing_key(model: str, api_base: str | None, expected: str | None) -> None:
    assert missing_key(model, api_base) == expected


def test_a_set_key_is_not_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert missing_key("anthropic/claude-sonnet-4-5", None) is None


def test_ask_stops_at_once_without_importing_litellm() -> None:
    probe = (
        "import sys\nfrom skillchat.cli.app import run\n"
        "code = run(['ask', '--model', 'anthropic/claude-sonnet-4-5', 'hi'])\n"
        "print(code, 'litellm' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == "1 False"
    assert lines[0] == (
        "skillchat: error: ANTHROPIC_API_KEY is not set: export it or `skillchat keys set` it "
        "(or pass --api-base for a proxy that holds it), "
        "or run a model on this machine with no key: --local (or --gguf FILE)"
    )
