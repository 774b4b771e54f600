"""Judges and judge panels described as data (YAML/JSON files, CLI options).

This module is the public face of judge configuration; the parts live in
:mod:`~docevals_mlflow.judges.judge_config` (one judge),
:mod:`~docevals_mlflow.judges.panel_config` (panels and the runtime) and
:mod:`~docevals_mlflow.judges.config_files` (reading files without keys).

A :class:`JudgeConfig` names a provider (see :mod:`docevals_mlflow.judges.providers`),
a model and its settings and builds a :class:`~docevals_mlflow.judges.judge.ModelJudge`;
a :class:`PanelConfig` lists variants, whose judges :class:`JudgeRuntime` builds. The
metrics around them (``LLMJudgeMetric``, ``JudgePanelMetric``) are built one layer up,
by :mod:`docevals_mlflow.evaluation.judge_metrics`.

Example panel file::

    name: invoice_panel
    vote_rule: majority
    review_on_any_disagreement: true
    variants:
      - {name: gpt-cold, provider: openai, model: gpt-4.1-mini, temperature: 0}
      - {name: gpt-warm, provider: openai, model: gpt-4.1-mini, temperature: 0.8}
      - {name: claude, provider: anthropic, model: claude-sonnet-4-5}
      - name: local
        provider: openai-compatible
        model: qwen2.5-vl
        base_url: http://localhost:8000/v1
        api_key_env: LOCAL_LLM_KEY        # the NAME of a variable, never a key
    prices:                               # USD per million tokens (optional)
      gpt-4.1-mini: {input: 0.4, output: 1.6, cached_input: 0.1}

API keys are read from environment variables only. A configuration that contains
one (a field named ``api_key``, or any value that looks like ``sk-...``) is refused
with an error that says where, never what.
"""

from __future__ import annotations

from docevals_mlflow.judges.config_files import (
    find_api_key,
    load_keyless_config,
    load_prices,
    refuse_api_keys,
)
from docevals_mlflow.judges.judge_config import (
    AUTO_PROVIDERS,
    MODEL_VARIABLE,
    REASONING_EFFORT_VARIABLE,
    JudgeConfig,
    ReasoningEffort,
    auto_judge,
    check_base_url,
)
from docevals_mlflow.judges.panel_config import (
    JudgeRuntime,
    PanelConfig,
    VariantConfig,
    load_panel_config,
)

__all__ = [
    "AUTO_PROVIDERS",
    "MODEL_VARIABLE",
    "REASONING_EFFORT_VARIABLE",
    "JudgeConfig",
    "JudgeRuntime",
    "PanelConfig",
    "ReasoningEffort",
    "VariantConfig",
    "auto_judge",
    "check_base_url",
    "find_api_key",
    "load_keyless_config",
    "load_panel_config",
    "load_prices",
    "refuse_api_keys",
]
