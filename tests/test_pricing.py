"""Prices for the openai backend come from litellm's bundled price map, read as a file."""

from __future__ import annotations

import subprocess
import sys

from skillchat.engine.events import Usage
from skillchat.engine.pricing import price


def test_known_openai_model_is_priced_from_the_bundled_map() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, total_tokens=2_000_000)
    cost = price("gpt-4o-mini", usage)
    assert cost is not None and 0 < cost < 100
    assert price("openai/gpt-4o-mini", usage) == cost
    half = price("gpt-4o-mini", Usage(prompt_tokens=500_000, completion_tokens=500_000))
    assert half is not None and abs(half * 2 - cost) < 1e-9


def test_unknown_model_has_no_price() -> None:
    assert price("my-local-llama", Usage(prompt_tokens=10, completion_tokens=10)) is None


def test_pricing_does_not_import_litellm() -> None:
    code = (
        "import sys\n"
        "from skillchat.engine.events import Usage\n"
        "from skillchat.engine.pricing import price\n"
        "assert price('gpt-4o-mini', Usage(1, 1, 2)) is not None\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
