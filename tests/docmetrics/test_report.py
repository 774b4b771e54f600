"""``docevals text``'s pure part: reading folders, files and JSON Lines, pairing them,
and figures that equal the docmetrics functions on the same input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from docevals_mlflow.docmetrics.inputs import read_text_pairs
from docevals_mlflow.docmetrics.normalize import DEFAULT, TextNormalization
from docevals_mlflow.docmetrics.report import TextMetricsReport, evaluate_text_inputs
from docevals_mlflow.docmetrics.tables import score_tables
from docevals_mlflow.docmetrics.text import document_figures, score_documents, score_texts
from docevals_mlflow.errors import InputError
from tests.helpers import write_jsonl

ALPHABETS = {
    "latin": "abcdefghijklmnopqrstuvwxyzéèüßø",
    "cjk": "東京都大阪府天気晴雨曇日本語文字",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשת",
    "emoji": "😀🎉👍🏽❤️",
}
TABLE = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Widget</td><td>2</td></tr></table>"
PREDICTED_TABLE = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Widgets</td></tr></table>"
"""docs/document-metrics.md's worked example: TEDS 1 - 8/49, TEDS-S 6/7."""


def random_text(rng: random.Random, alphabet: str, words: int) -> str:
    return " ".join(
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(words)
    )


def damaged(rng: random.Random, text: str, rate: float) -> str:
    chars = list(text)
    for index in range(len(chars)):
        if rng.random() < rate:
            chars[index] = rng.choice(["", "x", chars[index] * 2, " "])
    return "".join(chars)


def varied_pairs(seed: int = 7) -> dict[str, tuple[str, str]]:
    """Relative path → (expected, predicted) in many scripts, empty and long pages."""
    rng = random.Random(seed)
    pairs: dict[str, tuple[str, str]] = {}
    for name, alphabet in ALPHABETS.items():
        for number in range(3):
            text = random_text(rng, alphabet, rng.randint(3, 40))
            pairs[f"{name}/p{number}.txt"] = (text, damaged(rng, text, 0.1))
    long = random_text(rng, ALPHABETS["latin"], 3000)
    pairs["long.md"] = (long, damaged(rng, long, 0.02))
    pairs["empty-both.txt"] = ("", "")
    pairs["empty-expected.txt"] = ("", "invented text")
    pairs["empty-prediction.txt"] = ("lost page", "")
    pairs["mixed case.txt"] = ("Straße  MIT\tTabs", "STRASSE mit tabs")
    return pairs


def write_folders(root: Path, pairs: dict[str, tuple[str, str]]) -> tuple[Path, Path]:
    for name, (expected, predicted) in pairs.items():
        for side, text in (("gt", expected), ("pred", predicted)):
            path = root / side / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return root / "gt", root / "pred"


def test_folder_figures_equal_the_docmetrics_functions(tmp_path: Path) -> None:
    pairs = varied_pairs()
    expected, predicted = write_folders(tmp_path, pairs)
    (expected / "t.html").write_text(TABLE, encoding="utf-8")
    (predicted / "t.html").write_text(PREDICTED_TABLE, encoding="utf-8")
    report = evaluate_text_inputs(read_text_pairs(expected, predicted))

    names = sorted(pairs)
    batch = score_texts([pairs[n][0] for n in names], [pairs[n][1] for n in names], names=names)
    assert report.text is not None
    assert report.text.cer == pytest.approx(batch.micro_cer, abs=1e-12)
    assert report.text.wer == pytest.approx(batch.micro_wer, abs=1e-12)
    assert report.text.ned == pytest.approx(batch.micro_edit_distance, abs=1e-12)
    assert report.text.macro_cer == pytest.approx(batch.macro_cer, abs=1e-12)
    assert report.text.macro_token_f1 == pytest.approx(batch.macro_token_f1, abs=1e-12)
    by_name = {page.name: page for page in report.text_pages}
    assert sorted(by_name) == names
    for item in batch.items:
        assert by_name[item.name].cer == item.cer
        assert by_name[item.name].token_f1 == item.token_f1
    assert by_name["empty-prediction.txt"].cer == 1.0
    assert by_name["empty-both.txt"].cer == 0.0
    assert by_name["empty-expected.txt"].cer == 1.0
    tables = score_tables([("t.html", TABLE, PREDICTED_TABLE)])
    assert report.table is not None
    assert report.table.teds == pytest.approx(tables.teds, abs=1e-12)
    assert report.table.teds_s == pytest.approx(tables.teds_structure, abs=1e-12)
    assert report.table.teds == pytest.approx(1 - 8 / 49)
    assert report.table.teds_s == pytest.approx(6 / 7)
    assert report.documents == len(names) + 1


