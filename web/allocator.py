"""The server process's requests to glibc's allocator: give the memory of large transient values back.

Pages make large values that live for one request (a long trace's window, its outline). glibc raises
its mmap threshold after each such block is freed, so later ones come from per-thread heaps that keep
their high-water mark. A fixed threshold maps each large block on its own (unmapped when freed), two
arenas bound how many heaps the request threads spread over, and a periodic trim returns the free
pages those heaps still hold.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 128 * 1024
ARENAS = 2
TRIM_EVERY_SECONDS = 10.0


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):  # not glibc (musl, macOS): its allocator behaves otherwise
        return None
    return libc


def tune_allocator(trim_every: float | None = TRIM_EVERY_SECONDS) -> bool:
    """Set the threshold and the arena bound, and trim every ``trim_every`` seconds (glibc only; False elsewhere)."""
    libc = _libc()
    if libc is None:
        return False
    tuned = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(libc.mallopt(M_ARENA_MAX, ARENAS))
    if trim_every is not None:
        threading.Thread(target=_trim_forever, args=(libc, trim_every), name="traceloupe-trim", daemon=True).start()
    return tuned


def _trim_forever(libc: ctypes.CDLL, every: float) -> None:
    while True:
        time.sleep(every)
        libc.malloc_trim(0)
