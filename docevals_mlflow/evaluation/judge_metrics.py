"""Judge and panel metrics built from configuration.

:mod:`docevals_mlflow.judges.config` describes judges and panels as data and builds
the judges; the metrics around them are built here, so that ``judges`` never imports
``evaluation`` (data flows ``judges`` → ``evaluation``, not back).
"""

from __future__ import annotations

import os

from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.evaluation.judge_variant import JudgeVariant
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric
from docevals_mlflow.judges.config import JudgeConfig, JudgeRuntime, PanelConfig, load_panel_config

JUDGE_METRIC_NAME = "llm_judge"
"""The name of a judge metric that names none."""


def llm_judge_metric(
    config: JudgeConfig, runtime: JudgeRuntime | None = None, *, name: str = JUDGE_METRIC_NAME
) -> LLMJudgeMetric:
    """An :class:`LLMJudgeMetric` around the judge ``config`` describes, built with
    ``runtime``'s prices, cache, client, concurrency and environment.

    Raises:
        ConfigurationError: the key is missing, or the adapter refuses a setting.
    """
    return LLMJudgeMetric((runtime or JudgeRuntime()).judge(config), name=name)


def judge_panel_metric(
    config: PanelConfig, runtime: JudgeRuntime | None = None, *, name: str | None = None
) -> JudgePanelMetric:
    """The panel ``config`` describes; ``runtime``'s prices extend (and override) the
    panel's own, and ``name`` replaces the panel's name.

    Raises:
        ConfigurationError: a variant cannot be built (the message names it).
    """
    variants = [
        JudgeVariant(
            name=variant.label,
            judge=judge,
            temperature=variant.temperature,
            sample_group=variant.sample_group,
        )
        for variant, judge in (runtime or JudgeRuntime()).panel_judges(config)
    ]
    return JudgePanelMetric(
        variants,
        name=name or config.name,
        vote_rule=config.vote_rule,
        minimum_agreement=config.minimum_agreement,
        review_on_any_disagreement=config.review_on_any_disagreement,
    )


def load_judge_panel_metric(
    path: str | os.PathLike[str], runtime: JudgeRuntime | None = None, *, name: str | None = None
) -> JudgePanelMetric:
    """Load a panel file (YAML or JSON) and build its panel; every error names the file.

    Raises:
        InputError: the file is malformed, holds an API key, or a setting is invalid.
        InputFileNotFoundError: there is no such file.
        ConfigurationError: a variant cannot be built (a key is missing, ...).
    """
    config = load_panel_config(path)
    try:
        return judge_panel_metric(config, runtime, name=name)
    except DocEvalsError as exc:
        raise exc.located(source=str(path)) from None
