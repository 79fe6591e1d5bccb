"""A kept-alive HTTP/1.1 GET connection on asyncio streams, for the load driver.

The driver shares the machine's cores with the server it measures: httpx spends about 2 ms of CPU
per request, a tenth of a server's. This reads the status line, the headers and the body
(``Content-Length`` or chunked) and nothing more, and reconnects when the server closes.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit


class HTTPFailure(Exception):
    """The connection failed or the answer was not HTTP/1.1 as read here (a transport error)."""


class LeanConnection:
    """One client's connection to ``base`` (``http://host:port``), opened on first use."""

    def __init__(self, base: str, timeout: float) -> None:
        parts = urlsplit(base)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._timeout = timeout
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def get(self, path: str) -> tuple[int, int]:
        """GET ``path``: (status, body bytes). HTTPFailure on a transport error or a timeout."""
        try:
            return await asyncio.wait_for(self._get(path), self._timeout)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
            await self.close()
            raise HTTPFailure(type(exc).__name__) from exc

    async def _get(self, path: str) -> tuple[int, int]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self._host, self._port)
        reader, writer = self._streams
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {self._host}:{self._port}\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if headers.get("transfer-encoding", "").lower() == "chunked":
            size = await _read_chunked(reader)
        else:
            size = int(headers.get("content-length", "0"))
            await reader.readexactly(size)
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, size

    async def close(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()


async def _read_chunked(reader: asyncio.StreamReader) -> int:
    total = 0
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        await reader.readexactly(size + 2)  # the chunk and its CRLF
        total += size
        if size == 0:
            return total
