"""The judge options of ``evaluate-case``, ``evaluate-pipeline`` and ``fields``.

``--judge NAME`` takes every registered judge provider (see
:mod:`docevals_mlflow.judges.providers`), plugins included; the list is read from
the registry when a value is checked or help is shown, never when the parser is
built.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.light_constants import (
    AUTO_PROVIDERS,
    MODEL_VARIABLE,
    REASONING_EFFORT_VARIABLE,
)
from docevals_mlflow.cli.options import (
    add_answer_cache_option,
    add_concurrency_option,
    add_prices_option,
)
from docevals_mlflow.judges.providers import judge_provider, judge_providers, provider_registry

_WORDS = ("auto", "none")
"""What ``--judge`` takes besides provider names."""


class JudgeChoices:
    """The values ``--judge`` takes: ``auto``, every judge provider and ``none``.

    The registry is read when argparse checks a value or shows help, not when the
    parser is built: listing the providers reads the plugins' entry points, which a
    command run without ``--judge`` need not pay for.
    """

    def __contains__(self, value: object) -> bool:
        return value in _WORDS or value in provider_registry()

    def __iter__(self) -> Iterator[str]:
        return iter(("auto", *provider_registry().names(), "none"))

    def __len__(self) -> int:
        return len(provider_registry().names()) + len(_WORDS)


def judge_help() -> str:
    """The help of ``--judge``: every provider with its line of help."""
    auto = " else ".join(
        f"{name} when {judge_provider(name).key_variable} is set" for name in AUTO_PROVIDERS
    )
    providers = "; ".join(
        f"{provider.name}: {provider.help}" if provider.help else provider.name
        for provider in judge_providers()
    )
    text = (
        f"the judge's provider ({providers}); 'auto' uses {auto}, else no judge; 'none' "
        "(default) runs deterministic metrics only"
    )
    # argparse fills help texts in with %: a provider's own % must stay a %.
    return text.replace("%", "%%")


class _JudgeAction(argparse.Action):
    """Stores ``--judge``; its help, which lists the providers, is built when shown."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)

    @property
    def help(self) -> str:
        return judge_help()

    @help.setter
    def help(self, value: str | None) -> None:
        # argparse.Action.__init__ assigns the help given; this option builds its own.
        pass


def add_judge_options(
    parser: argparse.ArgumentParser, *, pipeline: bool = False, fields: bool = False
) -> None:
    """``--judge``, ``--model``, ``--base-url``, ``--api-key-env``, ``--temperature``,
    ``--reasoning-effort``, ``--panel``, ``--repeats``, ``--concurrency``,
    ``--judge-cache`` and ``--prices``; with ``fields`` (``docevals fields``) the judge
    decides LLM-method fields, so there is no ``--panel`` nor ``--repeats``."""
    group = parser.add_argument_group(
        "LLM judge", _group_description(pipeline=pipeline, fields=fields)
    )
    _add_judge_settings(group)
    if fields:
        parser.set_defaults(panel=None)
    else:
        group.add_argument(
            "--panel",
            type=Path,
            metavar="PANEL.yaml",
            help="judge with a panel of judges described in this file (instead of --judge)",
        )
        group.add_argument(
            "--repeats",
            type=int,
            default=1,
            metavar="N",
            help="ask every LLM judge and panel N times per stage (repeats 2..N bypass "
            "--judge-cache) and report each judge's flip rate and pass^N; the stage's "
            "verdict is the first repeat's (default 1)",
        )
    add_concurrency_option(group, own_limit="a judge or variant configured")
    add_answer_cache_option(group, "--judge-cache", answers="judge answers")
    add_prices_option(group)


def _group_description(*, pipeline: bool, fields: bool) -> str:
    if fields:
        return (
            "The model that decides fields whose schema method is LLM (one request per "
            "document, never one per pair). Keys are read from the environment only."
        )
    return (
        "Add an LLM judge (or a panel of judges) to the deterministic metrics"
        + (
            " of every stage; the metrics the configuration names stay, and judges it "
            "names itself use --prices, --judge-cache and --concurrency too"
            if pipeline
            else ""
        )
        + ". Keys are read from the environment only."
    )


def _add_judge_settings(group: Any) -> None:
    """What one judge is: ``--judge`` and its model, server, key and sampling options."""
    group.add_argument(
        "--judge",
        action=_JudgeAction,
        choices=JudgeChoices(),
        metavar="NAME",
        default="none",
    )
    group.add_argument(
        "--model", help=f"the judge model (default: {MODEL_VARIABLE}, else the provider's)"
    )
    group.add_argument(
        "--base-url",
        help="the provider's API root (required by providers without a default server, "
        "such as openai-compatible: http://localhost:8000/v1)",
    )
    group.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the environment variable holding the key (default: the provider's own, "
        "such as OPENAI_API_KEY or ANTHROPIC_API_KEY; none for openai-compatible)",
    )
    group.add_argument("--temperature", type=float, help="the judge's sampling temperature")
    group.add_argument(
        "--reasoning-effort",
        help="reasoning effort, for providers that take one such as openai (low, medium, "
        f"high; default: {REASONING_EFFORT_VARIABLE})",
    )
