"""Evaluating against a registered dataset: its references in cases, pipelines and
field comparisons, and its name, version and digest in the evaluation run.

Cases are matched by ``case_id``; a case the dataset does not hold is an error (an
evaluation that silently ran without its ground truth would report a score against
nothing). Field comparisons pair predicted documents with the dataset's cases by
document id, and report the ids found on one side only, as ``--expected`` does.

This module does not import mlflow.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from docevals_mlflow.core.cases import EvaluationCase, PipelineCase
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.batch import DocumentPair
from docevals_mlflow.fields.inputs import PairedRecords, read_records
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.dataset_content import RECORDS_PATH
from docevals_mlflow.tracking.dataset_models import GroundTruthDataset

AD_HOC_INPUT = "inputs/ground_truth.parquet"
"""Where :func:`~docevals_mlflow.tracking.evaluation_layout.layout_evaluation` puts the input it
derives from a run's ground-truth references."""
DATASET_INPUT = "inputs/ground_truth_dataset.parquet"


@dataclass(frozen=True)
class DatasetUse:
    """A registered dataset an evaluation used (see :func:`record_dataset_use`).

    Attributes:
        dataset: the loaded dataset version.
        case_ids: the cases the evaluation used (``None``: all of them).
        replace_derived_input: drop the input the evaluation layout derives from the
            ground-truth references, which describes the same ground truth under a
            made-up name.
    """

    dataset: GroundTruthDataset
    case_ids: tuple[str, ...] | None = None
    replace_derived_input: bool = True


def attach_to_pipeline(
    pipeline: PipelineCase,
    dataset: GroundTruthDataset,
    stages: Sequence[str] | None = None,
) -> PipelineCase:
    """``pipeline`` with the dataset's reference added to ``stages`` (by default the
    final stages: those no other stage depends on), matched by each stage's ``case_id``.

    Ground truth describes what a pipeline should finally produce, so intermediate
    stages (OCR text, page splits) are left alone unless named.

    Raises:
        InputError: a named stage does not exist.
        DatasetNotFoundError: a chosen stage's case is not in the dataset.
    """
    known = [stage.stage_id for stage in pipeline.stages]
    if stages:
        unknown = sorted(set(stages) - set(known))
        if unknown:
            raise InputError(
                f"pipeline {pipeline.pipeline_id!r} has no stage "
                + ", ".join(repr(stage) for stage in unknown),
                expected="one of " + ", ".join(repr(stage) for stage in known),
            )
        chosen = set(stages)
    else:
        needed = {dependency for stage in pipeline.stages for dependency in stage.depends_on}
        chosen = {stage_id for stage_id in known if stage_id not in needed}
    updated = [
        _with_reference(stage, dataset) if stage.stage_id in chosen else stage
        for stage in pipeline.stages
    ]
    return pipeline.model_copy(update={"stages": updated})


def _with_reference(stage: EvaluationCase, dataset: GroundTruthDataset) -> EvaluationCase:
    reference = dataset.reference(stage.case_id)
    if any(existing.id == reference.id for existing in stage.references):
        raise InputError(
            f"case {stage.case_id!r} stage {stage.stage_id!r} already has a reference "
            f"{reference.id!r}",
            expected="each dataset used once",
        )
    return stage.model_copy(update={"references": [*stage.references, reference]})


def has_other_ground_truth(stages: Iterable[EvaluationCase], dataset: GroundTruthDataset) -> bool:
    """Whether any stage has ground truth that does not come from ``dataset``."""
    return any(
        reference.authority == "ground_truth" and reference.metadata.get("dataset") != dataset.name
        for stage in stages
        for reference in stage.references
    )


def record_dataset_use(
    writer: BundleWriter,
    dataset: GroundTruthDataset,
    case_ids: Iterable[str] | None = None,
    *,
    replace_derived_input: bool = True,
) -> None:
    """Add ``dataset.name``, ``dataset.version`` and ``dataset.digest`` params and a
    ``ground_truth`` input (same name and digest as the approval run's) to a run.

    ``case_ids`` are the cases the run used (default: all); they and their content
    digests form the input's table. With ``replace_derived_input`` the input the
    evaluation layout derives from the references is dropped, since it describes the
    same ground truth under a made-up name.
    """
    import pandas as pd

    for key, value in dataset.run_params().items():
        writer.param(key, value)
    used = sorted(set(case_ids)) if case_ids is not None else dataset.case_ids
    frame = pd.DataFrame.from_records(
        [(case_id, dataset.cases[case_id].record.content_sha256) for case_id in used],
        columns=["case_id", "content_sha256"],
    )
    if replace_derived_input:
        writer.bundle.inputs = [
            entry for entry in writer.bundle.inputs if entry.records != AD_HOC_INPUT
        ]
        writer.files.pop(AD_HOC_INPUT, None)
    writer.dataset(
        DatasetInput(
            name=dataset.name,
            digest=dataset.digest,
            source=f"runs:/{dataset.run_id}/{RECORDS_PATH}",
            records=DATASET_INPUT,
            tags={"docevals.dataset.version": str(dataset.version)},
        ),
        frame,
    )


def dataset_pairs(dataset: GroundTruthDataset, predicted: str | os.PathLike[str]) -> PairedRecords:
    """Pair predicted documents (JSON Lines file or folder) with the dataset's cases.

    The predicted input is read twice (ids first, so both unpaired lists are complete
    when this returns, then the documents); pairs come in predicted-input order.
    """
    path = Path(predicted)
    predicted_ids = [record.id for record in read_records(path)]
    known = set(predicted_ids)
    expected_only = [case_id for case_id in dataset.case_ids if case_id not in known]
    predicted_only = [doc_id for doc_id in predicted_ids if doc_id not in dataset.cases]
    return PairedRecords(_pairs(dataset, path), expected_only, predicted_only)


def _pairs(dataset: GroundTruthDataset, path: Path) -> Iterator[DocumentPair]:
    for record in read_records(path):
        if record.id not in dataset.cases:
            continue
        yield DocumentPair(
            id=record.id,
            expected=dataset.document(record.id),
            predicted=record.data,
            document_class=record.document_class,
            confidence=record.confidence,
            explainability_info=record.explainability_info,
        )
