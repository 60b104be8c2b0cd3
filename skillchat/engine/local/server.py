"""An embedded local model: llama.cpp's server (from the `xllamacpp` wheel) in a child
process of skillchat, spoken to through the openai backend like any local server.

Why a child process and not the server in-process: a child is killed cleanly (its
memory, threads and port go with it), its C++ logging cannot reach the terminal the
REPL owns, and a crash in it is a one-line error, not a dead skillchat.

Lifetime (one server per `ask` or REPL session, warm between turns):

- `start_local` reads the file's header (engine/local/gguf.py), picks the context
  size, template and threads, and starts the child at once, so it loads the model
  while skillchat imports its model library and shows its prompt;
- `make_backend` waits for it (`LocalServer.address`) before the first request;
- it stops at exit (atexit: normal exit, Ctrl-D, Ctrl-C, an error), and when
  skillchat dies any other way (`kill -9`, a crash) because the child watches its
  stdin pipe, which the kernel closes with the dead parent (engine/local/serve.py).
  The child runs in its own session, so the terminal's Ctrl-C does not reach it
  mid-reply: skillchat stops the reply, the server stays warm.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from skillchat.engine.local.gguf import GgufInfo, read_gguf
from skillchat.errors import LocalModelError
from skillchat.sections import ModelSettings

# Seconds a model may take to load before skillchat gives up (a few GB from a slow disk).
LOAD_TIMEOUT = 300.0
STOP_TIMEOUT = 5.0
# Context used when the file does not say what it was trained for.
FALLBACK_CONTEXT = 4096
CHATML_TOOLS = Path(__file__).with_name("chatml_tools.jinja")


@dataclass(frozen=True)
class LocalPlan:
    """How the server is started for one model file."""

    model: Path
    alias: str
    ctx: int
    max_tokens: int
    template: str
    threads: int


def template_for(info: GgufInfo, chat_template: str | None) -> str:
    """The Jinja chat template: the user's file when given; else the file's own when it
    handles tools; else, for a ChatML model (`<|im_start|>`: SmolLM, Qwen, Hermes...),
    a Qwen2.5-style tool template that llama.cpp parses as `<tool_call>` JSON; else
    the file's own, with which llama.cpp's generic tool-call format still works."""
    if chat_template:
        try:
            return Path(chat_template).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            message = f"{chat_template}: cannot read the chat template: {reason}"
            raise LocalModelError(message) from None
    own = info.chat_template or ""
    if "tools" in own:
        return own
    if "<|im_start|>" in own or not own:
        return CHATML_TOOLS.read_text(encoding="utf-8")
    return own


def install_hint() -> str:
    """The one command that adds the `[local]` extra's packages to the environment
    this skillchat runs in, as it was installed: pipx's venv (`pipx inject`), a uv
    tool (`uv tool install --with`, from the source it was installed from), a venv
    uv installed into (no pip there: `uv pip`), else pip. Not `pip install
    'skillchat[local]'`: skillchat is installed from a folder or a git URL, and that
    line would ask a package index for whatever it holds under the name. The pins
    are read from skillchat's own metadata (pyproject.toml's `local` extra)."""
    from importlib import metadata

    packages = ["xllamacpp", "huggingface_hub"]
    source = "skillchat"
    installer = "pip"
    try:
        dist = metadata.distribution("skillchat")
        local = [r.split(";")[0].strip() for r in dist.requires or () if 'extra == "local"' in r]
        packages = local or packages
        installer = (dist.read_text("INSTALLER") or installer).strip()
        url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
        source = url.removeprefix("file://") or source
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        pass
    quoted = " ".join(f"'{p}'" for p in packages)
    prefix = Path(sys.prefix)
    if (prefix / "pipx_metadata.json").is_file():
        command = f"pipx inject skillchat {quoted}"
    elif (prefix / "uv-receipt.toml").is_file():
        withs = " ".join(f"--with '{p}'" for p in packages)
        command = f"uv tool install --reinstall {withs} '{source}'"
    elif installer == "uv":
        command = f"uv pip install --python {sys.executable} {quoted}"
    else:
        command = f"{sys.executable} -m pip install {quoted}"
    return f"the local model needs llama.cpp's server (skillchat's [local] extra): {command}"


def require_server() -> None:
    """LocalModelError with the install command when `xllamacpp` is not installed
    (found without importing it: the import loads llama.cpp's library)."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelError(install_hint())


def plan(chosen: ModelSettings, model: Path) -> LocalPlan:
    """Read `model`'s header and size its server: the context is the trained one capped
    by `[local] context_max`; a reply may fill at most a quarter of it. The file is
    checked first: a wrong path (missing, a FIFO, not GGUF) is the user's to fix
    whether or not the `[local]` extra is installed, and reading a header needs none
    of it."""
    from skillchat.engine.context_window import reply_tokens

    info = read_gguf(model)
    require_server()
    ctx = min(info.context_length or FALLBACK_CONTEXT, chosen.local_context_max)
    return LocalPlan(
        model=model,
        alias=model.stem,
        ctx=ctx,
        max_tokens=reply_tokens(ctx),
        template=template_for(info, chosen.chat_template),
        threads=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2,
    )


class LocalServer:
    """The child process serving one model; `address` waits until it listens."""

    def __init__(self, local: LocalPlan) -> None:
        self.plan = local
        # The server's log, kept for the error line when it fails; closed by `stop`.
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "skillchat.engine.local.serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            start_new_session=True,
        )
        assert self.process.stdin is not None
        options = {
            "model": str(local.model),
            "alias": local.alias,
            "ctx": local.ctx,
            "max_tokens": local.max_tokens,
            "template": local.template,
            "threads": local.threads,
        }
        self.process.stdin.write(json.dumps(options).encode() + b"\n")
        self.process.stdin.flush()
        self._address: str | None = None
        # Two threads may wait at once (the REPL's loader and a `/model` switch back
        # while the model still loads): both would wake on the one line, one read it,
        # and the other wait on the pipe for ever.
        self._waiting = threading.Lock()
        self._failed: LocalModelError | None = None
        atexit.register(self.stop)

    def address(self, timeout: float = LOAD_TIMEOUT) -> str:
        """`http://127.0.0.1:PORT/v1` once the model is loaded; LocalModelError (the
        server's own last error line) when it exits or takes longer than `timeout`."""
        with self._waiting:
            if self._failed is not None:
                raise self._failed
            if self._address is None:
                try:
                    self._address = self._wait(timeout)
                except LocalModelError as exc:
                    self._failed = exc
                    raise
            return self._address

    def _wait(self, timeout: float) -> str:
        """Read the child's one line: its address once loaded."""
        stdout = self.process.stdout
        assert stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                self.stop()
                raise LocalModelError(
                    f"{self.plan.model}: the local server did not load it within {timeout:.0f}s"
                )
        line = stdout.readline().decode(errors="replace").strip()
        if not line.startswith("http://127.0.0.1:"):
            self.process.wait(STOP_TIMEOUT)
            raise LocalModelError(f"{self.plan.model}: the local server failed: {self._why()}")
        return f"{line}/v1"

    def _why(self) -> str:
        """The server's last error line (llama.cpp logs ` E ` lines), else its last line."""
        self._log.seek(0)
        lines = [ln.strip() for ln in self._log.read().decode(errors="replace").splitlines()]
        lines = [ln for ln in lines if ln]
        errors = [ln for ln in lines if " E " in ln or "error" in ln.lower()]
        last = (errors or lines or ["it exited without a message"])[-1]
        return "".join(c if c.isprintable() else "?" for c in last)[:300]

    def stop(self) -> None:
        """Close the pipe the child watches, then SIGTERM its process group, then
        SIGKILL what is left after `STOP_TIMEOUT` seconds. Safe to call twice."""
        process = self.process
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(OSError):
                process.stdin.close()
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(STOP_TIMEOUT)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for stream in (process.stdout, self._log):
            if stream is not None and not stream.closed:
                stream.close()


_servers: dict[Path, LocalServer] = {}


def start_local(chosen: ModelSettings, gguf: str) -> LocalPlan:
    """Start the server for the file `gguf` (once per process) and return its plan
    (its context, its model name: engine/resolve.py fits the chat to them).
    LocalModelError when the file or xllamacpp is missing."""
    model = Path(gguf).expanduser().resolve()
    local = plan(chosen, model)
    if model not in _servers:
        _servers[model] = LocalServer(local)
    return local


def local_api_base(gguf: str) -> str:
    """The address of the server `start_local` started for the file `gguf` (resolve
    did, when it made the target naming it), waiting for it to load."""
    return _servers[Path(gguf).expanduser().resolve()].address()
