"""Replaying eval queries: each run is one fresh chat, as `ask` would start it, and
what it did (skills activated, files read, tokens, cost, the catalog it saw).

    plan = plan_runs(queries, models=["gpt-4.1-mini"], runs=3)
    evaluation = Evaluation(plan, jobs=4, run=lambda job: run_once(job, settings, registry, False))
    outcomes = evaluation.run(on_outcome=progress)  # Ctrl-C: evaluation.outcomes so far

Every run is its own `Session` (session.py) with its own backend: the real system
prompt, catalog, tools and loop, with the same retries and timeouts as `ask`.
Nothing is saved: the session has no store, only a listener of its events that
adds up usage and files read, so eval runs never appear in the user's chat list.
A run is *triggered* when the skill's `get_skill` succeeded in it (the model's own
call, or a `/name` the query starts with).

Runs go out on worker threads, at most `jobs` at once, in passes (every query once,
then every query again) so an interrupted evaluation still covers every query it
can. The threads are daemons: on Ctrl-C the main thread stops handing out work and
reports what finished; requests in flight are abandoned with the process.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from skillchat.config import Settings
from skillchat.engine.emit import Event, ForkStarted, ForkStep, ToolFinished, UsageReported
from skillchat.engine.events import Usage
from skillchat.engine.messages import add_usage
from skillchat.errors import SkillchatError
from skillchat.evals.queries import EvalQuery
from skillchat.prompt import Catalog, build_catalog
from skillchat.sandbox.command_tool import Consent
from skillchat.sandbox.run_request import RunRequest, Verdict
from skillchat.session import Session
from skillchat.skills.registry import Registry
from skillchat.tools.skill_tools import GET_SKILL

CatalogState = Literal["full", "shortened", "cut"]
J = TypeVar("J")  # a planned run: a Job here, a trial of an outcome eval
R = TypeVar("R")  # what it gave


@dataclass(frozen=True)
class Job:
    """One planned run: a query, on a model, the `run`-th time (1-based)."""

    query: EvalQuery
    model: str
    run: int


@dataclass(frozen=True)
class RunOutcome:
    """What one run did. `error` is set when it did not finish (provider failure,
    too many tool rounds): such a run counts toward no rate."""

    job: Job
    activated: tuple[str, ...]
    files_read: tuple[str, ...]
    usage: Usage | None
    catalog: CatalogState
    error: str | None = None

    @property
    def triggered(self) -> bool:
        return self.job.query.skill in self.activated

    @property
    def correct(self) -> bool:
        return self.error is None and self.triggered == self.job.query.should_trigger


def plan_runs(queries: Sequence[EvalQuery], models: Sequence[str], runs: int) -> list[Job]:
    """Every (query, model) `runs` times, in passes: the first pass covers all."""
    return [Job(q, m, n) for n in range(1, runs + 1) for m in models for q in queries]


def catalog_state(catalog: Catalog | None, registry: Registry, skill: str) -> CatalogState:
    """How `skill` appears in the catalog the model is given: whole, with its
    description shortened (or left out, when only names fit), or cut out (reachable
    only through list_skills). A skill whose description the model did not see
    whole may not trigger from it: that is the runner's doing, and the report says so."""
    if catalog is None:
        return "cut"
    shown = {
        e.get("name"): e.get("description") for e in json.loads(catalog.block)["available_skills"]
    }
    if skill not in shown:
        return "cut"
    full = registry.skills[skill].model_description if skill in registry.skills else None
    return "full" if shown[skill] == full else "shortened"


class Tally:
    """The run's listener: keeps the files read and the usage of every request,
    shows nothing, saves nothing."""

    def __init__(self) -> None:
        self.usage: Usage | None = None
        self.files: list[str] = []
        self.forked: list[str] = []  # skills started as forks: triggered as inline ones

    def __call__(self, event: Event) -> None:
        match event:
            case ForkStarted(skill=skill):
                self.forked.append(skill)
            case ForkStep(event=inner):  # a fork's reading and tokens are the run's too
                self(inner)
            case ToolFinished(record) if record.name != GET_SKILL:
                key = record.result.context_key
                read = f"{key.source}/{key.path}" if key is not None else None
                if read is not None and read not in self.files:
                    self.files.append(read)
            case UsageReported(usage):
                self.usage = add_usage(self.usage, usage)


