"""Frontmatter YAML text into a mapping, safely; and the message helpers for its values.

Apart from finding and reading the frontmatter (skills/frontmatter.py, bytes and
file descriptors), this is the YAML side, the one that must survive hostile text:

* YAML is parsed by PyYAML's safe loader (the libyaml one when present), with three
  refusals a plain `safe_load` lacks: aliases (`*name`, the billion-laughs vector:
  a frontmatter has no need for them), nesting deeper than `MAX_DEPTH` (libyaml
  recurses in C and a 60,000-deep `[[[...` kills the process), and duplicate keys
  (PyYAML silently keeps the last one; js-yaml and strictyaml refuse them).
* `json_safe` makes what YAML yields (dates, bytes, sets, odd keys) JSON, as the
  frontmatter is handed to the model; `shown` and `type_name` put a value in a
  one-line message, for this module's errors and validation's.

PyYAML is imported at the first parse, not with this module: a start whose every
frontmatter comes from the parse cache (skills/frontmatter_cache.py) never loads it.
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillchat.errors import FrontmatterError

if TYPE_CHECKING:
    import yaml

MAX_DEPTH = 64  # collections inside collections; real frontmatter uses 2 or 3
_INDICATORS = "[{-:?"  # every YAML collection needs at least one of these of its own


@dataclass(frozen=True)
class Frontmatter:
    """A parsed frontmatter mapping, plus the SKILL.md line of each top-level key
    (so validation can point at the offending line)."""

    data: dict[Any, Any]
    key_lines: dict[Any, int] = field(default_factory=dict)
    # Top-level keys whose plain value held ': ' and was read as quoted text
    # (`quote_colon_values`): only in a lenient parse.
    quoted: tuple[str, ...] = ()


def _base_loader() -> type:
    """PyYAML's safe loader, the libyaml one when present."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _loader() -> type:
    """The hardened loader class, made at the first parse (PyYAML loads with it)."""
    import yaml

    class _Loader(_base_loader()):  # type: ignore[misc]
        """Safe loader that refuses aliases and duplicate keys, and records the line
        of each top-level key.

        An alias makes the composer hand the constructor the same node twice, so a
        node met again is an alias (or a recursive one): refusing it here costs
        nothing on the common path, unlike a second pass over the event stream.
        """

        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
            if node in self.constructed_objects or node in self.recursive_objects:
                line = node.start_mark.line + 2
                raise FrontmatterError(
                    f"YAML aliases are not allowed (the value anchored at line {line} is reused)",
                    line,
                )
            return super().construct_object(node, deep=deep)

        def construct_document(self, node: yaml.Node) -> Any:
            self._root = node
            self.key_lines: dict[Any, int] = {}
            return super().construct_document(node)

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    ident = (key_node.tag, key_node.value)
                    if ident in seen:
                        problem = f"duplicate key {shown(key_node.value)}"
                        raise yaml.constructor.ConstructorError(
                            None, None, problem, key_node.start_mark
                        )
                    seen.add(ident)
                    if node is self._root:
                        self.key_lines.setdefault(key_node.value, key_node.start_mark.line)
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            return mapping

    return _Loader


def _check_events(text: str) -> None:
    """Refuse over-deep nesting (and aliases) by walking libyaml's event stream.

    The event parser is iterative, so this is safe on inputs that would crash the
    recursive composer. Called only when a cheap scan says depth could matter.
    """
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=_base_loader()):
        if isinstance(event, yaml.AliasEvent):
            line = event.start_mark.line + 2 if event.start_mark else None
            raise FrontmatterError(f"YAML aliases are not allowed ('*{event.anchor}')", line)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 2 if event.start_mark else None
                raise FrontmatterError(f"frontmatter nested deeper than {MAX_DEPTH} levels", line)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _needs_event_check(text: str) -> bool:
    """Could `text` nest deeper than MAX_DEPTH? Each collection needs an indicator
    character of its own, so their count bounds the depth."""
    return sum(text.count(c) for c in _INDICATORS) > MAX_DEPTH


