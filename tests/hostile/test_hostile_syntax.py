"""Hostile cases of a skill's syntax: `/name` arguments put into inline `` !`…` ``
commands, a skill's relative spellings, and what the user is told about the
skills, files and chats involved. Everything runs as a user does: `skillchat ask`
against the scripted model, the real bubblewrap sandbox, a real pty."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from git_repos import git
from helpers import (
    REPO,
    ask_json,
    one_line_error,
    session_options,
    skill_folder,
    skillchat,
    write_files,
)
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

from skillchat.sections import user_data_dir

# --- /name arguments in inline commands ----------------------------------------------

# Each placeholder where a skill may put it: unquoted, in '…', in "…", inside "$(…)",
# and in a comment of a block (where a newline would end the comment).
QUOTING = (
    "Plain: !`printf '[%s]' $0 $1`\n"
    "Single: !`printf '<%s>' '$2'`\n"
    "Double: !`printf '{%s}' \"$ARGUMENTS[3]\"`\n"
    "Inner: !`printf '(%s)' \"$(printf %s $4)\"`\n"
    "```!\ntrue # $1\nprintf 'comment-ok'\n```\n"
)
HOSTILE = [
    "$(touch /scratch/pwned-sub)",
    "`touch /scratch/pwned-tick`; touch /scratch/pwned-semi",
    "it's'; touch /scratch/pwned-single; '",
    'say "hi"\n"; touch /scratch/pwned-double; "',
    "a\ntouch /scratch/pwned-newline",
]


def typed(words: list[str]) -> str:
    """The text after `/name` that splits into `words` (each double-quoted, escaped)."""
    escaped = (w.replace("\\", "\\\\").replace('"', '\\"') for w in words)
    return " ".join(f'"{w}"' for w in escaped)


def body_of(server: ScriptedServer, skills: Path, message: str, *flags: str) -> str:
    """The skill's body as the model got it from `ask --allow-run MESSAGE`."""
    server.script(reply("done"))
    report = ask_json(server, skills, "--allow-run", *flags, message)
    return str(json.loads(report["tool_calls"][0]["result"])["documentation"])


def planted() -> list[str]:
    """Files named pwned-* in any chat's scratch folder (what an injection would make)."""
    scratch = user_data_dir() / "scratch"
    return sorted(p.name for p in scratch.rglob("pwned*")) if scratch.exists() else []


def inline_skill(tmp_path: Path, body: str) -> Path:
    """A skills folder with `inl`, whose body is `body`; the sandbox must work."""
    require_sandbox()
    root = tmp_path / "skills"
    skill_folder(root, "inl", "name: inl\ndescription: Shows words.\n", body)
    return root


def test_arguments_in_inline_commands_are_words_never_code(
    server: ScriptedServer, tmp_path: Path
) -> None:
    body = body_of(server, inline_skill(tmp_path, QUOTING), "/inl " + typed(HOSTILE))
    assert planted() == []
    assert body.startswith(f"Plain: [{HOSTILE[0]}][{HOSTILE[1]}]\n"), body
    assert f"Single: <{HOSTILE[2]}>\n" in body
    assert f"Double: {{{HOSTILE[3]}}}\n" in body
    assert f"Inner: ({HOSTILE[4]})\n" in body
    assert body.endswith("comment-ok\n") and "not run" not in body


def test_a_harmless_argument_still_works_as_one_word(
    server: ScriptedServer, tmp_path: Path
) -> None:
    body = body_of(server, inline_skill(tmp_path, QUOTING), '/inl report.txt "two words" x y z')
    assert body.startswith("Plain: [report.txt][two words]\nSingle: <x>\nDouble: {y}\n"), body
    assert "Inner: (z)\n" in body


@pytest.mark.parametrize(
    "line",
    [
        "!`echo $(( $0 + 1 ))`",  # bash evaluates a[$(cmd)] in arithmetic, even quoted
        "!`[[ $0 -eq 1 ]] && echo one`",
        "```!\necho `echo $0`\n```",
        "```!\ncat <<EOF\n$0\nEOF\n```",
    ],
    ids=["arithmetic", "double-brackets", "backquotes", "here-document"],
)
def test_an_argument_where_no_quoting_holds_is_not_run_and_says_why(
    server: ScriptedServer, tmp_path: Path, line: str
) -> None:
    root = inline_skill(tmp_path, f"Out:\n{line}\n")
    word = "a[$(touch /scratch/pwned-arith)]\nEOF\ntouch /scratch/pwned-eof"
    body = body_of(server, root, "/inl " + typed([word]))
    assert planted() == []
    assert "cannot be passed as plain words]" in body, body
    assert "[not run: an argument after " in body


