"""The server process's request to glibc's allocator: give the memory of large transient values back.

Pages make large values that live for one request (a long trace's window, its outline). glibc raises
its mmap threshold after each such block is freed, so later ones come from per-thread heaps that keep
their high-water mark. A fixed threshold maps each large block on its own (unmapped when freed), and
two arenas bound how many heaps the request threads spread over.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 128 * 1024
ARENAS = 2


def tune_allocator() -> bool:
    """Set the threshold and the arena bound (glibc only); False where the C library has no ``mallopt``."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): its allocator behaves otherwise
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_ARENA_MAX, ARENAS))
