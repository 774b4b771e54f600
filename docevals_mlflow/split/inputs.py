"""Reading packets from files and folders, and pairing expected with predicted by id.

An input (either side) is one of:

* a **folder** of ``<id>.json`` files, one packet each, named by the file stem (an
  ``id`` inside the file is ignored, so accelerator documents can be used as they are);
* a **JSON Lines** file (``.jsonl``/``.ndjson``): one packet per line,
  ``{"id": ..., "sections": [...]}`` or ``{"id": ..., "pages": [...]}``;
* a **JSON** file: one packet in any form of :mod:`docevals_mlflow.split.models`
  (named by its ``id``, else the file stem), or a list of packet objects with ids.

Packets are paired by id. When both inputs are single-packet JSON files they are one
pair whatever their names (``gt.json`` against ``pred.json``), named by the expected
side. Errors name the input, the line or file, the packet and the place in the data.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from docevals_mlflow.core.datafiles import (
    is_folder_input,
    json_files,
    json_lines,
    load_json_file,
    record_id,
)
from docevals_mlflow.errors import InputError
from docevals_mlflow.split.models import Side, SplitPacket
from docevals_mlflow.split.packet_forms import packet_from_data

JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


class PairedPackets(NamedTuple):
    """Packets paired by id (expected-side order) and the ids with no partner."""

    pairs: list[tuple[SplitPacket, SplitPacket]]
    expected_only: list[str]
    predicted_only: list[str]


PACKET_ID = "an 'id' (non-empty string or integer) to pair packets by"


def _is_packet_object(value: Any) -> bool:
    return isinstance(value, Mapping) and ("sections" in value or "pages" in value)


def _json_lines(path: Path, side: Side) -> Iterator[tuple[SplitPacket, str]]:
    source = str(path)
    lines = json_lines(path, one_line="one packet object per line (JSON Lines)")
    for _, record, value in lines:
        if not _is_packet_object(value):
            raise InputError(
                "a line must be a packet object",
                source=source,
                record=record,
                expected='{"id": ..., "sections": [...]} or {"id": ..., "pages": [...]}',
            )
        packet_id = record_id(
            value.get("id"), source=source, record=record, what="packet id", expected=PACKET_ID
        )
        packet = packet_from_data(
            value, side=side, packet_id=packet_id, source=source, record=f"{record} ({packet_id})"
        )
        yield packet, record


def _json_file(path: Path, side: Side) -> Iterator[tuple[SplitPacket, str]]:
    source = str(path)
    try:
        value = load_json_file(path)
    except InputError as exc:
        if "Extra data" in exc.message:
            raise InputError(
                exc.message,
                source=source,
                expected="one JSON value; name the file .jsonl for one packet per line",
            ) from None
        raise
    if isinstance(value, list) and value and all(_is_packet_object(item) for item in value):
        for index, item in enumerate(value):
            record = f"[{index}]"
            packet_id = record_id(
                item.get("id"), source=source, record=record, what="packet id", expected=PACKET_ID
            )
            yield (
                packet_from_data(
                    item,
                    side=side,
                    packet_id=packet_id,
                    source=source,
                    record=f"{record} ({packet_id})",
                ),
                record,
            )
        return
    named: str | None = None
    if isinstance(value, Mapping) and value.get("id") not in (None, ""):
        named = record_id(
            value.get("id"), source=source, record=path.name, what="packet id", expected=PACKET_ID
        )
    yield (
        packet_from_data(value, side=side, packet_id=named or path.stem, source=source),
        path.name,
    )


def _folder(path: Path, side: Side) -> Iterator[tuple[SplitPacket, str]]:
    files = json_files(path, expected="one <id>.json file per packet")
    for file in files:
        value = load_json_file(file)
        yield packet_from_data(value, side=side, packet_id=file.stem, source=str(file)), file.name


def _read(path: Path, side: Side) -> tuple[list[SplitPacket], bool]:
    """The packets of an input, and whether it is a single-packet JSON file."""
    plain_json = False
    # A named pipe or a device is refused here, before anything opens it.
    if is_folder_input(path, what=f"{side} input"):
        found = _folder(path, side)
    elif path.suffix.lower() in JSON_LINES_SUFFIXES:
        found = _json_lines(path, side)
    else:
        found, plain_json = _json_file(path, side), True
    packets: list[SplitPacket] = []
    places: dict[str, str] = {}
    for packet, place in found:
        first = places.setdefault(packet.id, place)
        if first != place:
            raise InputError(
                f"duplicate packet id {packet.id!r} ({first} and {place})",
                source=str(path),
                record=place,
                expected="each packet id once per side",
            )
        packets.append(packet)
    if not packets:
        # A folder without .json files is refused by json_files already.
        raise InputError(
            "no packets: the input is empty or holds only blank lines",
            source=str(path),
            expected="at least one packet",
        )
    # A file holding one packet object (not a list of them) yields it under its name.
    return packets, plain_json and len(packets) == 1 and places.get(packets[0].id) == path.name


def read_packets(path: str | os.PathLike[str], *, side: Side = "expected") -> list[SplitPacket]:
    """Every packet of an input (folder, JSON Lines or JSON file), in input order.

    Raises:
        InputFileNotFoundError: the input does not exist.
        InputError: a packet is invalid, or two packets have the same id.
    """
    return _read(Path(path), side)[0]


def pair_packets(
    expected_path: str | os.PathLike[str], predicted_path: str | os.PathLike[str]
) -> PairedPackets:
    """Read both inputs and pair their packets by id (see the module docstring)."""
    expected, expected_single = _read(Path(expected_path), "expected")
    predicted, predicted_single = _read(Path(predicted_path), "predicted")
    if expected_single and predicted_single:
        left, right = expected[0], predicted[0]
        return PairedPackets([(left, right.model_copy(update={"id": left.id}))], [], [])
    by_id = {packet.id: packet for packet in predicted}
    pairs = [(packet, by_id[packet.id]) for packet in expected if packet.id in by_id]
    expected_ids = {packet.id for packet in expected}
    return PairedPackets(
        pairs,
        [packet.id for packet in expected if packet.id not in by_id],
        [packet.id for packet in predicted if packet.id not in expected_ids],
    )


__all__ = ["JSON_LINES_SUFFIXES", "PairedPackets", "pair_packets", "read_packets"]
