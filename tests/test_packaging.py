"""The wheel is the product: built from the checkout and installed elsewhere, it serves every page with its assets."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from web.devtools import demo_data

ROOT = Path(__file__).resolve().parents[1]
EK = f"/conversations/{demo_data.EVERY_KIND}"
# Every page template in use: the list, a timeline (cards, run controls), a payload and its phases, a diff, the
# replays table, the import and check forms, and the error page.
PAGES = (
    "/",
    EK,
    f"{EK}/payload/openai",
    f"{EK}/payload/anthropic/phases",
    f"{EK}/diff?left=openai&right=gemini",
    f"{EK}/replays",
    f"/conversations/{demo_data.INCIDENT}/payload/openai",
    "/import",
    "/check",
)
_ASSET = re.compile(r"""(?:href|src)="(/static/[^"?#]+)""")


def test_the_wheel_lists_every_package_of_the_checkout() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts) for top in ("core", "web") for init in (ROOT / top).rglob("*.py")
    }
    found = {name for name in found if (ROOT / name.replace(".", "/") / "__init__.py").exists()}
    assert found | {"web.templates", "web.static"} == listed


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done.stdout


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # the demo on loopback
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("content-type", ""), error.read()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside the checkout with the wheel built from it; the bin folder.

    The wheel goes in with ``--no-deps`` and the outer venv's site-packages are then appended to the new
    one's path (a ``.pth`` line, which runs none of the ``.pth`` files there, so the outer editable install
    stays inactive): the dependencies are reused, but ``core`` and ``web`` can only come from the wheel.
    """
    tmp = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "build", "--outdir", tmp / "dist", ROOT, cwd=tmp)  # sdist, then the wheel from it
    (wheel,) = (tmp / "dist").glob("traceloupe-*.whl")
    venv = tmp / "venv"
    # No pip of its own (ensurepip writes thousands of files): the outer pip installs into it.
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp)
    pip = (sys.executable, "-m", "pip", "--python", venv / "bin" / "python")
    _run(*pip, "install", "--quiet", "--no-deps", "--no-index", wheel, cwd=tmp)
    purelib = _run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp)
    Path(purelib.strip(), "outer-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


@pytest.fixture(scope="module")
def demo(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``traceloupe demo`` from the installed wheel, run from a folder outside the checkout; its base URL."""
    cwd = tmp_path_factory.mktemp("demo")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    log = (cwd / "demo.log").open("w")
    process = subprocess.Popen(
        [str(installed / "traceloupe"), "demo", "--port", str(port)], cwd=cwd, env=env, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, (cwd / "demo.log").read_text()
            try:
                _get(f"{base}/")  # any answer: the server is up (what it answers is the tests' business)
                break
            except OSError:
                pass
            assert time.monotonic() < deadline, (cwd / "demo.log").read_text()
            time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.mark.slow
def test_the_installed_wheel_runs_from_its_own_files(installed: Path, tmp_path: Path) -> None:
    where = _run(
        installed / "python",
        "-c",
        "import core, web, web.settings as s; print(core.__file__, web.__file__, s.TEMPLATES_DIR, s.STATIC_DIR)",
        cwd=tmp_path,
    ).split()
    site = str(installed.parent)
    assert all(path.startswith(site) for path in where), where
    assert not any(path.startswith(str(ROOT)) for path in where), where
    shipped = _run(
        installed / "python",
        "-c",
        "import importlib.resources as r; print(r.files('core').joinpath('FORMAT.md').read_text())",
        cwd=tmp_path,
    )
    assert shipped.startswith("# The stored message format")  # the format's documentation travels with the wheel
    table = _run(installed / "python", "-c", "import core.models as m; print(m.model_table().source)", cwd=tmp_path)
    assert "LiteLLM model map" in table  # the model table's data travels with the wheel


@pytest.mark.slow
def test_the_installed_wheel_serves_every_page_with_its_css_and_js(demo: str) -> None:
    assets: set[str] = set()
    for page in PAGES:
        status, kind, body = _get(f"{demo}{page}")
        assert status == 200 and kind.startswith("text/html"), (page, status, body[:300])
        assets.update(_ASSET.findall(body.decode()))
    missing, _, body = _get(f"{demo}/conversations/no-such-conversation")
    assert missing == 404 and b"<html" in body  # the error page is a template too
    assert {a for a in assets if a.endswith(".css")} and {a for a in assets if a.endswith(".js")}, assets
    for asset in sorted(assets):
        status, _, body = _get(f"{demo}{asset}")
        assert status == 200 and body, asset
