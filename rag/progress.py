"""Progress for long runs: a bar on a terminal, and a plain line every few seconds when stderr is
not one (a log file, a CI job, `nohup`), so a twenty-minute ingest is never silent."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class Progress:
    def __init__(
        self,
        label: str,
        total: int | None = None,
        stream: TextIO | None = None,
        every_s: float = 5.0,
        enabled: bool = True,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.done = 0.0
        self.started = time.monotonic()
        self._last = self.started
        self._bar = None
        if self.tty:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit=" papers", desc=label, file=self.stream, dynamic_ncols=True)

    def say(self, message: str) -> None:
        if self.enabled:
            print(message, file=self.stream, flush=True)

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        text = (
            f"{self.label}: {int(self.done):,}" + (f"/{self.total:,}" if self.total else "") + f" papers ({rate:,.1f}/s"
        )
        if self.total and rate > 0 and self.done < self.total:
            text += f", about {_duration((self.total - self.done) / rate)} left"
        return text + f", {_duration(elapsed)} so far)"

    def advance(self, n: float) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self.say(self.line())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
