"""``core.jsonio.loads`` reads integers past 64 bits exactly wherever they sit in a long text."""

from __future__ import annotations

import pytest

from core import jsonio

BIG = 123456789012345678901234567890


@pytest.mark.parametrize("shift", range(-32, 4))
def test_a_long_integer_across_the_scanned_slices_comes_back_exact(shift: int) -> None:
    """The digit run is looked for a slice at a time; a run that straddles two slices is found all the same."""
    head = '{"pad": "' + "x" * (jsonio._SCAN_BYTES + shift) + '", "n": '
    value = jsonio.loads((head + f"{BIG}}}").encode())
    assert value["n"] == BIG and type(value["n"]) is int
