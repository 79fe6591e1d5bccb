"""Parse rendered pages and find anything live that trace data could have smuggled in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from html import unescape
from html.parser import HTMLParser

# Tags our templates never emit: one of these in a page can only come from trace data.
FORBIDDEN_TAGS = frozenset(
    {
        "iframe",
        "object",
        "embed",
        "style",
        "base",
        "frame",
        "frameset",
        "svg",
        "math",
        "img",
        "video",
        "audio",
        "source",
    }
)
# Static files are linked by content-hashed name (web/assets.py); the plain name is the same file.
KNOWN_LINKS = re.compile(r"^(/static/(app|runs|suites|windows)(\.[0-9a-f]{12})?\.css|data:,)$")
KNOWN_FORMS = frozenset({"/check", "/", "/import", "/suites"})
# The Re-run and Replay steps forms, and a suite's Run form.
_RUN_FORM = re.compile(r"^/(conversations/[^/?#]+/(step-)?runs|suites/[^/?#]+/runs)$")
# The payload and diff pages' selectors, and the timeline's kind filter (the conversation page itself).
_GET_FORM = re.compile(r"^/conversations/[^?#]+?(/payload/[^/?#]+|/diff)?$")
_SCRIPT_SRC = re.compile(r"^/static/(app|runs|timeline|windows|vendor/htmx-\d+\.\d+\.\d+\.min)(\.[0-9a-f]{12})?\.js$")
# A placeholder of a body's window (payload and diff pages) loads that window of this page's body, nothing else.
_WINDOW_GET = re.compile(r"^/conversations/[^/?#]+/(payload/[^/?#]+|diff)/window\?")
# The only swap targets the app's own markup names: the payload page's phases panel, the Re-run live region,
# the diff summary's "show more" item (replaced by the next changes).
KNOWN_TARGETS = frozenset(
    {("a", "#payload-phases"), ("form", "#runs-live"), ("a", "closest li"), ("form", "#payload-panel"),
     ("form", "#diff-panel")}
)  # fmt: skip
URL_ATTRS = frozenset({"href", "src", "action", "formaction", "data-src", "xlink:href", "poster", "srcset"})
_CONTROL = re.compile(r"[\x00-\x20]")
_INLINE_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$")
# The only htmx attributes the templates write: the CSRF header and history switch on <body>,
# the next-page link of the timeline, and hx-disable on every card.
ALLOWED_HX = {
    ("body", "hx-headers"),
    ("body", "hx-history"),
    ("a", "hx-get"),
    ("a", "hx-trigger"),
    ("a", "hx-swap"),
    ("a", "hx-target"),
    ("article", "hx-disable"),
    # A window placeholder of a highlighted body: it replaces itself with its window.
    ("span", "hx-get"),
    ("span", "hx-trigger"),
    ("span", "hx-swap"),
    ("span", "hx-sync"),
    # The conversation's Re-run form (outside every card), posting to its own action.
    ("form", "hx-post"),
    ("form", "hx-target"),
    ("form", "hx-swap"),
    ("form", "hx-disabled-elt"),
    # The request options form of the payload and diff pages: a GET of its own action into the body panel.
    ("form", "hx-get"),
    ("form", "hx-push-url"),
    # A suite run's live region, polling its own page while the run goes on.
    ("section", "hx-get"),
    ("section", "hx-trigger"),
    ("section", "hx-swap"),
}


@dataclass
class Element:
    tag: str
    attrs: list[tuple[str, str | None]]

    def get(self, name: str, default: str | None = None) -> str | None:
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def has(self, name: str) -> bool:
        """True when the attribute is present, valueless (``data-jump``) or not."""
        return any(key == name for key, _ in self.attrs)


@dataclass
class ParsedPage(HTMLParser):
    elements: list[Element] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    script_bodies: list[str] = field(default_factory=list)
    _in_script: bool = False

    def __post_init__(self) -> None:
        HTMLParser.__init__(self, convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, attrs))
        self._in_script = tag == "script"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_bodies.append(data)
        else:
            self.text_parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)


@lru_cache(maxsize=16)
def parse(html: str) -> ParsedPage:
    """The page's elements and text. A page is checked by several helpers (``live_content``, text and link
    checks), so its parse is kept: the same HTML is parsed once. Callers read the result and never change it."""
    page = ParsedPage()
    page.feed(html)
    page.close()
    return page


def live_content(html: str) -> list[str]:
    """Every element or attribute in the page that could run script or fire a request it should not."""
    page = parse(html)
    problems: list[str] = []
    for body in page.script_bodies:
        if body.strip():
            problems.append(f"inline script body: {body[:60]!r}")
    for el in page.elements:
        if el.tag in FORBIDDEN_TAGS:
            problems.append(f"<{el.tag}> element")
        if el.tag == "script" and not _SCRIPT_SRC.match(el.get("src") or ""):
            problems.append(f"<script src={el.get('src')!r}>")
        if el.tag == "meta" and el.get("http-equiv") is not None:
            problems.append("<meta http-equiv>")
        if el.tag == "link" and not KNOWN_LINKS.match(el.get("href") or ""):
            problems.append(f"<link href={el.get('href')!r}>")
        if (
            el.tag == "form"
            and el.get("action") not in KNOWN_FORMS
            and not _RUN_FORM.match(el.get("action") or "")
            and not ((el.get("method") or "get").lower() == "get" and _GET_FORM.match(el.get("action") or ""))
        ):
            problems.append(f"<form action={el.get('action')!r}>")
        if el.tag == "form" and el.has("hx-post") and el.get("hx-post") != el.get("action"):
            problems.append(f"<form hx-post={el.get('hx-post')!r}> that is not its own action")
        for name, value in el.attrs:
            name = name.lower()
            if name.startswith("on"):
                problems.append(f"<{el.tag} {name}=...>")
            if name.startswith(("hx-", "data-hx-")):
                if (el.tag, name) not in ALLOWED_HX:
                    problems.append(f"<{el.tag} {name}=...>")
                elif name == "hx-get" and el.tag == "span":
                    if not _WINDOW_GET.match(value or ""):
                        problems.append(f"<span hx-get={value!r}> that is not a window of the body")
                elif name == "hx-get" and el.tag == "section" and not (value or "").startswith("/suite-runs/"):
                    problems.append(f"<section hx-get={value!r}> that is not a suite run's live region")
                elif (
                    name == "hx-get"
                    and el.tag != "section"
                    and (value != el.get("action" if el.tag == "form" else "href")
                         or not (value or "").startswith("/conversations/"))
                ):  # fmt: skip
                    problems.append(f"<a hx-get={value!r}> that is not the next-page or phases link")
                elif name == "hx-target" and (el.tag, value) not in KNOWN_TARGETS:
                    problems.append(f"<{el.tag} hx-target={value!r}>")
            if name in URL_ATTRS and value is not None:
                cleaned = _CONTROL.sub("", value).lower()
                scheme = cleaned.split(":", 1)[0] if ":" in cleaned.split("/", 1)[0] else ""
                if scheme in ("javascript", "vbscript"):
                    problems.append(f"{name}={value!r}")
                if scheme == "data" and not (value == "data:," or _INLINE_IMAGE.match(value)):
                    problems.append(f"{name}={value[:60]!r}")
            if name == "style":
                problems.append(f"<{el.tag} style=...>")
    return problems


def window_count(html: str) -> int:
    """How many windows the payload page's body has (its panel says so; the page carries a few placeholders)."""
    found = re.search(r"([\d,]+) windows loaded as you scroll", html)
    return int(found.group(1).replace(",", "")) if found else 1


def window_url(html: str, n: int) -> str:
    """The URL of window ``n`` of the payload page's body: a placeholder's, for another window."""
    found = re.search(r'hx-get="([^"]*/window\?[^"]*)"', html)
    assert found is not None, "a body of more than one window"
    plain = re.sub(r"&(?:amp;)?then=1&(?:amp;)?until=\d+", "", found.group(1))
    return re.sub(r"\bn=\d+", f"n={n}", unescape(plain))


def every_window_url(html: str) -> list[str]:
    """The URLs of every window of the payload page's body past the first, in order."""
    return [window_url(html, n) for n in range(1, window_count(html))]
