"""Local paths that are not the file they claim to be: a device, a FIFO, JSON nested
100,000 deep. Each is one line on stderr and a non-zero exit, with nothing sent to the
model and no hang (every run has a timeout, so a blocking open fails the test instead
of stalling it)."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import one_line_error, session_options, skillchat
from openai_server import ScriptedServer


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def empty_skills() -> Path:
    folder = Path.home() / "no-skills"
    folder.mkdir(exist_ok=True)
    return folder


# --- eval query files -------------------------------------------------------------


def test_eval_of_a_device_is_one_line(server: ScriptedServer) -> None:
    done = skillchat("eval", "/dev/zero", *session_options(server, empty_skills()), timeout=30)
    assert "/dev/zero: not a query file: it is a device" in one_line_error(done, 2)
    assert not server.completions


def test_eval_of_a_fifo_is_one_line(server: ScriptedServer, tmp_path: Path) -> None:
    path = fifo(tmp_path / "eval_queries.json")
    done = skillchat("eval", str(path), *session_options(server, empty_skills()), timeout=30)
    assert "not a query file: it is a FIFO" in one_line_error(done, 2)


def test_eval_of_json_nested_100k_deep_is_one_line(server: ScriptedServer, tmp_path: Path) -> None:
    path = tmp_path / "eval_queries.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    done = skillchat("eval", str(path), *session_options(server, empty_skills()), timeout=30)
    assert "eval_queries.json: not JSON skillchat can read (nested too deeply)" in one_line_error(
        done, 2
    )
    assert "RecursionError" not in done.stderr


# --- --gguf -------------------------------------------------------------------------


def test_a_fifo_as_the_gguf_model_is_one_line(tmp_path: Path) -> None:
    path = fifo(tmp_path / "model.gguf")
    done = skillchat("ask", "--gguf", str(path), "hi", timeout=30)
    assert "model.gguf: not a GGUF model file: it is a FIFO" in one_line_error(done)
