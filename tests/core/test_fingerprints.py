import datetime as dt
import hashlib
from decimal import Decimal
from pathlib import PurePosixPath

import pytest
from pydantic import BaseModel

from docevals_mlflow.core.fingerprints import (
    canonical_json,
    optional_sha256_json,
    sha256_bytes,
    sha256_file,
    sha256_json,
)
from docevals_mlflow.errors import InputError


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_canonical_json_sorts_keys_is_compact_and_keeps_unicode():
    value = {"b": 1, "a": [1, 2.5, None, True], "c": {"z": "é", "y": "日本"}}
    assert canonical_json(value) == '{"a":[1,2.5,null,true],"b":1,"c":{"y":"日本","z":"é"}}'


def test_sha256_json_of_text_hashes_the_json_string():
    assert sha256_json("abc") == hashlib.sha256(b'"abc"').hexdigest()
    assert sha256_json("é") == hashlib.sha256('"é"'.encode()).hexdigest()
    assert sha256_json('say "hi"') == _sha('"say \\"hi\\""')
    # A text and the structure it spells are different things.
    assert sha256_json("[1]") != sha256_json([1])


def test_key_order_does_not_change_the_hash():
    first = {"a": 1, "b": {"c": 2, "d": 3}}
    second = {"b": {"d": 3, "c": 2}, "a": 1}
    assert sha256_json(first) == sha256_json(second) == _sha('{"a":1,"b":{"c":2,"d":3}}')


def test_tuple_hashes_like_list_and_bool_unlike_int():
    assert sha256_json((1, "a")) == sha256_json([1, "a"]) == _sha('[1,"a"]')
    assert sha256_json(True) == _sha("true")
    assert sha256_json(True) != sha256_json(1)


def test_sets_hash_in_canonical_order():
    assert canonical_json({"b", "a", "c"}) == '["a","b","c"]'
    assert sha256_json(frozenset({2, 1})) == sha256_json([1, 2])


def test_decimal_date_and_path_have_stable_forms():
    value = {
        "d": Decimal("1.50"),
        "t": dt.date(2024, 1, 2),
        "w": dt.datetime(2024, 1, 2, 3, 4, 5),
        "p": PurePosixPath("a/b.pdf"),
    }
    assert canonical_json(value) == (
        '{"d":"1.50","p":"a/b.pdf","t":"2024-01-02","w":"2024-01-02T03:04:05"}'
    )


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), float("-inf"), {"a": [1.0, float("nan")]}, (float("inf"),)],
)
def test_non_finite_numbers_are_rejected(value):
    with pytest.raises(InputError, match="has no JSON representation"):
        sha256_json(value)


@pytest.mark.parametrize("key", [1, ("a", "b"), None])
def test_non_string_mapping_keys_are_rejected(key):
    with pytest.raises(InputError, match=r"mapping key .* is a .*\(expected string keys\)"):
        canonical_json({"ok": {key: "x"}})


def test_unsupported_type_is_rejected():
    with pytest.raises(InputError, match="a value of type object cannot be fingerprinted"):
        sha256_json({"a": object()})


class _Spec(BaseModel):
    name: str
    when: dt.date
    tags: tuple[str, ...] = ()


def test_pydantic_model_hashes_like_its_json_dump():
    model = _Spec(name="x", when=dt.date(2024, 1, 2), tags=("b", "a"))
    assert canonical_json(model) == '{"name":"x","tags":["b","a"],"when":"2024-01-02"}'
    assert sha256_json(model) == sha256_json(model.model_dump(mode="json"))
    assert sha256_json({"m": model}) == sha256_json({"m": model.model_dump(mode="json")})


def test_optional_sha256_json():
    assert optional_sha256_json(None) is None
    assert optional_sha256_json("x") == sha256_json("x")
    assert optional_sha256_json("") == _sha('""')


def test_sha256_bytes_and_file_match_hashlib(tmp_path):
    data = bytes(range(256)) * 5
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    expected = hashlib.sha256(data).hexdigest()
    assert sha256_bytes(data) == expected
    assert sha256_file(path) == expected
    assert sha256_file(str(path), chunk_size=7) == expected


def test_sha256_file_of_empty_file(tmp_path):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    assert sha256_file(path) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
