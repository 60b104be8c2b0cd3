"""The child process that runs llama.cpp's server (xllamacpp) for skillchat.

Run as `python -m skillchat.engine.local.serve` by engine/local/server.py, with the
settings as one JSON line on stdin. It prints the address it listens on (one line on
stdout) once the model is loaded, then serves until any of:

- its stdin reaches end of file: the parent closed it, or died in any way (`kill -9`
  included: the kernel closes a dead process's pipes), so no server outlives it;
- SIGTERM, SIGINT or SIGHUP.

A pipe is used rather than `PR_SET_PDEATHSIG`, which fires when the *thread* that
started the child ends: the REPL starts it from a loader thread that ends at once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading


def _watch_parent() -> None:
    """Exit the whole process when stdin closes (the parent is gone or done)."""
    while sys.stdin.buffer.read(1 << 16):
        pass
    os._exit(0)


def main() -> None:
    options = json.loads(sys.stdin.readline())
    threading.Thread(target=_watch_parent, name="parent-watch", daemon=True).start()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: os._exit(0))

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = options["model"]
    params.model_alias = {options["alias"]}
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the kernel picks a free port: no race with another program
    params.n_ctx = options["ctx"]
    params.n_predict = options["max_tokens"]
    params.n_parallel = 1
    params.use_jinja = True
    params.chat_template = options["template"]
    params.cpuparams.n_threads = options["threads"]
    params.cpuparams_batch.n_threads = options["threads"]
    params.ui = False
    server = xllamacpp.Server(params)
    sys.stdout.write(server.listening_address + "\n")
    sys.stdout.flush()
    threading.Event().wait()  # serve until a signal or the parent-watch thread exits


if __name__ == "__main__":
    main()
