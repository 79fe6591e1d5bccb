"""Accounts of a shared server: roles, Argon2id passwords, server-side sessions, the login limit, the audit log."""

from core.accounts.api import Accounts, Login, LoginRefused, Principal
from core.accounts.policy import LoginPolicy
from core.accounts.roles import ROLE_NAMES, Role

__all__ = ["ROLE_NAMES", "Accounts", "Login", "LoginPolicy", "LoginRefused", "Principal", "Role"]
