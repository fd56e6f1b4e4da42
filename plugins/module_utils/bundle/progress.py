# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: progress lines of long bundle steps (building, verifying, unpacking).

Standard library only: host modules use it through bundle.host.
"""

from __future__ import annotations

import time


def human(num):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if num < 1024 or unit == "GiB":
            return "%.1f %s" % (num, unit) if unit != "B" else "%d B" % num
        num /= 1024.0
    return "%d B" % num


class Progress(object):
    """Throttled progress lines (at most one per ``interval`` seconds per step)."""

    def __init__(self, sink, interval=2.0):
        self.sink = sink
        self.interval = interval
        self._last = 0.0

    def say(self, text):
        if self.sink:
            self.sink(text)

    def tick(self, what, done, total):
        if not self.sink:
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        if total:
            self.sink("%s: %s / %s (%d%%)" % (what, human(done), human(total), done * 100 // max(total, 1)))
        else:
            self.sink("%s: %s" % (what, human(done)))


class Ticking(object):
    """A reader that ticks ``sink`` (a :class:`Progress`) with what was read of ``total``."""

    def __init__(self, handle, sink, what, total):
        self.handle, self.sink, self.what, self.total, self.done = handle, sink, what, total, 0

    def read(self, size=-1):
        data = self.handle.read(size)
        self.done += len(data)
        self.sink.tick("write %s" % self.what, self.done, self.total)
        return data
