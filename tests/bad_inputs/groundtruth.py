"""Bad inputs for ``generate``, ``review``, ``keygen``, ``approve`` and ``verify``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow.groundtruth.approval import write_approved
from docevals_mlflow.groundtruth.review import (
    apply_decisions,
    load_review,
    write_ground_truth_review,
)
from docevals_mlflow.groundtruth.signing import SigningKey, generate_keypair
from tests.bad_inputs.case import (
    ALIAS_BOMB,
    ANTHROPIC_KEY,
    UNSET_KEY_ENV,
    Corpus,
    deep_json,
    fifo,
    folder,
    hard_link,
    locked,
    put,
    put_bytes,
)
from tests.groundtruth.approval_fakes import DECISIONS, KEY, approved, generation_report
from tests.test_cli_outputs import GENERATION

generate = Corpus("generate")
review = Corpus("review")
keygen = Corpus("keygen")
approve = Corpus("approve")
verify = Corpus("verify")


# --------------------------------------------------------------------- generate


def generate_argv(*extra: str, config: str = "gen.yaml", output_dir: str = "out") -> list[str]:
    """``generate`` of ``src/x.txt`` as case ``x``; nothing is ever asked (the
    generators' base URLs lead to a closed loopback port)."""
    if config == "gen.yaml" and not Path(config).exists():
        put(config, GENERATION)
    if not Path("src/x.txt").exists():
        put("src/x.txt", "Total: 12.50 EUR\n")
    sources = [] if "--sources-dir" in extra else ["--source", "src/x.txt"]
    return [
        "generate", "--config", config, *sources, "--output-dir", output_dir, "--no-mlflow",
        *extra,
    ]  # fmt: skip


GENERATOR = (
    '  - {name: one, provider: openai-compatible, model: m1, base_url: "http://127.0.0.1:9/v1"}'
)

CONFIGS: Sequence[tuple[str, str, str, tuple[str, ...]]] = [
    # (name, kind, configuration text, fragments)
    (
        "malformed-yaml",
        "malformed",
        GENERATION.replace("[$.total]", "[$.total"),
        ("gen.yaml: malformed YAML at line 3, column 11",),
    ),
    (
        "unknown-key",
        "unknown-key",
        GENERATION.replace("instruction:", "instructions:"),
        ("gen.yaml, at instructions: invalid GenerationConfig", "Extra inputs are not permitted"),
    ),
    (
        "one-generator",
        "wrong-shape",
        GENERATION.split("\n  - {name: two")[0] + "\n",
        ("gen.yaml, at generators: 1 generator(s) given",),
    ),
    (
        "generators-one-group",
        "wrong-shape",
        GENERATION.replace("model: m2", "model: m1"),
        ("gen.yaml, at generators: every generator is one provider/model group",),
    ),
    (
        "duplicate-generator-name",
        "duplicate-id",
        GENERATION.replace("name: two", "name: one"),
        ("gen.yaml, at generators[1].name: generator 'one': generator name 'one' is used by",),
    ),
    (
        "base-url-file",
        "non-http-url",
        GENERATION.replace(
            '"http://127.0.0.1:9/v1"}\n  - {name: two', '"file:///tmp/x"}\n  - {name: two'
        ),
        (
            "gen.yaml, at generators[0]: generator 'one'",
            "base_url must be an http:// or https:// URL with a host (got file://, no host)",
        ),
    ),
    (
        "reasoning-effort-unknown",
        "unknown-enum",
        GENERATION.replace("model: m1,", "model: m1, reasoning_effort: extreme,"),
        ("gen.yaml, at generators[0].reasoning_effort: generator 'one'", "(got 'extreme')"),
    ),
    (
        "minimum-agreement-boolean",
        "bad-number",
        GENERATION + "minimum_agreement: true\n",
        ("gen.yaml, at minimum_agreement", "must be a number in (0, 1], not True"),
    ),
    (
        "minimum-agreement-inf",
        "bad-number",
        GENERATION + "minimum_agreement: .inf\n",
        ("gen.yaml: .inf is not a finite number at line 6, column 20",),
    ),
    (
        "expected-fields-repeat",
        "duplicate-id",
        GENERATION.replace("[$.total]", "[$.total, total]"),
        ("gen.yaml, at expected_fields[1]: 'total' is the same field as '$.total'",),
    ),
    (
        "expected-field-unparsable",
        "malformed",
        GENERATION.replace("[$.total]", "['$.items[x']"),
        ("gen.yaml, at expected_fields[0]: invalid field path '$.items[x' (column 8)",),
    ),
    (
        "holds-a-key",
        "secret",
        GENERATION.replace("model: m2,", f"model: m2, api_key: {ANTHROPIC_KEY},"),
        (
            "gen.yaml, at generators[1].api_key: generator 'two': an API key is written in this "
            "configuration",
        ),
    ),
    (
        "key-variable-unset",
        "missing",
        GENERATION.replace("model: m2,", f"model: m2, api_key_env: {UNSET_KEY_ENV},"),
        (
            "gen.yaml, at generators[1]: generator 'two' (openai-compatible) needs an API key: "
            f"set {UNSET_KEY_ENV} in the environment",
        ),
    ),
    (
        "instruction-file-missing",
        "missing",
        GENERATION.replace("instruction: Extract the total.", "instruction_file: prompt.txt"),
        ("gen.yaml, at instruction_file: instruction_file prompt.txt: file not found",),
    ),
    (
        "alias-bomb",
        "alias-bomb",
        ALIAS_BOMB,
        ("gen.yaml, at $.e[0]: aliases repeat more than 10,000 nodes",),
    ),
    (
        "prices-boolean",
        "bad-number",
        GENERATION + "prices:\n  m1: {input: false, output: 1}\n",
        ("gen.yaml, at prices.m1.input", "a number is due here, not the boolean false"),
    ),
]

for _name, _kind, _text, _fragments in CONFIGS:

    def _build(text: str = _text) -> list[str]:
        put("gen.yaml", text)
        return generate_argv()

    generate.add(
        _name,
        _kind,
        _build,
        *_fragments,
        secret_inputs=("gen.yaml",) if _kind == "secret" else (),
    )


@generate.case(
    "instruction-file-invalid-utf8",
    "invalid-utf8",
    "gen.yaml, at instruction_file: instruction_file prompt.txt: not valid UTF-8 text",
    "at line 1, column 22",
)
def _() -> list[str]:
    put(
        "gen.yaml",
        GENERATION.replace("instruction: Extract the total.", "instruction_file: prompt.txt"),
    )
    put_bytes("prompt.txt", b"Extract the total in \xe2\x82 please.\n")
    return generate_argv()


@generate.case("config-is-a-folder", "not-a-file", "gen.yaml: this is a folder, not a file")
def _() -> list[str]:
    folder("gen.yaml")
    return generate_argv()


@generate.case("source-fifo", "not-a-file", "src/x.txt: this is a named pipe, not a file")
def _() -> list[str]:
    fifo("src/x.txt")
    return generate_argv()


@generate.case(
    "unreadable-source",
    "permission",
    "src/x.txt: cannot read: Permission denied",
    as_user=True,
)
def _() -> list[str]:
    argv = generate_argv()
    locked("src/x.txt")
    return argv


@generate.case("sources-dir-empty", "empty", "sources: no cases found")
def _() -> list[str]:
    folder("sources")
    return generate_argv("--sources-dir", "sources")


@generate.case(
    "sources-dir-ids-collide",
    "id-collision",
    "sources: case 'a' is both a folder and a file stem",
)
def _() -> list[str]:
    put("sources/a/page.txt", "Total: 1\n")
    put("sources/a.txt", "Total: 2\n")
    return generate_argv("--sources-dir", "sources")


@generate.case("case-id-with-slash", "bad-option", "--case-id 'a/b' cannot name output files")
def _() -> list[str]:
    return generate_argv("--case-id", "a/b")


@generate.case("concurrency-zero", "bad-number", "--concurrency 0 (expected at least 1)")
def _() -> list[str]:
    return generate_argv("--concurrency", "0")


@generate.case(
    "output-dir-is-a-file", "output-clash", "--output-dir out is a file (expected a folder)"
)
def _() -> list[str]:
    put("out", "x\n")
    return generate_argv()


@generate.case(
    "review-file-is-a-source",
    "output-clash",
    "case 'x' review file out/x.review.json is the same file as case 'x' source",
)
def _() -> list[str]:
    put("out/x.review.json", '{"total": 1}\n')
    return [*generate_argv(), "--source", "out/x.review.json", "--case-id", "x"]


# ----------------------------------------------------------------------- review


def review_file(path: str = "review.json", *, decided: bool = False) -> str:
    """A review file of two agreed fields and three disputed ones (decided or not)."""
    write_ground_truth_review(generation_report(), Path(path))
    if decided:
        edited = apply_decisions(load_review(Path(path)), set=DECISIONS, omit=["$.iban"])
        write_ground_truth_review(edited, Path(path))
    return path


def edited_review(edit: Callable[[dict[str, Any]], None], *, decided: bool = False) -> str:
    """The review file with ``edit`` applied to its JSON by hand."""
    path = Path(review_file(decided=decided))
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return str(path)


def _set(key: str, value: Any, *, item: int | None = None) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        (data if item is None else data["review_items"][item])[key] = value

    return edit


REVIEW_FILES: Sequence[tuple[str, str, Callable[[], str], tuple[str, ...]]] = [
    # (name, kind, the review file, fragments)
    (
        "unknown-decision",
        "unknown-enum",
        lambda: edited_review(_set("decision", "maybe", item=0)),
        ("review.json: invalid ReviewFile: review_items[0] ($.amount)", "(got 'maybe')"),
    ),
    (
        "unknown-key",
        "unknown-key",
        lambda: edited_review(_set("reviewer", "ann")),
        ("review.json: invalid ReviewFile: reviewer: Extra inputs are not permitted",),
    ),
    (
        "items-an-object",
        "wrong-shape",
        lambda: edited_review(lambda data: data.update(review_items={"$.amount": {}})),
        ("review.json: invalid ReviewFile: review_items: Input should be a valid list",),
    ),
    (
        "truncated",
        "malformed",
        lambda: put_bytes("review.json", Path(review_file()).read_bytes()[:-40]),
        ("review.json: malformed JSON at line 164, column 20: Unterminated string",),
    ),
    (
        "repeated-key",
        "repeated-key",
        lambda: put_bytes(
            "review.json", Path(review_file()).read_bytes().replace(b"{", b'{"case_id": "x", ', 1)
        ),
        ("review.json, at $.case_id: duplicate key 'case_id' at line 3, column 3",),
    ),
    ("empty", "empty", lambda: put("review.json", ""), ("review.json: the file is empty",)),
    (
        "nested-10000",
        "deep-nesting",
        lambda: put("review.json", deep_json()),
        ("review.json, at $.a.a.a", "nesting deeper than 1,000 levels"),
    ),
    (
        "lone-surrogate",
        "surrogate",
        lambda: edited_review(_set("approval_notes", "see \ud800")),
        ("review.json, at $.approval_notes: a lone UTF-16 surrogate",),
    ),
    (
        "duplicate-item-path",
        "duplicate-id",
        lambda: edited_review(_set("path", "amount", item=1)),
        ("review.json: at review_items[1].path: field 'amount' also appears at review_items[0]",),
    ),
    (
        "fifo",
        "not-a-file",
        lambda: fifo("review.json"),
        ("review.json: this is a named pipe, not a file",),
    ),
]

for _name, _kind, _make, _fragments in REVIEW_FILES:

    def _build(make: Callable[[], str] = _make) -> list[str]:
        make()
        return ["review", "review.json"]

    review.add(_name, _kind, _build, *_fragments)


@review.case(
    "set-unknown-path",
    "dangling-reference",
    "--set $.amont: no review item has this path",
)
def _() -> list[str]:
    return ["review", review_file(), "--set", "$.amont=1"]


@review.case(
    "set-one-field-twice",
    "duplicate-id",
    "one field given twice: --set $.amount and --set amount",
)
def _() -> list[str]:
    return ["review", review_file(), "--set", "$.amount=1", "--set", "amount=2"]


@review.case(
    "set-invalid-utf8-value",
    "invalid-utf8",
    "--set: the argument holds bytes that are not UTF-8 text",
)
def _() -> list[str]:
    return ["review", review_file(), "--set", "$.amount=\udcff"]


# ----------------------------------------------------------------------- keygen


@keygen.case(
    "private-key-exists", "output-clash", "keys/ann: exists already; a key is never overwritten"
)
def _() -> list[str]:
    put("keys/ann", "my old key\n")
    return ["keygen", "--out", "keys/ann"]


@keygen.case(
    "public-key-exists",
    "output-clash",
    "keys/ann.pub: exists already; a key is never overwritten",
)
def _() -> list[str]:
    put("keys/ann.pub", "ssh-ed25519 AAAA old\n")
    return ["keygen", "--out", "keys/ann"]


@keygen.case("out-is-a-folder", "output-clash", "--out keys is a folder (expected a file path)")
def _() -> list[str]:
    folder("keys")
    return ["keygen", "--out", "keys"]


@keygen.case(
    "parent-is-a-file",
    "output-clash",
    "--out keys/ann: keys is a file, so nothing can be created in it",
)
def _() -> list[str]:
    put("keys", "not a folder\n")
    return ["keygen", "--out", "keys/ann"]


@keygen.case(
    "passphrase-variable-unset",
    "missing",
    f"--passphrase-env: {UNSET_KEY_ENV} is not set or empty",
)
def _() -> list[str]:
    return ["keygen", "--out", "keys/ann", "--passphrase-env", UNSET_KEY_ENV]


@keygen.case("comment-two-lines", "bad-option", "the key comment must be one line")
def _() -> list[str]:
    return ["keygen", "--out", "keys/ann", "--comment", "ann\nssh-ed25519 AAAA mallory"]


@keygen.case(
    "comment-invalid-utf8",
    "invalid-utf8",
    "--comment: the argument holds bytes that are not UTF-8 text",
)
def _() -> list[str]:
    return ["keygen", "--out", "keys/ann", "--comment", "ann \udcff"]


@keygen.case(
    "unwritable-folder",
    "permission",
    "--out keys/ann: this user may not write in keys",
    as_user=True,
)
def _() -> list[str]:
    folder("keys")
    Path("keys").chmod(0o555)
    return ["keygen", "--out", "keys/ann"]


# ---------------------------------------------------------------------- approve


def signing_key() -> str:
    generate_keypair(Path("keys/ann"))
    return "keys/ann"


def approve_argv(
    *extra: str, file: str = "review.json", output: str = "approved.json"
) -> list[str]:
    if file == "review.json" and not Path(file).exists():
        review_file(decided=True)
    return ["approve", file, "--approved-by", "ann", "--output", output, *extra]


@approve.case(
    "unresolved-items",
    "tampered",
    "review.json: 3 review item(s) unresolved: review_items[0] $.amount",
)
def _() -> list[str]:
    review_file()
    return approve_argv("--unsigned")


@approve.case(
    "decision-without-value",
    "tampered",
    "review.json: at review_items[0].expected: $.amount: decision 'set' needs a value",
)
def _() -> list[str]:
    edited_review(_set("expected", None, item=0), decided=True)
    return approve_argv("--unsigned")


@approve.case(
    "approved-status-without-approver",
    "tampered",
    "review.json: at approved_by: status is 'approved' but no approver is named",
)
def _() -> list[str]:
    edited_review(_set("status", "approved"), decided=True)
    return ["approve", "review.json", "--output", "approved.json", "--unsigned"]


@approve.case(
    "approver-blank", "bad-option", "review.json, at approved_by: no approver: approved_by is"
)
def _() -> list[str]:
    review_file(decided=True)
    return ["approve", "review.json", "--approved-by", "  ", "--output", "a.json", "--unsigned"]


@approve.case(
    "signing-key-garbage",
    "malformed",
    "keys/ann: the signing key is damaged or in an unknown format",
)
def _() -> list[str]:
    put("keys/ann", "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n")
    return approve_argv("--signing-key", "keys/ann")


@approve.case(
    "signing-key-is-public",
    "wrong-shape",
    "keys/ann.pub: this is a public key; signing needs the private key",
)
def _() -> list[str]:
    return approve_argv("--signing-key", signing_key() + ".pub")


@approve.case("signing-key-is-a-folder", "not-a-file", "keys: this is a folder, not a file")
def _() -> list[str]:
    folder("keys")
    return approve_argv("--signing-key", "keys")


@approve.case(
    "encrypted-key-without-passphrase",
    "missing",
    "keys/ann: the signing key is encrypted; set DOCEVALS_SIGNING_KEY_PASSPHRASE",
)
def _() -> list[str]:
    generate_keypair(Path("keys/ann"), passphrase="a long passphrase 12345")
    return approve_argv("--signing-key", "keys/ann")


@approve.case(
    "output-exists",
    "output-clash",
    "approved.json: exists already; an approval is never replaced silently",
)
def _() -> list[str]:
    put("approved.json", '{"an": "earlier approval"}\n')
    return approve_argv("--unsigned")


@approve.case(
    "output-hard-link-to-review",
    "output-clash",
    "--output copy.json is the same file as review file review.json",
)
def _() -> list[str]:
    argv = approve_argv("--unsigned", "--force", output="copy.json")
    hard_link("copy.json", "review.json")
    return argv


@approve.case(
    "output-is-the-signing-key",
    "output-clash",
    "--output keys/ann is the same file as the signing key keys/ann",
)
def _() -> list[str]:
    return approve_argv("--signing-key", signing_key(), "--force", output="keys/ann")


@approve.case(
    "output-is-a-folder", "output-clash", "--output approved is a folder (expected a file path)"
)
def _() -> list[str]:
    folder("approved")
    return approve_argv("--unsigned", output="approved")


@approve.case(
    "unreadable-signing-key",
    "permission",
    "keys/ann: cannot read the signing key: Permission denied",
    as_user=True,
)
def _() -> list[str]:
    argv = approve_argv("--signing-key", signing_key())
    locked("keys/ann")
    return argv


# ----------------------------------------------------------------------- verify

ROWS = [{"path": "$.number", "expected": "0123"}, {"path": "$.total", "expected": 10}]


def approved_file(path: str = "approved.json", *, key: SigningKey | None = KEY) -> str:
    write_approved(approved("inv-a", ROWS, key=key), Path(path))
    return path


def edited_approval(edit: Callable[[dict[str, Any]], None]) -> str:
    path = Path(approved_file())
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return str(path)


def signed_elsewhere() -> str:
    """Signed by another key, with the record claiming the trusted key's id."""
    data = approved("inv-a", ROWS, key=SigningKey.generate()).model_dump(mode="json")
    data["record"]["key_id"] = KEY.public_key.key_id
    return put("approved.json", json.dumps(data))


def trusted_key() -> str:
    return put("ann.pub", KEY.public_key.openssh("ann") + "\n")


APPROVALS: Sequence[tuple[str, str, Callable[[], str], tuple[str, ...]]] = [
    # (name, kind, the approved file, fragments)
    (
        "rows-changed",
        "tampered",
        lambda: edited_approval(lambda data: data["rows"][1].update(expected=1000)),
        ("approved.json: content digest mismatch: the rows hash to",),
    ),
    (
        "approver-changed",
        "tampered",
        lambda: edited_approval(lambda data: data["record"].update(approved_by="mallory")),
        ("approved.json: signature invalid: it is not key",),
    ),
    (
        "signature-not-base64",
        "tampered",
        lambda: edited_approval(lambda data: data["record"].update(signature="%%%")),
        ("approved.json: signature is not the base64 of 64 bytes",),
    ),
    (
        "signed-by-another-key-under-the-trusted-id",
        "tampered",
        lambda: signed_elsewhere(),
        ("approved.json: record key_id", "is not the id of its public_key"),
    ),
    (
        "unsigned",
        "tampered",
        lambda: approved_file(key=None),
        ("approved.json: unsigned record: a trusted public key",),
    ),
    (
        "unknown-key",
        "unknown-key",
        lambda: edited_approval(lambda data: data["record"].update(approver="ann")),
        (
            "approved.json, at record.approver: invalid ApprovedGroundTruth",
            "Extra inputs are not permitted",
        ),
    ),
    (
        "rows-an-object",
        "wrong-shape",
        lambda: edited_approval(lambda data: data.update(rows={"$.total": 10})),
        ("approved.json, at rows: invalid ApprovedGroundTruth", "Input should be a valid list"),
    ),
    (
        "repeated-key",
        "repeated-key",
        lambda: put_bytes(
            "approved.json",
            Path(approved_file()).read_bytes().replace(b"{", b'{"case_id": "x", ', 1),
        ),
        ("approved.json, at $.case_id: duplicate key 'case_id' at line 3, column 3",),
    ),
    (
        "malformed",
        "malformed",
        lambda: put("approved.json", '{"case_id": "inv-a", rows: []}'),
        ("approved.json: malformed JSON at line 1, column 22",),
    ),
    ("empty", "empty", lambda: put("approved.json", "\n"), ("approved.json: the file is empty",)),
    (
        "invalid-utf8",
        "invalid-utf8",
        lambda: put_bytes(
            "approved.json", Path(approved_file()).read_bytes().replace(b"inv-a", b"inv-\xff", 1)
        ),
        ("approved.json: not valid UTF-8 text (byte 43: invalid start byte) at line 3, column 19",),
    ),
    (
        "approved-at-not-utc",
        "tampered",
        lambda: edited_approval(lambda data: data["record"].update(approved_at="yesterday")),
        (
            "approved.json, at record.approved_at: invalid ApprovedGroundTruth",
            "'yesterday' is not a UTC time",
        ),
    ),
]

for _name, _kind, _make, _fragments in APPROVALS:

    def _build(make: Callable[[], str] = _make) -> list[str]:
        make()
        return ["verify", "approved.json", "--public-key", trusted_key()]

    verify.add(_name, _kind, _build, *_fragments)


@verify.case("another-key", "tampered", "approved.json: key mismatch: signed by key")
def _() -> list[str]:
    return ["verify", approved_file(), "--public-key", signing_key() + ".pub"]


@verify.case(
    "public-key-garbage", "malformed", "ann.pub: the public key is damaged or in an unknown format"
)
def _() -> list[str]:
    put("ann.pub", "ssh-ed25519 not-base64!!\n")
    return ["verify", approved_file(), "--public-key", "ann.pub"]


@verify.case(
    "public-key-is-private",
    "wrong-shape",
    "keys/ann: this holds a private key; give the public key",
)
def _() -> list[str]:
    return ["verify", approved_file(), "--public-key", signing_key()]


@verify.case("public-key-is-a-folder", "not-a-file", "keys: this is a folder, not a file")
def _() -> list[str]:
    folder("keys")
    return ["verify", approved_file(), "--public-key", "keys"]


@verify.case("approved-is-a-folder", "not-a-file", "approved: this is a folder, not a file")
def _() -> list[str]:
    folder("approved")
    return ["verify", "approved", "--public-key", trusted_key()]


@verify.case("approved-device", "not-a-file", "/dev/zero: this is a device, not a file")
def _() -> list[str]:
    return ["verify", "/dev/zero", "--public-key", trusted_key()]


@verify.case(
    "review-file-given",
    "wrong-shape",
    "review.json: this is a review file, not approved ground truth",
)
def _() -> list[str]:
    return ["verify", review_file(), "--public-key", trusted_key()]


CASES = [*generate.cases, *review.cases, *keygen.cases, *approve.cases, *verify.cases]
