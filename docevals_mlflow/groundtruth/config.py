"""A ground-truth generation described as data: what to read, and which models read it.

``docevals generate --config gen.yaml`` reads this file (YAML or JSON)::

    instruction: Extract the currency, the amount and the account holder's name.
    # or: instruction_file: instruction.md     (relative to this file)
    expected_fields: [$.currency, $.amount, $.account_name]
    minimum_agreement: 1.0          # share of independent groups a value needs
    adjudicate: false               # re-read disputed fields once, blind
    union: false                    # accept one-sided values (unattended runs)
    document_mode: preserve         # or markdown: also write a local Markdown copy
    generators:
      - {name: gpt, provider: openai, model: gpt-4.1-mini, temperature: 0}
      - {name: claude, provider: anthropic, model: claude-sonnet-4-5}
      - name: local
        provider: openai-compatible
        model: qwen2.5-vl
        base_url: http://localhost:8000/v1
        api_key_env: LOCAL_LLM_KEY  # the NAME of a variable, never a key
        group: qwen                 # generators of one group cast one vote
    prices:                         # USD per million tokens (optional)
      gpt-4.1-mini: {input: 0.4, output: 1.6}

A generator takes every setting of a judge
(:class:`~docevals_mlflow.judges.config.JudgeConfig`) plus ``group``. Keys are read
from the environment only: a file that holds one is refused, naming the place, never
the value. Unknown keys are refused too; every error names the file and the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator, model_validator

from docevals_mlflow.core.datafiles import read_text_file
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import ConfigurationError, DocEvalsError, InputError
from docevals_mlflow.groundtruth.adjudicator import GroundTruthAdjudicator
from docevals_mlflow.groundtruth.consensus import check_expected_fields
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.router import DocumentMode
from docevals_mlflow.judges.config import JudgeConfig, load_keyless_config, refuse_api_keys
from docevals_mlflow.judges.usage import Price, PriceTable

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.cache import GenerationCache

MINIMUM_GENERATORS = 2


class GeneratorConfig(JudgeConfig):
    """One model of the panel: a judge's settings, plus the ``group`` it votes in.

    Generators with the same ``group`` (by default the same provider and model) are
    samples of one reader and cast one vote together.
    """

    group: str | None = Field(default=None, min_length=1)

    @property
    def vote_group(self) -> str:
        """The group this generator votes in (for the independence check)."""
        return self.group or f"{self.provider}:{self.model or '(default model)'}"


class GenerationConfig(DocEvalsModel):
    """A ground-truth generation: instruction, fields, voting and generators.

    See the module docstring for the file format.
    """

    instruction: str | None = None
    """What to read, in your words (part of every generator's prompt)."""
    instruction_file: str | None = Field(default=None, min_length=1)
    """A text file holding the instruction instead (relative to the configuration)."""
    expected_fields: list[str]
    minimum_agreement: float = Field(default=1.0, gt=0, le=1)
    """Share of voting groups a value needs; also used by the adjudication."""
    generators: list[GeneratorConfig]
    adjudicate: bool = False
    union: bool = False
    document_mode: DocumentMode = "preserve"
    prices: dict[str, Price] = Field(default_factory=dict)

    @field_validator("minimum_agreement", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            # pydantic would read true as 1.0: unanimity nobody asked for.
            raise ValueError(f"must be a number in (0, 1], not {value!r}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GenerationConfig:
        if (self.instruction is None) == (self.instruction_file is None):
            raise InputError(
                "give the extraction instruction either inline or in a file",
                path="instruction",
                expected="exactly one of 'instruction' and 'instruction_file'",
            )
        if self.instruction is not None and not self.instruction.strip():
            raise InputError(
                "the extraction instruction is blank",
                path="instruction",
                expected="what the generators should read, in a sentence or more",
            )
        try:
            self.expected_fields = check_expected_fields(self.expected_fields)
        except ConfigurationError as exc:
            raise InputError(exc.message, path=exc.path) from None
        self._check_generators()
        return self

    def _check_generators(self) -> None:
        count = len(self.generators)
        if count < MINIMUM_GENERATORS:
            raise InputError(
                f"{count} generator(s) given; one model cannot agree with itself, so "
                "ground truth needs at least two independent generators",
                path="generators",
                expected=f"at least {MINIMUM_GENERATORS} generators of different models",
            )
        seen: dict[str, int] = {}
        for index, generator in enumerate(self.generators):
            label = generator.label
            if label in seen:
                raise InputError(
                    f"generator name {label!r} is used by generators[{seen[label]}] too; "
                    "give each generator a distinct 'name'",
                    path=f"generators[{index}].name",
                )
            seen[label] = index
        groups = {generator.vote_group for generator in self.generators}
        if len(groups) < MINIMUM_GENERATORS:
            raise InputError(
                f"every generator is one provider/model group ({sorted(groups)[0]!r}): "
                "samples of one model are one reader and cannot agree with themselves",
                path="generators",
                expected="generators of at least two different models (or distinct 'group's)",
            )

    def instruction_text(self) -> str:
        """The extraction instruction: ``instruction``, or the text of
        ``instruction_file`` (relative to the working directory here;
        :func:`load_generation_config` makes it relative to the configuration).

        Raises:
            InputFileNotFoundError: the instruction file is missing.
            InputError: it is not UTF-8, is blank, or holds an API key.
        """
        if self.instruction is not None:
            return self.instruction
        assert self.instruction_file is not None  # the validator guarantees one of them
        source = self.instruction_file
        text = read_text_file(Path(source))
        # The instruction is sent to every provider and recorded in every report.
        refuse_api_keys(text, source=source)
        if not text.strip():
            raise InputError("the instruction file is blank", source=source)
        return text

    def price_table(self, extra: PriceTable | None = None) -> PriceTable | None:
        """The file's prices, with ``extra`` (say, from ``--prices``) taking precedence;
        ``None`` when neither knows any price."""
        merged = {**self.prices, **(extra.prices if extra is not None else {})}
        return PriceTable(prices=merged) if merged else None

    def check_keys(self, environ: Mapping[str, str] | None = None) -> None:
        """Refuse before anything is asked when a generator's key is not set.

        Raises:
            ConfigurationError: naming the generator and the variable (never a value).
        """
        env = os.environ if environ is None else environ
        for index, generator in enumerate(self.generators):
            variable = generator.key_variable
            if variable is not None and not env.get(variable):
                raise ConfigurationError(
                    f"generator {generator.label!r} ({generator.provider}) needs an API key: "
                    f"set {variable} in the environment",
                    path=f"generators[{index}]",
                )

    def build_panel(
        self,
        *,
        prices: PriceTable | None = None,
        cache: str | os.PathLike[str] | GenerationCache | None = None,
        max_concurrency: int | None = None,
        environ: Mapping[str, str] | None = None,
        client: Any = None,
    ) -> GroundTruthPanel:
        """The panel of generators this configuration describes.

        Args:
            prices: extend (and override) the file's prices.
            cache: a directory or :class:`GenerationCache` for answers.
            max_concurrency: requests in flight per provider where a generator sets
                none of its own.
            environ: where keys are read (default ``os.environ``).
            client: an ``httpx.AsyncClient`` instead of the shared pooled one.

        Raises:
            ConfigurationError: a key is missing, or an adapter refuses a setting (the
                message names the generator).
        """
        self.check_keys(environ)
        table = self.price_table(prices)
        adapters: dict[str, Any] = {}
        groups: dict[str, str] = {}
        for index, generator in enumerate(self.generators):
            settings = generator
            if max_concurrency is not None and generator.max_concurrency is None:
                settings = generator.model_copy(update={"max_concurrency": max_concurrency})
            try:
                adapters[generator.label] = settings.build(table, client, environ=environ).adapter
            except DocEvalsError as exc:
                raise type(exc)(
                    f"generator {generator.label!r}: {exc.message}",
                    source=exc.source,
                    path=f"generators[{index}]" + (f".{exc.path}" if exc.path else ""),
                    expected=exc.expected,
                ) from None
            if generator.group is not None:
                groups[generator.label] = generator.group
        return GroundTruthPanel(
            adapters,
            self.instruction_text(),
            self.expected_fields,
            self.minimum_agreement,
            groups=groups or None,
            cache=cache,
        )


def adjudicator_for(panel: GroundTruthPanel) -> GroundTruthAdjudicator:
    """An adjudicator with the panel's own generators, groups, threshold and cache."""
    return GroundTruthAdjudicator(
        {generator.label: generator.adapter for generator in panel.generators},
        panel.minimum_agreement,
        groups={generator.label: generator.group for generator in panel.generators},
        cache=panel.cache,
    )


def load_generation_config(path: str | os.PathLike[str]) -> GenerationConfig:
    """Read a generation configuration (YAML or JSON).

    ``instruction_file`` is resolved against the configuration's folder and read
    once here, so a missing or unusable instruction is reported before any model is
    asked.

    Raises:
        InputFileNotFoundError: the configuration (or its instruction file) is missing.
        InputError: malformed, an unknown key, an invalid setting, an API key written
            in it, fewer than two independent generators...; the message names the
            file, the field path and, inside ``generators``, the generator.
    """
    source = str(path)
    config = load_keyless_config(
        path,
        GenerationConfig,
        what="a generation configuration",
        expected="instruction, expected_fields, generators, ...",
        entries="generators",
        entry="generator",
    )
    if config.instruction_file is not None:
        resolved = Path(path).parent / config.instruction_file
        config = config.model_copy(update={"instruction_file": str(resolved)})
        try:
            config.instruction_text()
        except DocEvalsError as exc:
            raise type(exc)(
                f"instruction_file {exc.source}: {exc.message}",
                source=source,
                path="instruction_file",
                expected=exc.expected,
            ) from None
    return config
