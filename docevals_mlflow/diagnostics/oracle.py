"""Corrected input for an oracle-swap rerun: the ground-truth (or approved) version of
each upstream output, and the stage's input rebuilt from them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.claims import reference_claims
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.paths import FieldPath, lookup
from docevals_mlflow.core.values import as_bool, as_number
from docevals_mlflow.errors import DocEvalsError


class RerunUnavailable(Exception):
    """A stage cannot be rerun; the message (why) becomes the rerun's reason."""


def copy_value(value: Any) -> Any:
    """A deep copy: actions may mutate their input, and must never reach a reference's
    content or a recorded output."""
    return copy.deepcopy(value)


def _same(first: Any, second: Any) -> bool:
    try:
        return canonical_json(first) == canonical_json(second)
    except DocEvalsError:
        return bool(first == second)


def _typed_like(text: Any, current: Any) -> Any:
    """A path-table value (often CSV text) in the type of the value it corrects."""
    if not isinstance(text, str) or isinstance(current, str) or current is None:
        return text
    if isinstance(current, bool):
        flag = as_bool(text)
        return text if flag is None else flag
    if isinstance(current, (int, float)):
        number = as_number(text)
        if number is None:
            return text
        return int(number) if isinstance(current, int) and number.is_integer() else number
    return text


def _set_path(document: Any, path: FieldPath, value: Any) -> Any:
    """``document`` with ``value`` at ``path``, creating objects and list slots."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(document) if isinstance(document, list) else []
        while len(items) <= head:
            items.append(None)
        items[head] = _set_path(items[head], rest, value)
        return items
    mapping = dict(document) if isinstance(document, Mapping) else {}
    mapping[head] = _set_path(mapping.get(head), rest, value)
    return mapping


def oracle_output(stage: EvaluationCase, passed: bool) -> tuple[Any, str]:
    """The ground-truth version of ``stage``'s output, and where it came from.

    One ground-truth reference with content (JSON, text, a table) is the output as
    it should have been. Path tables name some fields only: their values are
    patched into the stage's own prediction (keeping the prediction's number or
    boolean type where the text converts). A stage without ground truth that passed
    keeps its own prediction.

    Raises:
        RerunUnavailable: no usable ground truth for a stage that did not pass, or
            several whole-document ground truths to choose from.
    """
    truth = [
        reference
        for reference in stage.references
        if reference.authority == "ground_truth" and reference.content is not None
    ]
    documents = [reference for reference in truth if reference.content_format != "path_table"]
    tables = [reference for reference in truth if reference.content_format == "path_table"]
    if len(documents) == 1:
        return copy_value(documents[0].content), f"reference {documents[0].id}"
    if len(documents) > 1:
        names = ", ".join(reference.id for reference in documents)
        raise RerunUnavailable(
            f"upstream stage {stage.stage_id!r} has several ground-truth documents ({names}); "
            "pass build_input= to say which one feeds the rerun"
        )
    if tables:
        patched = copy_value(stage.prediction)
        for reference in tables:
            for claim in reference_claims(reference):
                _, current = lookup(patched, claim.path)
                patched = _set_path(patched, claim.path, _typed_like(claim.expected, current))
        return patched, "path table " + ", ".join(reference.id for reference in tables)
    if passed:
        return copy_value(stage.prediction), "own prediction (passed)"
    raise RerunUnavailable(
        f"upstream stage {stage.stage_id!r} failed and has no ground-truth reference "
        "with content to rerun from"
    )


def default_rerun_input(
    stage: EvaluationCase, corrected: Mapping[str, Any], recorded: Mapping[str, Any]
) -> Any:
    """The stage's input rebuilt from corrected upstream outputs.

    ``recorded`` holds the upstream outputs as they were. The rules, in order:

    * no recorded ``input_data``: the single dependency's corrected output, or a
      mapping ``{stage id: corrected output}`` for several;
    * ``input_data`` equal to one dependency's recorded output (``input_from``):
      that dependency's corrected output;
    * ``input_data`` a mapping with keys named after dependencies: those values
      replaced by the corrected outputs.

    Raises:
        RerunUnavailable: the recorded input shows no dependency's output.
    """
    dependencies = list(stage.depends_on)
    if stage.input_data is None:
        if len(dependencies) == 1:
            return corrected[dependencies[0]]
        return {name: corrected[name] for name in dependencies}
    matching = [name for name in dependencies if _same(stage.input_data, recorded[name])]
    if len(matching) == 1:
        return corrected[matching[0]]
    if isinstance(stage.input_data, Mapping):
        keyed = [name for name in dependencies if name in stage.input_data]
        if keyed:
            rebuilt = copy_value(dict(stage.input_data))
            rebuilt.update({name: corrected[name] for name in keyed})
            return rebuilt
    raise RerunUnavailable(
        "cannot tell how the upstream outputs feed this stage's input_data (it neither "
        "equals an upstream prediction nor has keys named after upstream stages); pass "
        "build_input= to Counterfactual"
    )
