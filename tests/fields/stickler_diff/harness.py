"""Comparing our cells with Stickler's, place by place.

For one :class:`~tests.fields.stickler_diff.corpus.Example` both engines compare
the same documents. The cells are keyed as Stickler reports them
(:data:`~tests.fields.stickler_diff.stickler_side.Key`), and three readings of ours
are built in that key space:

``ours``
    our cells mapped to Stickler's units (scalars and list-of-scalar items as they
    are; a group's own cell from the shape of the two values; a list of objects'
    item counts; leaves of matched pairs only — ``ours_all`` keeps the leaves of
    weak pairs and leftover items too);
``model``
    our cells recomputed from the rules the engine is meant to follow (min(m, n)
    pairs, weak pairs, the documented item similarity), from our own per-pair
    comparisons; a list whose ``model`` differs from ``ours`` is reported, since no
    documented row can then explain its differences;
``expected``
    the cells Stickler should count according to the documented differences
    (:mod:`~tests.fields.stickler_diff.differences`), derived from ours.

A key is *identical* when ``ours`` equals Stickler's cells, *explained* when
``expected`` does (naming the rows that made the change) and *undocumented*
otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from docevals_mlflow.core.paths import key_segment
from docevals_mlflow.fields.dates import parse_date
from tests.fields.stickler_diff import differences as rows_
from tests.fields.stickler_diff import stickler_side
from tests.fields.stickler_diff.corpus import (
    Example,
    Group,
    Node,
    ObjectList,
    Scalar,
    ScalarList,
    our_schema_dict,
    stickler_json_schema,
)
from tests.fields.stickler_diff.our_side import (
    OurRun,
    index_after,
    item_kind,
    item_similarity,
    our_part,
    our_score,
    present,
    run_many,
    run_ours,
    scalar_comparator,
)
from tests.fields.stickler_diff.stickler_side import CELL_NAMES, Cells, Key, add_cells

CELL = {"TP": 0, "FA": 1, "FD": 2, "FN": 3, "TN": 4}
ZERO: Cells = [0, 0, 0, 0, 0]
Status = Literal["identical", "explained", "undocumented"]


def _one(outcome: str) -> Cells:
    cells = [0, 0, 0, 0, 0]
    cells[CELL[outcome]] = 1
    return cells


def _structure(expected: Any, predicted: Any) -> Cells:
    """A group's own cell as Stickler counts it: object on both sides (``tp``), on
    one side (FN / FA), on neither (TN)."""
    expected_object, predicted_object = isinstance(expected, dict), isinstance(predicted, dict)
    if expected_object and predicted_object:
        return [1, 0, 0, 0, 0]
    if expected_object:
        return [0, 0, 0, 1, 0]
    if predicted_object:
        return [0, 1, 0, 0, 0]
    return [0, 0, 0, 0, 1]


@dataclass
class Verdict:
    """How one key compares."""

    key: Key
    status: Status
    ours: Cells
    theirs: Cells
    expected: Cells
    rows: frozenset[str] = frozenset()
    hints: tuple[str, ...] = ()

    def describe(self) -> str:
        def cells(values: Sequence[int]) -> str:
            return " ".join(f"{n}={v}" for n, v in zip(CELL_NAMES, values, strict=True) if v) or "-"

        text = (
            f"{self.key[0]} {self.key[1]}: ours {cells(self.ours)} | stickler {cells(self.theirs)}"
        )
        if self.status != "identical":
            text += f" | expected {cells(self.expected)}"
        if self.rows:
            text += f" | rows {'+'.join(sorted(self.rows))}"
        if self.hints:
            text += " | " + "; ".join(self.hints)
        return text


@dataclass
class Report:
    """Every key of one example."""

    example: Example
    verdicts: list[Verdict]

    @property
    def undocumented(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == "undocumented"]


@dataclass
class _Acc:
    ours: dict[Key, Cells] = field(default_factory=dict)
    ours_all: dict[Key, Cells] = field(default_factory=dict)
    model: dict[Key, Cells] = field(default_factory=dict)
    expected: dict[Key, Cells] = field(default_factory=dict)
    rows: dict[Key, set[str]] = field(default_factory=dict)
    hints: dict[Key, list[str]] = field(default_factory=dict)
    issues: dict[str, list[str]] = field(default_factory=dict)
    """Per top-level list template: where ``model`` cannot reproduce ``ours``."""

    def fire(self, key: Key, rows: Iterable[str]) -> None:
        rows = set(rows)
        if rows:
            self.rows.setdefault(key, set()).update(rows)

    def hint(self, key: Key, text: str, *, first: bool = False) -> None:
        hints = self.hints.setdefault(key, [])
        if text in hints:
            hints.remove(text)
        if first:
            hints.insert(0, text)
        else:
            hints.append(text)


@dataclass
class _Out:
    """Where one projection writes: ``ours`` (P), ``expected`` (E), ``model`` (M)."""

    ours: dict[Key, Cells] | None
    expected: dict[Key, Cells] | None
    model: dict[Key, Cells] | None
    rows: dict[Key, set[str]]
    ours_all: dict[Key, Cells] | None = None

    def add(self, which: str, key: Key, cells: Sequence[int]) -> None:
        target = getattr(self, which)
        if target is not None:
            add_cells(target, key, cells)
        if which == "ours" and self.ours_all is not None:
            add_cells(self.ours_all, key, cells)

    def fire(self, key: Key, rows: Iterable[str]) -> None:
        rows = set(rows)
        if rows and self.expected is not None:
            self.rows.setdefault(key, set()).update(rows)


@dataclass(frozen=True)
class _Loc:
    """Where a projection is: our view and paths, Stickler's instance paths."""

    view: OurRun
    path: str
    ppath: str
    """The predicted path of the same place in ``view`` (our rows name it)."""
    template: str
    names: tuple[str, ...]
    """Field names from the root (what Stickler's comparison info is looked up by)."""
    gt: tuple[str | int, ...]
    pred: tuple[str | int, ...]

    def child(self, name: str) -> _Loc:
        segment = key_segment(name)
        return _Loc(
            self.view,
            self.path + segment,
            self.ppath + segment,
            self.template + segment,
            (*self.names, name),
            (*self.gt, name),
            (*self.pred, name),
        )


