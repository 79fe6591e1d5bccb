"""The server asks glibc to map large blocks on their own, so a long trace's transient values are given back."""

from __future__ import annotations

import platform

import pytest

from web.allocator import tune_allocator


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_allocator_is_tuned_on_glibc() -> None:
    assert tune_allocator(trim_every=None) is True
