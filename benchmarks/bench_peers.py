"""skillchat `ask` beside its peers: process start to the first byte of the request.

Run: `python benchmarks/bench_peers.py [--runs N]` (as root, or as a user where
`unshare --user --map-root-user --net` works). Not part of pytest: it installs the
peers (npm and PyPI, once, into `--cache`), and its figures depend on the machine.

Each peer asks the same local server (peer_server.py) the same question, with the
234 real skills of `../shared/real-skills` installed where it reads its user's
skills, each in a home of its own:

- `skillchat ask`, installed from this checkout with `pip install .` (not
  editable: an editable install's finder costs every start ~10 ms that a user's
  install does not) into a venv of its own; skills in `~/.agents/skills`;
- Codex `exec` (npm `@openai/codex`), skills in `~/.codex/skills`, a provider of
  `~/.codex/config.toml` on the server's Responses API (the only one it speaks);
- Claude Code `-p` (npm `@anthropic-ai/claude-code`), skills in `~/.claude/skills`,
  `ANTHROPIC_BASE_URL` on the server's Messages API;
- `llm` (PyPI), a model of `extra-openai-models.yaml` on the server (llm has no
  skills: it reads none);
- the standard-library floor, floor_request.py: reads the same 234 SKILL.md
  headers and sends the same request with http.client.

Time is from spawning the process to the first byte of its first request for a
reply (the server stamps the request line on the same monotonic clock); CPU (user +
system) and the largest resident set are the whole process's and its children's
(Codex's and Claude Code's npm commands start a native binary). Runs are
interleaved, one of each then again, so the machine's load drifts over all alike;
medians and ratios are printed, and the targets: `ask` at most 0.9x Codex's time
in the same run and at most 3x the floor's.

**No network but loopback.** Every peer runs inside a network namespace that has
only `lo`, with the server started inside it: no peer can reach any other address
(Codex and Claude Code would otherwise phone home, and the comparison would be of
networks). The script re-runs itself inside `unshare --net` (as root) or `unshare
--user --map-root-user --net`, checks there that it is in a namespace of its own
whose only interface is loopback and that an outside address is unreachable, and
refuses to run otherwise: it never falls back to running the peers with the network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_server import ANSWER, PeerServer  # noqa: E402

# The versions compared, pinned: a figure means nothing without the version.
CODEX = "@openai/codex@0.171.0"
CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.332"
LLM = "llm==0.36"
CORPUS = next(
    (p / "shared" / "real-skills" for p in REPO.parents if (p / "shared" / "real-skills").is_dir()),
    REPO.parent / "shared" / "real-skills",
)
PROMPT = "Say hello in one word."
NAMES = ("skillchat ask", "codex exec", "claude -p", "llm", "stdlib floor")


class Refused(SystemExit):
    """The benchmark will not run: said in one line, exit 1."""

    def __init__(self, message: str) -> None:
        super().__init__(f"bench_peers: refused: {message}")


# --- outside the namespace: the installs ------------------------------------------


def run(argv: list[str], **options: object) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, **options)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed: {(done.stderr or done.stdout)[-800:]}")


def install(cache: Path, skip_skillchat: bool) -> None:
    """The peers, into `cache` (never globally), once; skillchat from this
    checkout at every run, so the figures are of the code here."""
    npm = cache / "npm"
    if not all((npm / "node_modules" / ".bin" / b).exists() for b in ("codex", "claude")):
        print(f"installing {CODEX} and {CLAUDE_CODE} into {npm}", flush=True)
        run(["npm", "install", "--prefix", str(npm), "--no-audit", "--no-fund", CODEX, CLAUDE_CODE])
    for venv, spec in (("llm-venv", LLM), ("skillchat-venv", str(REPO))):
        if not (cache / venv / "bin" / "python").exists():
            print(f"installing {spec} into {cache / venv}", flush=True)
            run([sys.executable, "-m", "venv", str(cache / venv)])
            run([str(cache / venv / "bin" / "pip"), "install", "-q", spec])
        elif venv == "skillchat-venv" and not skip_skillchat:
            print(f"installing skillchat from {REPO} (not editable)", flush=True)
            pip = [str(cache / venv / "bin" / "pip"), "install", "-q", "--no-deps"]
            run([*pip, "--force-reinstall", str(REPO)])


def enter_namespace(argv: list[str]) -> int:
    """Run this script again inside a network namespace of its own; refuse (exit
    1) when none can be made."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise Refused("no `unshare` on this machine: cannot cut the peers off the network")
    flags = ["--net"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--net"]
    outside = os.readlink("/proc/self/ns/net")
    probe = subprocess.run([unshare, *flags, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise Refused(f"`unshare {' '.join(flags)}` failed: {probe.stderr.strip()}")
    inner = [unshare, *flags, sys.executable, __file__, "--inside", outside, *argv]
    return subprocess.run(inner).returncode


# --- inside the namespace ----------------------------------------------------------


def check_isolated(outside: str) -> None:
    """Loopback up, and proof that nothing but loopback is reachable: a namespace
    other than the caller's, `lo` its only interface, an outside address
    unreachable. Refuses otherwise."""
    if os.readlink("/proc/self/ns/net") == outside:
        raise Refused("still in the caller's network namespace")
    names = sorted(name for _, name in socket.if_nameindex())
    if names != ["lo"]:
        raise Refused(f"interfaces other than loopback here: {names}")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for address in (("1.1.1.1", 443), ("8.8.8.8", 53)):
        with socket.socket() as s:
            s.settimeout(2)
            try:
                s.connect(address)
            except OSError:
                continue
        raise Refused(f"{address[0]} is reachable from inside the namespace")


def install_skills(folder: Path) -> int:
    """The real corpus's skills, one folder each under `folder` (a skill's own
    folder name; of two with one name, the first in path order)."""
    folder.mkdir(parents=True, exist_ok=True)
    seen = set()
    for skill_md in sorted(CORPUS.rglob("SKILL.md")):
        skill = skill_md.parent
        if skill.name not in seen:
            seen.add(skill.name)
            shutil.copytree(skill, folder / skill.name)
    return len(seen)


@dataclass
class Peer:
    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: no key, proxy or config of the caller's."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_STATE_HOME=str(home / ".local/state"))  # fmt: skip
    return env


def peers(cache: Path, homes: Path, port: int) -> list[Peer]:
    """Each peer's command and environment, its home made with the skills."""
    base = f"http://127.0.0.1:{port}/v1"
    bins = cache / "npm" / "node_modules" / ".bin"
    found = []
    count = 0
    for name in NAMES:
        home = homes / name.split()[0]
        work = home / "work"
        work.mkdir(parents=True)
        env = base_env(home)
        if name == "skillchat ask":
            count = install_skills(home / ".agents" / "skills")
            argv = [str(cache / "skillchat-venv" / "bin" / "skillchat"), "ask", "--api-base",
                    base, "--model", "openai/test-model", PROMPT]  # fmt: skip
        elif name == "codex exec":
            count = install_skills(home / ".codex" / "skills")
            (home / ".codex" / "config.toml").write_text(
                'model = "test-model"\nmodel_provider = "bench"\n\n[model_providers.bench]\n'
                f'name = "bench"\nbase_url = "{base}"\nwire_api = "responses"\n'
                'env_key = "BENCH_KEY"\n'
            )
            env["BENCH_KEY"] = "sk-none"
            argv = [str(bins / "codex"), "exec", "--skip-git-repo-check", PROMPT]
        elif name == "claude -p":
            install_skills(home / ".claude" / "skills")
            env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="sk-none",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                       DISABLE_TELEMETRY="1")  # fmt: skip
            argv = [str(bins / "claude"), "-p", PROMPT]
        elif name == "llm":
            env["LLM_USER_PATH"] = str(home / "llm")
            (home / "llm").mkdir()
            (home / "llm" / "extra-openai-models.yaml").write_text(
                f'- model_id: bench\n  model_name: test-model\n  api_base: "{base}"\n'
            )
            argv = [str(cache / "llm-venv" / "bin" / "llm"), "-m", "bench", PROMPT]
        else:
            skills = home / "skills"
            install_skills(skills)
            floor = Path(__file__).resolve().parent / "floor_request.py"
            argv = [str(cache / "skillchat-venv" / "bin" / "python"), str(floor), base,
                    str(skills), PROMPT]  # fmt: skip
        found.append(Peer(name, argv, env, work))
    print(f"{count} skills installed for each (llm reads none)")
    return found


@dataclass
class Run:
    first_byte: float  # seconds from spawn to the request's first byte
    cpu: float  # seconds, user + system, the process and its children
    max_rss: float  # MiB, the largest process's


def time_one(server: PeerServer, peer: Peer, scratch: Path) -> Run:
    """One run of `peer`: its output into files (no pipe to drain), its end and
    resource use read with wait4 (the process and the children it waited for)."""
    since = len(server.arrivals)
    with (scratch / "out").open("w+b") as out, (scratch / "err").open("w+b") as err:
        start = time.monotonic()
        proc = subprocess.Popen(peer.argv, env=peer.env, cwd=peer.cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)  # fmt: skip
        killer = threading.Timer(180, proc.kill)
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait
        out.seek(0)
        err.seek(0)
        answer, said = out.read(), err.read()
    arrival = server.first_model_request(since)
    if proc.returncode != 0 or arrival is None or ANSWER.encode() not in answer:
        tail = (said or answer).decode(errors="replace")[-800:]
        raise SystemExit(f"{peer.name} failed ({proc.returncode}): {tail}")
    return Run(arrival.at - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def inside(outside: str, args: argparse.Namespace) -> None:
    check_isolated(outside)
    cache = Path(args.cache)
    homes = cache / "homes"
    shutil.rmtree(homes, ignore_errors=True)
    with PeerServer() as server:
        found = peers(cache, homes, server.port)
        for peer in found:  # warm: page cache, bytecode, each tool's first-run files
            time_one(server, peer, homes)
        runs: dict[str, list[Run]] = {peer.name: [] for peer in found}
        loads = [os.getloadavg()[0]]
        for _ in range(args.runs):
            for peer in found:
                runs[peer.name].append(time_one(server, peer, homes))
            loads.append(os.getloadavg()[0])
    report(runs, args.runs, loads)
    if args.json:
        rows = {name: [vars(r) for r in rs] for name, rs in runs.items()}
        Path(args.json).write_text(json.dumps({"loads": loads, "runs": rows}, indent=1))


def report(runs: dict[str, list[Run]], n: int, loads: list[float]) -> None:
    def median(name: str, field: str) -> float:
        return float(statistics.median(getattr(r, field) for r in runs[name]))

    ours = median("skillchat ask", "first_byte")
    print(f"process start to the first byte of the request, medians of {n} interleaved runs")
    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"(load average {min(loads):.1f}-{max(loads):.1f}, {now})")
    print(f"  {'':14} {'first byte':>10} {'min-max':>13} {'cpu':>7} {'max rss':>8}  ask / it")
    for name in runs:
        times = [r.first_byte * 1000 for r in runs[name]]
        first = median(name, "first_byte")
        print(f"  {name:14} {first * 1000:7.0f} ms {min(times):5.0f}-{max(times):<5.0f}ms "
              f"{median(name, 'cpu'):5.2f} s {median(name, 'max_rss'):5.0f} MiB  "
              f"{ours / first:5.2f}x")  # fmt: skip
    codex = ours / median("codex exec", "first_byte")
    floor = ours / median("stdlib floor", "first_byte")
    for target, ratio, limit in (("0.9x Codex exec's", codex, 0.9), ("3x the floor's", floor, 3)):
        verdict = "met" if ratio <= limit else "MISSED"
        print(f"target: ask's time <= {target} -> {ratio:.2f}x: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "skillchat-bench-peers"),
                        help="where the peers are installed (and their homes made)")  # fmt: skip
    parser.add_argument("--no-reinstall", action="store_true",
                        help="reuse the skillchat an earlier run installed")  # fmt: skip
    parser.add_argument("--json", help="also write every run to this file")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # the namespace's run
    args, rest = parser.parse_known_args()
    if rest:
        parser.error(f"unknown arguments: {rest}")
    if args.inside:
        inside(args.inside, args)
        return
    if not CORPUS.is_dir():
        raise Refused(f"no real skills at {CORPUS}")
    install(Path(args.cache), args.no_reinstall)
    sys.exit(enter_namespace(sys.argv[1:]))


if __name__ == "__main__":
    main()