class Checker:
    """Both engines on one example, and the verdict on every key."""

    def __init__(self, example: Example) -> None:
        self.example = example
        self.fields = example.fields
        self.stickler = stickler_side.SticklerRun(
            example.fields, example.expected, example.predicted
        )
        self.ours = run_ours(example.fields, example.expected, example.predicted)
        self.acc = _Acc()
        self._infos: dict[tuple[str, ...], Any] = {}

    def info(self, names: Sequence[str]) -> Any:
        """Stickler's comparison info (comparator, threshold) of a field."""
        key = tuple(names)
        if key not in self._infos:
            self._infos[key] = stickler_side.comparison_info(self.stickler.model, key)
        return self._infos[key]

    def check(self) -> list[Verdict]:
        acc = self.acc
        main = _Out(acc.ours, acc.expected, acc.model, acc.rows, acc.ours_all)
        root = _Loc(self.ours, "$", "$", "$", (), (), ())
        self.project(
            self.fields, self.example.expected, self.example.predicted, root, "dispatch", main
        )
        # Attributes the schema does not name are compared and flagged, but are in no
        # figure (as Stickler ignores them): nothing of theirs is set against Stickler.
        return self.verdicts()

    def project(
        self,
        fields: Mapping[str, Node],
        expected: Any,
        predicted: Any,
        loc: _Loc,
        context: str,
        out: _Out,
    ) -> None:
        """Project every field of an object (``context``: ``dispatch`` for the root
        and groups, ``item`` for the attributes of paired list items)."""
        expected_map = expected if isinstance(expected, dict) else {}
        predicted_map = predicted if isinstance(predicted, dict) else {}
        for name, node in fields.items():
            a, b, child = expected_map.get(name), predicted_map.get(name), loc.child(name)
            if isinstance(node, Scalar):
                self.scalar(node, a, b, child, context, out)
            elif isinstance(node, Group):
                self.group(node, a, b, child, out)
            elif isinstance(node, ScalarList):
                self.scalar_list(node, a, b, child, out)
            else:
                self.object_list(node, a, b, child, out)

    # --- scalars ----------------------------------------------------------------------

    def scalar(self, node: Scalar, a: Any, b: Any, loc: _Loc, context: str, out: _Out) -> None:
        key: Key = ("leaf", loc.template)
        row = loc.view.row(loc.path)
        if row is None:
            self.acc.hint(key, f"missing: no row of ours at {loc.path}")
            return
        ours = row.outcome
        out.add("ours", key, _one(ours))
        out.add("model", key, _one(ours))
        if out.expected is None:
            return
        expected, fired = ours, set()
        info = self.info(loc.names)
        if context == "dispatch":
            theirs = rows_.whitespace(info.comparator, info.threshold, a, b, ours)
            if theirs is not None:
                expected, fired = theirs, {"whitespace"}
        if not fired:
            theirs = rows_.numbers(node, a, b, ours)
            if theirs is not None:
                expected, fired = theirs, {"numbers"}
        if not fired and present(a) and present(b):
            row = rows_.dates_or_text(node, a, b)
            if row is not None:
                outcome = (
                    stickler_side.scalar_outcome
                    if context == "dispatch"
                    else stickler_side.item_leaf_outcome
                )
                expected, fired = outcome(info.comparator, info.threshold, a, b), {row}
        out.add("expected", key, _one(expected))
        out.fire(key, fired)
        # Diagnosis only: Stickler's own cell for this place, to name what differs.
        if context == "dispatch":
            theirs = stickler_side.scalar_outcome(info.comparator, info.threshold, a, b)
        else:
            theirs = stickler_side.item_leaf_outcome(info.comparator, info.threshold, a, b)
        if theirs != expected:
            self.acc.hint(key, leaf_hint(node, a, b, expected, theirs))

    # --- groups -----------------------------------------------------------------------

    def group(self, node: Group, a: Any, b: Any, loc: _Loc, out: _Out) -> None:
        key: Key = ("group", loc.template)
        structure = _structure(a, b)
        out.add("ours", key, structure)
        out.add("model", key, structure)
        inner_ours: dict[Key, Cells] = {}
        inner_expected: dict[Key, Cells] = {}
        inner_rows: dict[Key, set[str]] = {}
        inner = _Out(
            inner_ours,
            inner_expected if out.expected is not None else None,
            out.model,
            inner_rows,
        )
        self.project(node.fields, a, b, loc, "dispatch", inner)
        if out.ours is not None:
            for inner_key, cells in inner_ours.items():
                out.add("ours", inner_key, cells)
        if out.expected is None:
            return
        leaves = [0, 0, 0, 0, 0]
        for (unit, _), cells in inner_ours.items():
            if unit == "leaf":
                leaves = [x + y for x, y in zip(leaves, cells, strict=True)]
        present_side = a if isinstance(a, dict) else b
        blank = sum(1 for value in _leaf_values(node, present_side) if rows_.is_blank(value))
        absent = rows_.group_absent(a, b, leaves, blank)
        if absent is None:
            out.add("expected", key, structure)
            for inner_key, cells in inner_expected.items():
                out.add("expected", inner_key, cells)
            for inner_key, fired in inner_rows.items():
                out.fire(inner_key, fired)
            if not (isinstance(a, dict) and isinstance(b, dict)):
                text = "group: an object without a non-empty leaf against an absent group"
                for inner_key in [key, *inner_ours]:
                    self.acc.hint(inner_key, text, first=True)
            return
        cells, fired = absent
        out.add("expected", key, cells)
        for inner_key in [key, *inner_ours]:
            out.fire(inner_key, fired)

    # --- lists of scalars -------------------------------------------------------------

    def scalar_list(self, node: ScalarList, a: Any, b: Any, loc: _Loc, out: _Out) -> None:
        item_template = loc.template + "[]"
        key: Key = ("leaf", item_template)
        rows = [row for row in loc.view.under(loc.path) if row.template == item_template]
        for row in rows:
            out.add("ours", key, _one(row.outcome))
        expected_items = a if isinstance(a, list) else []
        predicted_items = b if isinstance(b, list) else []
        ours_e = [i for i, v in enumerate(expected_items) if present(v)]
        ours_p = [j for j, v in enumerate(predicted_items) if present(v)]
        our_threshold = scalar_comparator(node.item).threshold
        ours_score: dict[tuple[int, int], float] = {
            (i, j): our_score(node.item, expected_items[i], predicted_items[j])
            for i in ours_e
            for j in ours_p
        }
        restricted = np.array(
            [[ours_score[i, j] for j in ours_p] for i in ours_e], dtype=float
        ).reshape(len(ours_e), len(ours_p))
        local_e = {i: k for k, i in enumerate(ours_e)}
        local_p = {j: k for k, j in enumerate(ours_p)}
        pairs_o: list[tuple[int, int]] = []
        for row in rows:
            if row.outcome in ("TP", "FD"):
                i, j = index_after(row.path, loc.path), index_after(row.ppath or "", loc.ppath)
                if i is None or j is None:
                    self._issue(loc.template, f"cannot tell which items {row.path} pairs")
                    continue
                pairs_o.append((i, j))
        local_o = [(local_e.get(i, -1), local_p.get(j, -1)) for i, j in pairs_o]
        if not ours_e and not ours_p:
            model = [0, 0, 0, 0, 1]
        else:
            if len(pairs_o) != min(len(ours_e), len(ours_p)):
                self._issue(
                    loc.template,
                    f"{len(pairs_o)} pairs where min(m, n) is {min(len(ours_e), len(ours_p))}",
                )
            elif not rows_.is_optimal(restricted, local_o):
                self._issue(loc.template, "not an optimal assignment of our scores")
            k = len(pairs_o)
            good = sum(1 for pair in pairs_o if ours_score.get(pair, 0.0) >= our_threshold)
            model = [good, len(ours_p) - k, k - good, len(ours_e) - k, 0]
        out.add("model", key, model)
        if out.expected is None:
            return
        m, n = len(expected_items), len(predicted_items)
        if m == 0 and n == 0:
            out.add("expected", key, [0, 0, 0, 0, 1])
            return
        info = self.info(loc.names)
        fired: set[str] = set()
        for value in (*expected_items, *predicted_items):
            if not present(value):  # an item to Stickler, dropped here
                fired.add("whitespace" if rows_.is_blank(value) else "empty_list_items")
        entries = np.zeros((m, n))
        for i in range(m):
            for j in range(n):
                score, row_name = rows_.list_item_entry(
                    node.item,
                    info.comparator,
                    expected_items[i],
                    predicted_items[j],
                    ours_score.get((i, j)),
                )
                entries[i, j] = score
                if row_name:
                    fired.add(row_name)
        gt_list = stickler_side.model_value(self.stickler.gt, loc.gt)
        pred_list = stickler_side.model_value(self.stickler.pred, loc.pred)
        theirs = stickler_side.scalar_assignment(
            info.comparator, list(gt_list or []), list(pred_list or [])
        )
        chosen = theirs
        if not rows_.is_optimal(entries, theirs):
            chosen = rows_.best_pairs(entries)
            self.acc.hint(key, "pairing: Stickler's assignment is not optimal under our scores")
        k = len(chosen)
        good = sum(1 for i, j in chosen if rows_.above(entries[i, j], info.threshold))
        out.add("expected", key, [good, n - k, k - good, m - k, 0])
        if set(theirs) != set(pairs_o):
            local_s = [(local_e.get(i, -1), local_p.get(j, -1)) for i, j in theirs]
            if rows_.ties(restricted, local_o, local_s):
                fired.add("ties")
        out.fire(key, fired)
        for i, j in chosen:
            score = stickler_side.item_score(info.comparator, expected_items[i], predicted_items[j])
            if rows_.above(score, info.threshold) != rows_.above(entries[i, j], info.threshold):
                self.acc.hint(
                    key,
                    leaf_hint(
                        node.item,
                        expected_items[i],
                        predicted_items[j],
                        "TP" if rows_.above(entries[i, j], info.threshold) else "FD",
                        "TP" if rows_.above(score, info.threshold) else "FD",
                    ),
                )

    # --- lists of objects -------------------------------------------------------------

    def object_list(self, node: ObjectList, a: Any, b: Any, loc: _Loc, out: _Out) -> None:
        assert len(loc.names) == 1, "lists of objects are generated at the top level only"
        name = loc.names[0]
        key: Key = ("items", loc.template)
        item_template = loc.template + "[]"
        expected_items = a if isinstance(a, list) else []
        predicted_items = b if isinstance(b, list) else []
        m, n = len(expected_items), len(predicted_items)
        counts = self.ours.items.get(loc.template, {})
        item_cells = ("matched", "extra", "weak", "missed", "empty")
        out.add("ours", key, [counts.get(name_, 0) for name_ in item_cells])
        scalars = [attr for attr, child in node.fields.items() if isinstance(child, Scalar)]
        # ours: pairs and matched leaves from the document's own rows
        pairs_o: dict[tuple[int, int], str] = {}
        for i in range(m):
            item_path = f"{loc.path}[{i}]"
            direct = [
                row
                for attr in scalars
                for row in loc.view.by_path.get(item_path + key_segment(attr), ())
            ]
            below = [row for row in loc.view.under(item_path) if not row.discovered]
            kind = item_kind(direct or below)
            if kind not in ("matched", "weak"):
                continue
            js = {index_after(row.ppath or "", loc.ppath) for row in below} - {None}
            if len(js) != 1:
                self._issue(loc.template, f"cannot tell which predicted item {item_path} pairs")
                continue
            j = int(js.pop() or 0)
            pairs_o[i, j] = kind
            if kind == "matched":
                self.project(
                    node.fields,
                    expected_items[i],
                    predicted_items[j],
                    self._item_loc(loc, i, j),
                    "item",
                    _Out(self.acc.ours, None, None, {}, self.acc.ours_all),
                )
        paired_count = counts.get("matched", 0) + counts.get("weak", 0)
        if len(pairs_o) < paired_count:
            # A weak pair whose items hold no non-empty leaf has no row: pair the
            # remaining items as the assignment would (best total of our similarity).
            left = [i for i in range(m) if all(i != i2 for i2, _ in pairs_o)]
            right = [j for j in range(n) if all(j != j2 for _, j2 in pairs_o)]
            rest = np.array(
                [
                    item_similarity(node.fields, expected_items[i], predicted_items[j])
                    for i in left
                    for j in right
                ]
            ).reshape(len(left), len(right))
            for row_index, column_index in rows_.best_pairs(rest)[: paired_count - len(pairs_o)]:
                pairs_o[left[row_index], right[column_index]] = "weak"
        matched = {f"{loc.path}[{i}]" for (i, _), kind in pairs_o.items() if kind == "matched"}
        for row in loc.view.under(loc.path):
            if (
                row.template.startswith(item_template)
                and not row.discovered
                and not any(row.path.startswith((p + ".", p + "[")) for p in matched)
            ):
                add_cells(self.acc.ours_all, ("leaf", row.template), _one(row.outcome))
        # our comparison of every pair of items, each compared alone and always paired
        solo = {name: ObjectList(node.fields, 0.0)}
        documents = [
            ({name: [expected_items[i]]}, {name: [predicted_items[j]]})
            for i in range(m)
            for j in range(n)
        ]
        reruns = run_many(solo, documents) if documents else []
        pair_run = {(i, j): reruns[i * n + j] for i in range(m) for j in range(n)}
        first = f"$.{name}[0]"
        similarity = np.zeros((m, n))
        for i, j in pair_run:
            similarity[i, j] = item_similarity(node.fields, expected_items[i], predicted_items[j])
        # model: the documented rules applied to our own pair comparisons
        if m == 0 and n == 0:
            out.add("model", key, [0, 0, 0, 0, 1])
        else:
            if len(pairs_o) != min(m, n):
                self._issue(loc.template, f"{len(pairs_o)} pairs where min(m, n) is {min(m, n)}")
            elif not rows_.is_optimal(similarity, list(pairs_o)):
                self._issue(loc.template, "not an optimal assignment of our similarity")
            good = 0
            for (i, j), kind in pairs_o.items():
                is_good = bool(similarity[i, j] >= node.match_threshold)
                if is_good != (kind == "matched"):
                    self._issue(
                        loc.template,
                        f"pair is {kind} at similarity {similarity[i, j]:.3f} "
                        f"(match threshold {node.match_threshold:g})",
                    )
                if is_good:
                    good += 1
                    self._pair(node, loc, i, j, pair_run[i, j], "model")
            k = len(pairs_o)
            out.add("model", key, [good, n - k, k - good, m - k, 0])
        # expected: Stickler's assignment, similarity derived from ours
        if m == 0 and n == 0:
            out.add("expected", key, [0, 0, 0, 0, 1])
            return
        fired: set[str] = set()
        entries = np.zeros((m, n))
        for (i, j), run in pair_run.items():
            entries[i, j], changed = self._expected_similarity(
                node.fields, loc.names, expected_items[i], predicted_items[j], run, first
            )
            fired |= changed
        gt_list = stickler_side.model_value(self.stickler.gt, loc.gt)
        pred_list = stickler_side.model_value(self.stickler.pred, loc.pred)
        theirs = stickler_side.object_assignment(list(gt_list or []), list(pred_list or []))
        theirs_pairs = [(i, j) for i, j, _ in theirs]
        chosen = theirs_pairs
        if not rows_.is_optimal(entries, theirs_pairs):
            chosen = rows_.best_pairs(entries)
            self.acc.hint(key, "pairing: Stickler's assignment is not optimal under our similarity")
        good = 0
        for i, j in chosen:
            if entries[i, j] >= node.match_threshold:
                good += 1
                self._pair(node, loc, i, j, pair_run[i, j], "expected")
        k = len(chosen)
        out.add("expected", key, [good, n - k, k - good, m - k, 0])
        theirs_good = {(i, j) for i, j, score in theirs if score >= node.match_threshold}
        chosen_good = {(i, j) for i, j in chosen if entries[i, j] >= node.match_threshold}
        if theirs_good != chosen_good or set(chosen) != set(theirs_pairs):
            causes = self._similarity_causes(node, loc, theirs, entries, chosen)
            texts = [f"similarity: {cause}" for cause in sorted(causes, key=_cause_order)]
            known = set(self.acc.ours) | set(self.acc.expected) | set(self.stickler.cells)
            for other in [key, *(k2 for k2 in known if k2[1].startswith(item_template))]:
                for text in reversed(texts or ["pairing: Stickler pairs the items otherwise"]):
                    self.acc.hint(other, text, first=True)
        if set(theirs_pairs) != set(pairs_o) and rows_.ties(
            similarity, list(pairs_o), theirs_pairs
        ):
            fired.add("ties")
        keys = set(self.acc.ours) | set(self.acc.expected) | set(self.stickler.cells)
        for other in [key, *(k2 for k2 in keys if k2[1].startswith(item_template))]:
            out.fire(other, fired)

    @staticmethod
    def _item_loc(loc: _Loc, i: int, j: int, view: OurRun | None = None) -> _Loc:
        if view is None:
            return _Loc(
                loc.view,
                f"{loc.path}[{i}]",
                f"{loc.ppath}[{j}]",
                loc.template + "[]",
                loc.names,
                (*loc.gt, i),
                (*loc.pred, j),
            )
        first = f"{loc.path}[0]"
        return _Loc(
            view, first, first, loc.template + "[]", loc.names, (*loc.gt, i), (*loc.pred, j)
        )

    def _similarity_causes(
        self,
        node: ObjectList,
        loc: _Loc,
        theirs: Sequence[tuple[int, int, float]],
        entries: np.ndarray,
        chosen: Sequence[tuple[int, int]],
    ) -> set[str]:
        """Why Stickler's similarity of the pairs (its own and the expected ones)
        differs from the expected one: which attributes' parts differ (diagnosis)."""
        causes: set[str] = set()
        name = loc.names[0]
        expected_items = self.example.expected.get(name) or []
        predicted_items = self.example.predicted.get(name) or []
        gt_items = stickler_side.model_value(self.stickler.gt, loc.gt) or []
        pred_items = stickler_side.model_value(self.stickler.pred, loc.pred) or []
        pairs = {(i, j) for i, j, _ in theirs} | set(chosen)
        for i, j in sorted(pairs):
            score = stickler_side.object_similarity(gt_items[i], pred_items[j])
            if abs(score - entries[i, j]) <= 1e-9:
                continue
            x_item, y_item = expected_items[i], predicted_items[j]
            stickler_parts = stickler_side.item_parts(gt_items[i], pred_items[j])
            run = run_ours({name: ObjectList(node.fields, 0.0)}, {name: [x_item]}, {name: [y_item]})
            for attr, child in node.fields.items():
                theirs_part = stickler_parts.get(attr)
                x, y = x_item.get(attr), y_item.get(attr)
                if isinstance(child, ScalarList):
                    if theirs_part is not None:
                        causes.add("a nested list takes part in Stickler's item similarity")
                    continue
                first = f"$.{name}[0]"
                part, _ = self._expected_similarity(
                    {attr: child}, loc.names, x_item, y_item, run, first
                )
                mine: float | None = part
                if isinstance(child, Group):
                    if not isinstance(x, dict) and not isinstance(y, dict):
                        mine = None
                elif not (present(x) or present(y) or rows_.is_blank(x) or rows_.is_blank(y)):
                    mine = None
                if (mine is None) == (theirs_part is None) and (
                    mine is None or theirs_part is None or abs(mine - theirs_part) <= 1e-9
                ):
                    continue
                if not isinstance(child, Scalar):
                    causes.add("a nested group scores otherwise in Stickler's item similarity")
                elif child.method == "DATE" and present(x) and present(y):
                    causes.add(date_hint(x, y).rsplit(" (", 1)[0])
                elif child.method == "NUMERIC_EXACT" and present(x) and present(y):
                    causes.add(f"numeric: {_number_cause(x, y, child)}")
                else:
                    causes.add(f"{child.method} attribute scored differently")
        return causes

    def _pair(self, node: ObjectList, loc: _Loc, i: int, j: int, run: OurRun, which: str) -> None:
        """Project one pair from its own comparison: into ``model`` or ``expected``."""
        if which == "model":
            out = _Out(self.acc.model, None, None, {})
        else:
            out = _Out(None, self.acc.expected, None, self.acc.rows)
        expected_items, predicted_items = self.example.expected, self.example.predicted
        name = loc.names[0]
        self.project(
            node.fields,
            expected_items[name][i],
            predicted_items[name][j],
            self._item_loc(loc, i, j, run),
            "item",
            out,
        )

    def _expected_similarity(
        self,
        fields: Mapping[str, Node],
        names: tuple[str, ...],
        expected: Any,
        predicted: Any,
        run: OurRun,
        item_path: str,
    ) -> tuple[float, set[str]]:
        """Stickler's similarity of two items, derived from ours
        (:func:`item_similarity` with the documented rows applied to every scalar's
        part and every item of a nested list)."""
        fired: set[str] = set()
        infos: dict[int, Any] = {}

        def info(node: Scalar) -> Any:
            # Scalars are looked up by identity: names are unique within an item.
            if id(node) not in infos:
                infos[id(node)] = self.info((*names, *_names_of(fields, node)))
            return infos[id(node)]

        def part(node: Scalar, x: Any, y: Any) -> float | None:
            ours = our_part(node, x, y)
            value, row_name = rows_.attribute_entry(node, info(node).comparator, x, y, ours)
            if row_name:
                fired.add(row_name)
            return value

        def threshold(node: Scalar) -> float:
            return float(info(node).threshold)

        def items(value: Any) -> list[Any]:
            # Stickler's items: empty ones too, None included (row empty_list_items).
            if not isinstance(value, list):
                return []
            if any(not present(entry) for entry in value):
                fired.add("empty_list_items")
            return list(value)

        def item_score(node: Scalar, x: Any, y: Any) -> float:
            ours = our_score(node, x, y) if present(x) and present(y) else None
            value, row_name = rows_.list_item_entry(node, info(node).comparator, x, y, ours)
            if row_name:
                fired.add(row_name)
            return value

        similarity = item_similarity(
            fields, expected, predicted, part, threshold, items, item_score
        )
        return similarity, fired

    def _issue(self, template: str, text: str) -> None:
        """Record that ``model`` cannot reproduce our cells of the list ``template``."""
        issues = self.acc.issues.setdefault(template, [])
        if text not in issues:
            issues.append(text)

    # --- verdicts ---------------------------------------------------------------------

    def verdicts(self) -> list[Verdict]:
        acc, theirs_all = self.acc, self.stickler.cells
        keys = sorted(set(acc.ours) | set(acc.expected) | set(theirs_all) | set(acc.ours_all))
        out = []
        for key in keys:
            theirs = theirs_all.get(key, ZERO)
            ours = acc.ours.get(key, ZERO)
            ours_all = acc.ours_all.get(key, ours)
            expected = acc.expected.get(key, ZERO)
            issues = tuple(
                f"model: {text}"
                for template, texts in acc.issues.items()
                if key[1] == template or key[1].startswith((template + "[", template + "."))
                for text in texts
            )
            rows = set(acc.rows.get(key, ()))
            hints = tuple(acc.hints.get(key, ()))
            if ours_all != ours:
                rows.add("weak_leftover_leaves")
            if ours_all == theirs:
                out.append(Verdict(key, "identical", ours_all, theirs, expected))
            elif ours == theirs:
                out.append(
                    Verdict(
                        key,
                        "explained",
                        ours_all,
                        theirs,
                        expected,
                        frozenset({"weak_leftover_leaves"}),
                    )
                )
            elif expected == theirs and rows and not issues and key[0] != "discovered":
                out.append(Verdict(key, "explained", ours_all, theirs, expected, frozenset(rows)))
            else:
                out.append(
                    Verdict(
                        key,
                        "undocumented",
                        ours_all,
                        theirs,
                        expected,
                        frozenset(rows),
                        issues + hints,
                    )
                )
        return out


