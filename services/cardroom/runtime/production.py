"""Production mode (``CARDROOM_MODE=production``): a service refuses to start on a development set-up.

Every service must have its certificate (``TLS_DIR``: mutual TLS between services), and each secret of
:data:`REQUIRED_SECRETS` must be set, at least :data:`MIN_SECRET_CHARS` long and not a placeholder
(the ``GATEWAY_SECRET: change-me`` that compose used to ship lets anyone sign a login token). Outside
production mode (``make run``, the tests) nothing is required: the gateway then makes a random secret.
"""

from __future__ import annotations

import os

MODE_VARIABLE = "CARDROOM_MODE"
#: The secrets each service needs in production, by environment variable.
REQUIRED_SECRETS: dict[str, tuple[str, ...]] = {"gateway": ("GATEWAY_SECRET",)}
MIN_SECRET_CHARS = 32
PLACEHOLDERS = frozenset({"change-me", "changeme", "secret", "password", "e2e-gateway-secret", "test"})


def is_production() -> bool:
    return os.environ.get(MODE_VARIABLE, "").strip().lower() == "production"


def production_problems(service: str, env: dict[str, str] | None = None) -> list[str]:
    """What keeps ``service`` from starting in production mode (empty: nothing)."""
    env = dict(os.environ) if env is None else env
    problems = []
    if not env.get("TLS_DIR", "").strip():
        problems.append("TLS_DIR is not set (services talk to each other with mutual TLS only)")
    for name in REQUIRED_SECRETS.get(service, ()):
        value = env.get(name, "").strip()
        if not value:
            problems.append(f"{name} is not set")
        elif value.lower() in PLACEHOLDERS or len(value) < MIN_SECRET_CHARS:
            problems.append(
                f"{name} is a placeholder or shorter than {MIN_SECRET_CHARS} characters "
                "(make one: python -c 'import secrets; print(secrets.token_hex(32))')"
            )
    return problems


def verify_production(service: str) -> None:
    """Exit (non-zero, a clear message) when production mode is on and the set-up is not fit for it."""
    if not is_production():
        return
    problems = production_problems(service)
    if problems:
        raise SystemExit(
            f"{service}: refusing to start in production mode ({MODE_VARIABLE}=production): " + "; ".join(problems)
        )
