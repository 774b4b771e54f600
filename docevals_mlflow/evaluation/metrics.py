"""The metric contract, metrics from plain functions, and running metrics safely."""

from __future__ import annotations

import hashlib
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.results import ErrorRecord, MetricResult
from docevals_mlflow.core.secrets import redact_data
from docevals_mlflow.errors import ConfigurationError, MetricError


@runtime_checkable
class Metric(Protocol):
    """Anything with ``evaluate(case) -> MetricResult``.

    A ``name`` attribute is optional (the seed library's protocol has none): without
    it the metric is known by its class name (:func:`metric_name`) in errors and
    fingerprints, and its results carry the names it gives them. A metric may also
    define ``config() -> dict`` (JSON data) describing every setting that can change
    its result; checkpoints use it to decide whether a stored result is still valid.
    """

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Judge one (resolved) case."""
        ...


def metric_name(metric: Metric) -> str:
    """The metric's ``name``, or its class name when it has none."""
    name = getattr(metric, "name", None)
    return name if isinstance(name, str) and name else type(metric).__name__


def check_metric_names(metrics: Sequence[Metric], *, where: str) -> None:
    """Refuse two metrics of one name in one list: reports, MLflow keys and
    comparisons key results by name, so the second would be confused with the first.

    Raises:
        ConfigurationError: naming the repeated names and ``where`` the list is.
    """
    # Only declared names can clash: a nameless metric names its results itself.
    names = [metric_name(metric) for metric in metrics if getattr(metric, "name", None)]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigurationError(
            f"{where}: metric names repeat ({', '.join(repeated)})",
            expected="a distinct name for each metric (most metrics take name=...)",
        )


def metric_config(metric: Metric) -> dict[str, Any]:
    """The JSON description of a metric's settings, for fingerprints."""
    described = getattr(metric, "config", None)
    base = {
        "type": f"{type(metric).__module__}.{type(metric).__qualname__}",
        "name": metric_name(metric),
    }
    if callable(described):
        return {**base, **described()}
    return base


def _checked(metric: Metric, result: Any) -> MetricResult:
    if not isinstance(result, MetricResult):
        raise MetricError(
            f"metric {metric_name(metric)!r} returned {type(result).__name__}",
            expected="a MetricResult",
        )
    # Every result passes here on its way into a report, a checkpoint or a
    # diagnostic: the one place to remove registered secrets (a judge's quoted key,
    # an exception that printed one) from whatever any metric wrote.
    redacted: MetricResult = redact_data(result)
    return redacted


def _failed(metric: Metric, exc: Exception) -> MetricResult:
    failed: MetricResult = redact_data(
        MetricResult(
            name=metric_name(metric),
            basis="error",
            verdict="uncertain",
            notes=[f"metric raised {type(exc).__name__}: {exc}"],
            requires_human_review=True,
            error=ErrorRecord(type=type(exc).__name__, message=str(exc)),
        )
    )
    return failed


def run_metric(metric: Metric, case: EvaluationCase) -> MetricResult:
    """Evaluate ``case`` with ``metric``; an exception becomes an ``uncertain`` result.

    The error is kept (type and message) and the result needs human review, so one
    broken metric never aborts the other metrics or stages. Registered secrets
    (:mod:`docevals_mlflow.core.secrets`) are removed from the result.
    """
    try:
        return _checked(metric, metric.evaluate(case))
    except Exception as exc:  # isolation is the point: any metric bug stays local
        return _failed(metric, exc)


async def arun_metric(metric: Metric, case: EvaluationCase) -> MetricResult:
    """:func:`run_metric` for the async core: a metric with ``aevaluate`` (a judge) is
    awaited, so many can wait on providers at once; others run directly."""
    try:
        asynchronous = getattr(metric, "aevaluate", None)
        if asynchronous is not None:
            return _checked(metric, await asynchronous(case))
        return _checked(metric, metric.evaluate(case))
    except Exception as exc:  # isolation, as in run_metric
        return _failed(metric, exc)


def _function_identity(fn: Callable[..., Any]) -> dict[str, str]:
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"
    try:
        source = inspect.getsource(fn)
        code_hash = hashlib.sha256(source.encode("utf-8")).hexdigest()
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        raw = code.co_code if code is not None else repr(fn).encode("utf-8")
        code_hash = hashlib.sha256(raw).hexdigest()
    return {"function": name, "code_sha256": code_hash}


class FunctionMetric:
    """A metric from a plain function of the case.

    The function's return value decides the verdict:

    * ``True`` / ``False``: pass / fail (score 1.0 / 0.0);
    * ``None``: not applicable;
    * a number: with ``threshold``, pass when ``value >= threshold`` and fail
      otherwise; without one, ``uncertain`` with a note (a bare number is not a rule);
    * a :class:`MetricResult`: used as it is.

    Anything else is an error, recorded as ``uncertain``. ``basis`` is the results'
    ``basis`` (say where the rule comes from, e.g. ``"approved_spec"``).
    """

    def __init__(
        self,
        name: str,
        fn: Callable[[EvaluationCase], Any],
        score_name: str = "score",
        *,
        threshold: float | None = None,
        basis: str = "function",
    ) -> None:
        if not name:
            raise MetricError("a metric needs a non-empty name")
        self.name = name
        self.fn = fn
        self.score_name = score_name
        self.threshold = threshold
        self.basis = basis

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result, including a hash of the code."""
        return {
            "score_name": self.score_name,
            "threshold": self.threshold,
            "basis": self.basis,
            **_function_identity(self.fn),
        }

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Call the function and turn its answer into a result."""
        value = self.fn(case)
        if isinstance(value, MetricResult):
            return value
        basis = self.basis
        if value is None:
            return MetricResult(name=self.name, basis=basis, verdict="not_applicable")
        if isinstance(value, (bool, np.bool_)):
            passed = bool(value)
            return MetricResult(
                name=self.name,
                basis=basis,
                verdict="pass" if passed else "fail",
                scores={self.score_name: 1.0 if passed else 0.0},
            )
        if isinstance(value, (int, float, np.integer, np.floating)):
            number = float(value)
            if not math.isfinite(number):
                raise MetricError(f"function returned {number}", expected="a finite number")
            if self.threshold is None:
                return MetricResult(
                    name=self.name,
                    basis=basis,
                    verdict="uncertain",
                    scores={self.score_name: number},
                    notes=[
                        "the function returned a number without a threshold; "
                        "pass threshold= to turn scores into verdicts"
                    ],
                )
            return MetricResult(
                name=self.name,
                basis=basis,
                verdict="pass" if number >= self.threshold else "fail",
                scores={self.score_name: number},
            )
        raise MetricError(
            f"function returned {type(value).__name__}",
            expected="bool, None, a number or a MetricResult",
        )
