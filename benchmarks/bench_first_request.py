"""Time from process start to the first request reaching the model server.

Run: `python benchmarks/bench_first_request.py [--runs N] [--llm PATH]`. Not part of
pytest: timings depend on the machine. Three commands ask the same question of the
same local server (tests/openai_server.py, in this process, so the request's arrival
and the process start are read from one monotonic clock):

- `skillchat ask` on the openai backend (the bundled skills dir, so discovery counts);
- `llm` (PyPI `llm`), pointed at the server through `extra-openai-models.yaml` in a
  temporary LLM_USER_PATH;
- `skillchat ask --backend litellm`;
- `skillchat ask --model anthropic/test-model` on Anthropic's Messages API, natively,
  against tests/anthropic_server.py (its time, CPU and peak RSS within 1.1x the
  openai row's);
- the raw SDK floor: a script that imports `openai` and sends the same streamed
  request with the client's generic `post` (what any openai-based CLI must do);
- the standard-library floor: the same request with `http.client` and `json` (what
  skillchat's own client, engine/backends/wire.py, is built on), read to its end.

Runs are interleaved (one of each, then again) so drift in machine load hits all
alike; medians and ratios are printed, with each whole process's CPU (user +
system). Targets: skillchat at most 1.03x the SDK floor's time to its request, its
CPU at least 10% below llm's, and at least 4x faster than the litellm backend; its
ratio to the standard-library floor is printed (what skillchat's own start costs
beyond a bare request: discovery, the catalog, the CLI).
`--before PATH` adds `skillchat ask` run from another checkout (PYTHONPATH=PATH); the
first row is the `skillchat` the venv imports (an editable install's checkout), so
run the script with `PYTHONPATH=` this checkout to time a worktree. `llm`
pins an openai SDK other than skillchat's, so install it in a venv of its own
(`python -m venv /tmp/llm-venv && /tmp/llm-venv/bin/pip install llm`) and pass
`--llm /tmp/llm-venv/bin/llm`; without it, llm is skipped.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from anthropic_server import AnthropicServer  # noqa: E402
from openai_server import ScriptedServer, reply  # noqa: E402

SKILLCHAT = Path(sys.executable).parent / "skillchat"
FLOOR = """import sys, httpx, openai
client = openai.OpenAI(base_url=sys.argv[1], api_key="sk-no-key", max_retries=0)
body = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}],
        "stream": True, "stream_options": {"include_usage": True}}
for line in client.post("/chat/completions", body=body, cast_to=httpx.Response,
                        stream=True).iter_lines():
    pass
"""

STDLIB_FLOOR = """import http.client, json, sys
from urllib.parse import urlsplit
url = urlsplit(sys.argv[1])
body = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}],
        "stream": True, "stream_options": {"include_usage": True}}
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
conn.request("POST", url.path + "/chat/completions", json.dumps(body).encode(),
             {"Content-Type": "application/json", "Authorization": "Bearer sk-no-key"})
response = conn.getresponse()
while response.read1(65536):
    pass
"""


def commands(
    base_url: str, llm: str | None, before: str | None = None, anthropic_url: str | None = None
) -> dict[str, list[str]]:
    ask = [
        str(SKILLCHAT),
        "ask",
        "--api-base",
        base_url,
        "--skills-dir",
        str(REPO / "skillchat" / "bundled_skills"),
    ]
    found = {
        "skillchat (openai)": [*ask, "--model", "openai/test-model", "hi"],
        "llm": [llm, "-m", "bench", "hi"] if llm else [],
        "skillchat (litellm)": [*ask, "--backend", "litellm", "--model", "openai/test-model", "hi"],
        "SDK floor": [sys.executable, "-c", FLOOR, base_url],
        # Anthropic's Messages API, natively, against tests/anthropic_server.py.
        "skillchat (anthropic)": (
            [*ask[:3], anthropic_url, *ask[4:], "--model", "anthropic/test-model", "hi"]
            if anthropic_url
            else []
        ),
        "stdlib floor": [sys.executable, "-c", STDLIB_FLOOR, base_url],
        "skillchat (before)": (
            ["env", f"PYTHONPATH={before}", *ask, "--model", "openai/test-model", "hi"]
            if before
            else []
        ),
    }
    return {name: argv for name, argv in found.items() if argv}


def environment(home: Path, base_url: str) -> dict[str, str]:
    """A private home (no user config), and an llm model for the local server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SKILLCHAT_"))}
    # Bytecode as an installed package has it (pip compiles at install, Python at the
    # first import): with PYTHONDONTWRITEBYTECODE in the caller's environment, a
    # checkout's modules were compiled from source at every start (~0.1 s of CPU for
    # skillchat's) while the other commands' site-packages had theirs. A private
    # prefix keeps the .pyc files out of the trees compared, and the warm-up fills it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    env["HOME"] = str(home)
    env["LLM_USER_PATH"] = str(home / "llm")
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    (home / "llm").mkdir()
    (home / "llm" / "extra-openai-models.yaml").write_text(
        f'- model_id: bench\n  model_name: test-model\n  api_base: "{base_url}"\n'
    )
    return env


