"""`eval --outcome --save-chats`: each finished trial's chat, kept in the user's
chat store, titled with where it came from.

A trial records its chat in a database of its own (outcome_trial.py); only once
the trial has finished and its result is in the results store is the chat copied
into the user's, whole, in one transaction (chats/copying.py). So a trial cut short
by Ctrl-C saves no chat (a re-run runs it, and saves it then), and a re-run, which
skips finished trials, saves none of theirs again. The recording itself is the same
in every arm, and the agent's requests do not change with it: what a trial
measures is the same with or without `--save-chats`.
"""

from __future__ import annotations

from pathlib import Path

from skillchat.config import Settings
from skillchat.evals.outcome_arms import arm_folder
from skillchat.evals.outcome_trial import TRIAL_CHATS, TrialJob


def save_trial_chat(folder: Path, job: TrialJob, skill: str, settings: Settings) -> str | None:
    """Copy the chat the trial recorded in `folder` into the chat store of
    `settings` (the user's); its new id, None when the trial saved no message (it
    failed before its first). StorageError when a store is unusable."""
    from skillchat.chats.store import ChatStore
    from skillchat.session_settings import open_store

    source = folder / TRIAL_CHATS
    if not source.exists():
        return None
    with ChatStore.open(source) as trial:
        found = trial.list_chats(limit=1)
    if not found:
        return None
    with open_store(settings.storage) as store:
        return store.adopt_chat(source, found[0].id, trial_title(job, skill))


def trial_title(job: TrialJob, skill: str) -> str:
    """What `chats list` and `/resume` show: the eval (its skill), task, arm, model
    and trial, in the words of the workspace's folders (`eval-1 with_skill run-2`)."""
    return f"eval {skill}: eval-{job.task.id} {arm_folder(job.arm)} {job.model} run-{job.trial}"