def _names_of(fields: Mapping[str, Node], target: Node) -> tuple[str, ...]:
    """The attribute names leading to ``target`` inside ``fields`` (by identity)."""
    for name, child in fields.items():
        if child is target:
            return (name,)
        inner = getattr(child, "fields", None)
        if isinstance(inner, Mapping):
            found = _names_of(inner, target)
            if found:
                return (name, *found)
        if getattr(child, "item", None) is target:
            return (name,)
    return ()


_CAUSES = ("a nested list", "a nested group", "numeric", "date")


def _cause_order(cause: str) -> tuple[int, str]:
    """Causes of a similarity difference, most structural first (the first names the
    class of the difference)."""
    for rank, prefix in enumerate(_CAUSES):
        if cause.startswith(prefix):
            return rank, cause
    return len(_CAUSES), cause


def _top(template: str) -> str:
    """The top-level field of a template (``$.items`` for ``$.items[].amount``)."""
    return "$." + template[2:].split("[", 1)[0].split(".", 1)[0]


def _leaf_values(node: Node, value: Any) -> Iterable[Any]:
    """The leaf values under ``value`` (items of lists included)."""
    if isinstance(node, Scalar):
        yield value
    elif isinstance(node, Group) and isinstance(value, dict):
        for name, child in node.fields.items():
            yield from _leaf_values(child, value.get(name))
    elif isinstance(node, ScalarList) and isinstance(value, list):
        yield from value


