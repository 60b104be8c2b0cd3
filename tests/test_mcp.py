"""MCP servers as a user configures them: real servers written with the official SDK
(tests/mcp_servers.py) over stdio and streamable HTTP, the scripted model calling
their tools through `skillchat ask`, and the process table checked after each test
that starts one (no server outlives skillchat).

A stdio server costs about a second of CPU to start (the SDK's imports), so the tests
whose subject is not the server's process or transport (policy, consent, listing)
share one `basic` server over streamable HTTP, started once for the module."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from chat_helpers import tool_messages
from helpers import (
    alive,
    closed_port,
    counted_table,
    listening,
    one_line_error,
    session_options,
    skill_folder,
    skillchat,
    starts,
    wait_for,
)
from openai_server import ScriptedServer, call, reply

from skillchat.config import load_settings
from skillchat.errors import ConfigError
from skillchat.mcp.policy import decide
from skillchat.safe_io.user_cache import folder
from skillchat.skills.registry import discover

if TYPE_CHECKING:
    from pty_session import PtySession

SERVERS = Path(__file__).resolve().parent / "mcp_servers.py"


# A bound on a server's start for the states the tests wait for: the default 30 s was
# met by a server starting under CI's burner (eight workers, the other job and two busy
# loops on two cores), whose tools were then missing from the first request.
STARTUP = "startup_timeout_s = 300\n"


def stdio(name: str, kind: str, tag: Path, extra: str = "") -> str:
    """A `[mcp.NAME]` table running tests/mcp_servers.py KIND, tagged (in its
    arguments) with the test's folder so the process table can be searched."""
    args = json.dumps([str(SERVERS), kind, str(tag)])
    return f'[mcp.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n{STARTUP}{extra}\n'


def refusing(name: str, tag: Path) -> str:
    """A `[mcp.NAME]` table whose command exits before answering anything: no SDK,
    so nothing to start but Python."""
    code = "import sys; sys.stderr.write('this server refuses to start\\n'); sys.exit(2)"
    args = json.dumps(["-c", code, str(tag)])
    return f'[mcp.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n'


def http(name: str, url: str, extra: str = "") -> str:
    """A `[mcp.NAME]` table for the server at `url` (streamable HTTP)."""
    return f'[mcp.{name}]\nurl = "{url}"\n{STARTUP}{extra}\n'