def _yaml_error(exc: yaml.YAMLError, text: str) -> FrontmatterError:
    """One line naming the SKILL.md line: marks are 0-based, and line 1 is `---`."""
    import yaml

    if isinstance(exc, yaml.reader.ReaderError):  # a control character, before parsing
        line = text.count("\n", 0, max(exc.position, 0)) + 2
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "character"
        return FrontmatterError(f"YAML syntax error at line {line}: {char} is not allowed", line)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    problem = " ".join(str(problem).split())
    if mark is None:
        return FrontmatterError(f"YAML syntax error: {problem}")
    line = mark.line + 2
    if isinstance(exc, yaml.constructor.ConstructorError):  # duplicate key, unknown tag
        return FrontmatterError(f"YAML error at line {line}: {problem}", line)
    return FrontmatterError(f"YAML syntax error at line {line}: {problem}", line)


def shown(value: object, limit: int = 80) -> str:
    """A value as shown in a one-line message: a string quoted (`'name'`), other
    values bare (`3`), escaped when they hold newlines or other unprintables, and
    cut to `limit` characters."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    if not text.isprintable():
        return repr(text)
    return f"'{text}'" if isinstance(value, str) else text


def type_name(value: object) -> str:
    """A YAML-flavoured type name for messages ('list', not 'list[str]')."""
    names = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer"}
    if value is None:
        return "null"
    return names.get(type(value), type(value).__name__)


def parse_frontmatter(text: str) -> Frontmatter:
    """Parse frontmatter YAML text (the lines between the delimiters) into a mapping.

    Raises FrontmatterError for syntax errors (with the SKILL.md line), aliases,
    excessive nesting, duplicate keys, and anything that is not a mapping.
    """
    import yaml

    try:
        if _needs_event_check(text):
            _check_events(text)
        loader = _loader()(text)
        try:
            data = loader.get_single_data()
            key_lines = {k: v + 2 for k, v in getattr(loader, "key_lines", {}).items()}
        finally:
            loader.dispose()
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, text) from None
    except RecursionError:
        raise FrontmatterError(f"frontmatter nested deeper than {MAX_DEPTH} levels") from None
    except Exception as exc:  # e.g. `date: 2024-13-45` or a 5,000-digit int: ValueError
        message = " ".join(str(exc).split())[:200]
        raise FrontmatterError(f"YAML value cannot be loaded: {message}") from None
    if data is None:
        raise FrontmatterError("frontmatter is empty (expected name and description)", 2)
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"frontmatter must be a YAML mapping (key: value lines), got a {type_name(data)}", 2
        )
    return Frontmatter(data, key_lines)


_UNQUOTABLE = tuple("'\"|>[{&*!%@`#")  # a value starting so is not a plain scalar


def quote_colon_values(text: str) -> tuple[str, tuple[str, ...]]:
    """`text` with each top-level plain value that holds ': ' single-quoted, and
    those values' keys. `description: Use when: the user asks` is not valid YAML
    (a mapping value inside a plain scalar), yet Codex, Claude Code and Gemini CLI
    read such a value as text. A value with ' #' is left alone: its comment would
    become text."""
    lines = text.split("\n")
    keys: list[str] = []
    for n, line in enumerate(lines):
        key, sep, value = line.partition(": ")
        value = value.strip()
        if not sep or not key or key[0] in " \t#-" or " " in key or not value:
            continue
        if value.startswith(_UNQUOTABLE) or " #" in value:
            continue
        if ": " in value or value.endswith(":"):
            lines[n] = f"{key}: '{value.replace(chr(39), chr(39) * 2)}'"
            keys.append(key)
    return "\n".join(lines), tuple(keys)


def json_safe(value: Any) -> Any:
    """A copy of a parsed YAML value that `json.dumps` accepts and round-trips.

    YAML can yield dates, bytes (`!!binary`), sets and non-string keys; the
    frontmatter is handed to the model as JSON, so those become strings and lists.
    """
    if type(value) is str or value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [json_safe(v) for v in items]
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
