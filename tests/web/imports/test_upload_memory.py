"""A large import hands its memory back: the server process must not keep the parsed file's pages afterwards.

Measured in a child process (RSS is per process, and other tests' garbage would blur it).
The import itself needs memory proportional to the file; what matters here is what stays.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FILE_MIB = 8
MAX_RETAINED_PER_FILE_BYTE = 3  # parsed records take several times the file; trimmed, most of it goes back

CHILD = """
import gc, json, sys
from litestar.testing import TestClient
from tests.web.web_corpus import BASE_URL, csrf_cookie, make_app

def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

size = int(sys.argv[1]) * 1024 * 1024
lines, n, i = [], 0, 0
while n < size:
    line = json.dumps({"role": "user" if i % 2 == 0 else "assistant", "msg_type": "text",
                       "content": "hello world " * 40, "msg_id": f"m{i}", "conversation_id": f"c{i // 1000}"}) + "\\n"
    lines.append(line)
    n += len(line)
    i += 1
data = "".join(lines).encode()
del lines
with TestClient(make_app([]), base_url=BASE_URL) as client:
    token = csrf_cookie(client.get("/import").cookies)
    gc.collect()
    before = rss_kib()
    response = client.post("/import", files={"files": ("big.jsonl", data)}, data={"_csrf_token": token})
    assert response.status_code == 200, response.text[:300]
    del response
    gc.collect()
    after = rss_kib()
print(json.dumps({"before": before, "after": after, "file": len(data) // 1024}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
def test_memory_exhaustion_large_import_gives_memory_back() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(FILE_MIB)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    retained = figures["after"] - figures["before"]
    assert retained < MAX_RETAINED_PER_FILE_BYTE * figures["file"], figures
