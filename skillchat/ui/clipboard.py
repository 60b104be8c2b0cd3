"""`/copy`: an answer to the clipboard, two ways at once, and plainly when neither.

- OSC 52 (`ESC ] 52 ; c ; BASE64 BEL`) asks the terminal itself to set its
  clipboard, which works over SSH and in most terminals (kitty, WezTerm, iTerm2,
  foot, Windows Terminal, xterm with `allowWindowOps`, tmux with
  `set-clipboard on`). The text travels base64-encoded: nothing in an answer can
  end the sequence early or reach the terminal as a control. Sent only to a
  terminal, and only up to `OSC52_LIMIT` bytes (terminals drop longer ones).
- A clipboard tool of this machine when one is there for its display: `wl-copy`
  (Wayland), `xclip` (X11), `pbcopy` (macOS), given the text on stdin.

A terminal never says whether it honoured OSC 52, so the fallback (the text
printed plainly, to select by hand) is used when no tool took it and there is no
terminal to ask, or the text is over the limit.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from typing import IO

OSC52_LIMIT = 100_000  # bytes of base64: kitty, tmux and xterm take at least this
TOOL_TIMEOUT = 5.0  # seconds for a clipboard tool to take the text


def osc52(text: str) -> str:
    """The sequence that puts `text` on the terminal's clipboard."""
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"\x1b]52;c;{payload}\x07"


def clipboard_tool() -> list[str] | None:
    """The command of the clipboard tool for this session's display, when installed."""
    if sys.platform == "darwin":
        candidates = [["pbcopy"]]
    else:
        candidates = []
        if os.environ.get("WAYLAND_DISPLAY"):
            candidates.append(["wl-copy"])
        if os.environ.get("DISPLAY"):
            candidates.append(["xclip", "-selection", "clipboard"])
    for command in candidates:
        if (path := shutil.which(command[0])) is not None:
            return [path, *command[1:]]
    return None


def copy(text: str, terminal: IO[str] | None) -> list[str]:
    """Put `text` on the clipboard; the ways that took it ("OSC 52", a tool's name),
    empty when none did (the caller prints it). `terminal`: the terminal's stream,
    None when output is not a terminal."""
    ways = []
    if terminal is not None:
        sequence = osc52(text)
        if len(sequence) <= OSC52_LIMIT:
            terminal.write(sequence)
            terminal.flush()
            ways.append("OSC 52")
    if (tool := clipboard_tool()) is not None:
        try:
            done = subprocess.run(
                tool,
                input=text.encode("utf-8"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=TOOL_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if done is not None and done.returncode == 0:
            ways.append(os.path.basename(tool[0]))
    return ways
