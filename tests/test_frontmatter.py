"""Frontmatter reading and parsing: delimiters, bounds, hostile YAML, and properties."""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillchat.skills.frontmatter import (
    MAX_FRONTMATTER_BYTES,
    FrontmatterError,
    open_skill_md,
    parse_open_frontmatter,
    split_skill_md,
)
from skillchat.skills.frontmatter_yaml import (
    Frontmatter,
    json_safe,
    parse_frontmatter,
    quote_colon_values,
)

GOOD = b"---\nname: demo\ndescription: A demo skill.\n---\n# Body\n"


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "SKILL.md"
    path.write_bytes(data)
    return path


def frontmatter_of(path: Path) -> Frontmatter:
    """The frontmatter of the SKILL.md `path` as discovery reads it (inspect_skill):
    opened from its folder, then parsed."""
    opened = open_skill_md(str(path.parent))
    assert opened is not None
    return parse_open_frontmatter(*opened)


def error_of(tmp_path: Path, data: bytes) -> FrontmatterError:
    with pytest.raises(FrontmatterError) as info:
        frontmatter_of(write(tmp_path, data))
    return info.value


# --------------------------------------------------------------------------- delimiters


def test_reads_plain_frontmatter(tmp_path: Path) -> None:
    fm = frontmatter_of(write(tmp_path, GOOD))
    assert fm.data == {"name": "demo", "description": "A demo skill."}
    assert fm.key_lines == {"name": 2, "description": 3}


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + GOOD,
        GOOD.replace(b"\n", b"\r\n"),
        b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n"),
        b"---  \t\nname: demo\ndescription: A demo skill.\n--- \t\r\nbody",
        b"---\nname: demo\ndescription: A demo skill.\n---",  # closing line at EOF
    ],
    ids=["bom", "crlf", "bom-crlf", "trailing-whitespace", "no-final-newline"],
)
def test_tolerated_variants(tmp_path: Path, data: bytes) -> None:
    assert frontmatter_of(write(tmp_path, data)).data["name"] == "demo"


def test_missing_frontmatter(tmp_path: Path) -> None:
    err = error_of(tmp_path, b"# Just markdown\nname: demo\n")
    assert err.message == "SKILL.md does not start with YAML frontmatter ('---' on line 1)"
    assert err.line == 1


def test_blank_first_line_is_reported_as_such(tmp_path: Path) -> None:
    err = error_of(tmp_path, b"\n" + GOOD)
    assert "line 1 is blank" in err.message
    assert err.line == 1


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "SKILL.md is empty"),
        (b"\xff\xfe-\x00-\x00-\x00\n\x00", "SKILL.md is UTF-16; it must be UTF-8"),
        (b"---\nname: demo\ndescription: never closed\n", "frontmatter is not closed"),
        (b"--- # comment\nname: demo\n---\n", "does not start with YAML frontmatter"),
        (b"----\nname: demo\n----\n", "does not start with YAML frontmatter"),
        (b" ---\nname: demo\n---\n", "does not start with YAML frontmatter"),
    ],
)
def test_bad_openings(tmp_path: Path, data: bytes, expected: str) -> None:
    assert expected in error_of(tmp_path, data).message


