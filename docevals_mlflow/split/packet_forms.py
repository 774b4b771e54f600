"""Reading one side of a packet from any accepted form into a
:class:`~docevals_mlflow.split.models.SplitPacket` (the forms are listed in
:mod:`docevals_mlflow.split.models`), with errors naming the place in the data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral
from typing import Any

from docevals_mlflow.errors import InputError
from docevals_mlflow.split.models import (
    DEFAULT_ID_PREFIX,
    MAX_PAGE_INDEX,
    PAGE_EXPECTED,
    UNKNOWN_CLASS,
    Side,
    SplitPacket,
    SplitSection,
    check_disjoint,
    check_section_pages,
)

_CLASS_EXPECTED = 'a class name (a string or {"type": name}), or null for unclassified'


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _item_path(base: str, index: int) -> str:
    return f"{base}[{index}]"


def _section_id(value: Any, *, default: str, path: str) -> str:
    if value is None:
        return default
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        f"invalid section_id {_describe(value)}",
        path=f"{path}.section_id",
        expected="a non-empty string or an integer",
    )


def _class_name(item: Mapping[str, Any], path: str) -> str:
    if "document_class" not in item:
        raise InputError("no 'document_class'", path=path, expected=_CLASS_EXPECTED)
    value = item["document_class"]
    where = f"{path}.document_class"
    if isinstance(value, Mapping):
        value = value.get("type")
        where += ".type"
    if value is None or value == "":
        return UNKNOWN_CLASS
    if isinstance(value, str):
        return value
    raise InputError(
        f"invalid document_class {_describe(value)}", path=where, expected=_CLASS_EXPECTED
    )


def _page_index(value: Any, path: str) -> int:
    # bool is an int subtype but never a page number; floats would silently truncate.
    # Integral also takes numpy integers, which arrive from Python callers.
    if not isinstance(value, bool) and isinstance(value, int | Integral):
        number = int(value)
        if number < 0:
            raise InputError(f"negative page index {number}", path=path, expected=PAGE_EXPECTED)
        if number > MAX_PAGE_INDEX:
            raise InputError(f"page index {number} is too large", path=path, expected=PAGE_EXPECTED)
        return number
    raise InputError(
        f"page index {_describe(value)} is not an integer", path=path, expected=PAGE_EXPECTED
    )


def _raw_pages(item: Mapping[str, Any], path: str) -> tuple[Any, str]:
    if item.get("page_indices") is not None:
        return item["page_indices"], f"{path}.page_indices"
    nested = item.get("split_document")
    if isinstance(nested, Mapping) and nested.get("page_indices") is not None:
        return nested["page_indices"], f"{path}.split_document.page_indices"
    raise InputError(
        "section has no 'page_indices'",
        path=path,
        expected="a list of 0-based page indices under 'page_indices'",
    )


def _section(item: Any, *, index: int, base: str, side: Side) -> SplitSection:
    path = _item_path(base, index)
    if isinstance(item, SplitSection):
        return item
    if not isinstance(item, Mapping):
        raise InputError(
            f"a section must be an object, got {_describe(item)}",
            path=path,
            expected="{section_id, document_class, page_indices}",
        )
    section_id = _section_id(
        item.get("section_id"), default=f"{DEFAULT_ID_PREFIX[side]}{index}", path=path
    )
    document_class = _class_name(item, path)
    raw, pages_path = _raw_pages(item, path)
    if hasattr(raw, "tolist") and not isinstance(raw, list | tuple):
        raw = raw.tolist()  # a numpy array from a Python caller
    if not isinstance(raw, list | tuple):
        raise InputError(
            f"page_indices must be a list, got {_describe(raw)}",
            path=pages_path,
            expected=PAGE_EXPECTED,
        )
    pages = tuple(raw)
    if not all(type(value) is int for value in pages):
        pages = tuple(
            _page_index(value, f"{pages_path}[{position}]") for position, value in enumerate(pages)
        )
    check_section_pages(pages, section_id, pages_path)
    # Validated above, field by field and with the caller's paths.
    return SplitSection.model_construct(
        section_id=section_id, document_class=document_class, page_indices=pages
    )


def _class_of_page(entry: str | None) -> str:
    return entry if entry else UNKNOWN_CLASS


def _pages_form(items: Sequence[Any], *, base: str, side: Side) -> list[SplitSection]:
    """Sections from a per-page list (class names, or page objects)."""
    if not items:
        return []
    objects = [isinstance(item, Mapping) for item in items]
    if any(objects) and not all(objects):
        index = objects.index(not objects[0])
        raise InputError(
            "mixes page objects with plain class names",
            path=_item_path(base, index),
            expected="one form for every page",
        )
    rows: list[tuple[int, str, str | None]] = []
    if not all(objects):
        for index, entry in enumerate(items):
            if entry is not None and not isinstance(entry, str):
                raise InputError(
                    f"invalid page class {_describe(entry)}",
                    path=_item_path(base, index),
                    expected="a class name or null",
                )
            rows.append((index, _class_of_page(entry), None))
    else:
        with_index = "page_index" in items[0]
        with_section = items[0].get("section_id") is not None
        for index, entry in enumerate(items):
            path = _item_path(base, index)
            if ("page_index" in entry) != with_index:
                raise InputError(
                    "page_index is given for some pages but not for others",
                    path=path,
                    expected="page_index on every page or on none",
                )
            if (entry.get("section_id") is not None) != with_section:
                raise InputError(
                    "section_id is given for some pages but not for others",
                    path=path,
                    expected="section_id on every page or on none",
                )
            page = _page_index(entry["page_index"], f"{path}.page_index") if with_index else index
            section_id = (
                _section_id(entry["section_id"], default="", path=path) if with_section else None
            )
            rows.append((page, _class_name(entry, path), section_id))
    _check_unique_pages(rows, base)
    return _group_pages(rows, base=base, side=side)


def _check_unique_pages(rows: Sequence[tuple[int, str, str | None]], base: str) -> None:
    if len({row[0] for row in rows}) == len(rows):
        return
    first: dict[int, int] = {}
    for index, (page, _, _) in enumerate(rows):
        seen = first.setdefault(page, index)
        if seen != index:
            raise InputError(
                f"page {page} is listed twice ({base}[{seen}] and {base}[{index}])",
                path=f"{base}[{index}]",
                expected="each page once",
            )


def _group_pages(
    rows: Sequence[tuple[int, str, str | None]], *, base: str, side: Side
) -> list[SplitSection]:
    groups: dict[str, tuple[str, list[int], int]] = {}
    if rows and rows[0][2] is None:
        # No section ids: each run of consecutive pages of one class is a section.
        prefix = DEFAULT_ID_PREFIX[side]
        previous: str | None = None
        current = ""
        for index, (page, document_class, _) in enumerate(rows):
            if previous is None or document_class != previous:
                current = f"{prefix}{len(groups)}"
                groups[current] = (document_class, [], index)
            groups[current][1].append(page)
            previous = document_class
    else:
        for index, (page, document_class, named) in enumerate(rows):
            key = str(named)
            group = groups.setdefault(key, (document_class, [], index))
            if group[0] != document_class:
                raise InputError(
                    f"section {key!r} has pages of class {group[0]!r} "
                    f"({base}[{group[2]}]) and {document_class!r}",
                    path=f"{base}[{index}].document_class",
                    expected="one class per section",
                )
            group[1].append(page)
    return [
        SplitSection.model_construct(
            section_id=section_id, document_class=document_class, page_indices=tuple(pages)
        )
        for section_id, (document_class, pages, _) in groups.items()
    ]


def _is_section_item(item: Any) -> bool:
    return isinstance(item, SplitSection) or (
        isinstance(item, Mapping) and ("page_indices" in item or "split_document" in item)
    )


def _packet_id(data: Any, packet_id: str | None) -> str:
    if packet_id is not None:
        return packet_id
    if isinstance(data, Mapping):
        value = data.get("id")
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return "packet"


def packet_from_data(
    data: Any,
    *,
    side: Side = "expected",
    packet_id: str | None = None,
    source: str | None = None,
    record: str | None = None,
) -> SplitPacket:
    """One side of a packet from any accepted form (see :mod:`docevals_mlflow.split.models`).

    ``packet_id`` names the packet; without it, a packet object's ``id`` or
    ``"packet"``. A :class:`SplitPacket` is returned as it is (renamed if
    ``packet_id`` is given).

    Raises:
        InputError: the data is not a valid packet. Its ``source`` is ``source`` (the
            file), else ``"<side> input"``; ``record`` is ``record`` (say, ``line 3``),
            else the packet id; ``path`` the place in the data
            (``sections[2].page_indices[1]``).
    """
    where = source or f"{side} input"
    if isinstance(data, SplitPacket):
        return data if packet_id is None else data.model_copy(update={"id": packet_id})
    identifier = _packet_id(data, packet_id)
    place = record or identifier
    items, base, as_sections = _items(data, where, place)
    try:
        if as_sections:
            sections = [
                _section(item, index=index, base=base, side=side)
                for index, item in enumerate(items)
            ]
        else:
            sections = _pages_form(items, base=base or "pages", side=side)
        check_disjoint(sections, base or "sections")
    except InputError as exc:
        raise exc.located(source=where, record=place) from None
    # Everything was checked above, with the paths of the form the data came in.
    return SplitPacket.model_construct(id=identifier, sections=tuple(sections))


def _items(data: Any, where: str, place: str) -> tuple[Sequence[Any], str, bool]:
    """The packet's list of sections or pages, the key it was under (``""`` for a
    bare list), and whether it lists sections."""
    if isinstance(data, Mapping):
        if ("sections" in data) == ("pages" in data):
            raise InputError(
                "a packet object needs exactly one of 'sections' and 'pages'",
                source=where,
                record=place,
                expected='{"sections": [...]} or {"pages": [...]}',
            )
        base = "sections" if "sections" in data else "pages"
        items = data[base]
        if not isinstance(items, list | tuple):
            raise InputError(
                f"'{base}' must be a list, got {_describe(items)}",
                path=base,
                source=where,
                record=place,
                expected="a list",
            )
        return items, base, base == "sections"
    if isinstance(data, list | tuple):
        return data, "", bool(data) and _is_section_item(data[0])
    raise InputError(
        f"a packet must be an object or a list, got {_describe(data)}",
        source=where,
        record=place,
        expected='{"sections": [...]}, {"pages": [...]} or a list of either',
    )
