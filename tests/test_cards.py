"""Tool cards: name, arguments, a short result preview; errors red; bodies never dumped."""

from __future__ import annotations

import json
from pathlib import Path

from chat_helpers import SkillBox, registry, skill_box, write_skill
from rich.console import Console

from skillchat.engine.emit import ToolRecord
from skillchat.ui.cards import collapse, format_arguments, human_size, tool_card
from skillchat.ui.safe import exact
from skillchat.ui.theme import theme


def render(record: ToolRecord, width: int = 80) -> str:
    console = Console(
        record=True, width=width, no_color=False, color_system="standard", theme=theme()
    )
    console.print(tool_card(record))
    return console.export_text()


def tools(tmp_path: Path) -> SkillBox:
    lines = "".join(f"line {i}\n" for i in range(1, 101))
    skill = write_skill(
        tmp_path,
        "calc",
        "# Calc\n\nSECRET-BODY-MARKER\n",
        {"long.txt": lines, "markup.txt": "[red]not markup[/red] [bold]x"},
    )
    return skill_box(registry(skill), md=10_000, res=300)


def record(tools: SkillBox, name: str, args: dict, synthetic: bool = False) -> ToolRecord:
    raw = json.dumps(args)
    return ToolRecord(name, raw, tools.run(name, raw), synthetic=synthetic)


def test_read_card_shows_args_size_and_a_collapsed_preview(tmp_path: Path) -> None:
    rec = record(
        tools(tmp_path), "read_file_in_skill", {"skill_name": "calc", "file_path": "long.txt"}
    )
    text = render(rec)
    assert "read_file_in_skill" in text
    assert 'skill_name="calc", file_path="long.txt"' in text
    assert (
        "line 1\n" in text.replace(" ", "").replace("│", "\n").replace("line", "line ")
        or "line 1" in text
    )
    assert "more lines" in text and "line 50" not in text
    assert "[truncated: 'long.txt'" in text  # the last line is the notice
    assert "792 B · truncated" in text
    assert len(text.splitlines()) <= 12
    assert tool_card(rec).border_style == "card.border"


def test_error_card_is_red_with_the_code(tmp_path: Path) -> None:
    rec = record(tools(tmp_path), "read_file_in_skill", {"skill_name": "calc", "file_path": "../x"})
    card = tool_card(rec)
    assert card.border_style == "card.border.error"
    text = render(rec)
    assert "Path traversal detected" in text and "error: PATH_TRAVERSAL" in text


def test_get_skill_card_lists_files_not_the_body(tmp_path: Path) -> None:
    rec = record(tools(tmp_path), "get_skill", {"skill_name": "calc"}, synthetic=True)
    text = render(rec)
    assert "SECRET-BODY-MARKER" not in text
    assert "files: SKILL.md, long.txt, markup.txt" in text
    assert "get_skill · /calc" in text
    assert "complete" in text


def test_file_text_is_never_markup(tmp_path: Path) -> None:
    rec = record(
        tools(tmp_path), "read_file_in_skill", {"skill_name": "calc", "file_path": "markup.txt"}
    )
    assert "[red]not markup[/red] [bold]x" in render(rec, width=120)


def test_helpers() -> None:
    assert (
        format_arguments('{"skill_name": "pdf", "max_bytes": 10}')
        == 'skill_name="pdf", max_bytes=10'
    )
    assert format_arguments('{"skill_name": "pdf"') == '{"skill_name": "pdf"'
    assert format_arguments("") == ""
    assert format_arguments(json.dumps({"x": "y" * 500})).endswith("…")
    assert collapse("a\nb\n") == ["a", "b"]
    many = collapse("\n".join(str(i) for i in range(20)), max_lines=8)
    assert many == ["0", "1", "2", "3", "4", "… 13 more lines …", "18", "19"]
    assert [human_size(n) for n in (0, 812, 1638, 2 * 1024 * 1024)] == [
        "0 B",
        "812 B",
        "1.6 KB",
        "2.0 MB",
    ]


def test_exact_marks_every_format_character_and_keeps_plain_text() -> None:
    """Every Unicode format character (Cf: zero-width, joiners, direction marks, tags)
    becomes a marker in `exact`; a plain command is left as it is."""
    import sys
    import unicodedata

    fmt = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    shown = exact("".join(fmt)).plain
    assert shown == "".join(f"<U+{ord(c):04X}>" for c in fmt)
    assert exact("ls -la 'a b' ~/x é 😀\tz").plain == "ls -la 'a b' ~/x é 😀\tz"
    assert exact("a\ufe0fb\u3000c\x1b").plain == "a<U+FE0F>b<U+3000>c␛"
