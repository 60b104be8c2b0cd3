"""Live reload: skills edited, added, removed or broken between two turns count from
the next turn on without `/reload`, said in one line; an activated skill whose
SKILL.md changed is named to the model until it loads it again; a broken one keeps
its last good version. In the `Session` (so the real sandbox mounts the new set) and
in the REPL on a real pseudo-terminal, against the scripted server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import RecordingView, sent, settings_for, system_text
from helpers import session_options, skill_folder
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

from skillchat.sandbox.run_request import RunRequest, Verdict
from skillchat.session import Session
from skillchat.skills.registry import discover
from skillchat.skills.stamps import folder_stamps

EDITED = "edited since you loaded it: alpha"


def write(root: Path, name: str, body: str = "# Body\n") -> Path:
    return skill_folder(root, name, f"name: {name}\ndescription: The {name} skill.\n", body)


def break_skill(folder: Path) -> None:
    """A SKILL.md whose frontmatter lost its description: invalid."""
    name = folder.name
    (folder / "SKILL.md").write_text(f"---\nname: {name}\n---\n# Half saved\n")


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name in ("alpha", "beta", "gamma"):
        write(root, name)
    return root


def approve(request: RunRequest) -> Verdict:
    return Verdict("approved")


def notices(view: RecordingView) -> list[str]:
    return [value for kind, value in view.events if kind == "notice"]


def test_nothing_changed_reads_nothing_and_a_saved_skill_md_is_a_change(skills: Path) -> None:
    registry = discover([skills])
    assert not registry.changed()
    (skills / "alpha" / "scripts").mkdir()  # a file beside SKILL.md is no change
    assert not registry.changed()
    (skills / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: The alpha skill.\n---\n# Body, longer now\n"
    )
    assert registry.changed()
    assert set(folder_stamps([skills])) == {f"{skills}/{n}/SKILL.md" for n in registry.skills}


def test_a_session_picks_up_each_change_at_the_next_turn(
    server: ScriptedServer, skills: Path
) -> None:
    require_sandbox()
    view = RecordingView()
    settings = settings_for(server, skill_dirs=(str(skills),), skills_bundled=False)
    session = Session(settings, listeners=[view], consent=lambda: approve)
    server.script(reply("", calls=[call("get_skill", {"skill_name": "alpha"})]), reply("one"))
    session.send("use alpha")
    assert session.chat.activated == ["alpha"]

    write(skills, "alpha", "# Alpha, second version\n")
    shutil.rmtree(skills / "beta")
    write(skills, "delta")
    break_skill(skills / "gamma")
    server.script(
        reply("", calls=[call("run_command", {"command": "ls /skills"})]),
        reply("", calls=[call("get_skill", {"skill_name": "alpha"})]),
        reply("two"),
    )
    result = session.send("again")
    line = notices(view)[-1]
    assert line.startswith("skills changed: edited: alpha; new: delta; gone: beta; gamma is now")
    assert "its last good version stays" in line and "description" in line
    assert EDITED in (system_text(server) or "")
    catalog = system_text(server) or ""
    assert '"name": "delta"' in catalog and '"name": "gamma"' in catalog
    assert '"name": "beta"' not in catalog
    mounted = json.loads(result.tool_calls[0].result.content)["stdout"].split()
    assert mounted == ["alpha", "delta", "gamma"]  # the sandbox serves the new set
    reread = json.loads(result.tool_calls[1].result.content)
    assert reread["documentation"] == "# Alpha, second version\n"
    assert session.chat.reread == []  # loaded again: no longer named to the model

    server.script(reply("three"))
    session.send("and once more")
    assert EDITED not in (system_text(server) or "")
    assert len(notices(view)) == 1  # nothing changed since: nothing said

    write(skills, "epsilon")  # another change: the broken gamma is kept, not said again
    server.script(reply("four"))
    session.send("one more")
    assert notices(view)[-1] == "skills changed: new: epsilon"
    assert "gamma" in session.registry.skills

    write(skills, "gamma")  # fixed: its new version, said as an edit
    server.script(reply("five"))
    session.send("fixed")
    assert notices(view)[-1] == "skills changed: edited: gamma"


def test_in_the_repl_on_a_terminal(
    server: ScriptedServer, skills: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    server.script(reply("one"), reply("two"), reply("three"), reply("four"))
    session = pty_sessions(*session_options(server, skills))
    session.prompt()
    assert "one" in session.run("/alpha start")

    write(skills, "alpha", "# Alpha, second version\n")
    screen = session.run("go on")
    assert "skills changed: edited: alpha" in screen and "two" in screen
    assert EDITED in (system_text(server) or "")

    shutil.rmtree(skills / "beta")
    write(skills, "delta")
    break_skill(skills / "gamma")
    screen = " ".join(session.run("and now").split())
    assert "new: delta; gone: beta; gamma is now invalid" in screen
    assert "its last good version stays" in screen and "three" in screen

    write(skills, "epsilon", "# Epsilon body\n")  # named at once: no typo, no /reload
    assert "four" in session.run("/epsilon try")
    body = json.loads(sent(server)[-1]["content"])["documentation"]
    assert body.startswith("# Epsilon body\n") and body.endswith("ARGUMENTS: try")
    assert session.quit() == 0
