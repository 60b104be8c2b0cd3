"""A session's hooks: which run for an event, and what they decided together.

The hooks are found afresh at every event (`find`), so a hook whose line or
script was edited while the chat runs is judged as it is now: untrusted again.

`fire(event, payload)` runs the event's hooks in order (the user's, the project's,
the active skills'), each with the event as Claude Code's JSON on stdin, and reads
each answer as Claude Code does:

- exit 0: its JSON (`decision`/`reason`, `continue`/`stopReason`, `systemMessage`,
  `hookSpecificOutput.permissionDecision` allow/deny/ask with
  `permissionDecisionReason`, `hookSpecificOutput.additionalContext`); plain text
  from a `user_prompt_submit` or `session_start` hook is context for the model;
- exit 2: blocks, its stderr the reason;
- any other exit, a timeout, output past the bound: one line, and it decided nothing.

What a hook may not do: turn anything into "allowed". `allow` means "no objection":
a command still needs the consent it needed, and a hook's `updatedInput` (Claude
Code lets a hook rewrite a tool's input) is never applied: the call is refused
instead, since the hook wanted it changed, and the model and user are told why.

Trust: a hook that needs it (hooks/spec.py) runs only once trusted. The REPL asks
(`ask`, a question handed in: yes trusts it, bound to its digest); without one
(`ask`, eval) an untrusted hook never runs, said once for the session. A hook's own
notices fire no hooks (`notification` would otherwise call itself).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillchat.errors import HookError
from skillchat.hooks.run import MAX_OUTPUT_BYTES, Ran, hook_env, run_on_host
from skillchat.hooks.spec import EVENTS, Found, Hook
from skillchat.hooks.trust import HookTrust
from skillchat.redact import redact

MAX_REASON_CHARS = 2_000  # of a reason or context a hook gives, passed on
Launch = Callable[[Hook, bytes], Ran]  # runs a skill's or a plugin's hook in the sandbox


@dataclass
class Decision:
    """What an event's hooks decided together."""

    blocked: bool = False  # deny (a tool call), block (a message)
    reason: str = ""
    asked: tuple[Hook, str] | None = None  # a `pre_tool_use` hook wants the user asked
    context: list[str] = field(default_factory=list)  # for the model

    def refuse(self, reason: str) -> None:
        if not self.blocked:
            self.blocked, self.reason = True, reason


@dataclass(frozen=True)
class HookQuestion:
    """A question for the user: trust a hook, or allow a call a hook asks about."""

    kind: Literal["trust", "ask"]
    hook: Hook
    detail: str  # the reason it asks (kind "ask"), or its files (kind "trust")


