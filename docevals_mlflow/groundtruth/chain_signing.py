"""Signing the acts of an approval chain: the preparer signs the review file, each
reviewer and adjudicator their layer (``docevals review sign``).

A signature is Ed25519 over the canonical JSON of
:meth:`~docevals_mlflow.groundtruth.chain_records.ActSignature.signed_payload`: role,
person, key, the digest of what is vouched for, the review's digest and the time. The
preparer's signature is kept beside the review file (``X.review.preparer.json``, so
the review file and its digest stay untouched); a layer's signature is kept in the
layer (``signature``), in the compact form of
:class:`~docevals_mlflow.groundtruth.layer_records.LayerSignature`, from which the
full act is rebuilt with the layer's role, person and digest.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.errors import ApprovalError, InputError
from docevals_mlflow.groundtruth.chain_records import ActSignature, Role
from docevals_mlflow.groundtruth.key_loading import load_signing_key
from docevals_mlflow.groundtruth.keys import PublicKey, SigningKeyLike
from docevals_mlflow.groundtruth.layer_lock import layer_lock
from docevals_mlflow.groundtruth.layer_records import LayerFile, LayerSignature, layer_digest
from docevals_mlflow.groundtruth.signing import decode_base64, sign, verify

PREPARER_SUFFIX = ".preparer.json"


def utc_text(now: _dt.datetime | None = None) -> str:
    """``now`` (default: the current time) as ISO 8601 UTC with a ``Z``, to the second."""
    moment = now if now is not None else _dt.datetime.now(_dt.UTC)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InputError("the signing time has no time zone", expected="an aware datetime")
    return moment.astimezone(_dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def preparer_path(review_path: str | os.PathLike[str]) -> Path:
    """Where the preparer's signature of ``X.review.json`` is kept:
    ``X.review.preparer.json``."""
    path = Path(review_path)
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(stem + PREPARER_SUFFIX)


def sign_act(
    role: Role,
    person: str,
    digest: str,
    review_sha256: str,
    key: SigningKeyLike,
    *,
    now: _dt.datetime | None = None,
) -> ActSignature:
    """``person``'s signature, as ``role``, of ``digest`` (within review ``review_sha256``)."""
    signing_key = load_signing_key(key)
    unsigned = {
        "role": role,
        "person": person,
        "key_id": signing_key.key_id,
        "public_key": signing_key.public_key.base64,
        "digest": digest,
        "review_sha256": review_sha256,
        "at": utc_text(now),
    }
    # A placeholder signature lets the model build the exact payload it will check.
    draft = ActSignature.model_validate({**unsigned, "signature": ""})
    signature, _, _ = sign(draft.signed_payload(), signing_key)
    return draft.model_copy(update={"signature": signature})


def check_act_signature(act: ActSignature) -> PublicKey:
    """Check ``act``'s signature against the key it names; returns that key.

    Raises:
        ApprovalError: ``reason="signature"`` when the signed fields were changed, or
            ``reason="record"`` when the key id is not the embedded key's.
    """
    key = PublicKey(decode_base64(act.public_key, 32, "public_key", reason="record"))
    if key.key_id != act.key_id:
        raise ApprovalError(
            f"key_id {act.key_id} is not the id of the embedded public key", reason="record"
        )
    verify(act.signed_payload(), act.signature, key)
    return key


def layer_act(layer: LayerFile) -> ActSignature | None:
    """The act a layer's signature claims, rebuilt from the layer as it is now (so a
    layer changed after signing no longer matches its signature); ``None`` unsigned."""
    signature = layer.signature
    if signature is None:
        return None
    return ActSignature(
        role=layer.role,
        person=layer.person,
        algorithm=signature.algorithm,
        key_id=signature.key_id,
        public_key=signature.public_key,
        digest=layer_digest(layer),
        review_sha256=layer.review_sha256,
        at=signature.at,
        signature=signature.signature,
    )


def layer_signature(act: ActSignature) -> LayerSignature:
    """The compact form of a layer act, as the layer file keeps it."""
    return LayerSignature(
        algorithm=act.algorithm,
        key_id=act.key_id,
        public_key=act.public_key,
        signature=act.signature,
        at=act.at,
    )


# --- the preparer's file ------------------------------------------------------------


def write_preparer_signature(review_path: str | os.PathLike[str], act: ActSignature) -> Path:
    """Write the preparer's signature beside the review, atomically (a new one
    replaces the old: it vouches for the review as it is now)."""
    if act.role != "preparer":
        raise InputError(f"a {act.role}'s signature is kept in their layer, not here")
    target = preparer_path(review_path)
    return atomic_write_text(target, act.model_dump_json(indent=2) + "\n")


def load_preparer_signature(review_path: str | os.PathLike[str]) -> ActSignature | None:
    """The preparer's signature of the review, or ``None`` when there is none.

    Raises:
        InputError: the file is malformed (naming the file and the field).
    """
    path = preparer_path(review_path)
    if not path.exists():
        return None
    data = load_json_file(path, what="preparer signature")
    try:
        act = ActSignature.model_validate(data)
    except InputError as exc:
        raise exc.located(source=str(path)) from None
    if act.role != "preparer":
        raise InputError(
            f"role is {act.role!r}", source=str(path), path="role", expected="preparer"
        )
    return act


# --- signing ------------------------------------------------------------------------


def sign_review(
    review_path: str | os.PathLike[str],
    person: str,
    role: Role,
    signing_key: SigningKeyLike,
    *,
    now: _dt.datetime | None = None,
) -> ActSignature:
    """Sign a review as ``role``: the preparer signs the review file (kept in
    ``X.review.preparer.json``), a reviewer or adjudicator their own layer (kept in
    the layer, under the layer's lock, so no answer written meanwhile is lost).

    Raises:
        InputError: no layer of ``person`` (nothing to sign), a layer of another
            role, a stale layer, or the approver role (the approver signs with
            ``approve``).
    """
    from docevals_mlflow.groundtruth.review import load_review
    from docevals_mlflow.groundtruth.review_layers import layer_path, read_layer
    from docevals_mlflow.groundtruth.review_rows import review_digest

    key = load_signing_key(signing_key)
    review_sha256 = review_digest(load_review(review_path))
    if role == "preparer":
        act = sign_act("preparer", person, review_sha256, review_sha256, key, now=now)
        write_preparer_signature(review_path, act)
        return act
    if role not in ("reviewer", "adjudicator"):
        raise InputError(
            f"role {role!r} signs nothing here",
            expected="preparer, reviewer or adjudicator (the approver signs with approve)",
        )
    file = layer_path(review_path, person)
    if not file.exists():
        raise InputError(
            f"{person} has no layer for this review: nothing to sign (answer first: "
            "docevals review answer)",
            source=str(file),
        )
    with layer_lock(file):
        layer = read_layer(file)
        if layer.role != role:
            raise InputError(
                f"{person}'s layer holds {layer.role} answers, not {role} ones",
                source=str(file),
                expected=f"--role {layer.role}",
            )
        if layer.review_sha256 != review_sha256:
            raise InputError(
                "this layer answers another version of the review file (stale); it cannot "
                "be signed for this one",
                source=str(file),
            )
        act = sign_act(role, person, layer_digest(layer), review_sha256, key, now=now)
        signed = layer.model_copy(update={"signature": layer_signature(act)})
        atomic_write_text(file, signed.model_dump_json(indent=1, exclude_none=True) + "\n")
    return act