def test_micro_token_f1_pools_each_pages_counts(tmp_path: Path) -> None:
    expected, predicted = write_folders(
        tmp_path, {"a.txt": ("the cat sat", "cat sat on the mat"), "b.txt": ("x y", "z")}
    )
    report = evaluate_text_inputs(read_text_pairs(expected, predicted))
    assert report.text is not None
    # matched 3 + 0, predicted 5 + 1, expected 3 + 2: P = 3/6, R = 3/5.
    precision, recall = 3 / 6, 3 / 5
    assert report.text.token_f1 == pytest.approx(2 * precision * recall / (precision + recall))
    assert report.text.macro_token_f1 == pytest.approx((0.75 + 0) / 2)


def test_jsonl_pages_give_per_page_and_per_document_figures(tmp_path: Path) -> None:
    rng = random.Random(3)
    documents = {
        f"doc{d}": [random_text(rng, ALPHABETS["latin"], rng.randint(0, 30)) for _ in range(4)]
        for d in range(5)
    }
    predicted_docs = {
        name: [damaged(rng, page, 0.15) for page in pages[: 4 - (i % 2)]]
        for i, (name, pages) in enumerate(documents.items())
    }
    write_jsonl(
        tmp_path / "gt.jsonl",
        [
            {"id": name, "page": n, "text": text}
            for name, pages in documents.items()
            for n, text in enumerate(pages, start=1)
        ],
    )
    write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": name, "page": n, "text": text}
            for name, pages in reversed(predicted_docs.items())
            for n, text in enumerate(pages, start=1)
        ],
    )
    inputs = read_text_pairs(tmp_path / "gt.jsonl", tmp_path / "pred.jsonl")
    assert inputs.missing == ("doc1 page 4", "doc3 page 4")
    report = evaluate_text_inputs(inputs)
    reference = score_documents(documents, predicted_docs)
    figures = document_figures(reference)
    assert report.text is not None
    assert report.text.pages == 20
    assert report.text.missing_predictions == 2
    for name in ("cer", "wer"):
        assert getattr(report.text, name) == pytest.approx(figures[f"micro_{name}"], abs=1e-12)
        assert getattr(report.text, f"macro_{name}") == pytest.approx(
            figures[f"macro_{name}"], abs=1e-12
        )
    assert report.text.macro_token_f1 == pytest.approx(figures["macro_token_f1"], abs=1e-12)
    for document in report.text_documents:
        assert document.cer == pytest.approx(reference[document.document].micro_cer, abs=1e-12)
    assert [d.missing_pages for d in report.text_documents] == [0, 1, 0, 1, 0]


def test_jsonl_tables_as_html_and_grids_and_extra_predictions(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "gt.jsonl",
        [
            {"id": 1, "html": TABLE},
            {"id": "grid", "table": [["a", "b"], ["c", "d"]]},
            {"id": "gone", "table": TABLE},
        ],
    )
    write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": 1, "html": TABLE},
            {"id": "grid", "table": [["a", "b"], ["c", "x"]]},
            {"id": "gone", "html": None},
            {"id": "stray", "text": "no truth for me"},
        ],
    )
    inputs = read_text_pairs(tmp_path / "gt.jsonl", tmp_path / "pred.jsonl")
    assert inputs.extra == ("stray",)
    assert inputs.missing == ()
    report = evaluate_text_inputs(inputs)
    assert report.text is None
    teds = {page.name: page.teds for page in report.table_pages}
    assert teds["1"] == 1.0
    assert teds["gone"] == 0.0
    assert 0 < teds["grid"] < 1
    assert [page.name for page in report.worst_tables(2)] == ["gone", "grid"]


def test_kind_table_reads_markdown_files_as_pipe_tables(tmp_path: Path) -> None:
    expected, predicted = write_folders(
        tmp_path, {"t.md": ("| a | b |\n|---|---|\n| 1 | 2 |", "| a | b |\n|---|---|\n| 1 | 3 |")}
    )
    assert evaluate_text_inputs(read_text_pairs(expected, predicted)).table is None
    report = evaluate_text_inputs(read_text_pairs(expected, predicted, kind="table"))
    assert report.table is not None
    assert report.text is None
    assert 0 < report.table.teds < 1
    assert report.table.teds_s == 1.0


def test_normalization_is_applied_and_recorded(tmp_path: Path) -> None:
    expected, predicted = write_folders(tmp_path, {"a.txt": ("Hello, World!", "hello world")})
    plain = evaluate_text_inputs(read_text_pairs(expected, predicted))
    loose = TextNormalization(casefold=True, remove_punctuation=True)
    relaxed = evaluate_text_inputs(read_text_pairs(expected, predicted), normalization=loose)
    assert plain.text is not None
    assert plain.text.cer > 0
    assert relaxed.text is not None
    assert relaxed.text.cer == 0
    assert relaxed.normalization.casefold
    assert not plain.normalization.casefold
    assert plain.normalization.unicode_form == DEFAULT.unicode_form


