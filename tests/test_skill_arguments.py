"""`/name a b "c d"`: Claude Code's argument placeholders in a skill's body, filled
from the words after the name, and `argument-hint` shown where `/name` is typed."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import make_chat, registry, tool_messages, write_skill
from helpers import session_options, skill_folder
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession

from skillchat.config import Settings
from skillchat.skills.arguments import (
    ArgumentFiller,
    argument_hint,
    argument_names,
    split_arguments,
)
from skillchat.skills.registry import discover
from skillchat.tools.base import ToolContext
from skillchat.tools.context import ContextLedger
from skillchat.tools.skill_tools import GetSkill

BODY = "all=$ARGUMENTS 0=$0 1=$1 2=$2 i=$ARGUMENTS[2]"


def filled(tmp_path: Path, body: str, text: str, names: str = "") -> str:
    """The body of `/demo text` as the model gets it (tools off: GetSkill.read), for a
    skill whose SKILL.md body is `body` and whose `arguments` are `names`."""
    root = tmp_path / "skills"
    arguments = f"arguments: {names}\n" if names else ""
    skill_folder(root, "demo", f"name: demo\ndescription: d\n{arguments}", body)
    context = ToolContext(Settings(), discover([root]), None, ContextLedger())
    return GetSkill.read(context, "demo", text)[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a b "c d"', 'all=a b "c d" 0=a 1=b 2=c d i=c d'),
        ("naïve 'Ünïcode wörds' ✓", "all=naïve 'Ünïcode wörds' ✓ 0=naïve 1=Ünïcode wörds 2=✓ i=✓"),
        # Missing words stay as written: the model sees what was not given.
        ("only", "all=only 0=only 1=$1 2=$2 i=$ARGUMENTS[2]"),
        ("", "all= 0=$0 1=$1 2=$2 i=$ARGUMENTS[2]"),
        # Unbalanced quotes: split at whitespace, nothing lost.
        ('say "hi there', 'all=say "hi there 0=say 1="hi 2=there i=there'),
        (r"a\ b c", r"all=a\ b c 0=a b 1=c 2=$2 i=$ARGUMENTS[2]"),
    ],
    ids=["quotes", "unicode", "missing", "empty", "unbalanced", "backslash"],
)
def test_words_fill_the_placeholders(tmp_path: Path, text: str, expected: str) -> None:
    assert filled(tmp_path, BODY, text) == expected


def test_nothing_is_expanded_or_executed_and_values_are_not_filled_again(tmp_path) -> None:
    marker = tmp_path / "ran"
    text = f"$(touch {marker}) `touch {marker}` $HOME $1 $ARGUMENTS ${{CLAUDE_SKILL_DIR}}"
    assert split_arguments(text)[:2] == ["$(touch", f"{marker})"]  # shell words, as text
    out = filled(tmp_path, "[$ARGUMENTS] [$0] [$4] [$5] [$6]", text)
    assert out == f"[{text}] [$(touch] [$HOME] [$1] [$ARGUMENTS]"
    assert not marker.exists()


@pytest.mark.parametrize(
    "body",
    ["$1x", "$2_b", "$5.00 or $1,000", "$ARGUMENTSX", "$ARGUMENTS[x]", "$ARGUMENTS[-1]", "$ x"],
)
def test_what_only_looks_like_a_placeholder_stays_as_written(tmp_path: Path, body: str) -> None:
    # Every word is given, so nothing stays for being missing; nothing was filled
    # either, so the text is appended as Claude Code appends it.
    assert filled(tmp_path, body, "a b c") == f"{body}\n\nARGUMENTS: a b c"


def test_named_arguments_by_position(tmp_path: Path) -> None:
    names = argument_names({"arguments": ["issue", "issue_id", "7", "bad name", "ARGUMENTS"]})
    assert names == ["issue", "issue_id"]
    assert argument_names({"arguments": "src dst"}) == ["src", "dst"]
    assert argument_names({"arguments": {"a": 1}}) == []
    body = "$issue / $issue_id / $issue-tracker / $issues / $issue[0] / $src"
    declared = "[issue, issue_id, 7, bad name, ARGUMENTS]"
    assert (
        filled(tmp_path, body, "12 13", declared)
        == "12 / 13 / 12-tracker / $issues / $issue[0] / $src"
    )
    # The second is missing: it stays, and as nothing was filled the text is appended.
    assert filled(tmp_path, "$issue_id", "12", declared) == "$issue_id\n\nARGUMENTS: 12"


def test_no_placeholder_appends_the_text_and_empty_text_appends_nothing(tmp_path: Path) -> None:
    assert filled(tmp_path, "Do it.", "now please") == "Do it.\n\nARGUMENTS: now please"
    assert filled(tmp_path, "Do it.", "") == "Do it."


def test_argument_hint_as_written_or_as_yaml_reads_brackets() -> None:
    assert argument_hint({"argument-hint": "<file> [pages]"}) == "<file> [pages]"
    assert argument_hint({"argument-hint": ["issue-number"]}) == "[issue-number]"
    assert argument_hint({"argument-hint": "  "}) is None
    assert argument_hint({"argument-hint": 3}) is None


MIGRATE = "Migrate the $0 component from $1 to $2 ($ARGUMENTS).\n"


def test_name_fills_the_body_and_the_model_gets_it_unfilled(server, tmp_path) -> None:
    reg = registry(write_skill(tmp_path / "skills", "migrate", MIGRATE))
    server.script(
        reply("one"),
        reply("two"),
        reply(calls=[call("get_skill", {"skill_name": "migrate"})]),
        reply("three"),
    )
    chat = make_chat(server, reg)
    chat.send('/migrate "Search Bar" React Vue')
    body = json.loads(tool_messages(server)[0]["content"])["documentation"]
    assert body == 'Migrate the Search Bar component from React to Vue ("Search Bar" React Vue).\n'
    # Other words: the body is sent again, filled with them.
    chat.send("/migrate Nav Angular Svelte")
    body = json.loads(tool_messages(server)[-1]["content"])["documentation"]
    assert body.startswith("Migrate the Nav component from Angular to Svelte")
    # The model's own get_skill has no words to fill: it is told it has the skill.
    chat.send("and again")
    assert json.loads(tool_messages(server)[-1]["content"])["error_code"] == "ALREADY_IN_CONTEXT"


def test_tools_off_puts_the_filled_body_in_the_system_prompt(server, tmp_path) -> None:
    reg = registry(write_skill(tmp_path / "skills", "migrate", MIGRATE))
    server.script(reply("ok"))
    make_chat(server, reg, tools=False).send("/migrate A B C")
    system = server.completions[-1].body["messages"][0]["content"]
    assert "Migrate the A component from B to C (A B C)." in system


@pytest.fixture
def hinted(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(
        root,
        "fix-issue",
        "name: fix-issue\ndescription: Fixes one issue.\nargument-hint: <number> [branch]\n"
        "arguments: [number, branch]\n",
        "Fix issue $number on $branch.\n",
    )
    skill_folder(root, "plain", "name: plain\ndescription: Takes nothing.\n")
    return root


def test_discovered_hint_and_names_are_honoured_without_warnings(hinted: Path) -> None:
    reg = discover([hinted])
    skill = reg.skills["fix-issue"]
    assert skill.argument_hint == "<number> [branch]"
    assert all(w.severity == "note" for w in skill.warnings)
    assert reg.skills["plain"].argument_hint is None


def test_help_and_completion_show_the_hint(
    server: ScriptedServer, hinted: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    server.script(reply("fixed"))
    session = pty_sessions(*session_options(server, hinted))
    session.prompt()
    shown = session.run("/help")
    assert "skills that take arguments" in shown
    row = next(line for line in shown.splitlines() if line.startswith("/fix-issue"))
    assert "<number> [branch]" in row and "Fixes one issue." in row
    assert "/plain" not in shown
    session.send("/fix")
    session.send("\t")
    session.expect("<number> [branch] · Fixes one issue.")
    session.send("\x15")  # Ctrl-U: clear the line
    assert "fixed" in session.run("/fix-issue 42 main")
    assert (
        "Fix issue 42 on main." in json.loads(tool_messages(server)[0]["content"])["documentation"]
    )
    assert session.quit() == 0


def test_a_real_skills_hint_in_help_and_completion(
    server: ScriptedServer, shared: Path, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """generate-image, as published, declares `argument-hint` for Claude Code."""
    root = tmp_path / "skills"
    shutil.copytree(shared / "real-skills" / "github-awesome-copilot" / "generate-image",
                    root / "generate-image")  # fmt: skip
    hint = "[description of the image to generate]"
    session = pty_sessions(*session_options(server, root))
    session.prompt()
    shown = session.run("/help")
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("/generate-image"))
    # Longer than the commands' column: whole on its own line, the description below.
    assert lines[at].strip() == f"/generate-image {hint}"
    assert lines[at + 1].lstrip().startswith("Generate images using AI.")
    session.send("/generate-im")
    session.send("\t")
    session.expect(f"{hint} · Generate images using AI.")
    session.send("\x15")  # Ctrl-U: clear the line
    assert session.quit() == 0


# Each place a skill may put a placeholder in an inline command where it is quoted,
# and the command that prints the word between brackets.
QUOTED_PLACES = [
    "printf '[%s]' $0",
    "printf '[%s]' '$0'",
    "printf '[%s]' \"$0\"",
    "printf '[%s]' \"$(printf %s $0)\"",
    'printf \'[%s]\' "$(printf %s "$0")"',
    "true # $0\nprintf '[%s]' \"$0\"",
]


@pytest.mark.parametrize("place", QUOTED_PLACES)
@settings(max_examples=40, deadline=None)
# Words are text a user typed: any character but NUL (no C string holds it) and lone
# surrogates (no UTF-8 encodes one, so no terminal or argv delivers one as text).
@given(
    word=st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), min_size=1)
)
def test_a_word_filled_into_a_command_reaches_it_exactly(place: str, word: str) -> None:
    """Whatever the word holds, bash gets it as one word of data: printed back
    exactly (a `$(…)`, quote or newline in it would change or add output)."""
    bash = shutil.which("bash")
    assert bash is not None
    filler = ArgumentFiller(shlex.quote(word))
    command = filler.fill_command(place)
    done = subprocess.run(
        [bash, "-c", command], capture_output=True, env={"PATH": os.environ["PATH"]},
        cwd=Path.home(), timeout=30, check=False,
    )  # fmt: skip
    printed = done.stdout.decode("utf-8", "surrogateescape")
    if place.startswith("printf '[%s]' \"$(printf"):  # $(…) drops trailing newlines
        word = word.rstrip("\n")
    assert printed == f"[{word}]", (command, done.stderr)
