"""Routes for signing (reviewer, adjudicator) and approving (approver) in the page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from docevals_mlflow.core.datafiles import loads_strict
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.reviewapp.chain import approve_document, chain_state, sign_layer

if TYPE_CHECKING:
    from docevals_mlflow.reviewapp.app import ReviewApp

MAX_BODY = 64 * 1024
"""An answer is a few hundred bytes; anything this large is refused unread."""


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (at most :data:`MAX_BODY` bytes).

    Raises:
        InputError: too large, not JSON, or not an object.
    """
    body = await request.body()
    if len(body) > MAX_BODY:
        raise InputError(f"the request is {len(body)} bytes", expected=f"at most {MAX_BODY}")
    try:
        data = loads_strict(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InputError("the request is not JSON") from None
    if not isinstance(data, dict):
        raise InputError("the request is not a JSON object")
    return data


async def sign(state: ReviewApp, request: Request) -> Response:
    """Sign the person's layer of one document."""
    if state.signing_key is None:
        raise InputError("no signing key: start the server with --signing-key KEY")
    document_id = str((await json_body(request)).get("document", ""))
    await run_in_threadpool(state.document, document_id)  # refused or broken: its message
    message = await run_in_threadpool(
        sign_layer, state.folder, document_id, state.person, state.role, state.signing_key
    )
    return JSONResponse({"ok": True, "message": message})


async def approve(state: ReviewApp, request: Request) -> Response:
    """Approve one document under the policy and write its approved file."""
    if state.role != "approver" or state.policy is None:
        raise InputError("only an approver under a policy approves (--role approver --policy P)")
    if state.signing_key is None:
        raise InputError("no signing key: start the server with --signing-key KEY")
    data = await json_body(request)
    document_id = str(data.get("document", ""))
    state.folder.review_path(document_id)  # confined before anything is read
    message = await run_in_threadpool(
        approve_document,
        state.folder,
        document_id,
        state.policy,
        state.person,
        state.signing_key,
        state.approved_dir,
        notes=str(data.get("notes", "")),
    )
    return JSONResponse({"ok": True, "message": message})


async def approval_page(state: ReviewApp, request: Request) -> Response:
    """Every document's chain, what is missing, and an approve button per document."""
    assert state.policy is not None
    policy = state.policy

    def states() -> tuple[list[Any], list[tuple[str, str]]]:
        listed = state.folder.review_files()
        known = frozenset(listed)
        found, broken = [], []
        for document_id in listed:
            try:
                found.append(
                    chain_state(
                        state.folder,
                        document_id,
                        policy,
                        state.person,
                        state.signing_key,
                        state.approved_dir,
                        known,
                    )
                )
            except DocEvalsError as exc:
                broken.append((document_id, str(exc)))
        return found, broken

    found, broken = await run_in_threadpool(states)
    return state.render(
        "approval.html",
        documents=found,
        broken=broken,
        policy_reviewers=policy.reviewers,
        adjudication=policy.adjudication,
    )