# --- one folder reached by two paths ------------------------------------------------


def test_a_folder_reached_by_two_paths_is_one_folder(tmp_path: Path) -> None:
    """Run from the home folder, ~/.agents/skills is the project's folder and the
    user's; ~/.claude/skills may be a link to it. Neither makes a skill shadow itself."""
    home = Path.home()
    for name in ("alpha", "beta"):
        skill_folder(home / ".agents/skills", name, f"name: {name}\ndescription: D {name}.\n")
    (home / ".claude").mkdir()
    (home / ".claude/skills").symlink_to(home / ".agents/skills")
    listed = skillchat("skills", "list", cwd=home)
    assert listed.returncode == 0, listed.stderr
    assert "alpha" in listed.stdout and "beta" in listed.stdout
    assert "left out" not in listed.stdout + listed.stderr
    report = json.loads(skillchat("skills", "list", "--json", cwd=home).stdout)
    assert report["excluded"] == []
    trust = {s["name"]: s["trust"] for s in report["skills"]}
    assert (trust["alpha"], trust["beta"]) == ("user-level", "user-level")
    doctor = skillchat("doctor", cwd=home)
    assert re.search(r"^skills: 4 loaded from \d folder\(s\), 0 left out$", doctor.stdout, re.M)


# --- a skill's relative spellings, wherever the workspace is -------------------------

VALIDATE = "import sys\nprint('valid', sys.argv[1:])\n"
GIF = "class GIFBuilder:\n    made = 'gif-ok'\n"
HOSTILE_IMPORT = "import sys\nsys.exit(\"ModuleNotFoundError: No module named 'evil_pkg'\")\n"


def ask_run(
    server: ScriptedServer, skills: Path, folder: Path, command: str
) -> tuple[str, dict[str, Any]]:
    """`ask --json` started in `folder`, where the model runs `command` as skill
    `demo`'s: the cards (stderr) and the run's result."""
    server.script(
        reply("", calls=[call("run_command", {"command": command, "skill_name": "demo"})]),
        reply("done"),
    )
    done = skillchat(
        "ask", "--json", *session_options(server, skills), "--allow-run", "go", cwd=folder,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run,) = [c for c in json.loads(done.stdout)["tool_calls"] if c["name"] == "run_command"]
    result: dict[str, Any] = json.loads(run["result"])
    return done.stderr, result


def run_in_repo(server: ScriptedServer, skills: Path, repo: Path, command: str) -> dict[str, Any]:
    """The result of run_command(command) from skill `demo`, `ask` started in `repo`."""
    return ask_run(server, skills, repo, command)[1]


@pytest.fixture
def skill_and_repo(tmp_path: Path) -> tuple[Path, Path]:
    """Skill `demo` with scripts/ and core/ packages (as skill-creator and
    slack-gif-creator ship them), and a git repository of the user's, with a
    `scripts` package of its own, to start in."""
    require_sandbox()
    skills = tmp_path / "skills"
    folder = skill_folder(skills, "demo", "name: demo\ndescription: A demo.\n")
    files = {"scripts/__init__.py": "", "scripts/quick_validate.py": VALIDATE}
    files |= {"core/__init__.py": "", "core/gif_builder.py": GIF, "hostile.py": HOSTILE_IMPORT}
    write_files(folder, files)
    repo = write_files(tmp_path / "repo", {"README.md": "mine\n", "tools/x.py": ""})
    git(repo, "init", "-q")
    return skills, repo


def test_a_skills_relative_modules_work_from_a_repository(
    server: ScriptedServer, skill_and_repo: tuple[Path, Path]
) -> None:
    skills, repo = skill_and_repo
    result = run_in_repo(server, skills, repo, "python -m scripts.quick_validate /skills/demo")
    assert result["exit_code"] == 0, result
    assert result["stdout"] == "valid ['/skills/demo']\n"
    gif = "python -c 'from core.gif_builder import GIFBuilder; print(GIFBuilder.made)'"
    result = run_in_repo(server, skills, repo, gif)
    assert (result["exit_code"], result["stdout"]) == (0, "gif-ok\n"), result


