"""What a page shows of a build, as plain values: a built request's facts, rendered windows, and their JSON forms.

The payload and diff pages render only from these (``web.bodies.digest``), whether they were just
made from a build or read back from the store, so a page from a stored digest is the page a fresh
build gives, byte for byte. Every text that can quote the trace is masked before it gets here.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from core.preflight import CapabilityReport, Finding
from core.preflight.check import Preflight
from core.preflight.report import Uncarried
from core.providers import RequestResult
from web.bodies.builder import Built, Damaged, FindingView
from web.bodies.jsonview import Mark, Rendered, Token
from web.bodies.tools import ToolsSection, tools_section
from web.bodies.windows import Layout
from web.timeline.order import msg_anchor


@dataclass(frozen=True, slots=True)
class BuildFacts:
    """A build as the pages show it: provider, model, repair, the damaged record or the capability report."""

    provider: str
    upto: str | None
    repaired: bool
    model: str
    damaged: Damaged | None
    healed: tuple[str, ...] = ()
    report: CapabilityReport | None = None
    tools: ToolsSection | None = None
    """The body's tools section, with the windows of ``layout`` (None without tools, or without a layout)."""

    @classmethod
    def of(cls, built: Built, layout: Layout | None = None) -> BuildFacts:
        result = built.result
        model = result.model if result is not None else ""
        tools = None
        if result is not None and layout is not None:
            tools = tools_section(result.body, tools_source(result), layout)
        return cls(built.provider, built.upto, built.repaired, model, built.damaged, built.healed, built.report, tools)

    @property
    def findings(self) -> list[FindingView]:
        """The preflight findings, each with its card's anchor."""
        if self.report is None:
            return []
        return [FindingView(f, msg_anchor(f.msg_id) if f.msg_id else None) for f in self.report.verdict.findings]

    def to_json(self) -> dict[str, Any]:
        report = self.report
        return {
            "provider": self.provider,
            "upto": self.upto,
            "repaired": self.repaired,
            "model": self.model,
            "damaged": None if self.damaged is None else list(_damaged_fields(self.damaged)),
            "healed": list(self.healed),
            "report": None
            if report is None
            else {
                "cannot_carry": [[u.kind, list(u.msg_ids), u.what_happens] for u in report.cannot_carry],
                "verdict": [report.verdict.provider, report.verdict.model, report.verdict.profile],
                "findings": [
                    [f.rule, f.severity, f.authority, f.pointer, f.detail, f.msg_id] for f in report.verdict.findings
                ],
            },
            "tools": None if self.tools is None else self.tools.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BuildFacts:
        raw = data["report"]
        report = None
        if raw is not None:
            findings = tuple(Finding(*f) for f in raw["findings"])
            report = CapabilityReport(
                tuple(Uncarried(kind, tuple(ids), what) for kind, ids, what in raw["cannot_carry"]),
                Preflight(raw["verdict"][0], raw["verdict"][1], raw["verdict"][2], findings),
            )
        damaged = Damaged(*data["damaged"]) if data["damaged"] is not None else None
        tools = None if data["tools"] is None else ToolsSection.from_json(data["tools"])
        return cls(
            data["provider"], data["upto"], data["repaired"], data["model"], damaged, tuple(data["healed"]), report,
            tools,
        )  # fmt: skip


def tools_source(result: RequestResult) -> str:
    """Where a built body's tools came from: ``stored``, ``given``, ``inferred`` or ``none``."""
    return result.tools_source


def _damaged_fields(damaged: Damaged) -> tuple[str, ...]:
    return (damaged.msg_id, damaged.role, damaged.error_type, damaged.message, damaged.anchor)


def encode_rendered(rendered: Rendered) -> list[Any]:
    """A rendered window as JSON: its depth and its tokens, each without its trailing defaults."""
    tokens: list[Any] = []
    for token in rendered.tokens:
        kind, text, pointer, mark, secret = token
        if secret:
            tokens.append([kind, text, pointer, list(mark) if mark else None, secret])
        elif mark is not None:
            tokens.append([kind, text, pointer, list(mark)])
        elif pointer:
            tokens.append([kind, text, pointer])
        else:
            tokens.append([kind, text])
    return [rendered.depth, tokens]


def decode_rendered(data: list[Any]) -> Rendered:
    """The rendered window :func:`encode_rendered` wrote."""
    depth, raw = data
    tokens = []
    for item in raw:
        if len(item) > 3 and item[3] is not None:
            item = [*item[:3], Mark(*item[3]), *item[4:]]
        tokens.append(Token(*item))
    return Rendered(tokens, depth)


def pack(value: Any) -> bytes:
    """A JSON value as stored in a digest: compact UTF-8 (lone surrogates kept), compressed."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def unpack(data: bytes) -> Any:
    """The value :func:`pack` stored."""
    return json.loads(zlib.decompress(data).decode("utf-8", "surrogatepass"))
