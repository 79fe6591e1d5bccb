"""Arize Phoenix for the side-by-side ingest benchmark: installed from PyPI into a venv of its own, started on SQLite.

The venv lives under ``~/.cache/traceloupe-bench`` (``TRACELOUPE_BENCH_CACHE`` elsewhere) and is made once: a
rerun with the same pinned version reuses it. Phoenix listens on loopback, keeps its SQLite database in a
working directory of the caller's, and takes OTLP/HTTP exports on ``/v1/traces`` of its port
(https://arize.com/docs/phoenix/self-hosting/configuration). What it has stored is read through its GraphQL API
(``/graphql``), as its UI reads it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

PHOENIX_VERSION = "20.26.1"
"""The ``arize-phoenix`` release the figures in bench/PERFORMANCE.md were measured with."""
CACHE = Path(os.environ.get("TRACELOUPE_BENCH_CACHE", Path.home() / ".cache" / "traceloupe-bench"))


def venv_python(version: str = PHOENIX_VERSION) -> Path:
    """The Python of a venv holding ``arize-phoenix==version``, made (``python -m venv``, pip) on first use."""
    venv = CACHE / f"phoenix-{version}-venv"
    python = venv / "bin" / "python"
    marker = venv / "installed"
    if marker.exists():
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"installing arize-phoenix=={version} into {venv} (once)", flush=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"arize-phoenix=={version}"]
    subprocess.run(pip, check=True)
    marker.write_text(version)
    return python


def start(python: Path, working_dir: Path, port: int, grpc_port: int, log: Path) -> subprocess.Popen[bytes]:
    """``phoenix serve`` on 127.0.0.1:``port`` over a SQLite database in ``working_dir``; its output to ``log``."""
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    env.pop("PHOENIX_SQL_DATABASE_URL", None)  # SQLite in the working directory
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(python), "-m", "phoenix.server.main", "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
        )


def wait_until_up(base: str, process: subprocess.Popen[bytes], timeout: float = 900) -> None:
    """Until Phoenix answers its health check (its first start migrates the database)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"phoenix exited with {process.returncode} before it answered")
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"phoenix did not answer within {timeout} s")


def _graphql(client: httpx.Client, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = client.post("/graphql", json={"query": query, "variables": variables or {}}, timeout=60)
    answer.raise_for_status()
    document = answer.json()
    if document.get("errors"):
        raise RuntimeError(f"phoenix GraphQL: {document['errors'][:2]}")
    return dict(document["data"])


_PROJECTS = "{ projects { edges { node { id name traceCount recordCount } } } }"
_SESSIONS = """
query($id: ID!, $after: String) {
  node(id: $id) { ... on Project {
    sessions(first: 1000, after: $after) {
      edges { node { sessionId numTraces } }
      pageInfo { hasNextPage endCursor }
    }
  } }
}
"""


def project_counts(client: httpx.Client, project: str) -> tuple[str, int, int] | None:
    """The project's id, its traces and its spans as Phoenix's API counts them; None before it exists."""
    for edge in _graphql(client, _PROJECTS)["projects"]["edges"]:
        node = edge["node"]
        if node["name"] == project:
            return str(node["id"]), int(node["traceCount"]), int(node["recordCount"])
    return None


def session_traces(client: httpx.Client, project_id: str) -> dict[str, int]:
    """Each session of the project (a conversation) and how many traces (turns) it lists."""
    found: dict[str, int] = {}
    after: str | None = None
    while True:
        page = _graphql(client, _SESSIONS, {"id": project_id, "after": after})["node"]["sessions"]
        for edge in page["edges"]:
            found[edge["node"]["sessionId"]] = int(edge["node"]["numTraces"])
        if not page["pageInfo"]["hasNextPage"]:
            return found
        after = page["pageInfo"]["endCursor"]
