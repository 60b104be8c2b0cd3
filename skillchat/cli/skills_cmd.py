"""`skillchat skills list | show | validate` (being written)."""

from __future__ import annotations

import typer

app = typer.Typer(help="List, show and validate skills.", no_args_is_help=True)
