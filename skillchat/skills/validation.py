"""The Agent Skills rules, applied to one skill folder at a time, in two modes.

*Load mode* (discovery, `strict=False`) is forgiving about what does not stop a skill
from working: unknown keys and odd optional fields are warnings, kept on the Skill.
A broken `name` or `description` is an error: without them a skill cannot be listed
or called. *Strict mode* (`skills validate --strict`) turns those warnings into
errors, as the reference validator `skills-ref` does for unknown keys.

*Lenient* loading (discovery's default, off with `[skills] strict = true`) also
loads what the spec calls a MUST but Claude Code and other clients load anyway, so
skills users installed for them work here too: a description over 1,024 characters,
a `name` that differs from its folder, and a top-level value with an unquoted ': '
(read as text, skills/frontmatter_yaml.py `quote_colon_values`). The folder name
wins: it is what `/name`, `get_skill` and the sandbox's mount use, and what most
clients key skills on.
`skills validate` is never lenient.

The name rules follow skills-ref (1-64 characters after NFKC, lowercase, letters
or digits or '-', no '-' at either end, no '--', equal to the NFKC folder name).
Like skills-ref, "letters and digits" means Unicode ones (`str.isalnum`), so
`café` or `数据` pass; the spec's wording is ambiguous there. See
docs/skills-ref-disagreements.md for every deliberate difference.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skillchat.errors import FrontmatterError
from skillchat.hardlinks import hard_links_allowed
from skillchat.skills.frontmatter import (
    SKILL_MD_NAMES,
    open_skill_md,
    parse_open_frontmatter,
)
from skillchat.skills.frontmatter_yaml import json_safe, shown, type_name
from skillchat.skills.model import Problem, Severity
from skillchat.skills.vendor import VENDOR_KEYS

SPEC_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
# Ends each warning of lenient loading, so it can be told from the others.
LENIENT_NOTE = "[skills] strict = true leaves it out"
MAX_COMPATIBILITY_CHARS = 500


@dataclass(frozen=True, eq=False)
class Inspection:
    """The verdict on one skill folder's SKILL.md.

    `filename` is SKILL.md or skill.md; `name` is the stripped, NFKC-normalised
    name when `name` is a string at all; `frontmatter` is JSON-safe with
    `allowed-tools` normalised to a string.
    """

    filename: str
    name: str | None
    description: str | None
    frontmatter: dict[str, Any]
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


class _Findings:
    """Collects problems for one SKILL.md; `odd` is a warning in load mode and an
    error in strict mode."""

    def __init__(
        self, path: str | Path, key_lines: Mapping[Any, int], strict: bool, lenient: bool = False
    ) -> None:
        self.path = path  # made a Path only when there is a problem: most skills have none
        self.key_lines = key_lines
        self.strict = strict
        self.lenient = lenient
        self.items: list[Problem] = []

    def add(self, severity: Severity, message: str, key: str | None = None) -> None:
        line = self.key_lines.get(key) if key is not None else None
        self.items.append(Problem(Path(self.path), message, severity, line))

    def error(self, message: str, key: str | None = None) -> None:
        self.add("error", message, key)

    def warn(self, message: str, key: str | None = None) -> None:
        self.add("warning", message, key)

    def odd(self, message: str, key: str | None = None) -> None:
        self.add("error" if self.strict else "warning", message, key)

    def must(self, message: str, loaded: str, key: str | None = None) -> None:
        """A spec MUST that other clients overlook: a warning only when lenient,
        saying how the skill was loaded and how to leave it out."""
        if self.lenient:
            self.add("warning", f"{message}: {loaded}; {LENIENT_NOTE}", key)
        else:
            self.add("error", message, key)


# --------------------------------------------------------------------------- field rules


def _not_a_string(what: str, value: object) -> str:
    """`name must be a string, got integer (quote it)`: YAML reads unquoted `123`,
    `yes` or `2024-01-01` as non-strings, and quoting is the fix."""
    hint = "" if value is None or isinstance(value, list | dict) else " (quote it)"
    return f"{what} must be a string, got {type_name(value)}{hint}"


def _required_string(data: Mapping[Any, Any], key: str, f: _Findings) -> str | None:
    """The stripped value of a required string field, or None after reporting why not."""
    if key not in data:
        f.error(f"{key} is missing")
        return None
    value = data[key]
    if value is not None and not isinstance(value, str):
        f.error(_not_a_string(key, value), key)
        return None
    text = (value or "").strip()
    if not text:
        f.error(f"{key} is empty", key)
        return None
    return text


def _check_name(data: Mapping[Any, Any], dir_name: str, f: _Findings) -> str | None:
    raw = _required_string(data, "name", f)
    if raw is None:
        return None
    name = unicodedata.normalize("NFKC", raw)
    if len(name) > MAX_NAME_CHARS:
        f.error(f"name is {len(name)} characters (max {MAX_NAME_CHARS})", "name")
    if name != name.lower() or not _letters_digits_dashes(name):
        f.error(f"name {shown(raw)} must be lowercase letters, digits and '-'", "name")
    if name.startswith("-") or name.endswith("-"):
        f.error(f"name {shown(raw)} must not start or end with '-'", "name")
    if "--" in name:
        f.error(f"name {shown(raw)} must not contain '--'", "name")
    folder = unicodedata.normalize("NFKC", dir_name)
    if folder != name:
        if f.lenient and good_name(folder):
            f.must(
                f"name {shown(raw)} does not match directory {shown(dir_name)}",
                f"loaded as {shown(folder)}, the folder name /name and the sandbox use",
                "name",
            )
            return folder
        f.error(f"name {shown(raw)} does not match directory {shown(dir_name)}", "name")
    return name


def _letters_digits_dashes(name: str) -> bool:
    """Every character a letter, a digit or '-': one `isalnum` of the string rather
    than a Python step per character (discovery checks every skill's name)."""
    letters = name.replace("-", "")
    return not letters or letters.isalnum()


def good_name(name: str) -> bool:
    """Whether a folder name passes the name rules, so it may stand for the skill."""
    return (
        0 < len(name) <= MAX_NAME_CHARS
        and name == name.lower()
        and _letters_digits_dashes(name)
        and not name.startswith("-")
        and not name.endswith("-")
        and "--" not in name
    )


def _check_description(data: Mapping[Any, Any], f: _Findings) -> str | None:
    text = _required_string(data, "description", f)
    if text is None:
        return None
    if len(text) > MAX_DESCRIPTION_CHARS:
        f.must(
            f"description is {len(text)} characters (max {MAX_DESCRIPTION_CHARS})",
            "loaded anyway, as Claude Code does",
            "description",
        )
    return text


def _check_optional_strings(data: Mapping[Any, Any], f: _Findings) -> None:
    if "license" in data and not isinstance(data["license"], str):
        f.odd(_not_a_string("license", data["license"]), "license")
    if "compatibility" in data:
        value = data["compatibility"]
        if not isinstance(value, str):
            f.odd(_not_a_string("compatibility", value), "compatibility")
        elif len(value) > MAX_COMPATIBILITY_CHARS:
            f.odd(
                f"compatibility is {len(value)} characters (max {MAX_COMPATIBILITY_CHARS})",
                "compatibility",
            )


def _metadata_label(key: str) -> str:
    """`metadata.version`, or `metadata['odd\\nkey']` when the key needs quoting."""
    quoted = shown(key)
    return f"metadata.{key}" if quoted == f"'{key}'" else f"metadata[{quoted}]"


def _check_metadata(data: Mapping[Any, Any], f: _Findings) -> None:
    if "metadata" not in data:
        return
    value = data["metadata"]
    if not isinstance(value, dict):
        f.odd(
            f"metadata must be a mapping of strings to strings, got {type_name(value)}", "metadata"
        )
        return
    for key, item in value.items():
        if not isinstance(key, str):
            f.odd(f"metadata key {shown(key)} must be a string, got {type_name(key)}", "metadata")
        elif not isinstance(item, str):
            f.odd(_not_a_string(_metadata_label(key), item), "metadata")


def _normalise_allowed_tools(data: Mapping[Any, Any], f: _Findings) -> str | None:
    """Check `allowed-tools`; return the space-joined form of a list of strings."""
    value = data["allowed-tools"]
    if isinstance(value, str):
        if "," in value:
            f.warn(
                "allowed-tools looks comma-separated; the spec separates tools with spaces",
                "allowed-tools",
            )
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        joined = " ".join(value)
        f.warn(
            f"allowed-tools is a YAML list; the spec wants a space-separated string "
            f"(read as {shown(joined)})",
            "allowed-tools",
        )
        return joined
    f.odd(
        f"allowed-tools must be a space-separated string, got {type_name(value)}"
        + (" with non-string items" if isinstance(value, list) else ""),
        "allowed-tools",
    )
    return None


def _check_unknown_keys(data: Mapping[Any, Any], f: _Findings) -> None:
    """A key outside the spec is odd (an error in strict mode); one another client
    honours is only a note when loading, saying who honours it."""
    for key in data:
        if key in SPEC_KEYS:
            continue
        if key in VENDOR_KEYS and not f.strict:
            f.add("note", f"{key}: {VENDOR_KEYS[key]}", key)
        else:
            f.odd(f"unknown key {shown(key)}", key if isinstance(key, str) else None)


def check_frontmatter(
    data: Mapping[Any, Any],
    *,
    dir_name: str,
    skill_md: str | Path,
    strict: bool,
    key_lines: Mapping[Any, int] | None = None,
    lenient: bool = False,
) -> Inspection:
    """Apply every rule to a parsed frontmatter mapping (no I/O). `skill_md` is the
    file named in problems; `key_lines` maps top-level keys to SKILL.md lines."""
    f = _Findings(skill_md, key_lines or {}, strict, lenient)
    name = _check_name(data, dir_name, f)
    description = _check_description(data, f)
    _check_optional_strings(data, f)
    _check_metadata(data, f)
    frontmatter = json_safe(dict(data))
    if "allowed-tools" in data:
        joined = _normalise_allowed_tools(data, f)
        if joined is not None:
            frontmatter["allowed-tools"] = joined
    _check_unknown_keys(data, f)
    return Inspection(os.path.basename(skill_md), name, description, frontmatter, tuple(f.items))


# --------------------------------------------------------------------------- one folder


def inspect_skill(
    root: str, *, dir_name: str, shown_dir: str, strict: bool, lenient: bool = False
) -> Inspection | None:
    """Read and check the SKILL.md of the folder `root`; None if it is not a skill.

    `root` is where the files are read from (discovery passes the real path);
    `dir_name` is the folder name the `name` must equal; `shown_dir` is the folder
    as the user knows it, used in Problem paths. Never raises for a bad file.
    """
    try:
        opened = open_skill_md(root)
    except FrontmatterError as exc:
        return _failed(os.path.join(shown_dir, SKILL_MD_NAMES[0]), exc)
    if opened is None:
        return None
    fd, filename = opened
    skill_md = os.path.join(shown_dir, filename)
    try:
        fm = parse_open_frontmatter(
            fd, filename, hard_links=hard_links_allowed(root), lenient=lenient
        )
    except FrontmatterError as exc:
        return _failed(skill_md, exc)
    result = check_frontmatter(
        fm.data,
        dir_name=dir_name,
        skill_md=skill_md,
        strict=strict,
        key_lines=fm.key_lines,
        lenient=lenient,
    )
    notes = [
        Problem(
            Path(skill_md),
            f"{key}: an unquoted ': ' in its value is not valid YAML: read as text; "
            + LENIENT_NOTE,
            "warning",
            fm.key_lines.get(key),
        )
        for key in fm.quoted
    ]
    if filename != SKILL_MD_NAMES[0]:
        notes.append(Problem(Path(skill_md), f"file is named {filename}, not SKILL.md", "warning"))
    if notes:
        result = replace(result, problems=(*result.problems, *notes))
    return result


def _failed(skill_md: str, exc: FrontmatterError) -> Inspection:
    problem = Problem(Path(skill_md), exc.message, "error", exc.line)
    return Inspection(os.path.basename(skill_md), None, None, {}, (problem,))
