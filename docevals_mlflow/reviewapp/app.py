"""The review web app: routes over the served folder, for one person in one role.

Pages are rendered on the server (Jinja2, autoescaped); one script of ours adds the
keyboard and sends answers as JSON. Every route names documents by their review
file's path relative to the folder, checked by
:meth:`~docevals_mlflow.reviewapp.folder.ReviewFolder.review_path` before use.
Expected errors (bad input, refused paths, broken files) come back as a one-line
message in the page or the JSON reply; anything else as a short "internal error"
without a traceback (the server's terminal keeps the details).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from docevals_mlflow.errors import ConfigurationError, DocEvalsError, InputError
from docevals_mlflow.reviewapp import chain_routes, views
from docevals_mlflow.reviewapp.boxes import boxes_for, read_boxes
from docevals_mlflow.reviewapp.catalog import Broken, Catalog
from docevals_mlflow.reviewapp.folder import PathRefused, ReviewFolder
from docevals_mlflow.reviewapp.model import DocumentView, FieldRow
from docevals_mlflow.reviewapp.pages import ZOOMS, PageCache, SourceDocument
from docevals_mlflow.reviewapp.queue import DEFAULT_RESIDUAL, build_queue
from docevals_mlflow.reviewapp.security import Guard, GuardMiddleware, allowed_hosts
from docevals_mlflow.reviewapp.store import record

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.chain_policy import ChainPolicy
    from docevals_mlflow.groundtruth.keys import SigningKey

STATIC = {"review.js": "text/javascript", "review.css": "text/css"}
ROLES = ("reviewer", "adjudicator", "approver")


@dataclass
class ReviewApp:
    """What the routes share: the folder, the person, caches and the guard."""

    folder: ReviewFolder
    person: str
    role: str
    catalog: Catalog
    pages: PageCache
    guard: Guard
    residual: float
    templates: Environment
    known_people: frozenset[str] | None = None
    """The policy's people, when one was given: anyone else's answers are flagged."""
    policy: ChainPolicy | None = None
    signing_key: SigningKey | None = None
    """The person's key, to sign their layer (or, as approver, the approval)."""
    approved_dir: Path | None = None

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.update(
            person=self.person,
            role=self.role,
            csrf=self.guard.csrf,
            views=views,
            can_sign=self.signing_key is not None,
        )
        return HTMLResponse(self.templates.get_template(name).render(**context), status)

    def document(self, document_id: str) -> DocumentView:
        loaded = self.catalog.get(document_id)
        if isinstance(loaded, Broken):
            raise InputError(loaded.message)
        return loaded

    def source(self, document: DocumentView, name: str) -> SourceDocument:
        row = next((source for source in document.sources if source.name == name), None)
        if row is None:
            raise InputError(f"the review names no source {name!r}", source=document.id)
        if not row.found:
            raise InputError(row.message, source=document.id)
        return SourceDocument.read(self.folder.source_path(document.id, name))


def create_app(
    target: str | os.PathLike[str],
    *,
    person: str,
    role: str = "reviewer",
    token: str | None = None,
    bind: str = "127.0.0.1",
    residual: float = DEFAULT_RESIDUAL,
    required_reviewers: int = 2,
    known_people: frozenset[str] | None = None,
    policy: ChainPolicy | None = None,
    signing_key: SigningKey | None = None,
    approved_dir: str | os.PathLike[str] | None = None,
) -> Starlette:
    """The app serving a review file or a folder of them for ``person`` in ``role``.

    ``signing_key`` lets a reviewer or adjudicator sign their layer from the page; an
    ``approver`` needs ``policy`` and ``signing_key`` and gets the approval view
    (approved files go to ``approved_dir``, default ``approved/`` in the folder).

    Raises:
        ConfigurationError: an unknown role, or an approver without a policy (without a
            key the approval view lists that as what is missing).
    """
    if role not in ROLES:
        raise ConfigurationError(f"role {role!r}", expected=" | ".join(ROLES))
    if role == "approver" and policy is None:
        raise ConfigurationError("the approver's view needs a policy (--policy P)")
    folder = ReviewFolder.open(target)
    state = ReviewApp(
        folder=folder,
        person=person,
        role=role,
        catalog=Catalog(folder, required_reviewers=required_reviewers),
        pages=PageCache(folder.cache_dir),
        guard=Guard(token, allowed_hosts(bind)),
        residual=residual,
        templates=Environment(
            loader=PackageLoader("docevals_mlflow.reviewapp", "templates"),
            autoescape=select_autoescape(default=True),
        ),
        known_people=known_people
        if known_people is not None or policy is None
        else frozenset(policy.people),
        policy=policy,
        signing_key=signing_key,
        approved_dir=Path(approved_dir).resolve() if approved_dir is not None else None,
    )
    routes = _routes(state)

    async def failed(request: Request, exc: Exception) -> Response:
        return _error(state, request, "internal error " + type(exc).__name__, 500)

    app = Starlette(
        routes=routes,
        middleware=[Middleware(GuardMiddleware, guard=state.guard)],
        exception_handlers={Exception: failed},
    )
    app.state.review = state
    return app


