"""Player accounts with passwords: sign-up, password check with lockout, password change, and
refresh tokens (rotated on each use; a reused one revokes all of the player's).

Passwords are hashed with argon2id (argon2-cffi, RFC 9106 low-memory parameters by default). The
methods here are synchronous and CPU-bound (hashing): the service runs them in a worker thread.
Time is an input (``now``, unix seconds)."""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
import threading
from dataclasses import dataclass

import argon2
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from cardroom.core import ids
from cardroom.runtime import errors
from gateway.account_store import Account, AccountStore, RefreshToken

MIN_PASSWORD = 8
MAX_PASSWORD = 128
REFRESH_PREFIX = "crr1."
#: Expired refresh tokens are purged from the store at most this often (s).
PURGE_EVERY = 3600.0

BAD_CREDENTIALS = "BAD_CREDENTIALS"
ACCOUNT_LOCKED = "ACCOUNT_LOCKED"
PLAYER_TAKEN = "PLAYER_TAKEN"
WEAK_PASSWORD = "WEAK_PASSWORD"
REFRESH_INVALID = "REFRESH_INVALID"


@dataclass(frozen=True, slots=True)
class LoginPolicy:
    max_failures: int = 5
    """Consecutive wrong passwords that lock the account."""
    lockout_seconds: float = 900.0
    refresh_ttl: float = 30 * 24 * 3600.0


def hasher(time_cost: int = 3, memory_kib: int = 65536, parallelism: int = 4) -> argon2.PasswordHasher:
    return argon2.PasswordHasher(
        time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism, type=argon2.Type.ID
    )


def verify_password_rules(password: str, player_id: str, field: str = "password") -> None:
    """INVALID_ARGUMENT (reason WEAK_PASSWORD) unless 8-128 characters and not the player id."""
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise errors.invalid(
            f"{field}: {MIN_PASSWORD} to {MAX_PASSWORD} characters, got {len(password)}",
            reason=WEAK_PASSWORD,
            field=field,
        )
    if password.lower() == player_id.lower():
        raise errors.invalid(f"{field}: must not be the player id", reason=WEAK_PASSWORD, field=field)


def refresh_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _bad_credentials() -> errors.ServiceError:
    return errors.unauthenticated("wrong player id or password", reason=BAD_CREDENTIALS)


def _locked(until: float, now: float) -> errors.ServiceError:
    return errors.exhausted(
        f"too many wrong passwords: this account is locked for {max(1, int(until - now + 0.999))} more seconds",
        reason=ACCOUNT_LOCKED,
    )


class Accounts:
    def __init__(self, store: AccountStore, policy: LoginPolicy, password_hasher: argon2.PasswordHasher) -> None:
        self.store = store
        self.policy = policy
        self.hasher = password_hasher
        self._lock = threading.Lock()  # read-modify-write of an account's counters
        self._purged_at = float("-inf")
        self._dummy = ""
        """A hash to check unknown players' passwords against (made at the first need)."""

    def has_password(self, player_id: str) -> bool:
        return self.store.get(player_id) is not None

    # ---------------------------------------------------------------- sign-up

    def can_sign_up(self, player_id: str) -> bool:
        return ids.is_player_id(player_id) and self.store.get(player_id) is None

    def verify_sign_up(self, player_id: str, password: str) -> str:
        """The player id, or INVALID_ARGUMENT / ALREADY_EXISTS saying why not."""
        player = ids.verify_player_id(player_id)
        verify_password_rules(password, player)
        if self.store.get(player) is not None:
            raise errors.exists(f"player id {player!r} is taken: choose another", reason=PLAYER_TAKEN)
        return player

    def sign_up(self, player_id: str, password: str, now: float) -> Account:
        player = self.verify_sign_up(player_id, password)
        account = Account(player, self.hasher.hash(password), now, password_changed_at=now)
        if not self.store.create(account):
            raise errors.exists(f"player id {player!r} is taken: choose another", reason=PLAYER_TAKEN)
        return account

    # ---------------------------------------------------------------- login

    def verify_login(self, player_id: str, password: str, now: float) -> Account:
        """The account when the password is right; a wrong one counts towards the lockout.

        UNAUTHENTICATED (BAD_CREDENTIALS) for an unknown player or a wrong password (the same
        message: no telling which ids exist); RESOURCE_EXHAUSTED (ACCOUNT_LOCKED) while locked."""
        account = self.store.get(player_id) if ids.is_player_id(player_id) else None
        if account is None:
            if not self._dummy:
                self._dummy = self.hasher.hash(secrets.token_hex(16))
            self._check(self._dummy, password)  # about as slow as a real check
            raise _bad_credentials()
        if account.locked_until > now:
            raise _locked(account.locked_until, now)
        if self._check(account.password_hash, password):
            with self._lock:
                current = self.store.get(player_id) or account
                changes: dict[str, object] = {"failed_logins": 0, "locked_until": 0.0}
                if self.hasher.check_needs_rehash(current.password_hash):
                    changes["password_hash"] = self.hasher.hash(password)
                if current.failed_logins or current.locked_until or "password_hash" in changes:
                    self.store.update(dataclasses.replace(current, **changes))  # type: ignore[arg-type]
                return current
        with self._lock:
            current = self.store.get(player_id) or account
            failures = current.failed_logins + 1
            if failures >= self.policy.max_failures:
                until = now + self.policy.lockout_seconds
                self.store.update(dataclasses.replace(current, failed_logins=0, locked_until=until))
                raise _locked(until, now)
            self.store.update(dataclasses.replace(current, failed_logins=failures))
        raise _bad_credentials()

    def _check(self, password_hash: str, password: str) -> bool:
        try:
            return self.hasher.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    # ---------------------------------------------------------------- password change

    def change_password(self, player_id: str, old: str, new: str, now: float) -> Account:
        """Check ``old`` (counting towards the lockout), set ``new``, revoke every refresh token."""
        verify_password_rules(new, player_id, field="new_password")
        account = self.verify_login(player_id, old, now)
        if old == new:
            raise errors.invalid("new_password: the same as the old one", reason=WEAK_PASSWORD, field="new_password")
        changed = dataclasses.replace(
            account, password_hash=self.hasher.hash(new), password_changed_at=now, failed_logins=0, locked_until=0.0
        )
        self.store.update(changed)
        self.store.revoke_refresh(player_id)
        return changed

    # ---------------------------------------------------------------- refresh tokens

    def issue_refresh(self, player_id: str, now: float) -> tuple[str, float]:
        """A new refresh token for the player and its expiry."""
        if now - self._purged_at >= PURGE_EVERY:
            self._purged_at = now
            self.store.purge_refresh(now)
        token = REFRESH_PREFIX + secrets.token_urlsafe(32)
        expires = now + self.policy.refresh_ttl
        self.store.add_refresh(RefreshToken(refresh_hash(token), player_id, expires))
        return token, expires

    def redeem_refresh(self, token: str, now: float) -> str:
        """The player of a valid unused refresh token, which is now used up. A token used a
        second time (stolen and replayed, or replayed by the thief after the owner) revokes all
        of the player's refresh tokens: both must log in again."""
        invalid = errors.unauthenticated("refresh token invalid or expired: log in again", reason=REFRESH_INVALID)
        if not token.startswith(REFRESH_PREFIX) or len(token) > 100:
            raise invalid
        stored = self.store.get_refresh(refresh_hash(token))
        if stored is None or stored.expires_at <= now:
            raise invalid
        if not self.store.use_refresh(stored.token_hash):
            self.store.revoke_refresh(stored.player_id)
            raise invalid
        return stored.player_id
