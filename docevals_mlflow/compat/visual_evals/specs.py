"""The seed's ``visual_evals.specs``: the operation registry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.core import registry as native_registry
from docevals_mlflow.core.specs import OperationSpec
from docevals_mlflow.errors import ConfigurationError

__all__ = ["OperationRegistry", "as_registry"]


class OperationRegistry(native_registry.OperationRegistry):
    """The package's registry, also taking the seed's mapping ``{operation: spec}``
    (each key must be its spec's operation)."""

    def __init__(self, specs: Iterable[OperationSpec] | Mapping[str, OperationSpec] = ()) -> None:
        if isinstance(specs, Mapping):
            for key, spec in specs.items():
                if key != spec.operation:
                    raise ConfigurationError(
                        f"operation_specs[{key!r}]: the spec is for operation {spec.operation!r}"
                    )
            specs = list(specs.values())
        super().__init__(specs)


def as_registry(specs: Any) -> Any:
    """``specs`` as the package's evaluators take it (a seed mapping becomes a registry)."""
    return OperationRegistry(specs) if isinstance(specs, Mapping) else specs