@pytest.fixture
def tag(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The test's folder; at the end no process naming it may be left."""
    yield tmp_path
    assert wait_for(lambda: not alive(tmp_path), 20), alive(tmp_path)


@contextmanager
def http_server(kind: str, tag: Path, *options: str) -> Iterator[int]:
    """tests/mcp_servers.py KIND over streamable HTTP (`options`: `--json`); its port
    once it listens."""
    argv = [sys.executable, str(SERVERS), kind, str(tag), "--http", str(port := closed_port())]
    with listening(*argv, *options, port=port):
        yield port


def shared_server(kind: str, factory: pytest.TempPathFactory) -> Iterator[str]:
    """tests/mcp_servers.py KIND over streamable HTTP for a whole module, for tests
    that never change its state: its URL. Gone from the process table at the end."""
    tag = factory.mktemp(f"mcp-{kind}")
    with http_server(kind, tag) as port:
        yield f"http://127.0.0.1:{port}/mcp"
    assert wait_for(lambda: not alive(tag), 20), alive(tag)


@pytest.fixture(scope="module")
def basic_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from shared_server("basic", tmp_path_factory)


def ask(
    server: ScriptedServer, tmp: Path, config: str, *args: str
) -> subprocess.CompletedProcess[str]:
    (tmp / "config.toml").write_text(config)
    skills = tmp / "skills"
    skills.mkdir(exist_ok=True)
    return skillchat(
        "ask", *session_options(server, skills), "--config", str(tmp / "config.toml"), *args,
        timeout=180,
    )  # fmt: skip


def offered(server: ScriptedServer, n: int = 0) -> dict[str, Any]:
    return {
        t["function"]["name"]: t["function"] for t in server.completions[n].body.get("tools", [])
    }


def result(server: ScriptedServer, n: int = -1) -> Any:
    return json.loads(tool_messages(server, n)[-1]["content"])


def test_a_tool_call_with_allow_mcp(server: ScriptedServer, tag: Path) -> None:
    server.script(reply(calls=[call("mcp__srv__add", {"a": 2, "b": 3})]), reply("5"))
    done = ask(server, tag, stdio("srv", "basic", tag), "--allow-mcp", "add 2 and 3")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5\n"
    tools = offered(server)
    assert tools["mcp__srv__add"]["parameters"]["properties"]["a"]["type"] == "integer"
    assert result(server)["content"] == "5"
    assert "mcp__srv__add" in done.stderr  # its card
    # Escape sequences and Rich markup of a server's name and description: neutralised.
    weird = next(name for name in tools if name.startswith("mcp__srv__weird"))
    assert weird == "mcp__srv__weird__2Jname"
    assert "\x1b" not in json.dumps(tools[weird]) and "\x1b" not in done.stderr


def test_without_allow_mcp_ask_refuses_unless_the_config_allows(
    server: ScriptedServer, tag: Path, basic_url: str
) -> None:
    server.script(
        reply(calls=[call("mcp__srv__echo", {"text": "hi"})]),
        reply("no"),
        reply(calls=[call("mcp__srv__add", {"a": 1, "b": 1})]),
        reply("2"),
    )
    config = http("srv", basic_url, 'allow = ["add"]')
    done = ask(server, tag, config, "echo hi")
    assert done.returncode == 0, done.stderr
    refused = result(server, 1)
    assert refused["error_code"] == "NOT_ALLOWED" and "--allow-mcp" in refused["error"]
    done = ask(server, tag, config, "add")
    assert done.returncode == 0 and result(server, 3)["content"] == "2", done.stderr


def test_every_content_type_and_every_failure_is_a_result(
    server: ScriptedServer, tag: Path
) -> None:
    server.script(
        reply(
            calls=[
                call("mcp__srv__kinds"),
                call("mcp__srv__fails"),
                call("mcp__srv__slow", {"seconds": 60}),
            ]
        ),
        reply(calls=[call("mcp__srv__crash")]),
        reply(calls=[call("mcp__srv__add", {"a": 20, "b": 22})]),
        # Twice more dead: the second restart is the last one.
        reply(calls=[call("mcp__srv__crash"), call("mcp__srv__crash"), call("mcp__srv__add")]),
        reply("done"),
    )  # fmt: skip
    config = stdio("srv", "basic", tag, "timeout_s = 2")
    done = ask(server, tag, config, "--allow-mcp", "go")
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    kinds, fails, slow = (json.loads(m["content"]) for m in tool_messages(server, 1))
    assert "plain text" in kinds["content"] and "embedded notes" in kinds["content"]
    assert "[resource link: big.csv file:///big.csv]" in kinds["content"]
    assert kinds["structured_content"] == {"answer": 42}
    assert any("image (image/png" in note for note in kinds["notes"])
    assert fails == {"error": "it broke", "error_code": "TOOL_ERROR"}
    assert slow["error_code"] == "MCP_ERROR" and "2 s" in slow["error"]
    crashed = json.loads(tool_messages(server, 2)[-1]["content"])
    assert crashed["error_code"] == "MCP_ERROR" and "stopped answering" in crashed["error"]
    # The dead server is started again for the next call.
    assert json.loads(tool_messages(server, 3)[-1]["content"])["content"] == "42"
    last = [json.loads(m["content"]) for m in tool_messages(server, 4)[-3:]]
    assert [r["error_code"] for r in last] == ["MCP_ERROR"] * 3
    assert "not restarted: 2 restarts used" in last[-1]["error"]


def test_a_big_result_is_cut_to_its_share(server: ScriptedServer, tag: Path) -> None:
    # 50 MB on one JSON-RPC line: read in linear time (skillchat/mcp/stdio.py).
    server.script(reply(calls=[call("mcp__srv__big", {"size": 50_000_000})]), reply("ok"))
    done = ask(server, tag, stdio("srv", "basic", tag), "--allow-mcp", "big")
    assert done.returncode == 0, done.stderr
    cut = result(server)
    assert cut["truncated"] is True and "cut to the first" in cut["notes"][-1]
    assert len(tool_messages(server)[-1]["content"]) <= 300_000 // 4


def test_a_server_that_exits_at_start_and_a_recursive_schema(
    server: ScriptedServer, tag: Path
) -> None:
    server.script(reply("fine"))
    config = refusing("dead", tag) + stdio("rec", "recursive", tag)
    done = ask(server, tag, config, "hi")
    assert done.returncode == 0 and done.stdout == "fine\n", done.stderr
    assert "MCP server 'dead' is not available" in done.stderr
    assert "this server refuses to start" in done.stderr
    assert "mcp__rec__tree_tool left out: its input schema is recursive" in done.stderr
    assert set(offered(server)) >= {"mcp__rec__fine"}
    assert "mcp__rec__tree_tool" not in offered(server)


def test_500_tools_past_the_share_are_offered_by_name(server: ScriptedServer, tag: Path) -> None:
    server.script(
        reply(calls=[call("mcp_tool_schema", {"name": "mcp__many__tool_480"})]),
        reply(calls=[call("mcp__many__tool_480")]),
        reply("ok"),
    )
    done = ask(server, tag, stdio("many", "many", tag, "allow = true"), "go")
    assert done.returncode == 0, done.stderr
    first = offered(server, 0)
    assert "mcp_tool_schema" in first and "mcp__many__tool_480" not in first
    assert sum(len(json.dumps(t)) for t in first.values()) < 300_000 // 10 + 5_000
    assert "offered by name only" in done.stderr
    assert "mcp__many__tool_480" in offered(server, 1)
    assert result(server, 2)["content"] == "tool 480"


def test_streamable_http_with_a_header_from_the_environment(
    server: ScriptedServer, tag: Path, basic_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP23_TOKEN", "secret-token")
    config = http("web", basic_url, 'headers = { Authorization = "Bearer ${MCP23_TOKEN}" }')
    server.script(reply(calls=[call("mcp__web__echo", {"text": "over http"})]), reply("ok"))
    done = ask(server, tag, config, "--allow-mcp", "echo")
    assert done.returncode == 0, done.stderr
    assert result(server)["content"] == "over http"
    assert "secret-token" not in done.stderr


def test_a_killed_skillchat_takes_its_servers_along(server: ScriptedServer, tag: Path) -> None:
    (tag / "config.toml").write_text(stdio("srv", "basic", tag, "timeout_s = 600"))
    server.script(reply(calls=[call("mcp__srv__slow", {"seconds": 600})]))
    skills = tag / "skills"
    skills.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "skillchat", "ask", *session_options(server, skills),
         "--config", str(tag / "config.toml"), "--allow-mcp", "sleep"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_for(lambda: len(server.completions) >= 1 and bool(alive(tag)), 120)
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        child.kill()
    assert wait_for(lambda: not alive(tag), 20), alive(tag)


def test_a_server_starts_only_when_its_tools_are_needed(server: ScriptedServer, tag: Path) -> None:
    """Commands that call no tool start no server; `ask` waits for a server only in
    its first session (no list of it kept yet); after that its tools are offered from
    the kept list and it starts at the first call of one; `--no-mcp` offers none; a
    kept list that cannot be read is waited for as no list."""
    config = tag / "config.toml"
    config.write_text(counted_table("srv", tag))
    skills = tag / "skills"
    skill_folder(skills, "local", "name: local\ndescription: A local skill.\n")
    options = ["--config", str(config), "--skills-dir", str(skills)]
    for argv in (
        ["skills", "list"], ["skills", "list", "--json"], ["skills", "stats"],
        ["skills", "cost"], ["skills", "show", "local"], ["skills", "trust"],
        ["skills", "deps"],
    ):  # fmt: skip
        done = skillchat(*argv, *options)
        assert done.returncode == 0, (argv, done.stderr)
    assert skillchat("chats", "list", "--config", str(config)).returncode == 0
    assert skillchat("skills", "validate", str(skills)).returncode == 0
    assert starts(tag) == 0
    server.script(
        reply("first"), reply("kept"), reply(calls=[call("mcp__srv__add", {"a": 1, "b": 2})])
    )
    server.script(reply("called"), reply("none"))
    for _ in range(2):
        assert ask(server, tag, config.read_text(), "hi").returncode == 0
    assert starts(tag) == 1  # the first session waited for it; the second did not start it
    assert "mcp__srv__add" in offered(server, 1)
    called = ask(server, tag, config.read_text(), "--allow-mcp", "add")
    assert called.returncode == 0 and starts(tag) == 2, called.stderr
    assert result(server, 3)["content"] == "3"
    bare = ask(server, tag, config.read_text(), "--no-mcp", "hi")
    assert bare.returncode == 0 and "mcp__srv__add" not in offered(server, 4)
    assert starts(tag) == 2
    # A kept list that cannot be read is no list: the server is waited for again.
    (folder() / "mcp-tools.json").write_text('{"broken": ')
    server.script(reply("waited"))
    assert ask(server, tag, config.read_text(), "hi").returncode == 0
    assert starts(tag) == 3 and "mcp__srv__add" in offered(server, 5)
    assert json.loads((folder() / "mcp-tools.json").read_text())  # kept anew


def test_mcp_list_and_tools_json(tag: Path, basic_url: str) -> None:
    config = tag / "config.toml"
    config.write_text(stdio("srv", "basic", tag) + http("web", basic_url) + refusing("dead", tag))
    done = skillchat("mcp", "list", "--config", str(config), "--json", timeout=180)
    assert done.returncode == 1
    rows = {row["name"]: row for row in json.loads(done.stdout)["servers"]}
    assert rows["srv"]["state"] == "ready" and rows["srv"]["tools"] == 8
    assert rows["web"]["state"] == "ready" and rows["web"]["tools"] == 8
    assert rows["dead"]["state"] == "failed" and "refuses to start" in rows["dead"]["error"]
    done = skillchat("mcp", "tools", "web", "--config", str(config), "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    tools = {t["name"]: t for t in json.loads(done.stdout)["tools"]}
    assert tools["add"]["offered_as"] == "mcp__web__add"
    assert tools["add"]["annotations"] == {"readOnlyHint": True}
    assert "dead" in one_line_error(
        skillchat("mcp", "tools", "dead", "--config", str(config), timeout=180), 1
    )


def test_config_tables_are_checked(tmp_path: Path) -> None:
    bad = {
        '[mcp.x]\ncommand = "a"\nurl = "http://h/mcp"\n': "either 'command'",
        '[mcp."a__b"]\ncommand = "a"\n': "single '_'",
        '[mcp.x]\ncommand = "a"\ncolor = 1\n': "unknown key 'color'",
        '[mcp.x]\nurl = "ftp://h"\n': "http(s) URL",
        '[mcp.x]\ncommand = "a"\nenv = { K = 1 }\n': "must be strings",
    }
    for text, message in bad.items():
        (tmp_path / "c.toml").write_text(text)
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            load_settings(tmp_path / "c.toml")
    (tmp_path / "c.toml").write_text('[mcp.x]\ncommand = "a"\n')
    done = skillchat("ask", "--config", str(tmp_path / "c.toml"), "--mcp", "y", "hi")
    assert "--mcp y: no [mcp.y]" in one_line_error(done, 2)
    assert load_settings(tmp_path / "c.toml", mcp_use=()).mcp.active() == []
    (tmp_path / "c.toml").write_text(
        '[mcp.x]\nurl = "http://u:pw@h/mcp"\nheaders = { A = "tok-123" }\n'
    )
    shown = skillchat("config", "show", "--config", str(tmp_path / "c.toml"), "--json")
    servers = json.loads(shown.stdout)["settings"]["mcp_servers"]
    assert servers == {
        "x": {"target": "http://h/mcp", "env": [], "headers": ["A"], "allow": [], "enabled": True}
    }


def test_allowed_tools_pre_approve_only_from_a_trusted_skill(tmp_path: Path) -> None:
    skill_folder(
        tmp_path,
        "gh",
        "name: gh\ndescription: d\nallowed-tools: mcp__github__get_issue Bash(git:*)\n",
    )
    skill_folder(tmp_path, "other", "name: other\ndescription: d\nallowed-tools: Read\n")
    registry = discover([tmp_path])
    settings = load_settings(None)

    def verdict(trusted: bool, activated: list[str], mode: str = "approve") -> str:

        s = settings.replaced(run_allowed_tools=mode)
        return decide(s, registry, activated, "github", "mcp__github__get_issue", "get_issue",
                      lambda skill: trusted).kind  # fmt: skip

    assert verdict(True, ["gh"]) == "approved"
    assert verdict(False, ["gh"]) == "ask"
    assert verdict(True, []) == "ask"
    assert verdict(True, ["other"]) == "ask"
    assert verdict(True, ["other"], "restrict") == "refused"
    assert verdict(True, ["gh"], "ignore") == "ask"


MCP_QUESTION = "Call it? [y]es / [n]o / [a]lways:"


def test_consent_in_the_repl_yes_always_no_and_ctrl_c(
    server: ScriptedServer, tag: Path, basic_url: str, pty_sessions: Callable[..., PtySession]
) -> None:
    (tag / "config.toml").write_text(http("srv", basic_url))
    (tag / "skills").mkdir()
    echo = call("mcp__srv__echo", {"text": "hi [bold]x[/]"})
    server.script(
        reply(calls=[echo]), reply("said yes"),
        reply(calls=[echo]), reply("said always"),
        reply(calls=[echo]), reply("no question"),
        reply(calls=[call("mcp__srv__add", {"a": 1, "b": 2})]), reply("said no"),
        reply(calls=[call("mcp__srv__add", {"a": 1, "b": 2})]), reply("ctrl-c"),
    )  # fmt: skip
    repl = pty_sessions(
        *session_options(server, tag / "skills"), "--config", str(tag / "config.toml"), timeout=120
    )
    repl.prompt()
    repl.line("one")
    card = repl.expect(MCP_QUESTION)
    assert "server: srv · tool: echo" in card and "hi [bold]x[/]" in card
    assert re.search(r'\n {5}"text": "hi \[bold\]x\[/\]"\r*\n {4}\}', card)  # with the card
    repl.send("y")
    assert "said yes" in repl.prompt()
    repl.line("two")
    repl.expect(MCP_QUESTION)
    repl.send("a")
    assert "said always" in repl.prompt()
    screen = repl.run("three")
    assert MCP_QUESTION not in screen and "no question" in screen
    repl.line("four")
    card = repl.expect(MCP_QUESTION)
    assert "the server says (not verified): readOnlyHint=True" in card
    repl.send("n")
    assert "said no" in repl.prompt()
    repl.line("five")
    repl.expect(MCP_QUESTION)
    repl.interrupt()
    assert "ctrl-c" in repl.prompt()
    got = [json.loads(m["content"]) for m in tool_messages(server)]
    assert [g.get("content") for g in got[:3]] == ["hi [bold]x[/]"] * 3
    assert [g.get("error_code") for g in got[3:]] == ["NOT_ALLOWED", "NOT_ALLOWED"]
    assert repl.quit() == 0


def test_a_trusted_skills_allowed_tools_pre_approve_an_untrusted_ones_do_not(
    server: ScriptedServer, tag: Path, basic_url: str, pty_sessions: Callable[..., PtySession]
) -> None:
    (tag / "config.toml").write_text(http("srv", basic_url))
    skills = tag / "skills"
    for name in ("gh", "gh2"):
        frontmatter = f"name: {name}\ndescription: Uses srv.\nallowed-tools: mcp__srv__echo\n"
        skill_folder(skills, name, frontmatter, "Use the srv MCP server.\n")
    trusted = skillchat("skills", "trust", "gh", "--skills-dir", str(skills))
    assert trusted.returncode == 0, trusted.stderr
    echo = call("mcp__srv__echo", {"text": "hi"})
    server.script(reply(calls=[echo]), reply("trusted ran"), reply(calls=[echo]), reply("asked"))
    repl = pty_sessions(
        *session_options(server, skills), "--config", str(tag / "config.toml"), timeout=120
    )
    repl.prompt()
    screen = repl.run("/gh say hi")
    assert "pre-approved: skill 'gh' (trusted) lists mcp__srv__echo" in screen
    assert MCP_QUESTION not in screen and "trusted ran" in screen
    repl.run("/new")
    repl.line("/gh2 say hi")
    card = repl.expect(MCP_QUESTION)
    assert "skill 'gh2' lists it but is not trusted" in card
    repl.send("n")
    assert "asked" in repl.prompt()
    assert repl.quit() == 0
