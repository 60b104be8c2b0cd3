"""The client the MCP conformance suite runs: skillchat itself, used as a user uses it.

The suite (`@modelcontextprotocol/conformance`, tests/test_mcp_conformance.py) starts a
mock server on 127.0.0.1 for each scenario and runs this script with the server's URL
as its last argument, the scenario in `MCP_CONFORMANCE_SCENARIO` (and its data, if
any, in `MCP_CONFORMANCE_CONTEXT`). This script writes a config naming that URL as
`[mcp.conf]`, in a home of its own, then runs the real `skillchat` command on it:

- a scenario that only connects: `skillchat mcp tools conf`;
- a scenario that wants tools called: `skillchat ask --allow-mcp --allow-elicit` (a
  server's question answered with its schema's defaults), with the scripted
  model of tests/openai_server.py. The "model" reads the tools skillchat offered it
  in its first request and calls the scenario's tools as offered (their
  `mcp__conf__` names, an echo of the schema it was given), then answers "done".
- an `auth/*` scenario first logs in as a user would: its `[mcp.conf]` names the
  scenario's pre-registered client if it has one (and a client metadata URL), then
  `skillchat mcp login conf` prints the authorization URL, which is opened as a
  browser would (tests/oauth_helpers.py: the suite's authorization server approves
  at once and redirects to skillchat's loopback listener). A chat told to log in
  again (a step-up) does, and asks again.

Its exit code is skillchat's. Nothing here speaks MCP: what the suite sees on the
wire is skillchat's own client and transport (skillchat/mcp/), as in a chat.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the scripted model

from oauth_helpers import logging_in
from openai_server import ScriptedServer, call, reply

SERVER = "conf"  # the [mcp.NAME] of the suite's server
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the suite's
Offered = dict[str, dict[str, Any]]  # a tool's own name -> the function as offered
Calls = list[tuple[str, dict[str, Any]]]  # (tool, arguments)


def offered(request: dict[str, Any]) -> Offered:
    """The MCP tools offered to the model in one chat request: the server's tool
    name -> the function as offered (its `name` is `mcp__conf__TOOL`)."""
    prefix = f"mcp__{SERVER}__"
    functions = [tool["function"] for tool in request.get("tools", [])]
    return {f["name"].removeprefix(prefix): f for f in functions if f["name"].startswith(prefix)}


def stub(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that fill a tool's required parameters (a model would make some up)."""
    by_type = {"string": "x", "integer": 0, "number": 0, "boolean": False, "object": {}}
    properties = schema.get("properties", {})
    return {name: by_type.get(properties.get(name, {}).get("type"), "x")
            for name in schema.get("required", [])}  # fmt: skip


def add_numbers(tools: Offered) -> Calls:
    return [("add_numbers", {"a": 5, "b": 3})]


def from_context(tools: Offered) -> Calls:
    """The calls the scenario's context lists, arguments as given."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return [(c["name"], c.get("arguments") or {}) for c in context.get("toolCalls", [])]


def echo_schema(tools: Offered) -> Calls:
    """The focal tool's input schema, as offered, echoed back."""
    focal = tools.get("json_schema_2020_12_tool", {}).get("parameters", {})
    return [("json_schema_echo", {"schema": focal})]


# The scenarios that want tools called: what the model calls, given the tools offered
# (a tool not offered is not called). Every other scenario only connects and lists.
CALLS: dict[str, Callable[[Offered], Calls]] = {
    "tools_call": add_numbers,
    "request-metadata": add_numbers,
    "http-standard-headers": add_numbers,
    "sse-retry": lambda tools: [("test_reconnection", {})],
    "elicitation-sep1034-client-defaults": lambda tools: [("test_client_elicitation_defaults", {})],
    "sep-2322-client-request-state": lambda tools: [
        (f"test_mrtr_{name}", {})
        for name in ("echo_state", "unrelated", "no_state", "no_result_type")
    ],
    "http-custom-headers": from_context,
    "http-invalid-tool-headers": lambda tools: [
        (name, stub(f.get("parameters", {}))) for name, f in tools.items()
    ],
    "json-schema-2020-12-preservation": echo_schema,
    "auth/scope-step-up": lambda tools: [("test-tool", {})],  # it asks for more scope
}


