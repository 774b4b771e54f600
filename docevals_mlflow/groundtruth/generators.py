"""The models that read sources for a panel or an adjudicator, and one blind read by
all of them at once.

Generators are given as ``{label: adapter_or_function}`` or as a list of adapters
(labelled ``provider:model``). A plain function ``fn(request)`` (sync or async)
returning the claims object, a matching dict or JSON text is wrapped as an adapter
whose model is its label. Generators with the same provider and model form one
group by default (one independent reader, however many samples); ``groups`` can
say otherwise.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.groundtruth.cache import GenerationCache
from docevals_mlflow.groundtruth.models import ProviderGeneration
from docevals_mlflow.groundtruth.request import parse_generation_output
from docevals_mlflow.groundtruth.sources import PathScrubber
from docevals_mlflow.judges.judge import CallableAdapter, ask_structured, identity
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

MINIMUM_GENERATORS = 2

REPAIR_KEEP = "the values you read"


@dataclass(frozen=True)
class Generator:
    """One labelled generator."""

    label: str
    adapter: Any
    group: str
    identity: dict[str, Any]

    @property
    def model(self) -> str:
        """The model it reports (empty when unknown)."""
        return str(self.identity.get("model") or "")


def _as_adapter(value: Any, *, label: str, model: str) -> Any:
    if hasattr(value, "agenerate"):
        return value
    if callable(value):
        return CallableAdapter(value, model=model)
    raise ConfigurationError(
        f"generator {label!r} is a {type(value).__name__}: expected a provider adapter "
        "(an object with agenerate) or a function fn(request)",
        path=f"generators[{label!r}]",
    )


def _labelled(generators: Any) -> list[tuple[str, Any]]:
    if isinstance(generators, Mapping):
        pairs: list[tuple[str, Any]] = []
        for label, value in generators.items():
            if not isinstance(label, str) or not label.strip():
                raise ConfigurationError(
                    f"generator labels must be non-empty text, got {label!r}", path="generators"
                )
            pairs.append((label, _as_adapter(value, label=label, model=label)))
        return pairs
    if isinstance(generators, (str, bytes)) or not isinstance(generators, Sequence):
        raise ConfigurationError(
            "generators must be a mapping {label: adapter} or a list of adapters, "
            f"not {type(generators).__name__}",
            path="generators",
        )
    pairs = []
    seen: dict[str, int] = {}
    for index, value in enumerate(generators):
        name = getattr(value, "__name__", None)
        adapter = _as_adapter(value, label=f"#{index}", model=name or f"generator-{index + 1}")
        details = identity(adapter)
        base = f"{details.get('provider', 'custom')}:{details.get('model', 'model')}"
        seen[base] = seen.get(base, 0) + 1
        pairs.append((base if seen[base] == 1 else f"{base}#{seen[base]}", adapter))
    return pairs


def resolve_generators(generators: Any, groups: Mapping[str, str] | None = None) -> list[Generator]:
    """The generators in label order, each with its group.

    Raises:
        ConfigurationError: fewer than two generators or two groups, a label repeated
            or not text, an unknown label in ``groups``, or a value that is neither an
            adapter nor a function.
    """
    pairs = _labelled(generators)
    if len(pairs) < MINIMUM_GENERATORS:
        raise ConfigurationError(
            f"at least {MINIMUM_GENERATORS} independent generators are required, got {len(pairs)}",
            path="generators",
        )
    labels = [label for label, _ in pairs]
    unknown = sorted(set(groups or {}) - set(labels))
    if unknown:
        raise ConfigurationError(
            f"groups name unknown generators {unknown}; known: {sorted(labels)}",
            path="groups",
        )
    resolved: list[Generator] = []
    for label, adapter in sorted(pairs, key=lambda pair: pair[0]):
        details = identity(adapter)
        group = (groups or {}).get(label) or (
            f"{details.get('provider', 'custom')}:{details.get('model', label)}"
        )
        if not isinstance(group, str):
            raise ConfigurationError(
                f"group of {label!r} must be text, got {group!r}", path="groups"
            )
        resolved.append(Generator(label, adapter, group, details))
    distinct = {generator.group for generator in resolved}
    if len(distinct) < MINIMUM_GENERATORS:
        raise ConfigurationError(
            f"all generators are one provider/model group ({sorted(distinct)[0]!r}): one "
            "independent reader cannot agree with itself; add a generator of another "
            "model or pass groups=",
            path="generators",
        )
    return resolved


async def read_one(
    generator: Generator,
    request: JudgeRequest,
    *,
    cache: GenerationCache | None = None,
    scrub: PathScrubber | None = None,
) -> ProviderGeneration:
    """One generator's blind read; a failure is recorded in the result, never raised."""
    key = cache.key(request, generator.identity) if cache is not None else None
    if cache is not None and key is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit.model_copy(
                update={
                    "provider": generator.label,
                    "group": generator.group,
                    "usage": Usage(),
                    "latency_seconds": 0.0,
                    "cached": True,
                }
            )
    started = time.perf_counter()
    answer = await ask_structured(
        generator.adapter, request, parse_generation_output, keep=REPAIR_KEEP
    )
    clean = scrub or (lambda text: text)
    generation = ProviderGeneration(
        provider=generator.label,
        model=generator.model,
        group=generator.group,
        status=answer.status,
        error=clean(answer.error),
        raw_text=clean(answer.raw_text),
        claims=answer.value or [],
        usage=answer.usage,
        latency_seconds=time.perf_counter() - started,
    )
    if cache is not None and key is not None and generation.usable:
        cache.put(key, generation)
    return generation


async def read_all(
    generators: Sequence[Generator],
    request: JudgeRequest,
    *,
    cache: GenerationCache | None = None,
    scrub: PathScrubber | None = None,
) -> list[ProviderGeneration]:
    """Every generator's read of ``request``, all at once, in label order."""
    return list(
        await asyncio.gather(
            *(read_one(generator, request, cache=cache, scrub=scrub) for generator in generators)
        )
    )
