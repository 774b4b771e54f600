"""Operation specs keyed by operation, and their resolution into cases."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.specs import OperationSpec
from docevals_mlflow.errors import ConfigurationError


class OperationRegistry:
    """Operation specs, one per operation.

    :meth:`resolve` fills a case's ``action_instruction`` and ``evaluation_spec`` from
    its operation's spec where the case has none, and stamps the spec id and version.
    Text supplied on the case itself wins, and its fingerprint shows it in reports.
    """

    def __init__(self, specs: Iterable[OperationSpec] = ()) -> None:
        self._specs: dict[str, OperationSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: OperationSpec) -> None:
        """Add a spec; a second spec for the same operation is refused."""
        existing = self._specs.get(spec.operation)
        if existing is not None:
            raise ConfigurationError(
                f"operation {spec.operation!r} already has spec "
                f"{existing.spec_id!r} v{existing.version}; refusing {spec.spec_id!r} "
                f"v{spec.version}",
                expected="one operation spec per operation",
            )
        self._specs[spec.operation] = spec

    def get(self, operation: str) -> OperationSpec | None:
        """The spec for ``operation``, if one is registered."""
        return self._specs.get(operation)

    def __contains__(self, operation: object) -> bool:
        return operation in self._specs

    def __iter__(self) -> Iterator[OperationSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def resolve(self, case: EvaluationCase) -> EvaluationCase:
        """The case with its operation's spec applied (the case itself is unchanged)."""
        spec = self._specs.get(case.operation)
        if spec is None:
            return case
        return case.model_copy(
            update={
                "action_instruction": (
                    case.action_instruction
                    if case.action_instruction is not None
                    else spec.action_instruction
                ),
                "evaluation_spec": case.evaluation_spec or spec.evaluation_spec,
                "operation_spec_id": spec.spec_id,
                "operation_spec_version": spec.version,
            }
        )