def leaf_hint(node: Scalar, a: Any, b: Any, expected: str, theirs: str) -> str:
    """What one leaf's disagreement is (``category: details``), for reports."""
    values = f"{a!r} vs {b!r}: expected {expected}, Stickler {theirs}"
    if node.method == "DATE" and present(a) and present(b):
        return date_hint(a, b).rsplit(" (", 1)[0] + f" ({values})"
    if node.method == "NUMERIC_EXACT" and present(a) and present(b):
        return f"numeric: {_number_cause(a, b, node)} ({values})"
    return f"{node.method.lower()}: ({values})"


def _number_cause(a: Any, b: Any, node: Scalar) -> str:
    """Why two values are one number to one engine and not to the other."""
    from docevals_mlflow.fields.numbers import parse_number

    theirs = [stickler_side.stickler_number(v) for v in (a, b)]
    ours = [parse_number(v) for v in (a, b)]
    if ours == [None, None] and theirs == [None, None]:
        return "text that is no number: compared as text here, Stickler scores nothing"
    if rows_.readings_differ(a) or rows_.readings_differ(b):
        return "read differently"
    if (
        None not in ours
        and theirs[0] is not None
        and theirs[1] is not None
        and abs(float(theirs[0]) - float(theirs[1])) > node.threshold
    ):
        return "a difference above the tolerance is accepted (float allowance)"
    return "decided differently"


