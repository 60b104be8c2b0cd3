"""The statistics of an outcome eval (`skillchat eval --outcome`), as docs/eval.md
defines them.

Per task and arm, over the n graded trials of which c passed:

- **pass rate** c / n;
- **pass@k** = 1 - C(n-c, k) / C(n, k): the chance that at least one of k trials
  drawn without replacement passes (the unbiased estimator of Chen et al. 2021);
- **pass^k** = C(c, k) / C(n, k): the chance that all k drawn trials pass (how
  reliably the task is done, not whether it can be).

The **paired difference** of a task is its with-skill pass rate minus its
without-skill one (same task, same model): pairing takes the task's own difficulty
out of the comparison; it gets a bootstrap 95% interval from its trials (each arm
resampled on its own). Its mean over tasks gets a percentile bootstrap 95% interval
(tasks resampled with replacement, 10,000 times, from a fixed random state so the same
results always print the same interval).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb

BOOTSTRAP_SAMPLES = 10_000
BOOTSTRAP_STATE = 20260101  # the random generator's start: the same interval every time
# Under this many graded trials per arm a task's pass rate moves by 20 points or
# more with one trial: the report says the run is too small to conclude.
MIN_TRIALS_TO_CONCLUDE = 5
MIN_TASKS_TO_CONCLUDE = 3


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """1 - C(n-c, k) / C(n, k); None when k > n (not estimable from n trials)."""
    if k < 1 or k > n:
        return None
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """C(c, k) / C(n, k); None when k > n."""
    if k < 1 or k > n:
        return None
    return comb(c, k) / comb(n, k)


@dataclass(frozen=True)
class Interval:
    """A mean and its bootstrap 95% interval."""

    mean: float
    low: float
    high: float


def bootstrap_mean(values: Sequence[float]) -> Interval | None:
    """The mean of `values` with a percentile bootstrap 95% interval; None for none.
    One value gives a zero-width interval: nothing to resample, nothing concluded."""
    if not values:
        return None
    rng = random.Random(BOOTSTRAP_STATE)
    return _interval(
        statistics.fmean(values), lambda: statistics.fmean(rng.choices(values, k=len(values)))
    )


def bootstrap_difference(passes: tuple[int, int], other: tuple[int, int]) -> Interval | None:
    """One task's difference of pass rates, (c, n) against (c, n), with a bootstrap
    95% interval: each arm's trials resampled on its own. None when an arm has none."""
    (c1, n1), (c2, n2) = passes, other
    if not n1 or not n2:
        return None
    a = [1.0] * c1 + [0.0] * (n1 - c1)
    b = [1.0] * c2 + [0.0] * (n2 - c2)
    rng = random.Random(BOOTSTRAP_STATE)

    def draw() -> float:
        return statistics.fmean(rng.choices(a, k=n1)) - statistics.fmean(rng.choices(b, k=n2))

    return _interval(c1 / n1 - c2 / n2, draw)


def _interval(estimate: float, draw: Callable[[], float]) -> Interval:
    """`estimate` with the 2.5th and 97.5th percentiles of BOOTSTRAP_SAMPLES draws."""
    drawn = sorted(draw() for _ in range(BOOTSTRAP_SAMPLES))
    low = drawn[int(0.025 * BOOTSTRAP_SAMPLES)]
    high = drawn[int(0.975 * BOOTSTRAP_SAMPLES) - 1]
    return Interval(estimate, low, high)


def mean_stddev(values: Sequence[float]) -> dict[str, float | None]:
    """`{"mean", "stddev"}` as the guide's benchmark.json `run_summary` has them
    (sample standard deviation; None under two values)."""
    if not values:
        return {"mean": None, "stddev": None}
    stddev = statistics.stdev(values) if len(values) > 1 else None
    return {"mean": statistics.fmean(values), "stddev": stddev}
