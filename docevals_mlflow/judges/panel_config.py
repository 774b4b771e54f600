"""Judge panels described as data, and the runtime that builds their judges.

A :class:`PanelConfig` lists variants (judges with a name and a sample group), a vote
rule and prices; :class:`JudgeRuntime` builds the judges of a panel, or of one
configuration, with the prices, cache, client and concurrency of this process. The
panel metric around them is built one layer up, by
:mod:`docevals_mlflow.evaluation.judge_metrics`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import Field, model_validator

from docevals_mlflow.core.model import DocEvalsModel, Number
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.judges.config_files import load_keyless_config
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.judge_config import JudgeConfig
from docevals_mlflow.judges.usage import Price, PriceTable

if TYPE_CHECKING:
    import httpx

    from docevals_mlflow.judges.cache import JudgeCache


class VariantConfig(JudgeConfig):
    """A panel member: a judge, its variant ``name`` and its ``sample_group``.

    Variants of one ``sample_group`` (by default ``provider:model``) are samples of
    one model and cast one vote together.
    """

    sample_group: str | None = Field(default=None, min_length=1)


class PanelConfig(DocEvalsModel):
    """A judge panel: variants, vote rule and prices (see the module docstring).

    ``prices`` maps ``model`` (or ``provider:model``) to USD per million tokens:
    ``{input, output, cached_input}``.
    """

    name: str = Field(default="judge_panel", min_length=1)
    vote_rule: Literal["majority", "unanimous"] = "majority"
    minimum_agreement: Number | None = Field(default=None, gt=0, le=1)
    review_on_any_disagreement: bool = True
    variants: list[VariantConfig] = Field(min_length=1)
    prices: dict[str, Price] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _distinct_names(self) -> PanelConfig:
        labels = [variant.label for variant in self.variants]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            # Unnamed samples of one model get the same default name; votes and
            # reports are keyed by name, so they must differ.
            raise ValueError(
                f"variant names repeat ({', '.join(repeated)}): give each variant a distinct 'name'"
            )
        return self

    def price_table(self, extra: PriceTable | None = None) -> PriceTable | None:
        """The panel's prices, with ``extra`` (say, from ``--prices``) taking precedence;
        ``None`` when neither knows any price."""
        merged = {**self.prices, **(extra.prices if extra is not None else {})}
        return PriceTable(prices=merged) if merged else None


def load_panel_config(path: str | os.PathLike[str]) -> PanelConfig:
    """Read a panel file (YAML or JSON).

    Raises:
        InputError: the file is malformed, holds an API key, or a setting is
            invalid; the message names the file and, where it applies, the variant.
        InputFileNotFoundError: there is no such file.
    """
    return load_keyless_config(
        path,
        PanelConfig,
        what="a panel configuration",
        expected="name, vote_rule, variants, prices",
        entries="variants",
        entry="variant",
    )


AnyJudgeConfig = TypeVar("AnyJudgeConfig", bound=JudgeConfig)


@dataclass(frozen=True)
class JudgeRuntime:
    """How judges built from configuration run in this process: prices, cache,
    HTTP client, default concurrency and the environment keys come from.

    One runtime serves every judge of an invocation (the CLI's ``--judge``, its
    ``--panel``, and the judges a pipeline configuration names), so that
    ``--prices``, ``--judge-cache`` and ``--concurrency`` apply to all of them.
    ``max_concurrency`` applies where a configuration sets none of its own.
    """

    prices: PriceTable | None = None
    cache: JudgeCache | None = None
    client: httpx.AsyncClient | None = None
    max_concurrency: int | None = None
    environ: Mapping[str, str] | None = None

    def _defaults(self, config: AnyJudgeConfig) -> AnyJudgeConfig:
        if self.max_concurrency is None or config.max_concurrency is not None:
            return config
        return config.model_copy(update={"max_concurrency": self.max_concurrency})

    def judge(self, config: JudgeConfig) -> ModelJudge:
        """Build one judge."""
        return self._defaults(config).build(
            self.prices, self.client, cache=self.cache, environ=self.environ
        )

    def panel_judges(self, config: PanelConfig) -> list[tuple[VariantConfig, ModelJudge]]:
        """Build the judge of every variant of a panel, each with its variant.

        The panel's prices are extended (and overridden) by this runtime's. The panel
        metric is built from these by
        :func:`docevals_mlflow.evaluation.judge_metrics.judge_panel_metric`.

        Raises:
            ConfigurationError: a variant cannot be built (the message names it).
        """
        table = config.price_table(self.prices)
        built = []
        for index, variant in enumerate(config.variants):
            try:
                judge = self._defaults(variant).build(
                    table, self.client, cache=self.cache, environ=self.environ
                )
            except (InputError, ConfigurationError) as exc:
                raise type(exc)(
                    f"variant {variant.label!r}: {exc.message}",
                    source=exc.source,
                    path=f"variants[{index}]" + (f".{exc.path}" if exc.path else ""),
                    expected=exc.expected,
                ) from None
            built.append((variant, judge))
        return built
