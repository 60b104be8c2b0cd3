"""Skills served over MCP (the skills extension): a real SDK server
(tests/mcp_servers.py `skills`) publishing skills with digest manifests, read by
the scripted model through get_skill and read_file_in_skill in `skillchat ask`.

The tests that change the server's skills (its `bump` tool), or whose subject is a
stdio server's start, start their own over stdio; the rest share one over streamable
HTTP, started once for the module (a server's start costs about a second of CPU)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from chat_helpers import settings_for, system_text, tool_messages
from helpers import session_options, skill_folder, skillchat, wait_for
from openai_server import ScriptedServer, call, reply
from test_mcp import ask, http, shared_server, stdio, tag  # noqa: F401  (the fixture: no server outlives a test)

from skillchat.config import load_settings
from skillchat.mcp.hub import McpHub
from skillchat.mcp.policy import decide
from skillchat.mcp.skills import served_skill
from skillchat.session import Session
from skillchat.skills.registry import Registry, with_served
from skillchat.skills.trust import TrustState, TrustStore

if TYPE_CHECKING:
    from pty_session import PtySession

NOTES = "references/notes.md"


@pytest.fixture(scope="module")
def skills_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from shared_server("skills", tmp_path_factory)


def results(server: ScriptedServer, n: int = -1) -> list[Any]:
    out = []
    for message in tool_messages(server, n):
        try:
            out.append(json.loads(message["content"]))
        except ValueError:
            out.append(message["content"])
    return out


def test_a_served_skill_is_read_verified_and_a_wrong_digest_refused(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
) -> None:
    server.script(
        reply(
            calls=[
                call("get_skill", {"skill_name": "demo"}),
                call("read_file_in_skill", {"skill_name": "demo", "file_path": NOTES}),
                call("read_file_in_skill", {"skill_name": "demo", "file_path": "scripts/x.py"}),
                call("get_skill", {"skill_name": "lying"}),
            ]
        ),
        reply("done"),
    )  # fmt: skip
    done = ask(server, tag, stdio("pub", "skills", tag), "use demo")
    assert done.returncode == 0, done.stderr
    got, notes, unlisted, lying = results(server)
    assert "Served body, version 1." in got["documentation"] and got["origin"] == "mcp:pub"
    assert got["files"] == ["SKILL.md", "references/notes.md"]
    assert notes == "served notes\n"
    assert "not in the manifest" in unlisted
    assert lying["error_code"] == "DIGEST_MISMATCH" and "does not match" in lying["error"]
    # The catalog names the served skills beside local ones.
    prompt = system_text(server, -1) or ""
    assert "[mcp:pub] A skill served over MCP." in prompt and "lying" in prompt


def test_skills_list_shows_the_origin_and_a_local_skill_shadows(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    skills_url: str,
) -> None:
    skills = tag / "skills"
    skill_folder(skills, "shared", "name: shared\ndescription: The local one.\n", "Local.\n")
    server.script(reply(calls=[call("get_skill", {"skill_name": "shared"})]), reply("ok"))
    done = ask(server, tag, http("pub", skills_url), "shared")
    assert done.returncode == 0, done.stderr
    assert "Local." in results(server)[0]["documentation"]
    assert "skill 'shared' of mcp:pub is shadowed by" in done.stderr
    config = str(tag / "config.toml")
    options = ["--skills-dir", str(skills), "--config", config]
    local = skillchat("skills", "list", "--json", *options)  # no server asked: said
    assert "demo" not in {row["name"] for row in json.loads(local.stdout)["skills"]}
    assert "served by MCP servers are not listed (pub)" in local.stderr
    listed = skillchat("skills", "list", "--served", "--json", *options)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)["skills"]}
    assert rows["demo"]["origin"] == "mcp:pub" and rows["shared"]["origin"] == "local"
    assert rows["demo"]["trust"] == "untrusted"


def test_trust_is_bound_to_the_manifest_and_a_change_is_seen(tag: Path) -> None:  # noqa: F811
    (tag / "config.toml").write_text(stdio("pub", "skills", tag))
    settings = load_settings(tag / "config.toml")
    hub = McpHub(settings.mcp.active())
    hub.start()
    try:
        hub.wait()
        served = {s.name: s for s in hub.served_skills()[0]}
        store = TrustStore(tag / "trust.json")
        store.trust(served["demo"])
        assert store.state(served["demo"]) is TrustState.TRUSTED
        assert store.state(served["shared"]) is TrustState.UNTRUSTED
        assert not hub.call("pub", "bump", {}).is_error
        hub.relist_skills()
        changed = {s.name: s for s in hub.served_skills()[0]}["demo"]
        assert store.state(changed) is TrustState.CHANGED
    finally:
        hub.close()


def test_a_skill_changed_between_turns_is_picked_up_and_loses_its_trust(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
) -> None:
    (tag / "config.toml").write_text(stdio("pub", "skills", tag))
    loaded = load_settings(tag / "config.toml")
    settings = settings_for(
        server, mcp_servers=loaded.mcp.servers, skill_dirs=(str(tag / "skills"),), mcp_allow=True
    )
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "demo"}), call("mcp__pub__bump")]),
        reply("bumped"),
        reply(calls=[call("get_skill", {"skill_name": "demo"})]),
        reply("read again"),
    )
    session = Session(settings)
    try:
        session.send("use demo")
        store = TrustStore.load()
        demo = session.registry.skills["demo"]
        assert demo.origin == "mcp:pub" and store.state(demo) is TrustState.UNTRUSTED
        store.trust(demo)  # as `skillchat skills trust demo` does
        store.save()
        assert TrustStore.load().state(demo) is TrustState.TRUSTED
        session.send("again")  # the server changed demo during the first turn
        assert "version 2" in results(server)[-1]["documentation"]
        changed = session.registry.skills["demo"]
        assert TrustStore.load().state(changed) is TrustState.CHANGED
    finally:
        session.close()


def test_trusting_a_served_skill_from_the_cli_and_its_allowed_tools(
    tag: Path,  # noqa: F811
    skills_url: str,
) -> None:
    config = str(tag / "config.toml")
    (tag / "config.toml").write_text(http("pub", skills_url))
    done = skillchat("skills", "trust", "demo", "--config", config, "--skills-dir", str(tag))
    assert done.returncode == 0, done.stderr
    assert "demo: trusted" in done.stdout and "mcp:pub skill://demo/SKILL.md" in done.stdout
    options = ["--config", config, "--skills-dir", str(tag)]
    listed = skillchat("skills", "list", "--served", "--json", *options)
    rows = {row["name"]: row for row in json.loads(listed.stdout)["skills"]}
    assert rows["demo"]["trust"] == "trusted" and rows["shared"]["trust"] == "untrusted"
    servers = skillchat("mcp", "list", "--config", config)
    assert servers.returncode == 0 and "3 skills" in servers.stdout, servers.stderr
    refused = skillchat("skills", "show", "lying", "--config", config, "--skills-dir", str(tag))
    assert refused.returncode != 0 and "does not match the skill's manifest" in refused.stderr
    assert "Traceback" not in refused.stderr
    shown = skillchat("skills", "show", "demo", "--config", config, "--skills-dir", str(tag))
    assert shown.returncode == 0, shown.stderr
    assert "origin: mcp:pub" in shown.stdout and "Served body, version 1." in shown.stdout
    # The trusted skill's allowed-tools pre-approve its server's tool; untrusted, nothing.
    settings = load_settings(tag / "config.toml")
    hub = McpHub(settings.mcp.active())
    hub.start()
    try:
        hub.wait()
        registry = with_served(Registry({}), hub.served_skills()[0])
        store = TrustStore.load()
        verdict = decide(
            settings, registry, ["demo"], "pub", "mcp__pub__echo", "echo", store.is_trusted
        )
        assert verdict.kind == "approved", verdict
        store.revoke(registry.skills["demo"])
        verdict = decide(
            settings, registry, ["demo"], "pub", "mcp__pub__echo", "echo", store.is_trusted
        )
        assert verdict.kind == "ask" and "not trusted" in verdict.reason
    finally:
        hub.close()


def test_entries_breaking_the_extension_rules_are_refused(tmp_path: Path) -> None:
    def fetch(uri: str) -> bytes:
        raise AssertionError("nothing is fetched to list a skill")

    good = {"uri": "skill://a/SKILL.md", "digest": "sha256:" + "a" * 64, "size": 1}
    cases = {
        "..": {"uri": "skill://x/../SKILL.md", "frontmatter": {"name": "..", "description": "d"}},
        "dynamic": {"uri": "skill://a/SKILL.md", "resources": "dynamic"},
        "outside": {
            "uri": "skill://a/SKILL.md",
            "resources": [good, {**good, "uri": "skill://b/x"}],
        },
        "digest": {"uri": "skill://a/SKILL.md", "resources": [{**good, "digest": "md5:1"}]},
        "climbs": {
            "uri": "skill://a/SKILL.md",
            "resources": [good, {**good, "uri": "skill://a/../x"}],
        },
    }
    for case, entry in cases.items():
        entry = {"frontmatter": {"name": "a", "description": "d"}, "resources": [good], **entry}
        skill, why = served_skill("s", entry, tmp_path, fetch)
        assert skill is None and why, case
    skill, why = served_skill(
        "s", {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
              "resources": [good]}, tmp_path, fetch,
    )  # fmt: skip
    assert skill is not None and skill.origin == "mcp:s" and not why


def test_served_skills_over_streamable_http(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    skills_url: str,
) -> None:
    server.script(
        reply(calls=[call("read_file_in_skill", {"skill_name": "demo", "file_path": NOTES})]),
        reply("ok"),
    )
    done = ask(server, tag, http("web", skills_url), "notes")
    assert done.returncode == 0, done.stderr
    assert results(server) == ["served notes\n"]


def test_served_skills_are_in_the_repl_before_the_first_message_and_their_commands_asked(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    pty_sessions: Callable[..., PtySession],
) -> None:
    """One REPL with --allow-run: the served skills join before any message is sent;
    then each command under the untrusted served skill is asked despite --allow-run."""
    run = call("run_command", {"command": "echo ran"})
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "demo"}), run]), reply("asked"),
    )  # fmt: skip
    (tag / "config.toml").write_text(stdio("pub", "skills", tag))
    (tag / "skills").mkdir()
    config = ("--config", str(tag / "config.toml"))
    repl = pty_sessions(
        *session_options(server, tag / "skills"), "--allow-run", *config, timeout=120
    )
    repl.prompt()  # the prompt does not wait for the server, started over stdio
    # The server comes up in the background; its skills join at the next command.
    assert wait_for(lambda: "A skill served over MCP" in repl.run("/skills"), timeout=90)
    assert "demo" in repl.run("/trust")  # its allowed-tools count only once trusted
    assert "lying" in "".join(repl.output)  # the wrong digest said once, not joined
    assert server.completions == []  # no message was needed for any of it
    repl.line("use demo")
    card = repl.expect("Run it? [y]es / [n]o")
    assert "asking because" in card and "echo ran" in card
    repl.send("y")
    assert "asked" in repl.prompt()
    assert "ran" in results(server)[-1]["stdout"]
    assert repl.quit() == 0


def test_a_command_while_an_untrusted_served_skill_is_active_needs_its_trust(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    skills_url: str,
) -> None:
    run = call("run_command", {"command": "echo ran"})
    server.script(
        reply(calls=[run]), reply("before"),
        reply(calls=[call("get_skill", {"skill_name": "demo"}), run]), reply("refused"),
        reply(calls=[call("get_skill", {"skill_name": "demo"}), run]), reply("trusted"),
    )  # fmt: skip
    config = http("pub", skills_url)
    done = ask(server, tag, config, "--allow-run", "no skill")
    assert done.returncode == 0 and "ran" in results(server)[-1]["stdout"], done.stderr
    done = ask(server, tag, config, "--allow-run", "use demo")
    refused = results(server)[-1]
    assert refused["error_code"] == "NOT_ALLOWED", refused
    assert "skill 'demo' served by mcp:pub is active and not trusted" in refused["error"]
    assert "--allow-run does not cover it" in refused["error"]
    skills_dir = str(tag / "skills")
    trusted = skillchat("skills", "trust", "demo", "--config", str(tag / "config.toml"),
                        "--skills-dir", skills_dir)  # fmt: skip
    assert trusted.returncode == 0, trusted.stderr
    done = ask(server, tag, config, "--allow-run", "use demo")
    assert done.returncode == 0 and "ran" in results(server)[-1]["stdout"], done.stderr


def test_an_always_is_neither_offered_nor_kept_while_a_served_skill_gates_commands(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    skills_url: str,
    pty_sessions: Callable[..., PtySession],
) -> None:
    """An "always" for a local skill's command holds until an untrusted served skill
    is active; then that command is asked again, with only yes / no."""
    from consent_helpers import QUESTION
    from sandbox_helpers import require_sandbox

    require_sandbox()
    (tag / "config.toml").write_text(http("pub", skills_url))
    skill_folder(tag / "skills", "calc", "name: calc\ndescription: Echoes.\n")
    run = call("run_command", {"command": "echo ran", "skill_name": "calc"})
    server.script(
        reply(calls=[run]), reply("said always"),
        reply(calls=[run]), reply("not asked"),
        reply(calls=[call("get_skill", {"skill_name": "demo"}), run]), reply("asked again"),
    )  # fmt: skip
    repl = pty_sessions(*session_options(server, tag / "skills"),
                        "--config", str(tag / "config.toml"), timeout=120)  # fmt: skip
    repl.prompt()
    repl.line("run it")
    repl.expect(QUESTION)
    repl.send("a")
    assert "said always" in repl.prompt()
    assert "not asked" in repl.run("again")
    repl.line("use demo")
    card = repl.expect("Run it? [y]es / [n]o: ")
    assert "skill 'demo' served by mcp:pub is active and not trusted" in card
    assert "always =" not in card
    repl.send("a")  # not a key of this question: ignored, the question stays
    repl.send("y")
    after = repl.prompt()
    assert "yes" in after and "asked again" in after
    assert results(server)[-1]["stdout"] == "ran\n"
    assert repl.quit() == 0
