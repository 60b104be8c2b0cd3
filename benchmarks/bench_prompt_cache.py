"""What prompt caching saves over a 10-round tool loop on Anthropic's backend.

Run: `python benchmarks/bench_prompt_cache.py [--rounds N] [--model anthropic/NAME]`.
Not part of pytest. One `Chat.send` in process, on the anthropic backend, against
tests/anthropic_server.py with its prompt cache on (as the API counts it: a request's
prefix up to a `cache_control` breakpoint that an earlier request wrote is read from
the cache; Sonnet's minimum of 1,024 tokens to cache a prefix). The catalog is the
real skills of `../shared/real-skills` (else the bundled ones); the model calls a tool
in each of N replies (get_skill and read_file_in_skill over those skills), then
answers.

Per round it prints the request's bytes, the bytes before its last breakpoint (what
is marked cacheable), and the input tokens the server reports as read from the cache
and written to it. Then the loop's cost at the model's prices (engine/pricing.py):
with caching, from those counts, and without, the same tokens all at the input price.
Tokens are the server's estimate (a block's JSON length / 4), the same for both costs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from anthropic_server import AnthropicServer, cache_blocks, call, reply  # noqa: E402

from skillchat.config import Settings  # noqa: E402
from skillchat.engine.events import Usage  # noqa: E402
from skillchat.engine.pricing import price  # noqa: E402
from skillchat.session import Session  # noqa: E402
from skillchat.skills.registry import Registry, discover  # noqa: E402

CORPUS = REPO.parent / "shared" / "real-skills"


def corpus(folder: Path) -> Registry:
    """The real skills (each SKILL.md's folder linked under one name), else the bundled."""
    found = sorted(CORPUS.glob("**/SKILL.md")) if CORPUS.is_dir() else []
    if not found:
        return discover([REPO / "skillchat" / "bundled_skills"])
    for n, skill_md in enumerate(found):
        (folder / f"{n:03d}-{skill_md.parent.name}").symlink_to(skill_md.parent)
    return discover([folder])


def moves(registry: Registry, rounds: int) -> list[dict[str, Any]]:
    names = registry.names()
    steps = []
    for i in range(rounds):
        name = names[(i * 7) % len(names)]
        step = (
            call("get_skill", {"skill_name": name})
            if i % 2 == 0
            else call("read_file_in_skill", {"skill_name": name, "file_path": "SKILL.md"})
        )
        steps.append(reply("Next.", calls=[step]))
    return [*steps, reply("Done: the answer.")]


def cacheable_bytes(body: dict[str, Any]) -> int:
    """Bytes of the request's blocks up to its last `cache_control` breakpoint."""
    blocks = cache_blocks(body)
    last = max((i for i, (_, marked) in enumerate(blocks) if marked), default=-1)
    return sum(len(json.dumps(block)) for block, _ in blocks[: last + 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--model", default="anthropic/claude-sonnet-4-5")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, AnthropicServer(prompt_cache=True) as server:
        server.cache_min_tokens = 1024
        registry = corpus(Path(tmp))
        server.script(*moves(registry, args.rounds))
        settings = Settings(
            model=args.model, api_base=server.base_url, max_retries=0, skill_dirs=()
        )
        result = Session(settings, registry=registry).send("Work through the skills.")
        bodies = [r.body for r in server.completions]
    print(f"{len(registry.skills)} skills; {len(bodies)} requests; model {args.model}")
    print("round  request B  cacheable B  read tok  written tok  input tok")
    for n, (body, usage) in enumerate(zip(bodies, server.usages, strict=True), 1):
        size = len(json.dumps(body))
        print(
            f"{n:5}  {size:9,}  {cacheable_bytes(body):11,}  "
            f"{usage['cache_read_input_tokens']:8,}  "
            f"{usage['cache_creation_input_tokens']:11,}  {usage['input_tokens']:9,}"
        )
    total = result.usage or Usage()
    cached = price(args.model, total)
    plain = price(args.model, replace(total, cached_tokens=0, cache_write_tokens=0))
    read = sum(u["cache_read_input_tokens"] for u in server.usages)
    print(f"input tokens {total.prompt_tokens:,}, of which read from cache {read:,} "
          f"({read / max(1, total.prompt_tokens):.0%})")  # fmt: skip
    if cached is None or plain is None:
        print(f"no prices known for {args.model}")
        return
    print(f"cost with caching ${cached:.4f}, without ${plain:.4f}: {cached / plain:.2f}x")


if __name__ == "__main__":
    main()
