"""CLI pieces of the diagnostics: counterfactual options of ``evaluate-pipeline`` and
the one-line calibration summary of ``docevals fields``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.formatting import level_text, metric_text, percent_text
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.diagnostics.counterfactual import Counterfactual, RecordedRerun


def add_counterfactual_options(parser: argparse.ArgumentParser) -> None:
    """``--action NAME=module:function`` (repeatable) and ``--reruns FILE``."""
    group = parser.add_argument_group(
        "counterfactual attribution",
        "Rerun each stage that failed along with an upstream stage on the ground-truth "
        "versions of its upstream outputs: passing then means the upstream failure caused "
        "it (caused_by_upstream), failing again that it has a fault of its own "
        "(independent_failure).",
    )
    group.add_argument(
        "--action",
        action="append",
        default=[],
        metavar="NAME=module:function",
        help="the function that performs operation (or stage) NAME: corrected input in, "
        "output out; the module is looked up next to the configuration too (repeatable)",
    )
    group.add_argument(
        "--reruns",
        type=Path,
        metavar="FILE",
        help="recorded rerun results: a JSON list of {pipeline_id, stage_id, prediction, "
        "input_data?}",
    )


def counterfactual_from_args(args: argparse.Namespace, base: Path) -> Counterfactual | None:
    """The :class:`Counterfactual` the options ask for, or ``None`` (no reruns)."""
    from docevals_mlflow.diagnostics.counterfactual import Counterfactual
    from docevals_mlflow.evaluation.metric_config import import_callable

    if not args.action and args.reruns is None:
        return None
    actions: dict[str, Any] = {}
    for pair in args.action:
        name, sep, target = pair.partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not name or not target:
            raise InputError(f"--action {pair!r}", expected="NAME=module:function")
        if name in actions:
            raise InputError(f"--action {name} given twice", expected="one action per name")
        actions[name] = import_callable(target, base)
    return Counterfactual(actions, reruns=_recorded_reruns(args.reruns))


def _recorded_reruns(path: Path | None) -> list[RecordedRerun]:
    from docevals_mlflow.core.datafiles import load_json_file
    from docevals_mlflow.diagnostics.counterfactual import RecordedRerun

    if path is None:
        return []
    data = load_json_file(path, what="reruns file")
    if not isinstance(data, list):
        raise InputError("not a list of reruns", source=str(path), expected="a JSON list")
    reruns = []
    for index, item in enumerate(data):
        try:
            reruns.append(RecordedRerun.model_validate(item))
        except InputError as exc:
            raise exc.located(source=str(path), record=f"rerun {index + 1}") from None
    return reruns


def calibration_line(report: Mapping[str, Any]) -> str | None:
    """``confidence: AUROC 0.9100, Brier 0.0600, ECE 0.0400 over N fields; reviewing the
    least confident 5%, 10%, 20% of fields catches 41.0%, 62.5%, 80.0% of errors``, or
    ``None`` without confidence."""
    calibration = report.get("calibration")
    if not calibration:
        return None
    overall = calibration["overall"]
    line = (
        f"confidence: AUROC {metric_text(overall['auroc'])}, "
        f"Brier {metric_text(overall['brier'])}, ECE {metric_text(overall['ece'])} "
        f"over {overall['n']} field{'' if overall['n'] == 1 else 's'}"
    )
    budgets = calibration["review"]["budgets"]
    captured = [point for point in budgets if point["error_capture"] is not None]
    if captured:
        shares = ", ".join(level_text(point["budget"]) for point in captured)
        caught = ", ".join(percent_text(point["error_capture"]) for point in captured)
        line += f"; reviewing the least confident {shares} of fields catches {caught} of errors"
    return line
