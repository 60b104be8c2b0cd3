"""Hooks: commands the user (or a project, or a skill) attaches to moments of a chat.

spec.py finds and reads them (the user's config, the project's
`.skillchat/config.toml`, a skill's `hooks:` frontmatter); trust.py is which of the
ones needing trust the user trusted, bound to their content; run.py runs one on the
host within its bounds and reads its answer; dispatch.py is a session's hooks: which
run for an event, trusted or asked about, and what they decided together. The
engine's step (engine/steps/hooks.py) calls them at the chat's moments; a skill's
hooks run in the sandbox (sandbox/hooks.py), handed in by the session. docs/hooks.md
is the user's side.
"""
