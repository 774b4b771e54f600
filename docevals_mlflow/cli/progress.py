"""Progress bars for long commands, drawn on stderr."""

from __future__ import annotations

import math
import time
from typing import TextIO


class ProgressDisplay:
    """Progress on a stream: a bar redrawn in place on a terminal, else milestone lines.

    Redirected output (a log file, CI) gets one line per finished step instead of
    carriage returns that would pile up as garbage, or nothing with
    ``milestones=False``.
    """

    WIDTH = 24

    def __init__(
        self,
        stream: TextIO,
        *,
        command: str,
        interval: float = 0.05,
        milestones: bool = True,
    ) -> None:
        self.stream = stream
        self.command = command
        self.milestones = milestones
        isatty = getattr(stream, "isatty", None)
        self.live = bool(isatty()) if callable(isatty) else False
        self.interval = interval
        self._drawn = 0
        self._last = -math.inf

    def __call__(self, step: str, done: int, total: int) -> None:
        """Show that ``done`` of ``total`` units of ``step`` are finished."""
        finished = done >= total
        if self.live:
            now = time.monotonic()
            # Redrawn at most every `interval` seconds (a thousand documents would
            # otherwise be a thousand redraws), but always at the start and the end.
            if not finished and done and now - self._last < self.interval:
                return
            self._last = now
            filled = self.WIDTH * done // total if total else self.WIDTH
            line = f"{step:<28} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total}"
            # Padding wipes what a longer previous line left behind.
            self.stream.write("\r" + line.ljust(self._drawn))
            self._drawn = 0 if finished else len(line)
            if finished:
                self.stream.write("\n")
        elif finished and self.milestones:
            self.stream.write(f"docevals {self.command}: {step}: done ({total}/{total})\n")
        self.stream.flush()