def test_single_files_are_one_document(tmp_path: Path) -> None:
    (tmp_path / "truth.txt").write_text("kitten", encoding="utf-8")
    (tmp_path / "ocr.txt").write_text("sitting", encoding="utf-8")
    report = evaluate_text_inputs(read_text_pairs(tmp_path / "truth.txt", tmp_path / "ocr.txt"))
    assert report.input_form == "files"
    assert [(p.name, p.cer) for p in report.text_pages] == [("truth.txt", 0.5)]


def test_report_round_trips(tmp_path: Path) -> None:
    expected, predicted = write_folders(tmp_path, varied_pairs(seed=1))
    report = evaluate_text_inputs(read_text_pairs(expected, predicted))
    path = report.write(tmp_path / "out" / "r.json")
    assert TextMetricsReport.load(path) == report
    assert json.loads(path.read_text(encoding="utf-8"))["kind"] == "text"


# --- bad input ---------------------------------------------------------------------


def _raises(expected: Path, predicted: Path, *fragments: str) -> None:
    with pytest.raises(InputError) as caught:
        read_text_pairs(expected, predicted)
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)


def test_a_file_that_is_not_utf8_is_named_with_its_byte(tmp_path: Path) -> None:
    expected, predicted = write_folders(tmp_path, {"a.txt": ("ok", "ok")})
    (predicted / "b.txt").write_bytes("café ".encode() + "naïve".encode("latin-1"))
    (expected / "b.txt").write_text("x", encoding="utf-8")
    _raises(expected, predicted, str(predicted / "b.txt"), "not valid UTF-8", "byte 8")


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "gt.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}])
    (tmp_path / "p.jsonl").write_text(
        '{"id": "a", "text": "x"}\n\n{"id": "a", "text": "z"}\n', encoding="utf-8"
    )
    _raises(tmp_path / "gt.jsonl", tmp_path / "p.jsonl", "id 'a' is on lines 1 and 3")
    write_jsonl(
        tmp_path / "pages.jsonl",
        [{"id": "a", "page": 2, "text": "x"}, {"id": "a", "page": 2, "text": "y"}],
    )
    _raises(tmp_path / "pages.jsonl", tmp_path / "gt.jsonl", "id 'a' page 2 is on lines 1 and 2")


@pytest.mark.parametrize(
    ("records", "fragments"),
    [
        ([{"id": "a", "text": 3}], ("record line 1, at text", "invalid text int")),
        ([{"id": True, "text": "x"}], ("invalid or missing id True",)),
        ([{"id": "a", "page": 0, "text": "x"}], ("invalid page 0", "a whole number from 1")),
        ([{"id": "a", "text": "x", "html": "y"}], ("this one 'text' and 'html'",)),
        ([{"id": "a", "body": "x"}], ("this one none of them",)),
        ([{"id": "a", "text": None}], ("invalid text NoneType",)),
        (["a"], ("a record must be an object",)),
        (
            [{"id": "a", "page": 1, "text": "x"}, {"id": "a", "text": "y"}],
            ("id 'a' has records with and without 'page' (lines 1 and 2)",),
        ),
    ],
)
def test_bad_records_name_file_line_and_field(
    tmp_path: Path, records: list[object], fragments: tuple[str, ...]
) -> None:
    write_jsonl(tmp_path / "gt.jsonl", records)  # type: ignore[arg-type]
    write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "text": "x"}])
    _raises(tmp_path / "gt.jsonl", tmp_path / "p.jsonl", str(tmp_path / "gt.jsonl"), *fragments)


def test_empty_inputs_and_mixed_forms_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.json").write_text("{}", encoding="utf-8")
    expected, _ = write_folders(tmp_path, {"a.txt": ("x", "x")})
    _raises(expected, tmp_path / "empty", "folder has no .txt, .md or .html files")
    _raises(tmp_path / "other", expected, "folder has no .txt, .md or .html files")
    (tmp_path / "blank.jsonl").write_text("\n \n", encoding="utf-8")
    write_jsonl(tmp_path / "one.jsonl", [{"id": "a", "text": "x"}])
    _raises(tmp_path / "blank.jsonl", tmp_path / "one.jsonl", "no records")
    _raises(expected, tmp_path / "one.jsonl", "is a folder but", "is a file")
    _raises(tmp_path / "one.jsonl", expected / "a.txt", "is JSON Lines but the other side is not")


def test_a_grid_cannot_be_scored_as_text(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "gt.jsonl", [{"id": "a", "table": [["x"]]}])
    with pytest.raises(InputError, match="a cell grid cannot be scored as text"):
        read_text_pairs(tmp_path / "gt.jsonl", tmp_path / "gt.jsonl", kind="text")


def test_a_malformed_expected_table_names_the_page(tmp_path: Path) -> None:
    expected, predicted = write_folders(
        tmp_path, {"t.html": ('<table><tr><td colspan="x">a</td></tr></table>', TABLE)}
    )
    with pytest.raises(InputError, match=r"t\.html \(expected\), at line 1, column \d+: colspan"):
        evaluate_text_inputs(read_text_pairs(expected, predicted))