@contextmanager
def served_home() -> Iterator[tuple[ScriptedServer, Path, dict[str, str]]]:
    """The scripted server, answering "Hello!" to every request, and a private home
    with the environment of the commands run against it."""
    with (
        ScriptedServer([reply("Hello!")], loop=True) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        yield server, Path(tmp), environment(Path(tmp), server.base_url)


def time_one(
    server: ScriptedServer, argv: list[str], env: dict[str, str], cwd: Path
) -> tuple[float, float]:
    """Seconds from spawning `argv` to its first chat-completions request, and the
    CPU seconds of the whole process."""
    before = len(server.completions)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 0 or len(server.completions) <= before:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.decode()[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    return server.completions[before].at - start, cpu


def peak_kib(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """The whole process's peak RSS in KiB (its own rusage, from wait4)."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return int(usage.ru_maxrss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--llm", default=shutil.which("llm"), help="path of the llm CLI")
    parser.add_argument("--before", help="another checkout of skillchat, to compare")
    parser.add_argument("--no-litellm", action="store_true", help="leave the litellm backend out")
    args = parser.parse_args()
    with served_home() as (server, home, env), AnthropicServer([reply("Hello!")], loop=True) as ant:
        cmds = commands(server.base_url, args.llm, args.before, ant.base_url)
        servers = {name: ant if "anthropic" in name else server for name in cmds}
        if args.no_litellm:
            del cmds["skillchat (litellm)"]
        for name, argv in cmds.items():  # warm the page cache and the .pyc files
            time_one(servers[name], argv, env, home)
        times: dict[str, list[float]] = {name: [] for name in cmds}
        cpus: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.runs):
            for name, argv in cmds.items():
                wall, cpu = time_one(servers[name], argv, env, home)
                times[name].append(wall)
                cpus[name].append(cpu)
        native = ("skillchat (openai)", "skillchat (anthropic)")
        rss = {n: statistics.median(peak_kib(cmds[n], env, home) for _ in range(3)) for n in native}
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    ours = medians["skillchat (openai)"]
    python = sys.version.split()[0]
    print(f"time to first request, median of {args.runs} interleaved runs (python {python})")
    for name, median in medians.items():
        spread = f"min {min(times[name]) * 1000:.0f} / max {max(times[name]) * 1000:.0f} ms"
        ratio = "" if median == ours else f"  ({median / ours:.1f}x skillchat's)"
        print(f"  {name:22} {median * 1000:7.0f} ms   {spread}{ratio}  cpu {cpu[name]:.3f} s")
    if "skillchat (litellm)" in medians:
        litellm = medians["skillchat (litellm)"] / ours
        verdict = "met" if litellm >= 4 else "MISSED"
        print(f"target: litellm backend >= 4x slower -> {litellm:.1f}x: {verdict}")
    anthropic = medians["skillchat (anthropic)"] / ours
    cpu_share = cpu["skillchat (anthropic)"] / cpu["skillchat (openai)"]
    rss_share = rss["skillchat (anthropic)"] / rss["skillchat (openai)"]
    print(f"  peak RSS: openai {rss['skillchat (openai)'] / 1024:.0f} MB, anthropic "
          f"{rss['skillchat (anthropic)'] / 1024:.0f} MB")  # fmt: skip
    verdict = "met" if max(anthropic, cpu_share, rss_share) <= 1.1 else "MISSED"
    print(f"target: anthropic <= 1.1x openai -> time {anthropic:.2f}x, cpu {cpu_share:.2f}x, "
          f"rss {rss_share:.2f}x: {verdict}")  # fmt: skip
    floor = ours / medians["SDK floor"]
    print(f"target: <= 1.03x the SDK floor -> {floor:.2f}x: {'met' if floor <= 1.03 else 'MISSED'}")
    stdlib = ours / medians["stdlib floor"]
    print(f"skillchat / the stdlib floor: {stdlib:.2f}x the time")
    if "llm" in medians:
        share = cpu["skillchat (openai)"] / cpu["llm"]
        verdict = "met" if share <= 0.9 else "MISSED"
        print(f"target: CPU >= 10% below llm's -> {share:.2f}x llm's: {verdict}")


if __name__ == "__main__":
    main()