class Hooks:
    """The hooks of one session, run for its events."""

    def __init__(
        self,
        find: Callable[[], Found],
        trust: HookTrust,
        *,
        project: Path,
        notice: Callable[[str], None],
        ask: Callable[[HookQuestion], bool] | None,
        sandbox: Launch | None,
        session_id: Callable[[], str | None],
    ) -> None:
        self.find = find
        self.found = find()
        self.trust = trust
        self.project = project
        self.notice = notice
        self.ask = ask
        self.sandbox = sandbox
        self.session_id = session_id
        self._declined: set[str] = set()
        self._said: set[str] = set()
        self._busy = threading.local()  # per thread: forks run at once

    def fire(
        self,
        event: str,
        payload: Mapping[str, Any],
        *,
        tool: str | None = None,
        active: Collection[str] = (),
    ) -> Decision:
        """Run `event`'s hooks for `tool` (the skills' hooks of the `active` ones)."""
        decision = Decision()
        if getattr(self._busy, "on", False):
            return decision
        self.found = self.find()  # read afresh: an edited hook is another, untrusted
        hooks = [
            h
            for h in self.found.of(event)
            if h.matches(tool) and (h.skill is None or h.skill in active)
        ]
        self._busy.on = True
        try:
            for hook in hooks:
                if self._may_run(hook):
                    self._read(hook, self._run(hook, event, payload), event, decision)
        finally:
            self._busy.on = False
        return decision

    def allowed_by_user(self, hook: Hook, reason: str) -> bool:
        """A `pre_tool_use` hook's "ask": the REPL's question; no one to ask is no."""
        return self.ask is not None and self.ask(HookQuestion("ask", hook, reason))

    def _may_run(self, hook: Hook) -> bool:
        if self.trust.trusted(hook):
            return True
        if hook.digest in self._declined:
            return False
        if self.ask is None:
            untrusted = sum(1 for h in self.found.hooks if not self.trust.trusted(h))
            self._once(
                "untrusted",
                f"{untrusted} hook(s) of this project, its skills or plugins are not trusted "
                "and do not run: `skillchat hooks list`, then `skillchat hooks trust ID`",
            )
            return False
        files = ", ".join(str(f) for f in hook.files) or "none"
        if self.ask(HookQuestion("trust", hook, files)):
            self.trust.trust(hook)
            try:
                self.trust.save()
            except HookError as exc:  # trusted for this session: said, the chat goes on
                self.notice(str(exc))
            return True
        self._declined.add(hook.digest)
        return False

    def _run(self, hook: Hook, event: str, payload: Mapping[str, Any]) -> Ran:
        data = {
            "session_id": self.session_id() or "",
            "cwd": str(self.project),
            "hook_event_name": EVENTS[event],
            **payload,
        }
        encoded = json.dumps(data, ensure_ascii=False).encode()
        if not hook.sandboxed:
            return run_on_host(hook, encoded, hook_env(self.project))
        if self.sandbox is None:
            why = "skills' and plugins' hooks run in the sandbox, which does not work here: not run"
            self._once("nosandbox", why)
            return Ran(0, "", "")
        return self.sandbox(hook, encoded)

    def _read(self, hook: Hook, ran: Ran, event: str, decision: Decision) -> None:
        """Fold one hook's answer into `decision` (and say what the user should see)."""
        name = f"{event} hook of {hook.where} (`{_short(hook.command)}`)"
        if ran.stopped == "timeout":
            self.notice(f"{name} ran past its {hook.timeout_s:g}s: stopped, it decided nothing")
            return
        if ran.stopped == "output":
            mb = MAX_OUTPUT_BYTES // 1_000_000
            self.notice(f"{name} printed more than {mb} MB: stopped, it decided nothing")
            return
        if ran.exit_code == 2:
            reason = _clip(ran.stderr) or "(no reason given)"
            if event in ("pre_tool_use", "user_prompt_submit"):
                decision.refuse(reason)
            elif event == "post_tool_use":
                decision.context.append(reason)
            else:
                self.notice(f"{name}: {reason}")
            return
        if ran.exit_code != 0:
            first = _clip(ran.stderr).splitlines()[:1]
            self.notice(f"{name} failed (exit {ran.exit_code}){': ' + first[0] if first else ''}")
            return
        answer = ran.answer()
        if answer is None:
            if event in ("user_prompt_submit", "session_start") and ran.stdout.strip():
                decision.context.append(_clip(ran.stdout))
            return
        self._answered(hook, name, answer, event, decision)

    def _answered(
        self, hook: Hook, name: str, answer: dict[str, Any], event: str, decision: Decision
    ) -> None:
        specific = answer.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        if isinstance(message := answer.get("systemMessage"), str) and message.strip():
            self.notice(f"{name}: {_clip(message)}")
        if answer.get("continue") is False:
            decision.refuse(_text(answer.get("stopReason")) or "a hook stopped it")
        if "updatedInput" in specific or "updatedPrompt" in specific:
            self.notice(f"{name} tried to change what the model asked for: hooks may not, refused")
            decision.refuse("a hook tried to change this call's input, which hooks may not do")
        reason = _text(answer.get("reason"))
        if answer.get("decision") == "block":
            if event == "post_tool_use":
                decision.context.append(reason or "a hook objected to this result")
            elif event in ("pre_tool_use", "user_prompt_submit"):
                decision.refuse(reason or "a hook blocked it")
            elif reason:
                self.notice(f"{name}: {reason}")
        permission = specific.get("permissionDecision")
        why = _text(specific.get("permissionDecisionReason"))
        if event == "pre_tool_use" and permission == "deny":
            decision.refuse(why or "a hook denied it")
        elif event == "pre_tool_use" and permission == "ask" and decision.asked is None:
            decision.asked = (hook, why or "a hook wants you to decide")
        if context := _text(specific.get("additionalContext")):
            decision.context.append(context)

    def _once(self, key: str, line: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.notice(line)


def _text(value: object) -> str:
    return _clip(value) if isinstance(value, str) else ""


def _clip(text: str) -> str:
    """A hook's words as they are passed on: stripped, bounded, no key in them."""
    text = redact(text.strip())
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + " …"


def _short(command: str) -> str:
    """A hook's command as a line names it: short, no key in it."""
    command = redact(command)
    return command if len(command) <= 60 else command[:57] + "..."