def skillchat(args: list[str], home: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    """The real `skillchat ARGS`, started in `home` (its config, data and state there);
    its output is the suite's record of the client's."""
    folders = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".data",
               "XDG_STATE_HOME": ".state", "XDG_CACHE_HOME": ".cache"}  # fmt: skip
    env = {**os.environ, "HOME": str(home)} | {k: str(home / v) for k, v in folders.items()}
    for desktop in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):  # the browser: oauth_helpers
        env.pop(desktop, None)
    return subprocess.Popen([sys.executable, "-m", "skillchat", *args], env=env,
                            stdin=subprocess.DEVNULL, **kwargs)  # fmt: skip


def login(home: Path, config: Path) -> int:
    """`skillchat mcp login conf`, its URL opened as a browser would."""
    user = skillchat(["mcp", "login", SERVER, "--config", str(config)], home,
                     stdout=subprocess.PIPE)  # fmt: skip
    logging_in(user)
    return user.wait()


def auth_config(url: str) -> str:
    """The `[mcp.conf]` of an auth scenario: a client registered by hand when the
    scenario gives one, and the client's metadata document URL (which the suite's
    authorization server accepts when it supports them)."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    lines = [f"[mcp.{SERVER}]", f"url = {json.dumps(url)}",
             f"client_metadata_url = {json.dumps(CLIENT_METADATA_URL)}"]  # fmt: skip
    lines += [f"{key} = {json.dumps(context[key])}"
              for key in ("client_id", "client_secret") if key in context]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    url, scenario = sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    with tempfile.TemporaryDirectory(prefix="skillchat-conformance-") as folder:
        home = Path(folder)
        config = home / "config.toml"
        config.write_text(f"[mcp.{SERVER}]\nurl = {json.dumps(url)}\n", encoding="utf-8")
        if scenario.startswith("auth/"):
            config.write_text(auth_config(url), encoding="utf-8")
            done = login(home, config)
            if done != 0 or scenario not in CALLS:
                return done
        if scenario not in CALLS:
            return skillchat(["mcp", "tools", SERVER, "--config", str(config)], home).wait()
        (home / "skills").mkdir()
        code, said = ask(home, config, scenario)
        if scenario.startswith("auth/") and f"skillchat mcp login {SERVER}" in said:
            # The server asked for more access in the chat: log in again, as told.
            if login(home, config) != 0:
                return 1
            code, said = ask(home, config, scenario)
        return code


def ask(home: Path, config: Path, scenario: str) -> tuple[int, str]:
    """`skillchat ask --allow-mcp` with the scripted model calling the scenario's tools:
    its exit code, and what it told (its stderr, passed on, and the tools' results)."""
    with ScriptedServer() as model:
        first = reply(hold="offered")  # played once the model has chosen its calls
        model.script(first, reply("done"))
        chat = skillchat(["ask", "--allow-mcp", "--allow-elicit", "--config", str(config),
                          "--model", "openai/conformance", "--api-base", model.base_url,
                          "--skills-dir", str(home / "skills"), scenario], home,
                         stderr=subprocess.PIPE)  # fmt: skip
        while not model.completions and chat.poll() is None:
            time.sleep(0.02)  # until skillchat asks the model, tools offered
        if model.completions:
            tools = offered(model.completions[0].body)
            chosen = [(n, args) for n, args in CALLS[scenario](tools) if n in tools]
            first["calls"] = [call(f"mcp__{SERVER}__{n}", args) for n, args in chosen]
            first["text"] = "" if chosen else "none of the scenario's tools is offered"
            model.release("offered")
        said = chat.communicate()[1].decode(errors="replace")
        sys.stderr.write(said)
        results = [m.get("content") or "" for m in model.completions[-1].body["messages"]
                   if m.get("role") == "tool"] if model.completions else []  # fmt: skip
        return chat.returncode, "\n".join([said, *results])


if __name__ == "__main__":
    sys.exit(main())
