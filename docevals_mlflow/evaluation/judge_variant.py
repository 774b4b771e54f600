"""A member of a judge panel: a judge, who it is, and the temperature it samples at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.judge import CallableAdapter, ModelJudge


@dataclass
class JudgeVariant:
    """One member of a panel: a judge and who it is.

    ``provider`` and ``model`` declare who the judge is; when given they win over what
    the judge reports, for grouping and for the producer relationship, and a plain
    function judge takes them as its identity. When omitted they come from the judge's
    ``describe()``.

    ``temperature`` is sent: a judge whose adapter has a different temperature is
    rebuilt on a copy of the adapter with this one. A judge that cannot take a
    temperature (a plain function, a custom judge) is refused with a
    :class:`~docevals_mlflow.errors.ConfigurationError` rather than labelled with a
    temperature it never used.

    Variants with the same ``sample_group`` (by default ``provider:model``) are samples
    of one model and cast one vote together.
    """

    name: str
    judge: Any
    provider: str | None = None
    model: str | None = None
    temperature: float | None = None
    sample_group: str | None = None

    def __post_init__(self) -> None:
        if not hasattr(self.judge, "ajudge"):
            adapter = self.judge
            if not hasattr(adapter, "agenerate"):
                # A bare function has no identity of its own: it takes the declared one.
                adapter = CallableAdapter(
                    adapter, provider=self.provider or "custom", model=self.model
                )
            self.judge = ModelJudge(adapter, name=self.name)
        if self.temperature is not None:
            self.judge = _with_temperature(self.name, self.judge, self.temperature)
        described = self.judge.describe() if hasattr(self.judge, "describe") else {}
        self.provider = self.provider or str(described.get("provider", "custom"))
        self.model = self.model or str(described.get("model", self.name))
        if self.temperature is None and described.get("temperature") is not None:
            self.temperature = float(described["temperature"])

    @property
    def identity(self) -> dict[str, Any]:
        """The declared provider and model (what producer relationships use)."""
        return {"provider": self.provider, "model": self.model}

    @property
    def group(self) -> str:
        """The self-consistency group this variant votes in."""
        return self.sample_group or f"{self.provider}:{self.model}"

    def spec(self) -> dict[str, Any]:
        """Identity and sampling settings (for fingerprints and panel reports)."""
        return {
            "name": self.name,
            "provider": self.provider,
            "model": self.model,
            "temperature": self.temperature,
            "group": self.group,
        }


def _with_temperature(name: str, judge: Any, temperature: float) -> Any:
    """``judge`` sampling at ``temperature``: itself when it already does, else a
    judge on a copy of its adapter with that temperature."""
    describe = getattr(judge, "describe", None)
    current = describe().get("temperature") if callable(describe) else None
    if current is not None and float(current) == float(temperature):
        return judge
    adapter = getattr(judge, "adapter", None) if isinstance(judge, ModelJudge) else None
    copier = getattr(adapter, "with_settings", None)
    if not callable(copier) or not hasattr(adapter, "temperature"):
        raise ConfigurationError(
            f"judge variant {name!r}: temperature={temperature:g} cannot be sent to this "
            f"judge ({type(adapter if adapter is not None else judge).__name__} takes no "
            "temperature)",
            path="temperature",
            expected="an HTTP adapter (whose temperature is then set), or no temperature "
            "for a function judge",
        )
    assert isinstance(judge, ModelJudge)
    return ModelJudge(copier(temperature=temperature), name=judge.name, cache=judge.cache)