def date_hint(a: Any, b: Any) -> str:
    """What kind of date disagreement a pair of present values is
    (``date: <kind> (<values>)``)."""
    from stickler.comparators.date import DateComparator

    comparator = DateComparator()
    values = f"({a!r} vs {b!r})"
    with stickler_side.quiet():
        theirs = {
            dayfirst: [comparator._parse(v, dayfirst=dayfirst) for v in (a, b)]
            for dayfirst in (False, True)
        }
    ours = [parse_date(v) for v in (a, b)]
    readable = [theirs[False][k] is not None or theirs[True][k] is not None for k in (0, 1)]
    if not all(readable):
        if None in ours:
            return f"date: text that is no date: compared as text here, not by Stickler {values}"
        return f"date: a form read here but not by Stickler {values}"
    for k, value in enumerate((a, b)):
        parsed = theirs[False][k] or theirs[True][k]
        if ours[k] is None:
            if not getattr(parsed, "has_day", True):
                return f"date: no day, Stickler compares at month grain {values}"
            if ":" in str(value):
                return f"date: a time after a non-ISO date is no date here {values}"
            return f"date: a form read by Stickler but not here {values}"
        if not getattr(parsed, "has_year", True):
            return f"date: Stickler reads no year in it {values}"
    if ours[0] != ours[1]:
        if parse_date(a, order="day_first") == parse_date(b, order="day_first"):
            return f"date: ambiguous day/month, Stickler tries both orders {values}"
        day_first = [getattr(p, "dt", None) for p in theirs[True]]
        if day_first[0] is not None and day_first[0] == day_first[1]:
            return f"date: Stickler also reads it day first (YYYYDDMM, ...) {values}"
        if (
            ours[0] is not None
            and ours[1] is not None
            and abs(ours[0].year - ours[1].year) in (100, 1900, 2000)
        ):
            return f"date: a year read in another century {values}"
    stickler_years = [getattr(theirs[False][k], "dt", None) for k in (0, 1)]
    if (
        ours[0] == ours[1]
        and stickler_years[0] is not None
        and stickler_years[1] is not None
        and abs(stickler_years[0].year - stickler_years[1].year) == 100
    ):
        return f"date: Stickler reads a two-digit year in another century {values}"
    return f"date: read otherwise {values}"


