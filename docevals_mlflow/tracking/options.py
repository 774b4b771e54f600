"""How a run is logged, apart from what it holds: :class:`RunOptions`.

Every entry point (the CLI, the ``log_*`` functions, the MLflow evaluator plugin,
``SparkFieldComparison.log``) turns what it was given into one :class:`RunOptions`
and hands it, with the content, to the assembly function of the run's kind
(:mod:`~docevals_mlflow.tracking.assembly`). What a run holds therefore depends on
its kind, its content and these options, never on the entry point.

This module does not import mlflow.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.fingerprints import sha256_bytes
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.trace_policy import TracePolicy, parse_trace_policy

if TYPE_CHECKING:
    from docevals_mlflow.fields.schema import DocumentSchema
    from docevals_mlflow.tracking.dataset_use import DatasetUse

PROMPT_ARTIFACT = "specs/prompt.txt"
"""Where the text of :attr:`RunOptions.prompt` goes in the run."""


@dataclass(frozen=True)
class RunPrompt:
    """The prompt that produced the evaluated outputs.

    The run gets its text as ``specs/prompt.txt`` and the params ``prompt.sha256``
    (SHA-256 of the UTF-8 text), ``prompt.file`` (``file``: a file's name, never its
    path) and ``prompt.name`` (``name``: the text is then registered as a version of
    that prompt in MLflow's prompt registry and the run gets ``prompt.uri``).
    """

    text: str
    file: str | None = None
    name: str | None = None

    @property
    def sha256(self) -> str:
        """SHA-256 of the text (UTF-8), as ``prompt.sha256`` records it."""
        return sha256_bytes(self.text.encode("utf-8"))


@dataclass(frozen=True)
class RunOptions:
    """Everything about a run that is not its content, in one value.

    Attributes:
        run_name: the run's name (default: the kind's, else MLflow's).
        experiment: the experiment (default: the kind's, else ``docevals``).
        tracking_uri: the store (default: ``MLFLOW_TRACKING_URI``, else
            ``sqlite:///<cwd>/mlflow.db``).
        params: the caller's own params (what made the evaluated outputs); one that
            would replace a param the layout wrote with another value is an
            :class:`~docevals_mlflow.errors.InputError`.
        tags: the caller's own tags.
        prompt: the prompt that produced the evaluated outputs (:class:`RunPrompt`).
        keep_bundle_at: where the run bundle is kept for ``docevals log`` when logging
            fails (or beside it, ``<name>-2``, when a bundle not yet logged is there).
        ground_truth: the expected file or folder, logged as the run's
            ``ground_truth`` input with its content digest.
        datasets: registered ground-truth datasets the evaluation used
            (:class:`~docevals_mlflow.tracking.dataset_use.DatasetUse`).
        schema: the schema a field comparison used, logged as ``specs/schema.json``
            (it must be the one the comparison reports).
        engine: what computed the figures when it is not this process
            (``spark``), logged as the param ``docevals.engine``.
        traces: which documents (pipeline cases) become MLflow traces linked to the
            run: ``all``, ``errors``, ``none`` or a number at most (the wrong ones
            first); default every one up to 1,000 (see
            :mod:`~docevals_mlflow.tracking.trace_policy`). A bad value is an
            :class:`~docevals_mlflow.errors.InputError`.
    """

    run_name: str | None = None
    experiment: str | None = None
    tracking_uri: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    prompt: RunPrompt | None = None
    keep_bundle_at: str | os.PathLike[str] | None = None
    ground_truth: str | os.PathLike[str] | None = None
    datasets: Sequence[DatasetUse] = ()
    schema: DocumentSchema | None = None
    engine: str | None = None
    traces: TracePolicy | str | int | None = None

    def __post_init__(self) -> None:
        # Frozen all the way down: a caller's dict changed later must not change the
        # options (or a run assembled from them).
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "tags", MappingProxyType(dict(self.tags)))
        object.__setattr__(self, "datasets", tuple(self.datasets))
        if self.traces is not None:
            object.__setattr__(self, "traces", parse_trace_policy(self.traces))

    @property
    def trace_policy(self) -> TracePolicy:
        """The traces policy (the default when none was given)."""
        return parse_trace_policy(self.traces)

    def merged(self, **changes: Any) -> RunOptions:
        """These options with ``changes`` applied where they are not ``None``;
        ``params`` and ``tags`` given are added to (and win over) these."""
        given = {name: value for name, value in changes.items() if value is not None}
        for name in ("params", "tags"):
            if name in given:
                given[name] = {**getattr(self, name), **given[name]}
        return dataclasses.replace(self, **given) if given else self

    def with_defaults(
        self, *, run_name: str | None = None, experiment: str | None = None
    ) -> RunOptions:
        """These options, with a run name and experiment where none was given."""
        return dataclasses.replace(
            self,
            run_name=self.run_name or run_name,
            experiment=self.experiment or experiment,
        )


def apply_options(writer: BundleWriter, options: RunOptions) -> None:
    """Add what the options put into every run, after the kind's own layout: the
    ground-truth input, registered datasets, the engine, the prompt, then the
    caller's params and tags (last, so they can never replace a fingerprint
    silently)."""
    if options.ground_truth is not None:
        from docevals_mlflow.tracking.fields_layout import fields_dataset

        writer.dataset(*fields_dataset(options.ground_truth))
    if options.datasets:
        from docevals_mlflow.tracking.dataset_use import record_dataset_use

        for use in options.datasets:
            record_dataset_use(
                writer,
                use.dataset,
                use.case_ids,
                replace_derived_input=use.replace_derived_input,
            )
    if options.engine is not None:
        writer.param("docevals.engine", options.engine)
    prompt = options.prompt
    if prompt is not None:
        writer.text(PROMPT_ARTIFACT, prompt.text)
        writer.param("prompt.sha256", prompt.sha256)
        writer.param("prompt.file", prompt.file)
        writer.param("prompt.name", prompt.name)
    writer.extras(params=options.params, tags=options.tags)


__all__ = ["PROMPT_ARTIFACT", "RunOptions", "RunPrompt", "apply_options"]
