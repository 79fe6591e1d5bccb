"""The three roles of a shared server, each allowed what the one below it is and more."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What an account may do: ``viewer`` reads; ``reviewer`` also imports, replays, saves and runs suites;
    ``admin`` also manages accounts and keys."""

    VIEWER = "viewer"
    REVIEWER = "reviewer"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """Higher ranks hold every permission of the lower ones."""
        return ROLE_ORDER.index(self)

    def allows(self, needed: Role) -> bool:
        """True when this role may do what ``needed`` may."""
        return self.rank >= needed.rank


ROLE_ORDER: tuple[Role, ...] = (Role.VIEWER, Role.REVIEWER, Role.ADMIN)
ROLE_NAMES: tuple[str, ...] = tuple(r.value for r in ROLE_ORDER)
