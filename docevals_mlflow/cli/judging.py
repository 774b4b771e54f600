"""The judges the options of :mod:`~docevals_mlflow.cli.judge_options` ask for, the
files those options read and write, and the usage summary printed at the end.

Evaluations stay offline unless asked: ``--judge`` defaults to ``none``. Keys are
read from the environment only (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, or the
variable ``--api-key-env`` names), never from the command line or a file.

``--judge NAME`` takes every registered judge provider (see
:mod:`docevals_mlflow.judges.providers`), plugins included; what a provider needs
(its key variable, required settings, optional ones) comes from its record.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.cli.common import check_number
from docevals_mlflow.cli.options import check_concurrency
from docevals_mlflow.cli.paths import Input, Output
from docevals_mlflow.core.formatting import money_text
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.evaluation.judge_metrics import (
    JUDGE_METRIC_NAME,
    llm_judge_metric,
    load_judge_panel_metric,
)
from docevals_mlflow.evaluation.metrics import Metric, metric_name
from docevals_mlflow.evaluation.pipeline import PipelineEvaluator
from docevals_mlflow.judges.config import (
    AUTO_PROVIDERS,
    MODEL_VARIABLE,
    REASONING_EFFORT_VARIABLE,
    JudgeConfig,
    JudgeRuntime,
    auto_judge,
    load_prices,
)
from docevals_mlflow.judges.providers import judge_provider

_REQUIRED_OPTIONS: dict[str, tuple[str, str]] = {
    "base_url": ("--base-url", "the server's API root"),
    "model": ("--model", f"model (or {MODEL_VARIABLE})"),
    "api_key_env": ("--api-key-env", "the variable holding the key"),
}
"""The option giving each setting a provider may require, and what it expects."""


def judge_runtime(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> JudgeRuntime:
    """The prices, cache and concurrency every judge of this invocation shares."""
    check_concurrency(args)
    check_number("--temperature", args.temperature, minimum=0)
    prices = load_prices(args.prices) if args.prices is not None else None
    cache = None
    if args.judge_cache is not None:
        from docevals_mlflow.judges.cache import JudgeCache

        cache = JudgeCache(args.judge_cache)
    return JudgeRuntime(
        prices=prices,
        cache=cache,
        max_concurrency=args.concurrency,
        environ=environ,
    )


def judge_paths(args: argparse.Namespace) -> tuple[list[Input], list[Output]]:
    """The files the judge options read (``--panel``, ``--prices``) and the folder
    they write (``--judge-cache``, read and written, so wholly the cache's)."""
    inputs = [
        Input(option, path)
        for option, path in (("--panel", args.panel), ("--prices", args.prices))
        if path is not None
    ]
    outputs = [Output("--judge-cache", args.judge_cache, "owned")] if args.judge_cache else []
    return inputs, outputs


def judge_config(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> JudgeConfig | None:
    """The judge ``--judge`` and its companions ask for, or ``None`` (no judge).

    Raises:
        ConfigurationError: the provider's key is not in the environment (the
            message names the variable to set, never a value).
        InputError: options that do not go together.
    """
    env = os.environ if environ is None else environ
    choice: str = args.judge
    provider_name = _chosen_provider(choice, env)
    if provider_name is None:
        return None
    provider = judge_provider(provider_name)
    variable = args.api_key_env or provider.key_variable
    if variable is not None and not env.get(variable):
        raise ConfigurationError(
            f"--judge {choice} needs an API key: set {variable} in the environment"
        )
    model = args.model or env.get(MODEL_VARIABLE) or None
    effort = args.reasoning_effort
    if effort is None and "reasoning_effort" in provider.supported:
        effort = env.get(REASONING_EFFORT_VARIABLE) or None
    # The provider says what it requires; named here as the options that give it.
    missing = provider.missing(
        {"model": model, "base_url": args.base_url, "api_key_env": args.api_key_env}
    )
    if missing:
        options = [
            _REQUIRED_OPTIONS[setting] for setting in _REQUIRED_OPTIONS if setting in missing
        ]
        raise InputError(
            f"--judge {choice} needs {options_text([option for option, _ in options])}",
            expected=" and ".join(expected for _, expected in options),
        )
    settings: dict[str, Any] = {
        "provider": provider_name,
        "model": model,
        "base_url": args.base_url,
        "api_key_env": args.api_key_env,
        "temperature": args.temperature,
        "reasoning_effort": effort,
        "max_concurrency": args.concurrency,
    }
    try:
        return JudgeConfig(**settings)
    except InputError as exc:
        # The model's own wording names fields (reasoning_effort); say which option.
        raise InputError(f"--judge {choice}: {exc.message}") from None


def _chosen_provider(choice: str, env: Mapping[str, str]) -> str | None:
    """The provider ``--judge`` names (``auto`` resolved), or ``None`` for no judge."""
    if choice == "none":
        return None
    if choice != "auto":
        return choice
    chosen = auto_judge(env)
    if chosen is None:
        variables = [judge_provider(name).key_variable for name in AUTO_PROVIDERS]
        print(
            f"docevals: note: --judge auto found neither {' nor '.join(map(str, variables))}"
            "; only deterministic metrics run",
            file=sys.stderr,
        )
        return None
    provider: str = chosen.provider
    return provider


def judge_metric(
    args: argparse.Namespace,
    runtime: JudgeRuntime,
    environ: Mapping[str, str] | None = None,
) -> Metric | None:
    """The judge or panel metric the options ask for, or ``None``.

    Raises:
        InputError: ``--panel`` together with ``--judge`` (other than ``none``) or
            with single-judge options.
        ConfigurationError: a key is missing.
    """
    if args.panel is not None:
        if args.judge != "none":
            raise InputError(
                f"--panel and --judge {args.judge} cannot be combined",
                expected="either --panel (its file names the judges) or --judge",
            )
        given = [
            option
            for option, value in (
                ("--model", args.model),
                ("--base-url", args.base_url),
                ("--api-key-env", args.api_key_env),
                ("--temperature", args.temperature),
                ("--reasoning-effort", args.reasoning_effort),
            )
            if value is not None
        ]
        if given:
            # Ignoring them silently would run a different panel than asked for.
            raise InputError(
                f"{options_text(given)} only appl{'y' if len(given) > 1 else 'ies'} to --judge",
                expected="the panel's settings in its file",
            )
        return load_judge_panel_metric(args.panel, runtime)
    config = judge_config(args, environ)
    if config is None:
        return None
    return llm_judge_metric(config, runtime, name=JUDGE_METRIC_NAME)


def options_text(options: list[str]) -> str:
    """``--a``, ``--a and --b``, ``--a, --b and --c``."""
    if len(options) <= 1:
        return "".join(options)
    return f"{', '.join(options[:-1])} and {options[-1]}"


def announce(metric: Metric) -> None:
    """Say on stderr which judges will be asked (requests leave this machine)."""
    describe = getattr(metric, "config", None)
    settings = describe() if callable(describe) else {}
    if "panel" in settings:
        members = ", ".join(
            f"{variant['name']} ({variant['provider']}:{variant['model']})"
            for variant in settings["panel"]["variants"]
        )
        print(f"docevals: judging with panel {metric_name(metric)}: {members}", file=sys.stderr)
        return
    judge = settings.get("judge", {})
    where = judge.get("base_url")
    print(
        f"docevals: judging with {judge.get('provider')}:{judge.get('model')}"
        + (f" at {where}" if where else ""),
        file=sys.stderr,
    )


def add_to_every_stage(evaluator: PipelineEvaluator, metric: Metric) -> None:
    """Append ``metric`` to every metric list of ``evaluator`` (stage, operation and
    default lists), so that whichever list a stage gets, it includes the judge.

    Raises:
        InputError: a list already has a metric of that name (reports key results
            by name, so the two would be confused).
    """
    lists = [
        *evaluator.stage_metrics.values(),
        *evaluator.operation_metrics.values(),
        evaluator.default_metrics,
    ]
    for metrics in lists:
        if any(metric_name(existing) == metric_name(metric) for existing in metrics):
            raise InputError(
                f"the configuration already has a metric named {metric_name(metric)!r}",
                expected="another name for that metric, or no --judge/--panel",
            )
    for metrics in lists:
        metrics.append(metric)


def stage_reports(
    report: Any, stages: Iterable[EvaluationReport] | None = None
) -> list[EvaluationReport]:
    """The case reports inside a case or pipeline report (or ``stages`` when given)."""
    if stages is not None:
        return list(stages)
    if isinstance(report, EvaluationReport):
        return [report]
    if isinstance(report, PipelineEvaluationReport):
        return list(report.stage_reports)
    return []


def usage_line(reports: Iterable[EvaluationReport]) -> str | None:
    """``judges: N requests, X input tokens, Y output tokens[, $Z]`` summed over every
    metric result's usage, or ``None`` when no metric reported any usage.

    The cost appears only when a price was known for at least one call; when some
    calls had no price (a panel member, a judge without one) it is marked as partial.
    ``requests`` counts HTTP requests, retried and failed ones included.
    """
    requests = input_tokens = output_tokens = 0
    cost = 0.0
    priced = unpriced = False
    used = False
    for report in reports:
        for result in report.metric_results:
            if not result.usage:
                continue
            used = True
            requests += int(result.usage.get("requests", 0))
            input_tokens += int(result.usage.get("input_tokens", 0))
            output_tokens += int(result.usage.get("output_tokens", 0))
            if "cost_usd" in result.usage:
                priced = True
                cost += result.usage["cost_usd"]
                # A panel's cost leaves out its unpriced members' calls.
                unpriced = unpriced or result.usage.get("unpriced_requests", 0) > 0
            elif result.usage.get("requests", 0) > 0:
                # Cached answers cost nothing; only real calls without a price count.
                unpriced = True
    if not used:
        return None
    line = (
        f"judges: {requests} requests, {input_tokens} input tokens, {output_tokens} output tokens"
    )
    return line + cost_text(cost if priced else None, partial=unpriced)


def cost_text(cost: float | None, *, partial: bool) -> str:
    """``, $0.0123`` (``(some models have no price)`` added when partial), or nothing
    when no cost is known."""
    if cost is None:
        return ""
    return f", ${money_text(cost)}" + (" (some models have no price)" if partial else "")
