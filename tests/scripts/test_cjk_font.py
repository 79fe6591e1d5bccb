"""Both entry scripts install a CJK font when there is none, so Chinese text is not drawn as boxes.

The scripts run in a scratch copy of the repository with ``apt-get``, ``setup.sh`` and the ``.venv`` tools
replaced by stand-ins that only log their arguments: nothing is installed, and no package list is fetched.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOGGER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$LOG"\n'
# An apt-get whose package lists are stale: install fails until update has run.
STALE_APT = """#!/bin/sh
echo "apt-get $*" >> "$LOG"
case "$1" in
  update) touch "$LOG.updated" ;;
  install) [ -f "$LOG.updated" ] || exit 100 ;;
esac
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _run(tmp_path: Path, script: str, *, font_present: bool) -> list[str]:
    repo = tmp_path / "repo"
    for name in (script, "cjk-font.sh"):
        _write(repo / "scripts" / name, (ROOT / "scripts" / name).read_text())
    _write(repo / "scripts" / "setup.sh", "#!/bin/sh\n")
    for tool in ("traceloupe", "ruff", "mypy", "pytest", "python"):
        _write(repo / ".venv" / "bin" / tool, LOGGER)
    _write(tmp_path / "bin" / "apt-get", STALE_APT)
    font_dir = tmp_path / "fonts" / "wqy"
    if font_present:
        font_dir.mkdir(parents=True)
    log = tmp_path / "log"
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "LOG": str(log),
        "TRACELOUPE_CJK_FONT_DIR": str(font_dir),
    }
    done = subprocess.run(
        ["bash", str(repo / "scripts" / script)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize(("script", "then"), [("run.sh", "traceloupe demo"), ("test.sh", "pytest -n 3")])
def test_entry_script_installs_the_cjk_font_after_updating_stale_package_lists(
    tmp_path: Path, script: str, then: str
) -> None:
    calls = _run(tmp_path, script, font_present=False)
    installs = [i for i, c in enumerate(calls) if c == "apt-get install -y -qq fonts-wqy-microhei"]
    assert installs, calls
    assert "apt-get update -qq" in calls[: installs[-1]]  # the lists were refreshed before the last try
    # and the script still goes on to its real work (test.sh starts mypy beside pytest, so either may log last)
    assert [c for c in calls[installs[-1] :] if c.startswith(then)], calls


@pytest.mark.parametrize("script", ["run.sh", "test.sh"])
def test_entry_script_leaves_an_installed_cjk_font_alone(tmp_path: Path, script: str) -> None:
    calls = _run(tmp_path, script, font_present=True)
    assert not [c for c in calls if "fonts-wqy" in c or c == "apt-get update -qq"]