def check(example: Example) -> Report:
    """Compare both engines on one example."""
    return Report(example, Checker(example).check())


# --- classes of undocumented differences and minimal examples ------------------------


def shape(fields: Mapping[str, Node], template: str) -> str:
    """A template with field names replaced by what they are (``$.objects[].DATE``)."""
    out = "$"
    node: Node | None = None
    current: Mapping[str, Node] | None = fields
    for part in template[2:].replace("[]", "").split("."):
        if current is None or part not in current:
            return template
        node = current[part]
        if isinstance(node, Scalar):
            out += "." + node.method
            current = None
        elif isinstance(node, Group):
            out += ".group"
            current = node.fields
        elif isinstance(node, ScalarList):
            out += f".list[{node.item.method}]"
            current = None
        else:
            out += ".objects[]"
            current = node.fields
    return out


def signature(example: Example, verdict: Verdict) -> tuple[str, ...]:
    """The class of an undocumented difference: the first hint, generalised (its
    cause), or, without a hint, the unit, the shape of the field and the cells that
    differ (``fd+``: Stickler counts more FD)."""
    if verdict.key[0] == "discovered":
        return ("discovered: attributes the schema does not configure are in the figures",)
    if verdict.hints:
        return (_general(verdict.hints[0].split(" (", 1)[0]),)
    delta = " ".join(
        f"{name}{'+' if theirs > ours else '-'}"
        for name, ours, theirs in zip(CELL_NAMES, verdict.ours, verdict.theirs, strict=True)
        if ours != theirs
    )
    return (f"{verdict.key[0]} {shape(example.fields, verdict.key[1])}", delta)