def test_no_hint_makes_a_package_of_a_name_the_output_printed(
    server: ScriptedServer, skill_and_repo: tuple[Path, Path]
) -> None:
    skills, repo = skill_and_repo
    # -E: Python ignores PYTHONPATH, so the skill's `scripts` is not found
    result = run_in_repo(server, skills, repo, "python -E -m scripts.quick_validate")
    assert result["exit_code"] == 1 and "No module named 'scripts'" in result["stderr"]
    (note,) = result["notes"]
    assert "`scripts` is skill demo's own folder" in note and "[packages]" not in note
    result = run_in_repo(server, skills, repo, "python /skills/demo/hostile.py")
    (note,) = result["notes"]  # what a script prints is not a package to install
    assert "`evil_pkg` is not installed" in note and "evil-pkg" not in note


# --- where a command's files are on this machine -------------------------------------


def test_the_card_says_where_written_files_are_on_this_machine(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    skills = tmp_path / "skills"
    skill_folder(skills, "demo", "name: demo\ndescription: A demo.\n")
    (tmp_path / "plain").mkdir()  # no workspace: files land in the chat's scratch folder
    odd = "printf 'x' > ball.gif && printf 'y' > \"$(printf 'a\\033]0;t\\007\\nb c')\""
    cards, result = ask_run(server, skills, tmp_path / "plain", odd)
    assert sorted(result["files_written"]) == ["/scratch/a\x1b]0;t\x07\nb c", "/scratch/ball.gif"]
    (scratch,) = (user_data_dir() / "scratch").iterdir()
    assert (scratch / "ball.gif").read_text() == "x"
    flat = re.sub(r"[\s│╭╮╰╯─]", "", cards)  # a long path may be folded over lines
    assert f"onthismachine:/scratchis{scratch}".replace(" ", "") in flat, cards
    assert "\x1b" not in cards and "\x07" not in cards
    assert "wrote$'/scratch/a\\x1b]0;t\\x07\\nbc',/scratch/ball.gif" in flat  # one line
    assert str(scratch) not in json.dumps(result)  # the model is not told the host path


# --- the hint on leaving a resumed chat ----------------------------------------------


def test_leaving_a_resumed_chat_names_the_command_that_reopens_it(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """`/resume OLD` then Ctrl-D: `-c` would open the newer chat of this folder, so
    the hint names `--chat OLD` alone, and that command reopens OLD."""
    empty = tmp_path / "no-skills"
    empty.mkdir()
    server.script(reply("one"), reply("two"))
    ids = []
    for text in ("first", "second"):
        done = skillchat("ask", "--json", *session_options(server, empty), text)
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout)["chat_id"])
    old = ids[0]
    session = pty_sessions(*session_options(server, empty))
    session.prompt()
    session.line(f"/resume {old}")
    assert f"resumed chat {old}" in session.prompt()
    session.send("\x04")
    said = " ".join(session.expect("goes on with it").split())
    assert said.endswith(f"chat {old} saved: skillchat --chat {old}"), said
    assert session.wait() == 0
    server.script(reply("three"))
    again = skillchat("ask", "--json", *session_options(server, empty), "--chat", old, "more")
    assert json.loads(again.stdout)["chat_id"] == old


# --- a wrong --gguf file, with or without the [local] extra --------------------------


def test_a_fifo_as_the_gguf_model_is_one_line_without_the_local_extra(tmp_path: Path) -> None:
    """The file the user named is checked before the extra is needed: its one line
    comes first (the install command would not fix it)."""
    model = tmp_path / "model.gguf"
    os.mkfifo(model)
    blocker = tmp_path / "block"
    blocker.mkdir()
    # As if the extra were not installed: `import xllamacpp` fails, find_spec is None.
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['xllamacpp'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(REPO)])}
    done = skillchat("ask", "--gguf", str(model), "hi", env=env, timeout=60)
    assert "model.gguf: not a GGUF model file: it is a FIFO" in one_line_error(done)
