"""`skillchat models`: the local models in the cache (`--local` downloads), and
`skillchat models rm NAME` to free their space (engine/local/hub.py)."""

from __future__ import annotations

import typer

app = typer.Typer(  # its help: cli/app.py
    invoke_without_command=True,
    no_args_is_help=False,
)


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000  # type: ignore[assignment]
    raise AssertionError("unreachable")


@app.callback()
def models(ctx: typer.Context) -> None:
    """List the cached local models and their size on disk."""
    if ctx.invoked_subcommand is not None:
        return
    from skillchat.engine.local.hub import cache_dir, cached_models
    from skillchat.skills.frontmatter_yaml import shown

    found = cached_models()
    if not found:
        typer.echo(f"no local models cached in {cache_dir()} (skillchat --local fetches one)")
        return
    for model in found:
        state = " (partial download)" if model.partial else ""
        files = ", ".join(shown(f) for f in model.files) or "-"
        typer.echo(f"{shown(model.name)}  {_size(model.size)}{state}  {files}")
    typer.echo(f"cache: {cache_dir()}")


@app.command("rm")
def rm(name: str = typer.Argument(..., help="The model (ORG/NAME, or NAME).")) -> None:
    """Remove a cached local model and free its space."""
    from skillchat.engine.local.hub import remove_model
    from skillchat.skills.frontmatter_yaml import shown

    removed = remove_model(name)
    typer.echo(f"removed {shown(removed.name)} ({_size(removed.size)} freed)")
