"""The three skill tools (docs/tools.md). Every example of their contract runs end to
end: the scripted model makes the call, and the test checks the tool message
skillchat sent back. Then the edges: arguments, limits, binary files, context."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from chat_helpers import make_chat, registry, skill_box, tool_messages, write_skill
from helpers import REAL_SKILLS
from openai_server import ScriptedServer, call, reply

from skillchat.config import Settings
from skillchat.tools.base import ToolContext
from skillchat.tools.context import ContextLedger
from skillchat.tools.skill_tools import GetSkill, ListSkills, ReadFileInSkill

BASIC_PY = "\ndef add(a, b):\n    return a + b\n\ndef subtract(a, b):\n    return a - b\n"
WEATHER_MD = "# Weather API Reference\n\n## get_forecast(location)\n..."
CONFIG_JSON = '{"api_endpoint": "https://example.com", "timeout": 30}'
SAMPLES = "sample1\nsample2\nsample3"
CALC_BODY = (
    "# Calculator Skill\n\nProvides basic arithmetic operations.\n\n"
    "## Usage\n\n```python\nresult = 2 + 2\nprint(result)\n```"
)
TRAVERSAL = "Path traversal detected: cannot access files outside skill folder"
# get_skill's invalid-name message, as its JSON decodes: one backslash.
INVALID_NAME = (
    "Invalid skill name: '../../../etc/passwd'. Skill names must not contain '/', '\\', or '..'"
)


@pytest.fixture
def example_skills(tmp_path: Path):
    root = tmp_path / "skills"
    return registry(
        write_skill(root, "calculator", CALC_BODY, {"examples/basic.py": BASIC_PY}),
        write_skill(root, "weather", files={"docs/api_reference.md": WEATHER_MD}),
        write_skill(root, "web_search"),
        write_skill(root, "data_processor", files={"config.json": CONFIG_JSON}),
        write_skill(root, "ml_model", files={"data/samples/input.txt": SAMPLES}),
        directories=(root,),
    )


def round_trip(server: ScriptedServer, reg, name: str, arguments: dict | str) -> dict:
    """The model calls `name(arguments)` as call_abc123; return the tool message sent back."""
    server.script(reply(calls=[call(name, arguments, id="call_abc123")]), reply("done"))
    result = make_chat(server, reg).send("go")
    assert result.answer == "done"
    [message] = tool_messages(server)
    assert message["tool_call_id"] == "call_abc123"
    assert set(message) == {"role", "tool_call_id", "content"}
    return message


# ------------------------------------------------------- read_file_in_skill


@pytest.mark.parametrize(
    ("skill", "path", "expected"),
    [
        ("calculator", "examples/basic.py", BASIC_PY),  # 1: a Python example file
        ("weather", "docs/api_reference.md", WEATHER_MD),  # 2: documentation
        (
            "calculator",
            "examples/missing.py",
            "ERROR: File 'examples/missing.py' not found in skill 'calculator'",
        ),  # 3
        ("calculator", "../../../etc/passwd", f"ERROR: {TRAVERSAL}"),  # 4
        ("nonexistent", "README.md", "ERROR: Skill 'nonexistent' not found in skills folder"),  # 5
        ("data_processor", "config.json", CONFIG_JSON),  # 6: configuration file
        ("ml_model", "data/samples/input.txt", SAMPLES),  # 7: subdirectories
    ],
    ids=["1-python", "2-markdown", "3-missing", "4-traversal", "5-no-skill", "6-json", "7-nested"],
)
def test_read_file_in_skill_examples(server, example_skills, skill, path, expected) -> None:
    message = round_trip(
        server, example_skills, "read_file_in_skill", {"skill_name": skill, "file_path": path}
    )
    assert message["content"] == expected


# ---------------------------------------------------------------- get_skill


def test_get_skill_returns_the_body_without_frontmatter(server, example_skills) -> None:
    content = json.loads(
        round_trip(server, example_skills, "get_skill", {"skill_name": "calculator"})["content"]
    )
    assert list(content) == ["skill_name", "documentation", "frontmatter", "files", "truncated"]
    assert content["skill_name"] == "calculator"
    assert content["documentation"] == CALC_BODY
    assert content["frontmatter"] == {
        "name": "calculator",
        "description": "The calculator skill.",
    }
    assert content["files"] == ["SKILL.md", "examples/basic.py"]
    assert content["truncated"] is False


def test_get_skill_when_skill_md_is_gone(server, example_skills) -> None:
    (example_skills.get("calculator").root / "SKILL.md").unlink()
    message = round_trip(server, example_skills, "get_skill", {"skill_name": "calculator"})
    assert json.loads(message["content"]) == {
        "error": "SKILL.md not found for skill 'calculator'",
        "error_code": "NOT_FOUND",
    }


def test_get_skill_with_an_invalid_name(server, example_skills) -> None:
    message = round_trip(server, example_skills, "get_skill", {"skill_name": "../../../etc/passwd"})
    assert json.loads(message["content"]) == {
        "error": INVALID_NAME,
        "error_code": "INVALID_ARGUMENT",
    }
    # The contract's own JSON text of the message, byte for byte.
    assert r"must not contain '/', '\\', or '..'" in message["content"]


def test_get_skill_of_a_skill_that_does_not_exist(server, example_skills) -> None:
    message = round_trip(server, example_skills, "get_skill", {"skill_name": "nonexistent"})
    assert json.loads(message["content"]) == {
        "error": "Skill 'nonexistent' not found in skills folder",
        "error_code": "NOT_FOUND",
    }


# -------------------------------------------------------------- list_skills


def test_list_skills_names_every_skill(server, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    reg = registry(*(write_skill(root, n) for n in ("web_search", "calculator", "weather")))
    message = round_trip(server, reg, "list_skills", {})
    assert message["content"] == '{"skills": ["calculator", "weather", "web_search"]}'


def list_skills_over(reg) -> str:
    """The list_skills tool itself: a chat without skills does not offer it."""
    return ListSkills().run("", ToolContext(Settings(), reg)).content


def test_list_skills_of_an_empty_folder(server, tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    empty = registry(directories=(tmp_path / "skills",))
    assert list_skills_over(empty) == '{"skills": []}'
    # In a chat: no skills, no tools offered; a model that calls list_skills anyway
    # is told it is unknown, and that nothing is available.
    message = round_trip(server, empty, "list_skills", "")
    assert json.loads(message["content"])["error"] == (
        "Unknown tool 'list_skills'. Available: (none)"
    )
    assert "tools" not in server.completions[0].body


def test_list_skills_without_a_skills_folder(tmp_path: Path) -> None:
    # Adapted: skillchat scans several folders, so "not found" means none of them exists.
    missing = tmp_path / "nowhere" / "skills"
    assert json.loads(list_skills_over(registry(directories=(missing,)))) == {
        "error": f"Skills folder not found at path: {missing}"
    }


# ------------------------------------------------------------------ edges, in process


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_skill", "{}", "missing required argument 'skill_name'"),
        ("get_skill", '{"skill_name": 7}', "'skill_name' must be a non-empty string"),
        ("get_skill", '{"skill_name": ""}', "'skill_name' must be a non-empty string"),
        ("get_skill", '{"skill_name": "calc"', "arguments are not valid JSON"),
        ("get_skill", '["calc"]', "arguments must be a JSON object"),
        ("read_file_in_skill", '{"skill_name": "calc"}', "missing required argument 'file_path'"),
        (
            "read_file_in_skill",
            '{"skill_name": "calc", "file_path": "a", "max_bytes": 0}',
            "'max_bytes' must be a positive integer",
        ),
        (
            "read_file_in_skill",
            '{"skill_name": "calc", "file_path": "a", "max_bytes": "9"}',
            "'max_bytes' must be a positive integer",
        ),
        (
            "read_file_in_skill",
            '{"skill_name": "calc", "file_path": "a", "max_bytes": true}',
            "'max_bytes' must be a positive integer",
        ),
        ("list_skills", "{not json", "arguments are not valid JSON"),
        ("run_script", "{}", "Unknown tool 'run_script'. Available: list_skills, get_skill"),
    ],
)
def test_bad_calls_become_error_results(tmp_path: Path, name, arguments, message) -> None:
    result = skill_box(registry(write_skill(tmp_path, "calc"))).run(name, arguments)
    assert result.is_error and result.error_code == "INVALID_ARGUMENT"
    assert message in result.content
    if name == "read_file_in_skill":
        assert result.content.startswith("ERROR: ")
    else:
        assert "error" in json.loads(result.content)


def test_a_number_past_pythons_digit_limit_is_an_invalid_argument(server, example_skills) -> None:
    """JSON allows any number of digits; Python refuses to turn more than 4,300 of them
    into an int (a ValueError that is not a JSONDecodeError). The model gets its own
    mistake back as INVALID_ARGUMENT, not INTERNAL_ERROR."""
    arguments = '{"skill_name": "calculator", "max_bytes": ' + "9" * 5000 + "}"
    message = round_trip(server, example_skills, "get_skill", arguments)
    result = json.loads(message["content"])
    assert result["error_code"] == "INVALID_ARGUMENT", result
    assert "arguments are not valid JSON" in result["error"]
    assert "4300" in result["error"] and len(result["error"]) < 600


def test_max_bytes_can_only_lower_the_limit(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "calc", files={"big.txt": "x" * 100})
    tools = skill_box(registry(skill), res=50)
    whole = tools.read_file_in_skill("calc", "big.txt")
    assert whole.truncated and whole.content.startswith("x" * 50 + "\n\n[truncated: 'big.txt'")
    assert "only the first 50" in whole.content
    higher = tools.read_file_in_skill("calc", "big.txt", max_bytes=80)
    assert "only the first 50" in higher.content  # not 80: the model cannot raise it
    lower = skill_box(registry(skill)).run(
        "read_file_in_skill", '{"skill_name": "calc", "file_path": "big.txt", "max_bytes": 10}'
    )
    assert lower.content.startswith("x" * 10 + "\n\n[truncated") and lower.size == 100


def test_offset_reads_the_rest_in_pieces_each_saying_where_to_go_on(tmp_path: Path) -> None:
    text = "".join(f"{i:03}é\n" for i in range(100))  # 6 bytes a line, 600 in all
    skill = write_skill(tmp_path, "calc", files={"big.txt": text})
    ledger = ContextLedger()
    tools = skill_box(registry(skill), ledger, res=250)
    first = tools.read_file_in_skill("calc", "big.txt")
    assert "only the first 249 are shown" in first.content  # not 250: 'é' is not cut
    assert "call the tool again with offset=249" in first.content
    assert first.context_key is not None
    ledger.add("c1", first.context_key)
    second = tools.read_file_in_skill("calc", "big.txt", offset=249)
    assert second.error_code is None  # other content than the first piece
    assert "only bytes 249 to 499 are shown" in second.content
    assert "offset=499" in second.content
    last = tools.read_file_in_skill("calc", "big.txt", offset=499)
    assert not last.truncated and "truncated" not in last.content
    pieces = [r.content.split("\n\n[truncated")[0] for r in (first, second, last)]
    assert "".join(pieces) == text
    # Inside a character: the piece starts at the next one.
    inside = tools.read_file_in_skill("calc", "big.txt", offset=4)
    assert inside.content.startswith("\n001é")
    past = tools.read_file_in_skill("calc", "big.txt", offset=600)
    assert past.content == "ERROR: offset 600 is past the end of 'big.txt' (600 bytes)"


def test_get_skill_over_the_limit_is_cut_and_says_so(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "calc", "word " * 200)
    result = skill_box(registry(skill), md=300).get_skill("calc")
    content = json.loads(result.content)
    assert content["truncated"] is True and result.truncated
    assert content["documentation"].startswith("word word")
    assert "[truncated: 'SKILL.md'" in content["documentation"]
    assert content["frontmatter"]["name"] == "calc"


def test_binary_and_odd_frontmatter_values(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "calc", files={"logo.png": ""})
    (skill.root / "logo.png").write_bytes(b"PK\x03\x04\x00\x00")  # a zip: no image
    (skill.root / ".hidden").write_text("secret")
    (skill.root / "SKILL.md").write_text(
        "---\nname: calc\ndescription: d\nreleased: 2024-05-01\n---\nBody\n"
    )
    tools = skill_box(registry(skill))
    binary = tools.read_file_in_skill("calc", "logo.png")
    assert binary.error_code == "UNSUPPORTED_FILE"
    assert binary.content == "ERROR: Cannot read file 'logo.png': binary files are not supported"
    content = json.loads(tools.get_skill("calc").content)
    assert content["frontmatter"]["released"] == "2024-05-01"
    assert content["documentation"] == "Body\n"
    assert content["files"] == ["SKILL.md", "logo.png"]  # hidden files are not listed


def test_already_in_context_until_it_leaves(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "calc", files={"ref.md": "reference"})
    ledger = ContextLedger()
    tools = skill_box(registry(skill), ledger, md=1000, res=1000)
    first = tools.read_file_in_skill("calc", "ref.md")
    assert first.content == "reference" and first.context_key is not None
    ledger.add("call_1", first.context_key)
    again = tools.read_file_in_skill("calc", "./ref.md")  # same file, other spelling
    assert again.error_code == "ALREADY_IN_CONTEXT" and again.content.startswith("ERROR: ")
    assert "already in context above" in again.content and "call_1" in again.content
    # A different slice is different content.
    assert tools.read_file_in_skill("calc", "ref.md", max_bytes=3).error_code is None
    # Changed on disk: different content, served.
    (skill.root / "ref.md").write_text("reference v2")
    assert tools.read_file_in_skill("calc", "ref.md").content == "reference v2"
    (skill.root / "ref.md").write_text("reference")
    ledger.forget("call_1")
    assert tools.read_file_in_skill("calc", "ref.md").content == "reference"


def test_get_skill_twice_is_already_in_context(tmp_path: Path) -> None:
    ledger = ContextLedger()
    tools = skill_box(registry(write_skill(tmp_path, "calc")), ledger, md=1000, res=1000)
    first = tools.get_skill("calc")
    assert first.activated == "calc" and first.context_key is not None
    ledger.add("c1", first.context_key)
    second = tools.get_skill("calc")
    assert json.loads(second.content)["error_code"] == "ALREADY_IN_CONTEXT"
    assert second.activated is None


def test_schemas_are_valid_for_every_provider() -> None:
    schemas = [tool.schema for tool in (ListSkills, GetSkill, ReadFileInSkill)]
    assert [s["function"]["name"] for s in schemas] == [
        "list_skills",
        "get_skill",
        "read_file_in_skill",
    ]
    for schema in schemas:
        function = schema["function"]
        assert schema["type"] == "function"
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", function["name"])
        params = function["parameters"]
        assert params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
        assert function["description"]
    read = ReadFileInSkill.schema["function"]["parameters"]
    assert read["required"] == ["skill_name", "file_path"]
    assert read["properties"]["max_bytes"]["type"] == "integer"


CORPUS = REAL_SKILLS


@pytest.mark.usefixtures("shared")
def test_every_real_skill_is_served_and_every_listed_file_read_or_refused() -> None:
    from skillchat.skills.registry import discover

    dirs = sorted(p for p in CORPUS.iterdir() if p.is_dir())
    reg = discover(dirs, max_skills=1000)
    assert len(reg.skills) > 150
    tools = skill_box(reg)
    codes: set[str | None] = set()
    for name, skill in reg.skills.items():
        content = json.loads(tools.get_skill(name).content)
        assert content["skill_name"] == name, content
        assert not content["documentation"].startswith("---")
        assert content["frontmatter"]["description"].strip() == skill.description.strip()
        for path in content["files"]:
            result = tools.read_file_in_skill(name, path)
            codes.add(result.error_code)
            assert result.error_code in (None, "UNSUPPORTED_FILE"), (name, path, result.content)
    assert None in codes