def eval_consent(allow_run: bool) -> Consent:
    """Commands in eval run only with `--allow-run` on its command line: not on the
    config's `[run] allow`, not on a skill's `allowed-tools` pre-approval. Eval
    replays queries nobody reads as they run, so nobody could have said yes."""

    def decide(request: RunRequest) -> Verdict:
        if request.verdict.each_time:
            return Verdict("refused", f"{request.verdict.reason}; --allow-run does not cover it")
        if allow_run:
            return Verdict("approved")
        return Verdict("refused", "commands are not run in eval: skillchat eval --allow-run")

    return decide


def run_once(job: Job, settings: Settings, registry: Registry, allow_run: bool) -> RunOutcome:
    """Run `job` in a fresh chat on its own backend (`settings`: the job's model's,
    config.py's `with_model`), with `run_command` offered as `ask` offers it but
    answering NOT_ALLOWED unless `allow_run`; a SkillchatError becomes the outcome's
    `error`, never raised."""
    tally = Tally()
    session: Session | None = None
    error: str | None = None
    try:
        consent = eval_consent(allow_run)
        session = Session(settings, registry=registry, listeners=[tally], consent=lambda: consent)
        session.send(job.query.query)
    except SkillchatError as exc:
        error = str(exc)
    finally:
        if session is not None:
            session.close()  # its MCP servers, if --allow-mcp started any
    if session is not None:
        activated = (*session.chat.activated, *tally.forked)
        catalog = session.chat.catalog
    else:
        activated, catalog = (), build_catalog(registry, settings.limits.catalog_budget)
    state = catalog_state(catalog, registry, job.query.skill)
    return RunOutcome(job, activated, tuple(tally.files), tally.usage, state, error)


class Evaluation(Generic[J, R]):
    """Runs `plan` on up to `jobs` daemon threads; `outcomes` holds the finished
    runs in the order they finished (read it after a Ctrl-C for a partial report)."""

    def __init__(self, plan: Sequence[J], jobs: int, run: Callable[[J], R]) -> None:
        self.plan = list(plan)
        self.jobs = max(1, min(jobs, len(self.plan) or 1))
        self._run = run
        self.outcomes: list[R] = []
        self._todo: queue.SimpleQueue[J] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[tuple[R] | BaseException] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def run(self, on_outcome: Callable[[R], None] | None = None) -> list[R]:
        """Every planned run's outcome. A KeyboardInterrupt stops handing out runs
        and propagates; `outcomes` keeps what had finished: the workers record each
        outcome themselves, so a Ctrl-C that lands while this thread holds one it
        took off the queue loses nothing."""
        for job in self.plan:
            self._todo.put(job)
        for n in range(self.jobs):
            threading.Thread(target=self._work, name=f"eval-{n}", daemon=True).start()
        seen = 0
        try:
            while seen < len(self.plan):
                try:
                    done = self._done.get(timeout=0.2)  # short: Ctrl-C is seen at once
                except queue.Empty:
                    continue
                if isinstance(done, BaseException):
                    raise done
                seen += 1
                if on_outcome is not None:
                    on_outcome(done[0])
        finally:
            with self._lock:  # what finished from here on is not reported
                self._stop.set()
        return self.outcomes

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                job = self._todo.get_nowait()
            except queue.Empty:
                return
            try:
                outcome = self._run(job)
            except BaseException as exc:  # a bug: the main thread raises it
                self._done.put(exc)
                return
            with self._lock:
                if self._stop.is_set():
                    return
                self.outcomes.append(outcome)
            self._done.put((outcome,))  # boxed: isinstance cannot tell R from an error
