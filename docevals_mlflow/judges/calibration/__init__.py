"""Judge calibration: how often an LLM judge agrees with human labels, and how much
of that agreement is more than chance.

Human labels (:class:`HumanLabel`, read by :func:`load_human_labels`) name a case
(``pass``/``fail``) or one claim of a case (``correct``/``incorrect`` for a
prediction claim, ``matched``/``missing`` for a reference claim). :func:`calibrate`
pairs each label with what the judge said about the same case or claim in evaluation
reports and measures, per level (cases, claims):

* agreement, the share of labels the judge matched;
* Cohen's kappa between judge and humans, with the judge's unsure answers
  (``uncertain``, ``not_verifiable``, ``ambiguous``, an unanswered claim) as
  categories of their own, and again on the decided subset without them;
* a confusion matrix (rows human, columns judge), and precision/recall of the
  judge's ``fail``/``incorrect`` calls;
* percentile bootstrap intervals for agreement and kappa.

For judge panels it adds Fleiss' kappa across the variants' case verdicts and each
variant's own kappa with the humans. Labels that match nothing and judged items
nobody labelled are listed in the report, never dropped.

Pure computation: no MLflow, no network.

* :mod:`.labels`: :class:`HumanLabel` and reading label files (JSON Lines, CSV/TSV).
* :mod:`.matching`: pairing labels with the judge's case verdicts and claim answers.
* :mod:`.figures`: the per-level and panel figures computed from the pairs (kappa and
  bootstrap intervals from :mod:`docevals_mlflow.core.statistics`).
* :mod:`.disagreement`: the review budget of panel verdicts ranked by disagreement.
* :mod:`.compare`: :func:`calibrate`, which ties them together.
* :mod:`.report`: :class:`CalibrationReport` and the models it is made of
  (:func:`docevals_mlflow.reports.calibration_markdown.render_calibration_markdown`
  renders it as Markdown).
"""

from __future__ import annotations

from docevals_mlflow.core.statistics import cohen_kappa, fleiss_kappa, kappa_strength
from docevals_mlflow.judges.calibration.compare import calibrate
from docevals_mlflow.judges.calibration.labels import HumanLabel, load_human_labels
from docevals_mlflow.judges.calibration.report import (
    CalibrationPair,
    CalibrationReport,
    ConfidenceInterval,
    JudgedItem,
    LevelCalibration,
    PanelCalibration,
    UnmatchedLabel,
    VariantCalibration,
)

__all__ = [
    "CalibrationPair",
    "CalibrationReport",
    "ConfidenceInterval",
    "HumanLabel",
    "JudgedItem",
    "LevelCalibration",
    "PanelCalibration",
    "UnmatchedLabel",
    "VariantCalibration",
    "calibrate",
    "cohen_kappa",
    "fleiss_kappa",
    "kappa_strength",
    "load_human_labels",
]
