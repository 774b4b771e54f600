"""A dataset input's schema and profile come from the Parquet footer, as
``pandas.read_parquet`` would give them, without reading the rows."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docevals_mlflow.tracking.run_contents import parquet_shape

FRAMES = {
    "as written": (pd.DataFrame([{"file": "gt.jsonl", "sha256": "ab"}]), False),
    "range index": (pd.DataFrame({"a": [1, 2], "b": ["x", None]}), True),
    "named index": (pd.DataFrame({"a": [1, 2]}, index=pd.Index(["p", "q"], name="k")), True),
    "unnamed index": (pd.DataFrame({"a": [1, 2]}, index=["p", "q"]), True),
    "number names": (pd.DataFrame({1: [1], 2: [2]}), True),
    "no rows": (pd.DataFrame(columns=["a", "b"]), False),
    "two-level index": (pd.DataFrame({"a": [1], "b": [2], "c": [3]}).set_index(["a", "b"]), True),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_the_shape_is_what_pandas_reads(tmp_path, name):
    frame, index = FRAMES[name]
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, index=index)
    back = pd.read_parquet(path)
    assert parquet_shape(path) == ([str(column) for column in back.columns], len(back))


def test_a_file_pandas_did_not_write(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"]}), path)
    assert parquet_shape(path) == (["x", "y"], 3)
