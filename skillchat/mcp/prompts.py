"""A server's prompts and resources, for the user (not the model).

    prompts, resources = await list_extras(client)   # at connect (mcp/hub.py)
    name, args = prompt_arguments(prompt, "draft 'a title' tone=dry")
    text = await prompt_text(client, name, args)      # its messages, as one user turn
    block = resource_block(server, uri, data)         # an `@SERVER:URI` attachment

In the REPL a server's prompt is `/mcp__SERVER__PROMPT args` (Claude Code's form):
arguments as `name=value`, or positional in the order the server declares them
(words split as a shell does, so `'two words'` is one). Its messages' text become
the user's message, cleaned of control characters and escape sequences (newlines
kept) and cut at `MAX_TURN` characters. A resource listed by a server is attached
by writing `@SERVER:URI` in a message: its text goes before the message in a
`<resource>` block, cut at `MAX_RESOURCE` bytes as a file attachment is (its bytes
are read up to the server's `max_answer_mb` first, as any answer). A server's names
and descriptions are untrusted text: cleaned wherever they are shown.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillchat.errors import McpError
from skillchat.mcp.catalog import neutral

if TYPE_CHECKING:
    from mcp import Client

    from skillchat.mcp.hub import McpHub

MAX_LISTED_PAGES = 20  # prompts/list and resources/list pages read (a bound)
MAX_LISTED = 500  # prompts, or resources, kept from one server
MAX_TURN = 100_000  # characters of a prompt's messages sent as the user's turn
MAX_RESOURCE = 256 * 1024  # bytes of a resource attached (a workspace file's bound)
PREFIX = "mcp__"
# Control characters and escape sequences; newlines and tabs are kept.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
_RESOURCE = re.compile(r"(?<![^\s(\[{<\"'`])@([A-Za-z0-9_-]+):(\S+)")


@dataclass(frozen=True)
class Prompt:
    """A server's prompt: its name as the server has it, its arguments in order
    (name, required), its description (cleaned)."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[tuple[str, bool], ...] = ()

    @property
    def command(self) -> str:
        """`mcp__SERVER__PROMPT`, the name typed after `/`."""
        return f"{PREFIX}{self.server}__{self.name}"

    def usage(self) -> str:
        """Its arguments as the completion menu shows them (`<required> [optional]`)."""
        words = [f"<{n}>" if required else f"[{n}]" for n, required in self.arguments]
        return neutral(" ".join([*words, self.description]).strip(), 300)


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str = ""


async def list_extras(client: Client, server: str) -> tuple[list[Prompt], list[Resource]]:
    """The prompts and resources of a server that declares them (none otherwise, and
    none when listing them fails: its tools still serve)."""
    capabilities = client.server_capabilities
    prompts: list[Prompt] = []
    resources: list[Resource] = []
    if capabilities is not None and capabilities.prompts is not None:
        async for item in _pages(client.list_prompts, "prompts"):
            arguments = tuple((str(a.name), bool(a.required)) for a in item.arguments or [])
            prompts.append(Prompt(server, item.name, neutral(item.description or ""), arguments))
    if capabilities is not None and capabilities.resources is not None:
        async for item in _pages(client.list_resources, "resources"):
            resources.append(Resource(str(item.uri), neutral(item.name or "")))
    return prompts, resources


async def _pages(list_page: Any, field: str) -> Any:
    cursor: str | None = None
    count = 0
    try:
        for _ in range(MAX_LISTED_PAGES):
            page = await list_page(cursor=cursor)
            for item in getattr(page, field):
                if count >= MAX_LISTED:
                    return
                count += 1
                yield item
            cursor = page.next_cursor
            if not cursor:
                return
    except Exception:  # a listing that fails lists nothing; the tools still serve
        return


