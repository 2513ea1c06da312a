"""Let a screen worker's allocator reuse the memory of big arrays from one chunk to the next.

Without it, arrays above glibc's mmap threshold (a chunk's panel, each metric's
temporaries) are each a fresh ``mmap`` whose pages the kernel zeroes on first touch and
unmaps on free. It is worst on Dask: a nanny starts its worker with ``MALLOC_TRIM_THRESHOLD_``
set, and setting any malloc threshold turns glibc's adaptive mmap threshold off, so the
threshold stays at 128 KB. Measured on a 124,750-pair screen: 24 of the Dask workers' 51 CPU
seconds were spent in the kernel (0.5 with this), and 2.7 of the local forked workers' 25.
Fixed thresholds sized to a chunk's working set bring the reuse back while still trimming
what a worker does not need.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's own upper bound for the adaptive threshold
TRIM_THRESHOLD_BYTES = 256 << 20  # free memory kept at the top of the heap


def reuse_large_blocks() -> bool:
    """Set the thresholds on glibc; whether it took (False elsewhere: musl, macOS)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