def _routes(state: ReviewApp) -> list[Route]:
    home = chain_routes.approval_page if state.role == "approver" else _queue_page
    return [
        Route("/", _endpoint(state, home)),
        Route("/queue", _endpoint(state, _queue_page)),
        Route("/api/sign", _endpoint(state, chain_routes.sign), methods=["POST"]),
        Route("/api/approve", _endpoint(state, chain_routes.approve), methods=["POST"]),
        Route("/doc/{document:path}", _endpoint(state, _document_page)),
        Route("/page/{document:path}", _endpoint(state, _page_image)),
        Route("/boxes/{document:path}", _endpoint(state, _boxes)),
        Route("/api/answer", _endpoint(state, _answer), methods=["POST"]),
        Route("/static/{name}", _endpoint(state, _static)),
    ]


def _endpoint(state: ReviewApp, handler: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            response: Response = await handler(state, request)
            return response
        except PathRefused as exc:
            return _error(state, request, str(exc), 404)
        except DocEvalsError as exc:
            return _error(state, request, str(exc), 422)
        except HTTPException as exc:
            return _error(state, request, str(exc.detail), exc.status_code)

    return endpoint


def _error(state: ReviewApp, request: Request, message: str, status: int) -> Response:
    if request.url.path.startswith(("/api/", "/boxes/", "/page/")):
        return JSONResponse({"error": message}, status)
    return state.render("error.html", status, message=message)


async def _queue_page(state: ReviewApp, request: Request) -> Response:
    loaded = await run_in_threadpool(state.catalog.all)
    documents = [item for item in loaded if isinstance(item, DocumentView)]
    broken = [item for item in loaded if isinstance(item, Broken)]
    queue = build_queue(documents, state.person, residual=state.residual)
    return state.render("queue.html", queue=queue, broken=broken, total=len(loaded))


async def _document_page(state: ReviewApp, request: Request) -> Response:
    document_id = request.path_params["document"]
    document = await run_in_threadpool(state.document, document_id)
    rows = document.ordered_fields()
    if state.role == "adjudicator":
        # Disputed among reviewers first; the rest stays reachable below them.
        rows.sort(key=lambda row: not (row.reviewers_disagree or row.final_status == "unresolved"))
    if state.known_people is not None:
        for stranger in sorted(set(document.people) - state.known_people):
            document = _with_problem(
                document,
                f"answers by {stranger}, who is not in the policy: shown, but an approval "
                "under the policy will refuse them",
            )
    loaded = await run_in_threadpool(state.catalog.all)
    queue = build_queue(
        [item for item in loaded if isinstance(item, DocumentView)],
        state.person,
        residual=state.residual,
    )
    pages = {}
    for source in document.sources:
        if source.found:
            try:
                pages[source.name] = await run_in_threadpool(
                    state.pages.page_count, state.source(document, source.name)
                )
            except DocEvalsError as exc:
                pages[source.name] = 0
                document = _with_problem(document, str(exc))
    return state.render(
        "document.html",
        document=document,
        rows=rows,
        pages=pages,
        zooms=ZOOMS,
        next_id=queue.next_after(document.id),
        queue=queue,
        row_context=_row_context(state),
    )


def _with_problem(document: DocumentView, message: str) -> DocumentView:
    from dataclasses import replace

    return replace(document, problems=(*document.problems, message))


def _row_context(state: ReviewApp) -> dict[str, Any]:
    return {"adjudicating": state.role == "adjudicator", "person": state.person}


async def _page_image(state: ReviewApp, request: Request) -> Response:
    document = await run_in_threadpool(state.document, request.path_params["document"])
    try:
        page = int(request.query_params.get("page", "1")) - 1
        zoom = float(request.query_params.get("zoom", "1.5"))
    except ValueError:
        raise InputError("page and zoom must be numbers", expected="page=1&zoom=1.5") from None
    source = state.source(document, request.query_params.get("source", ""))
    png = await run_in_threadpool(state.pages.png, source, page, zoom)
    return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=3600"})


async def _boxes(state: ReviewApp, request: Request) -> Response:
    """Highlights per field path: ``[page, x0, y0, x1, y1, found_by]`` in PDF points:
    the boxes sidecar's (``box``) when it has any for the field, else where the value
    or the evidence text is found on the page."""
    document = await run_in_threadpool(state.document, request.path_params["document"])
    name = request.query_params.get("source", "")
    source = state.source(document, name)
    sidecar = await run_in_threadpool(
        read_boxes, state.folder.review_path(document.id, frozenset((document.id,)))
    )

    def find_all() -> dict[str, Any]:
        found: dict[str, Any] = {}
        for row in document.fields:
            given = boxes_for(sidecar, row.path, name)
            if given:
                found[row.path] = given
                continue
            texts = [("value", views.shown(value)) for value in _values_to_find(row)]
            texts += [("evidence", text) for text in row.evidence]
            boxes = state.pages.find(source, texts)
            found[row.path] = [[b.page, b.x0, b.y0, b.x1, b.y1, b.found_by] for b in boxes]
        return found

    return JSONResponse({"boxes": await run_in_threadpool(find_all)})


def _values_to_find(row: FieldRow) -> list[Any]:
    values = [row.proposed] if row.has_proposal else []
    values += [candidate.value for candidate in row.candidates]
    return [value for value in values if value not in (None, "", [], {})]


async def _answer(state: ReviewApp, request: Request) -> Response:
    if state.role == "approver":
        raise InputError("an approver does not answer fields (serve as reviewer or adjudicator)")
    data = await chain_routes.json_body(request)
    document_id, path, action = (str(data.get(key, "")) for key in ("document", "path", "action"))
    document = await run_in_threadpool(state.document, document_id)
    row = next((row for row in document.fields if row.path == path), None)
    if row is None:
        raise InputError(f"no field {path!r} in this review", source=document_id)
    value = None
    if action == "set":
        value = (
            data["value"]
            if "value" in data
            else views.typed_value(str(data.get("text", "")), views.example_value(row))
        )
    reason = data.get("reason")
    reason = str(reason).strip() or None if reason is not None else None
    if state.role == "adjudicator" and reason is None:
        raise InputError("an adjudicator's answer needs a reason", path=path)
    await run_in_threadpool(
        record, state.folder, document_id, state.person, path, action, value,
        role=state.role, reason=reason,
    )  # fmt: skip
    updated = await run_in_threadpool(state.document, document_id)
    new_row = next(item for item in updated.fields if item.path == path)
    html = state.templates.get_template("row.html").render(
        row=new_row, views=views, **_row_context(state)
    )
    return JSONResponse(
        {
            "ok": True,
            "row_html": html,
            "answered": updated.answered_by(state.person),
            "fields": len(updated.fields),
        }
    )


async def _static(state: ReviewApp, request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        raise PathRefused("no such file", source=name)
    text = resources.files("docevals_mlflow.reviewapp").joinpath("static", name).read_text("utf-8")
    return Response(text, media_type=STATIC[name])


__all__ = ["ReviewApp", "create_app"]