def test_indented_dashes_inside_a_block_scalar_stay_in_the_value(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: |\n  before\n  ---\n  after\n---\nbody\n"
    assert frontmatter_of(write(tmp_path, data)).data["description"] == "before\n---\nafter\n"


def test_dashes_inside_a_one_line_value_do_not_close(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: 'a---b --- c'\nlicense: MIT\n---\n"
    fm = frontmatter_of(write(tmp_path, data))
    assert fm.data["description"] == "a---b --- c"
    assert fm.data["license"] == "MIT"


def test_column_zero_dashes_close_even_inside_quotes(tmp_path: Path) -> None:
    """A whole `---` line at column 0 ends the frontmatter (it is a YAML document
    marker too), so a quoted value spanning it is cut: a YAML error, not a crash."""
    data = b"---\nname: demo\ndescription: 'first\n---\nsecond'\n---\n"
    err = error_of(tmp_path, data)
    assert err.message.startswith("YAML syntax error at line 4:")


def test_yaml_syntax_error_reports_the_skill_md_line(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: fine\nlicense: [unclosed\n---\n"
    err = error_of(tmp_path, data)
    assert err.line == 5  # the parser notices at the line after the '['
    assert err.message.startswith("YAML syntax error at line 5: ")
    data = b"---\nname: demo\nbad: a: b\n---\n"
    err = error_of(tmp_path, data)
    assert err.line == 3
    assert err.message.startswith("YAML syntax error at line 3: mapping values are not allowed")


@pytest.mark.parametrize(
    ("yaml_text", "got"),
    [
        ("- a\n- b\n", "got a list"),
        ("just a string\n", "got a string"),
        ("42\n", "got a integer"),
    ],
)
def test_not_a_mapping(tmp_path: Path, yaml_text: str, got: str) -> None:
    err = error_of(tmp_path, f"---\n{yaml_text}---\n".encode())
    assert err.message.startswith("frontmatter must be a YAML mapping")
    assert got in err.message


@pytest.mark.parametrize("yaml_text", ["", "\n\n", "# only a comment\n", "~\n", "null\n"])
def test_empty_or_null_frontmatter(tmp_path: Path, yaml_text: str) -> None:
    err = error_of(tmp_path, f"---\n{yaml_text}---\n".encode())
    assert err.message == "frontmatter is empty (expected name and description)"


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    err = error_of(tmp_path, b"---\nname: a\ndescription: d\nname: b\n---\n")
    assert err.message == "YAML error at line 4: duplicate key 'name'"


def test_unsafe_tags_are_refused(tmp_path: Path) -> None:
    err = error_of(tmp_path, b"---\nname: !!python/object/apply:os.system ['true']\n---\n")
    assert "could not determine a constructor" in err.message


@pytest.mark.parametrize("value", ["2024-13-45", "1" * 5000, "!!float 'abc'", "!!timestamp 'nope'"])
def test_values_python_cannot_build_are_errors_not_crashes(tmp_path: Path, value: str) -> None:
    err = error_of(tmp_path, f"---\nname: demo\nwhen: {value}\n---\n".encode())
    assert "YAML" in err.message


def test_non_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    err = error_of(tmp_path, b"---\nname: demo\ndescription: caf\xe9\n---\n")
    assert err.message == "frontmatter is not valid UTF-8 (byte 0xe9 at line 3)"
    assert err.line == 3


def test_nul_byte_is_a_yaml_error(tmp_path: Path) -> None:
    err = error_of(tmp_path, b"---\nname: demo\ndescription: d\x00\n---\n")
    assert err.message == "YAML syntax error at line 3: U+0000 is not allowed"


# --------------------------------------------------------------------------- hostile YAML


def billion_laughs(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\n"


def test_billion_laughs_is_refused_fast(tmp_path: Path) -> None:
    err = error_of(tmp_path, billion_laughs().encode())
    # Refused at the first alias: 9**9 strings were never built (that would take
    # minutes and gigabytes, not a loaded machine's extra second).
    assert "aliases are not allowed" in err.message
    assert err.line == 2


@pytest.mark.parametrize(
    "yaml_text",
    [
        "name: &n demo\ndescription: *n\n",
        "base: &b {x: 1}\nother:\n  <<: *b\n",
        "&r [*r]\n",
    ],
    ids=["scalar-alias", "merge-key", "recursive"],
)
def test_any_alias_is_refused(tmp_path: Path, yaml_text: str) -> None:
    assert (
        "aliases are not allowed" in error_of(tmp_path, f"---\n{yaml_text}---\n".encode()).message
    )


@pytest.mark.parametrize(
    "yaml_text",
    ["x: " + "[" * 30000, "x: " + "[" * 20000 + "]" * 20000, "x:\n" + "- " * 30000 + "a"],
    ids=["unclosed-flow", "closed-flow", "block"],
)
def test_deep_nesting_is_refused_not_a_crash(tmp_path: Path, yaml_text: str) -> None:
    """libyaml's composer recurses in C: ~60,000 levels kill the interpreter."""
    err = error_of(tmp_path, f"---\n{yaml_text}\n---\n".encode())
    assert "nested deeper than" in err.message or "YAML syntax error" in err.message


def test_moderate_nesting_is_fine(tmp_path: Path) -> None:
    data = "---\nname: demo\nmetadata: " + "[" * 30 + "]" * 30 + "\n---\n"
    assert frontmatter_of(write(tmp_path, data.encode())).data["metadata"]


# --------------------------------------------------------------------------- size bounds


def padded(size: int) -> bytes:
    """A closed frontmatter whose YAML text is exactly `size` bytes."""
    head = b"name: demo\ndescription: d\n# "
    return b"---\n" + head + b"x" * (size - len(head) - 1) + b"\n---\nbody\n"


def test_frontmatter_of_exactly_64_kib_is_accepted(tmp_path: Path) -> None:
    assert frontmatter_of(write(tmp_path, padded(MAX_FRONTMATTER_BYTES))).data["name"] == "demo"


def test_frontmatter_over_64_kib_is_rejected(tmp_path: Path) -> None:
    err = error_of(tmp_path, padded(MAX_FRONTMATTER_BYTES + 1))
    assert err.message == "frontmatter larger than 64 KiB"


def test_huge_unclosed_file_is_rejected_after_a_bounded_read(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    with path.open("wb") as fh:
        fh.write(b"---\n" + b"key: value\n" * 20_000)  # real lines well past the cap
        fh.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper, instant to make
    tracemalloc.start()
    with pytest.raises(FrontmatterError, match="larger than 64 KiB"):
        frontmatter_of(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1024 * 1024  # the cap was read, not the 100 MB


def test_huge_body_is_never_read(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    with path.open("wb") as fh:
        fh.write(GOOD + b"\xff\x00 not utf-8 \n---\n")
        fh.truncate(200 * 1024 * 1024)
    tracemalloc.start()
    assert frontmatter_of(path).data["name"] == "demo"
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 256 * 1024


def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)
    with pytest.raises(FrontmatterError, match="not a regular file"):
        frontmatter_of(fifo)
    assert open_skill_md(str(tmp_path / "missing")) is None  # no SKILL.md: not a skill


# --------------------------------------------------------------------------- split / json


def test_split_returns_the_body_unchanged() -> None:
    text = "---\r\nname: demo\r\ndescription: d\r\n---\r\n# Title\r\n\r\n---\r\nmore\r\n"
    data, body = split_skill_md("\ufeff" + text)
    assert data == {"name": "demo", "description": "d"}
    assert body == "# Title\r\n\r\n---\r\nmore\r\n"


def test_split_applies_the_same_rules() -> None:
    with pytest.raises(FrontmatterError, match="line 1 is blank"):
        split_skill_md("\n---\nname: x\n---\n")
    with pytest.raises(FrontmatterError, match="not closed"):
        split_skill_md("---\nname: x\n")
    with pytest.raises(FrontmatterError, match="larger than 64 KiB"):
        split_skill_md(padded(MAX_FRONTMATTER_BYTES + 1).decode())


def test_split_makes_frontmatter_json_safe() -> None:
    data, _ = split_skill_md("---\nname: d\nwhen: 2024-05-01\nset: !!set {a, b}\n1: one\n---\n")
    assert data == {"name": "d", "when": "2024-05-01", "set": ["a", "b"], "1": "one"}
    json.dumps(data)


def test_json_safe_handles_every_yaml_type() -> None:
    value = {
        "d": dt.datetime(2024, 1, 2, 3, 4, 5),
        "b": b"\x00\x01",
        "f": float("nan"),
        "t": (1, 2),
        2: None,
        "ok": [True, 1.5, "s"],
    }
    safe = json_safe(value)
    assert json.loads(json.dumps(safe, allow_nan=False)) == safe
    assert safe["d"] == "2024-01-02T03:04:05"
    assert safe["2"] is None


# --------------------------------------------------------------------------- properties


def _parse_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "SKILL.md")
        path.write_bytes(data)
        try:
            frontmatter_of(path)
        except FrontmatterError as exc:
            assert exc.message and "\n" not in exc.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=512))
def test_reader_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    _parse_bytes(data)


YAMLISH = st.text(alphabet="-:[]{}&*!|>'\"#? \t\r\n\ufeffab1\x00é", max_size=300)


@settings(max_examples=500, deadline=None)
@given(YAMLISH, st.sampled_from(["", "\n---\nbody"]))
def test_parser_never_raises_on_yamlish_text(text: str, tail: str) -> None:
    try:
        split_skill_md("---\n" + text + tail)
    except FrontmatterError as exc:
        assert exc.message and "\n" not in exc.message


# Leave out what PyYAML's *emitter* cannot round-trip by itself (NEL, U+2028/9 are
# YAML 1.1 line breaks it writes unquoted): this tests our splitting, not PyYAML.
CHARS = st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"], include_characters="\n-")
SCALARS = st.one_of(
    st.text(CHARS, max_size=40),
    st.integers(),
    st.booleans(),
    st.none(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(CHARS, max_size=8), inner),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(CHARS, min_size=1, max_size=20), VALUES, min_size=1, max_size=6),
    st.text(max_size=200),
    st.booleans(),
    st.booleans(),
)
def test_generated_frontmatter_round_trips(
    data: dict[str, object], body: str, crlf: bool, bom: bool
) -> None:
    dumped = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    header = f"---\n{dumped}---\n"
    if crlf:
        header = header.replace("\n", "\r\n")
    parsed, rest = split_skill_md(("\ufeff" if bom else "") + header + body)
    assert parsed == data
    assert rest == body


def test_parse_frontmatter_accepts_text_directly() -> None:
    fm = parse_frontmatter("name: demo\ndescription: d\n")
    assert fm.data["name"] == "demo"


def test_quoting_colon_values_leaves_other_values_alone() -> None:
    text = (
        "name: x\n"
        "description: Use when: it's asked\n"
        "license: 'MIT: see'\n"
        "compatibility: a: b # why\n"
        "metadata:\n  k: a: b\n"
    )
    fixed, keys = quote_colon_values(text)
    assert keys == ("description",)
    assert fixed.splitlines()[1] == "description: 'Use when: it''s asked'"
    assert fixed.splitlines()[2:] == text.splitlines()[2:]