def prompt_arguments(prompt: Prompt, text: str) -> dict[str, str]:
    """The arguments typed after `/mcp__SERVER__PROMPT`: `name=value` or positional
    in the declared order; McpError for one unknown, one too many, or a required
    one missing."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise McpError(f"the prompt's arguments: {exc}") from None
    declared = [name for name, _ in prompt.arguments]
    given: dict[str, str] = {}
    positional = iter(declared)
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name in declared:
            given[name] = value
            continue
        name = next((n for n in positional if n not in given), "")
        if not name:
            raise McpError(f"{prompt.command} takes {_declared(prompt)}: '{word}' is one too many")
        given[name] = word
    missing = [n for n, required in prompt.arguments if required and n not in given]
    if missing:
        raise McpError(f"{prompt.command} needs {', '.join(missing)} ({_declared(prompt)})")
    return given


def _declared(prompt: Prompt) -> str:
    return neutral(" ".join(n for n, _ in prompt.arguments), 200) or "no arguments"


async def prompt_text(client: Client, name: str, arguments: dict[str, str]) -> str:
    """`prompts/get`: its messages' text, one after the other, as the user's turn."""
    result = await client.get_prompt(name, arguments)
    parts = []
    for message in result.messages:
        content = message.content
        text = getattr(content, "text", None)
        if text is None:
            text = getattr(getattr(content, "resource", None), "text", None)
        parts.append(text if isinstance(text, str) else f"[{content.type} left out: text only]")
    return cleaned("\n\n".join(parts), MAX_TURN)


def cleaned(text: str, limit: int) -> str:
    """A server's text with escapes and control characters removed (lines kept), cut."""
    text = _CONTROL.sub("", text)
    return text if len(text) <= limit else text[:limit] + f"\n[cut at {limit:,} characters]"


def mentioned_resources(text: str, listed: dict[str, list[Resource]]) -> list[tuple[str, str]]:
    """The `@SERVER:URI` of `text` that name a listed resource, in order, each once."""
    found: list[tuple[str, str]] = []
    for match in _RESOURCE.finditer(text):
        server, uri = match.group(1), match.group(2)
        if any(r.uri == uri for r in listed.get(server, [])) and (server, uri) not in found:
            found.append((server, uri))
    return found


def resource_block(server: str, uri: str, data: bytes) -> str:
    """The attachment of one resource: its text (cut at `MAX_RESOURCE` bytes, with a
    note), in a `<resource>` block naming where it came from."""
    note = ""
    if len(data) > MAX_RESOURCE:
        data = data[:MAX_RESOURCE]
        note = f"\n[cut at {MAX_RESOURCE // 1024} KB]"
    body = cleaned(data.decode("utf-8", "replace"), MAX_RESOURCE) + note
    return f'<resource server="{server}" uri="{neutral(uri, 500)}">\n{body}\n</resource>'


def run_prompt(hub: McpHub, typed: str) -> str:
    """`/mcp__SERVER__PROMPT args` as typed: the prompt's messages, the user's turn;
    McpError for a prompt no server has, or arguments that do not fit it."""
    head, _, rest = typed.removeprefix("/").partition(" ")
    hub.start()  # their prompts are listed as they start (the REPL starts them all)
    hub.wait()
    for state in hub.servers.values():
        for prompt in state.prompts:
            if prompt.command == head:
                arguments = prompt_arguments(prompt, rest)
                return hub.prompt(prompt.server, prompt.name, arguments)
    raise McpError(f"no MCP server of this session has the prompt /{neutral(head, 200)}")


def with_resources(hub: McpHub, text: str, notice: Callable[[str], None]) -> str:
    """`text` with the resources it mentions (`@SERVER:URI`, listed ones only) in
    blocks before it; one that cannot be read is left out with a notice. With a
    mention, the servers still starting are waited for (their lists come with them)."""
    named = [m.group(1) for m in _RESOURCE.finditer(text) if m.group(1) in hub.servers]
    if not named:
        return text
    hub.start(named)  # their resources are listed as they start
    hub.wait(named)
    listed = {name: state.resources for name, state in hub.servers.items()}
    blocks = []
    for server, uri in mentioned_resources(text, listed):
        try:
            blocks.append(resource_block(server, uri, hub.read(server, uri)))
        except McpError as exc:
            notice(f"not attached: @{server}:{neutral(uri, 200)}: {exc}")
    return "\n\n".join([*blocks, text])
