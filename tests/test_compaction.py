"""Compaction end to end through the scripted server: the summary request (its
instruction, no tools), the re-attached skill bodies in the next request, the saved
chat resumed with `ask -c`, automatic compaction under a small /props window, the
failures that leave the chat as it was, and `/compact` in a real terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_helpers import RecordingView, make_chat, registry, sent, write_skill
from helpers import provider_target, session_options, skillchat, wait_for
from openai_server import ScriptedServer, call, error, reply
from pty_session import PtySession

from skillchat.chats.store import ChatStore
from skillchat.engine.compaction import COMPACTED_MARK, SKILL_CUT, SUMMARY_RULES
from skillchat.engine.loop import Chat
from skillchat.recorder import ChatRecorder
from skillchat.sections import user_data_dir
from skillchat.skills.registry import Registry

SUMMARY = "The user asked three things about pdfs; all answered."
PDF_BODY = "# PDF\nPDF-BODY-MARKER: always check the page count first.\n"
CSV_BODY = "# CSV\nCSV-BODY-MARKER: mind the delimiter.\n"


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    return registry(
        write_skill(root, "pdf", PDF_BODY),
        write_skill(root, "csv", CSV_BODY),
        write_skill(root, "big", "# Big\nBIG-START\n" + "word " * 3_000 + "\nBIG-END\n"),
        directories=(root,),
    )


def get_skill(name: str) -> dict:
    return call("get_skill", {"skill_name": name})


def four_turns(server: ScriptedServer, chat: Chat) -> None:
    """A chat of four turns whose first two loaded csv then pdf (pdf the most recent)."""
    server.script(
        reply(calls=[get_skill("csv")]),
        reply("csv answer"),
        reply(calls=[get_skill("pdf")]),
        reply("pdf answer"),
        reply("third answer"),
        reply("fourth answer"),
    )
    for text in ("first question", "second question", "third question", "fourth question"):
        chat.send(text)


def summary_requests(server: ScriptedServer) -> list[dict]:
    return [r.body for r in server.completions if r.body["messages"][0]["content"] == SUMMARY_RULES]


def test_compact_summarises_older_turns_and_puts_the_skills_back(server, skills) -> None:
    view = RecordingView()
    chat = make_chat(server, skills, view)
    four_turns(server, chat)
    before = list(chat.messages)
    server.script(reply(SUMMARY), reply("fifth answer"))
    outcome = chat.compact()
    assert outcome is not None

    request = summary_requests(server)[0]
    assert "tools" not in request and "tool_choice" not in request
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    asked = request["messages"][1]["content"]
    assert "user: first question" in asked and "[assistant called get_skill" in asked
    assert "[result of get_skill]: (the skill's instructions)" in asked  # put back, not summed
    assert "CSV-BODY-MARKER" not in asked
    assert "second question" in asked
    assert "third question" not in asked  # kept verbatim: the last two turns

    # The chat: the summary exchange, the re-attached skills, then the last two turns.
    assert chat.messages[0] == {"role": "user", "content": COMPACTED_MARK}
    assert chat.messages[1]["content"] == SUMMARY
    reattached = [json.loads(c["function"]["arguments"]) for c in chat.messages[1]["tool_calls"]]
    assert reattached == [{"skill_name": "pdf"}, {"skill_name": "csv"}]  # most recent first
    kept = before[before.index({"role": "user", "content": "third question"}) :]
    assert chat.messages[-len(kept) :] == kept

    chat.send("fifth question")
    messages = sent(server)
    assert messages[1:3] == chat.messages[:2]
    bodies = [m["content"] for m in messages if m["role"] == "tool"]
    assert "PDF-BODY-MARKER" in bodies[0] and "CSV-BODY-MARKER" in bodies[1]
    assert "first question" not in json.dumps(messages)
    notice = next(n for n in view.of("done") if n.startswith("compacted"))  # not a warning
    assert f"compacted {len(before)} messages (~" in notice
    assert f"→ {outcome.messages_after} (~" in notice
    assert "skills re-attached: pdf, csv" in notice
    assert outcome.tokens_after < outcome.tokens_before


def test_a_skill_body_over_the_budget_is_cut_and_later_ones_left_out(server, skills) -> None:
    view = RecordingView()
    chat = make_chat(server, skills, view, compact_skills_tokens=1_000)  # ~3,000 characters
    server.script(
        reply(calls=[get_skill("pdf")]),
        reply("pdf answer"),
        reply(calls=[get_skill("big")]),
        reply("big answer"),
        reply("a"),
        reply("b"),
        reply(SUMMARY),
        reply("after"),
    )
    for text in ("use pdf", "use big", "two", "three"):
        chat.send(text)
    chat.compact()
    results = [m["content"] for m in chat.messages if m["role"] == "tool"][:2]
    assert "BIG-START" in results[0] and "BIG-END" not in results[0]
    assert SKILL_CUT in results[0] and len(results[0]) <= 3_000
    assert len(results) == 1 or "PDF-BODY-MARKER" not in results[1]
    said = view.of("done") + view.of("notice")
    notice = next(n for n in said if n.startswith("compacted"))
    assert "cut to the re-attach budget: big" in notice
    assert "not re-attached (over budget, the model can load them again): pdf" in notice
    chat.send("and now?")  # the cut body is not in the ledger: get_skill serves it whole
    server.script(reply("x"))
    assert "BIG-END" in chat.toolbox.run("get_skill", '{"skill_name": "big"}').content


@pytest.mark.parametrize(
    ("move", "said"),
    [
        (error(500), "compaction failed: server error (500)"),
        (reply("half a summ", finish_reason="length"), "failed: the summary was cut at the output"),
        (reply("   "), "compaction failed: the model's summary was empty"),
    ],
)
def test_a_summary_that_fails_leaves_the_chat_as_it_was(server, skills, move, said) -> None:
    view = RecordingView()
    chat = make_chat(server, skills, view)
    four_turns(server, chat)
    before = json.loads(json.dumps(chat.messages))
    server.script(move, reply("fifth answer"))
    assert chat.compact() is None
    assert chat.messages == before
    failed = [n for n in view.of("notice") if n.startswith("compaction failed")]
    assert len(failed) == 1 and "the chat is unchanged" in failed[0]
    assert said in failed[0]
    chat.send("fifth question")
    assert "first question" in json.dumps(sent(server))


def test_nothing_to_compact_in_a_short_chat(server, skills) -> None:
    view = RecordingView()
    chat = make_chat(server, skills, view)
    server.script(reply("one"), reply("two"))
    chat.send("a")
    chat.send("b")
    assert chat.compact() is None
    assert view.of("notice")[-1] == "nothing to compact: the chat has no turns before its last 2"
    assert len(server.completions) == 2


def ask(server: ScriptedServer, skills_dir: Path, *args: str) -> str:
    done = skillchat("ask", *session_options(server, skills_dir), *args)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_small_window_compacts_by_itself_and_the_saved_chat_resumes_compacted(
    server, tmp_path
) -> None:
    """n_ctx 2,048 is a 4,608-character budget for the system prompt (~1,500
    characters here) and the messages: the fourth question of ~700 characters passes
    it even after elision, so the chat compacts before sending."""
    root = tmp_path / "skills"
    write_skill(root, "pdf", PDF_BODY)
    server.props = {"default_generation_settings": {"n_ctx": 2048}}
    server.script(
        reply("one"), reply("two"), reply("three"), reply(SUMMARY), reply("four"), reply("five")
    )
    padding = " x" * 350
    ask(server, root, "/pdf alpha" + padding)
    for n in ("second", "third"):
        assert "compacted" not in ask(server, root, "-c", n + padding)
    said = ask(server, root, "-c", "fourth" + padding)
    assert "the chat passed its context budget: compacted 9 messages" in said
    assert "skills re-attached: pdf" in said
    assert len(summary_requests(server)) == 1
    fourth = sent(server)
    assert fourth[1] == {"role": "user", "content": COMPACTED_MARK}
    assert "PDF-BODY-MARKER" in fourth[3]["content"]  # re-attached, whole

    ask(server, root, "-c", "fifth")
    resumed = sent(server)
    assert "alpha" not in json.dumps(resumed)
    assert resumed[1] == {"role": "user", "content": COMPACTED_MARK}
    assert resumed[2]["content"] == SUMMARY
    users = [m["content"].split()[0] for m in resumed if m["role"] == "user"]
    assert users == ["[compacted]", "third", "fourth", "fifth"]

    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        stored = store.load_messages(chat.id)
    assert stored[0].message["content"].startswith("alpha")  # nothing stored was dropped
    shown = skillchat("chats", "show", chat.id)
    assert shown.returncode == 0, shown.stderr
    assert "compacted here: the chat's 9 messages became the model's summary below" in shown.stdout
    assert shown.stdout.index("alpha") < shown.stdout.index("compacted here")
    markdown = skillchat("chats", "export", chat.id, "--format", "md").stdout
    assert "*Compacted here: the chat's 9 messages" in markdown and "## Summary" in markdown
    exported = skillchat("chats", "export", chat.id, "--format", "json")
    flags = [m.get("compaction") for m in json.loads(exported.stdout)["messages"]]
    assert flags.count(None) == len(flags) - 3  # the mark, the summary, the skill result


def test_an_auto_compaction_that_fails_still_sends_the_turn(server, tmp_path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "pdf", PDF_BODY)
    server.props = {"default_generation_settings": {"n_ctx": 3072}}  # 6,912 characters
    server.script(reply("one"), reply("two"), reply("three"), error(400), reply("four"))
    padding = " x" * 750
    ask(server, root, "first" + padding)
    for n in ("second", "third"):
        ask(server, root, "-c", n + padding)
    said = ask(server, root, "-c", "fourth" + padding)
    assert "compaction failed" in said and "the chat is unchanged" in said
    assert "left out of the request" in said  # the last resort, as before compaction
    assert len(server.completions) == 5


def test_compact_in_the_repl_and_ctrl_c_during_the_summary(
    server: ScriptedServer, tmp_path: Path, pty_sessions
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "pdf", PDF_BODY)
    server.script(
        reply("one"),
        reply("two"),
        reply("three"),
        reply("never seen", delay=30),
        reply(SUMMARY),
        reply("four"),
    )
    session: PtySession = pty_sessions(*session_options(server, root))
    session.prompt()
    for text in ("/pdf first", "second", "third"):
        session.run(text)
    session.line("/compact")
    assert wait_for(lambda: len(summary_requests(server)) == 1)
    session.interrupt()
    session.expect("compaction interrupted: the chat is unchanged")
    session.prompt()
    shown = session.run("/compact")
    assert "compacted 8 messages (~" in shown and " tokens) → 7 (~" in shown
    # This summary is longer than the turns it replaced: said, and as a warning.
    assert "nothing was gained: the summary is no shorter than the turns it replaced" in shown
    assert "skills re-attached: pdf" in shown
    assert "four" in session.run("fourth")
    users = [m["content"] for m in sent(server) if m["role"] == "user"]
    assert users == [COMPACTED_MARK, "second", "third", "fourth"]
    assert session.quit() == 0


def test_two_compactions_and_a_resume_give_the_chat_the_loop_had(server, skills, store) -> None:
    """The store replays each compaction over what came before it (`kept` messages
    stay), so a chat compacted twice resumes exactly as the loop left it."""
    recorder = ChatRecorder(store, provider_target("openai/test-model"))
    chat = make_chat(server, skills, RecordingView())
    chat.emit.listeners.append(recorder)
    four_turns(server, chat)
    server.script(reply(SUMMARY), reply("5"), reply("6"), reply("second summary"))
    chat.compact()
    chat.send("fifth question")
    chat.send("sixth question")
    chat.compact()
    assert chat.messages[1]["content"] == "second summary"
    assert recorder.chat_id is not None
    resumed = store.load_transcript(recorder.chat_id).messages
    assert len(store.load_messages(recorder.chat_id)) > len(resumed)  # history kept
    stubbed = [m for m in chat.messages if m["role"] != "tool"]
    assert [m for m in resumed if m["role"] != "tool"] == stubbed
    assert [m["role"] for m in resumed] == [m["role"] for m in chat.messages]
    users = [m["content"] for m in resumed if m["role"] == "user"]
    assert users == [COMPACTED_MARK, "fifth question", "sixth question"]