def _general(text: str) -> str:
    """A hint without its numbers and values (so that examples of a class group)."""
    out = []
    for word in text.split():
        if any(ch.isdigit() for ch in word) or word.startswith(("'", '"', "{", "[", "(")):
            out.append("#")
        else:
            out.append(word)
    return " ".join(out)


def _candidates(example: Example) -> Iterable[Example]:
    """Smaller variants of an example: a schema field, a key or a list item fewer."""
    fields, expected, predicted = example.fields, example.expected, example.predicted
    if len(fields) > 1:
        for name in fields:
            yield example.restricted([n for n in fields if n != name])
    for side in ("expected", "predicted"):
        doc = expected if side == "expected" else predicted
        for location in _locations(doc, ()):
            smaller = _without(doc, location)
            yield Example(
                fields,
                smaller if side == "expected" else expected,
                smaller if side == "predicted" else predicted,
                example.note,
            )
    for route in _schema_routes(fields, ()):
        new_fields = _drop_field(fields, route)
        if new_fields is not None:
            yield Example(
                new_fields,
                _drop_route(expected, route),
                _drop_route(predicted, route),
                example.note,
            )


def _locations(value: Any, at: tuple[Any, ...]) -> Iterable[tuple[Any, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*at, k)
            yield from _locations(v, (*at, k))
    elif isinstance(value, list):
        for index in range(len(value) - 1, -1, -1):
            yield (*at, index)
        for index, v in enumerate(value):
            yield from _locations(v, (*at, index))


def _without(value: Any, location: tuple[Any, ...]) -> Any:
    if not location:
        return value
    head, rest = location[0], location[1:]
    if isinstance(value, dict):
        if not rest:
            return {k: v for k, v in value.items() if k != head}
        return {k: (_without(v, rest) if k == head else v) for k, v in value.items()}
    if isinstance(value, list):
        if not rest:
            return [v for i, v in enumerate(value) if i != head]
        return [(_without(v, rest) if i == head else v) for i, v in enumerate(value)]
    return value


def _schema_routes(fields: Mapping[str, Node], at: tuple[str, ...]) -> Iterable[tuple[str, ...]]:
    for name, node in fields.items():
        if at:
            yield (*at, name)
        if isinstance(node, (Group, ObjectList)):
            yield from _schema_routes(node.fields, (*at, name))


def _drop_field(fields: Mapping[str, Node], route: tuple[str, ...]) -> dict[str, Node] | None:
    head, rest = route[0], route[1:]
    out = dict(fields)
    if not rest:
        out.pop(head)
        return out
    node = fields[head]
    if not isinstance(node, (Group, ObjectList)):
        return None
    inner = _drop_field(node.fields, rest)
    if inner is None or not inner:
        return None
    out[head] = Group(inner) if isinstance(node, Group) else ObjectList(inner, node.match_threshold)
    return out


def _drop_route(value: Any, route: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_drop_route(item, route) for item in value]
    if not isinstance(value, dict):
        return value
    head, rest = route[0], route[1:]
    if head not in value:
        return value
    if not rest:
        return {k: v for k, v in value.items() if k != head}
    return {k: (_drop_route(v, rest) if k == head else v) for k, v in value.items()}


def shrink(example: Example, wanted: tuple[str, ...], *, budget: int = 400) -> Example:
    """A smaller example that still shows an undocumented difference of class
    ``wanted`` (greedy: restrict to one field, then drop keys, items and fields)."""

    def shows(candidate: Example) -> bool:
        try:
            report = check(candidate)
        except Exception:  # a candidate either engine refuses is not smaller
            return False
        return any(signature(candidate, v) == wanted for v in report.undocumented)

    current = example
    spent = 0
    report = check(current)
    field_names = {_top(v.key[1]) for v in report.undocumented if signature(current, v) == wanted}
    for top in sorted(field_names):
        candidate = current.restricted([top[2:]])
        spent += 1
        if shows(candidate):
            current = candidate
            break
    progress = True
    while progress and spent < budget:
        progress = False
        for candidate in _candidates(current):
            spent += 1
            if spent >= budget:
                break
            if shows(candidate):
                current = candidate
                progress = True
                break
    return current


def describe_example(example: Example, verdicts: Sequence[Verdict]) -> str:
    """A readable, self-contained account of an example and some of its verdicts."""
    ours = our_schema_dict(example.fields)["classes"][0]["fields"]
    lines = [
        "schema (ours):     " + json.dumps(ours, ensure_ascii=False),
        "schema (stickler): "
        + json.dumps(stickler_json_schema(example.fields), ensure_ascii=False),
        "expected:  " + json.dumps(example.expected, ensure_ascii=False),
        "predicted: " + json.dumps(example.predicted, ensure_ascii=False),
    ]
    lines.extend("  " + verdict.describe() for verdict in verdicts)
    return "\n".join(lines)


__all__ = [
    "Checker",
    "Report",
    "Verdict",
    "check",
    "date_hint",
    "describe_example",
    "shape",
    "shrink",
    "signature",
]


# --- the soak -------------------------------------------------------------------------


@dataclass
class SoakResult:
    """Agreement figures over many examples."""

    examples: int = 0
    keys: int = 0
    identical: int = 0
    cells: int = 0
    cells_identical: int = 0
    explained: dict[str, int] = field(default_factory=dict)
    """Keys explained, per combination of documented rows."""
    undocumented: dict[tuple[str, ...], int] = field(default_factory=dict)
    """Keys with an undocumented difference, per class (:func:`signature`)."""
    samples: dict[tuple[str, ...], tuple[Example, Verdict]] = field(default_factory=dict)
    shapes: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    """Per class, the fields (as :func:`shape`) where it was seen."""
    errors: dict[str, tuple[int, Example]] = field(default_factory=dict)
    """Examples one of the engines raised on, by exception (count, first example)."""

    def add(self, report: Report) -> None:
        self.examples += 1
        for verdict in report.verdicts:
            self.keys += 1
            self.cells += 5
            self.cells_identical += sum(
                1 for x, y in zip(verdict.ours, verdict.theirs, strict=True) if x == y
            )
            if verdict.status == "identical":
                self.identical += 1
            elif verdict.status == "explained":
                label = "+".join(sorted(verdict.rows))
                self.explained[label] = self.explained.get(label, 0) + 1
            else:
                cls = signature(report.example, verdict)
                self.undocumented[cls] = self.undocumented.get(cls, 0) + 1
                self.samples.setdefault(cls, (report.example, verdict))
                self.shapes.setdefault(cls, set()).add(
                    f"{verdict.key[0]} {shape(report.example.fields, verdict.key[1])}"
                )


def soak(
    count: int,
    *,
    seed: int = 0,
    family: str | None = None,
    limits: Any = None,
    minimise: bool = True,
    progress: Any = None,
) -> tuple[SoakResult, dict[tuple[str, ...], Example]]:
    """Run ``count`` seeded examples; shrink one example per undocumented class."""
    from tests.fields.stickler_diff.corpus import examples

    result = SoakResult()
    for index, example in enumerate(examples(seed, count, family, limits)):  # type: ignore[arg-type]
        try:
            report = check(example)
        except Exception as exc:  # recorded, not fatal: one engine refused the input
            name = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            seen = result.errors.get(name)
            result.errors[name] = ((seen[0] + 1) if seen else 1, seen[1] if seen else example)
            continue
        result.add(report)
        if progress is not None and (index + 1) % 100 == 0:
            progress(index + 1, result)
    minimal: dict[tuple[str, ...], Example] = {}
    if minimise:
        for cls, (example, _) in result.samples.items():
            minimal[cls] = shrink(example, cls)
    return result, minimal


def format_soak(result: SoakResult, minimal: Mapping[tuple[str, ...], Example]) -> str:
    """The figures of a soak, as text."""
    lines = [
        f"examples: {result.examples}",
        f"keys compared: {result.keys}; identical: {result.identical} "
        f"({result.identical / max(result.keys, 1):.2%})",
        f"cells compared: {result.cells}; identical: {result.cells_identical} "
        f"({result.cells_identical / max(result.cells, 1):.2%})",
        "keys explained by documented rows:",
    ]
    for label, count in sorted(result.explained.items(), key=lambda item: -item[1]):
        lines.append(f"  {count:6d}  {label}")
    total = sum(result.undocumented.values())
    lines.append(f"undocumented differences: {total} keys in {len(result.undocumented)} classes")
    for cls, count in sorted(result.undocumented.items(), key=lambda item: -item[1]):
        lines.append(f"\n  {count:6d}  {' | '.join(part for part in cls if part)}")
        shapes = sorted(result.shapes.get(cls, ()))
        lines.append(f"          at: {', '.join(shapes[:6])}{' ...' if len(shapes) > 6 else ''}")
        example = minimal.get(cls)
        if example is None:
            example, verdict = result.samples[cls]
            shown = [verdict]
        else:
            shown = [v for v in check(example).undocumented if signature(example, v) == cls][:1]
        for line in describe_example(example, shown).splitlines():
            lines.append("          " + line)
    if result.errors:
        lines.append("\nexamples an engine raised on:")
        for name, (count, example) in result.errors.items():
            lines.append(f"  {count:6d}  {name}")
            lines.append(f"          expected:  {json.dumps(example.expected, ensure_ascii=False)}")
            lines.append(
                f"          predicted: {json.dumps(example.predicted, ensure_ascii=False)}"
            )
    return "\n".join(lines)
