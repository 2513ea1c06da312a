"""Screen workers tune glibc's malloc so that a chunk's big arrays reuse freed memory."""

from __future__ import annotations

import platform

import pytest

from pairscreen.engine.allocator import reuse_large_blocks


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_thresholds_take_on_glibc():
    assert reuse_large_blocks() is True
