"""`skillchat doctor`: can skill commands run here? Says why not and how to fix it.

Exit 0 when the sandbox works, 1 when it does not (so a setup script can check).
"""

from __future__ import annotations

import typer


def sandbox_line(*, refresh: bool = False) -> tuple[bool, str]:
    """(works, one line) about the sandbox, for `doctor` (which tries it afresh)
    and `config show`."""
    from skillchat.sandbox.detect import probe

    status = probe(refresh=refresh)
    if status.available:
        return True, f"sandbox: available: {status.reason}"
    line = f"sandbox: not available: {status.reason}"
    return False, line + (f"; {status.hint}" if status.hint else "")


def doctor() -> None:
    """Check that skill commands can run in the sandbox (bubblewrap)."""
    works, line = sandbox_line(refresh=True)
    typer.echo(line)
    if not works:
        typer.echo("without a sandbox skillchat offers no run_command; everything else works")
        raise typer.Exit(1)
