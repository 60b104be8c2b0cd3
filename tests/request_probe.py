"""What `ask` may not have imported when its request leaves, checked in a fresh
interpreter by an audit hook that sees each connection to the model's server
(nothing of skillchat patched): tests/test_ask_cli.py, tests/test_stream_json.py.

    python -c REQUEST_PROBE PORT ask ...   # stderr's last line: EXIT [[...], ...]
"""

# What `ask` must not have imported when its request leaves, whatever it printed
# first: each was on that path once (docs/performance.md).
NOT_BEFORE_REQUEST = (
    "rich",  # the catalog's warning was printed through it
    "typer",  # a plain `ask` line is read without it (cli/ask_line.py), click included
    "traceback",  # skillchat/redact.py's, for `--debug` only, came with each warning
    # Modules whose dataclasses nothing uses before the request: each class costs
    # about 2.3 M instructions a start (its generated methods compiled).
    "skillchat.skills.files",  # a skill's files: get_skill, read_skill_file
    "skillchat.tools.inline_commands",  # a skill body's inline commands: get_skill
    "skillchat.engine.steps.paths_state",  # the `paths` gate's: a skill with `paths`
    "skillchat.skills.changes",  # what `/reload` or a turn's check found changed
    "skillchat.engine.invocation",  # a `/name` prompt's
    "skillchat.chats.loaded",  # a saved chat read back: resumed, shown, exported
    "skillchat.workspace.files",  # a workspace's: none outside a project
    "skillchat.engine.fork_run",  # a forked skill's run: its first fork
    "skillchat.engine.model_move",  # an untrusted skill's `model:`, asked about
    "skillchat.sandbox.run_request",  # a command's question and its answer
)
# At each connection to the server (the `/props` probe's, then the request's), the
# modules of NOT_BEFORE_REQUEST already imported; an audit hook sees the connect
# as it happens, so nothing of skillchat is patched.
REQUEST_PROBE = f"""
import json, sys
port = int(sys.argv.pop(1))
seen = []
def connect(event, args):
    if event == "socket.connect" and args[1][1:2] == (port,):
        seen.append(sorted(m for m in {NOT_BEFORE_REQUEST} if m in sys.modules))
sys.addaudithook(connect)
from skillchat.cli.app import run
code = run(sys.argv[1:])
print(code, json.dumps(seen), file=sys.stderr)
"""
