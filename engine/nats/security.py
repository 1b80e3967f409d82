"""How an apollo process proves who it is to NATS, and how it encrypts the connection.

One :class:`ClientSecurity` per process, built from the ``nats`` settings (config file or
``APOLLO_NATS_*`` variables): a credentials file, an NKey seed file, user and password,
or a token; a CA bundle and, for mutual TLS, a client certificate and key. Secrets stay
inside this object: its ``repr`` and :meth:`describe` name the method, never the secret,
and nothing here logs.
"""

from __future__ import annotations

import logging
import re
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import ConfigError

FILE_KEYS = ("creds_file", "nkey_seed_file", "ca_file", "cert_file", "key_file")
"""Settings that name files; each must be a readable file when set."""


@dataclass(frozen=True)
class ClientSecurity:
    """Credentials and TLS material for one NATS connection (all optional)."""

    creds_file: str | None = None
    nkey_seed_file: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    tls_hostname: str | None = None
    embedded: bool = False
    """The token is the data dir's secret of an embedded server (see engine.nats.server)."""

    @classmethod
    def from_settings(cls, nats: Any, *, embedded_token: str | None = None) -> ClientSecurity:
        """From ``NatsSettings``; ``embedded_token`` applies only when nothing is configured."""
        configured = cls(
            creds_file=nats.creds_file, nkey_seed_file=nats.nkey_seed_file, user=nats.user,
            password=nats.password, token=nats.token, ca_file=nats.ca_file, cert_file=nats.cert_file,
            key_file=nats.key_file, tls_hostname=nats.tls_hostname,
        )
        if embedded_token is not None and not configured.authenticated:
            return cls(token=embedded_token, embedded=True)
        return configured

    @property
    def authenticated(self) -> bool:
        return bool(self.creds_file or self.nkey_seed_file or self.user or self.token)

    @property
    def tls(self) -> bool:
        """TLS material is configured: the connection must be encrypted."""
        return bool(self.ca_file or self.cert_file)

    def describe(self) -> str:
        """How this client authenticates, without the secret (for messages and the doctor)."""
        if self.creds_file:
            return f"credentials file {self.creds_file}"
        if self.nkey_seed_file:
            return f"nkey seed {self.nkey_seed_file}"
        if self.user:
            return f"user {self.user!r}"
        if self.token:
            return "the data dir's secret" if self.embedded else "a token"
        return "no credentials"

    def check(self) -> None:
        """Refuse inconsistent or unreadable settings, naming the key.

        Raises:
            ConfigError: a file that is missing or unreadable, two ways to authenticate at
                once, a password without a user, or half a client certificate.
        """
        for key in FILE_KEYS:
            value = getattr(self, key)
            if value is None:
                continue
            path = Path(value).expanduser()
            if not path.is_file():
                msg = f"nats.{key}: {path} does not exist or is not a file"
                raise ConfigError(msg)
            try:
                path.open("rb").close()
            except OSError as exc:
                msg = f"nats.{key}: cannot read {path}: {exc.strerror or exc}"
                raise ConfigError(msg) from exc
        methods = [name for name in ("creds_file", "nkey_seed_file", "user", "token") if getattr(self, name)]
        if len(methods) > 1:
            msg = f"nats: set one way to authenticate, not {' and '.join(methods)}"
            raise ConfigError(msg)
        if self.password and not self.user:
            msg = "nats.password is set without nats.user"
            raise ConfigError(msg)
        if self.user and not self.password:
            msg = f"nats.user {self.user!r} has no nats.password (APOLLO_NATS_PASSWORD)"
            raise ConfigError(msg)
        if bool(self.cert_file) != bool(self.key_file):
            msg = "nats.cert_file and nats.key_file go together (a client certificate and its key)"
            raise ConfigError(msg)
        if self.nkey_seed_file:
            _check_seed(Path(self.nkey_seed_file).expanduser())
        if self.creds_file:
            _check_creds(Path(self.creds_file).expanduser())

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect``.

        Raises:
            ConfigError: see :meth:`check`, or TLS files that do not hold what they should.
        """
        self.check()
        options: dict[str, Any] = {}
        if self.creds_file:
            options["user_credentials"] = str(Path(self.creds_file).expanduser())
        elif self.nkey_seed_file:
            options["nkeys_seed"] = str(Path(self.nkey_seed_file).expanduser())
        elif self.user:
            options["user"] = self.user
            options["password"] = self.password
        elif self.token:
            options["token"] = self.token
        if self.tls:
            options["tls"] = self.ssl_context()
            _quiet_tls_close()
            if self.tls_hostname:
                options["tls_hostname"] = self.tls_hostname
        return options

    def ssl_context(self) -> ssl.SSLContext:
        """A verifying TLS context: the CA bundle (else the system's) and the client certificate."""
        try:
            context = ssl.create_default_context(
                cafile=str(Path(self.ca_file).expanduser()) if self.ca_file else None
            )
        except (ssl.SSLError, OSError) as exc:
            msg = f"nats.ca_file: {self.ca_file} is not a PEM CA bundle ({_reason(exc)})"
            raise ConfigError(msg) from exc
        if self.cert_file and self.key_file:
            try:
                context.load_cert_chain(str(Path(self.cert_file).expanduser()), str(Path(self.key_file).expanduser()))
            except (ssl.SSLError, OSError) as exc:
                msg = (
                    f"nats.cert_file / nats.key_file: {self.cert_file} and {self.key_file} "
                    f"are not a PEM certificate and its key ({_reason(exc)})"
                )
                raise ConfigError(msg) from exc
        return context


def _check_seed(path: Path) -> None:
    """Refuse a seed file nats-py could not read as a user NKey seed (it would raise mid-connect)."""
    import nkeys

    seed = bytearray(path.read_bytes().strip())  # as nats-py reads it
    try:
        nkeys.from_seed(seed).wipe()
    except Exception as exc:  # nkeys raises its own errors and binascii's for bad base32
        msg = f"nats.nkey_seed_file: {path} is not an NKey seed (one line starting with 'SU', from `nk -gen user`)"
        raise ConfigError(msg) from exc
    finally:
        seed[:] = bytes(len(seed))  # the secret does not linger in memory


def _check_creds(path: Path) -> None:
    """Refuse a file that is not a NATS credentials file (a user JWT and its seed), which
    nats-py would send as an empty login the server then refuses as if it were wrong."""
    text = path.read_bytes()
    if b"BEGIN NATS USER JWT" not in text or b"BEGIN USER NKEY SEED" not in text:
        msg = f"nats.creds_file: {path} is not a NATS credentials file (a user JWT and its NKey seed, from `nsc`)"
        raise ConfigError(msg)


def shown_url(url: str) -> str:
    """``url`` as it may be printed: user info (``nats://user:password@host``) masked."""
    return re.sub(r"(?<=://)[^/@,\s]*@", "***@", url)


def connect_failure(exc: BaseException, url: str, security: ClientSecurity) -> str | None:
    """One line saying why NATS refused this client, or ``None`` when it was not refused.

    Covers the refusals a retry cannot fix: credentials rejected, no credentials where the
    server wants them, a server certificate the CA does not vouch for, a TLS mismatch.
    """
    import nats.errors

    text = f"{exc}".strip() or type(exc).__name__
    lowered = text.lower()
    if isinstance(exc, nats.errors.AuthorizationError) or "authorization violation" in lowered:
        if security.authenticated:
            return f"NATS at {url} refused the credentials ({security.describe()}): authorization violation"
        return (
            f"NATS at {url} requires credentials and none are configured: set APOLLO_NATS_CREDS, "
            "APOLLO_NATS_NKEY_SEED, APOLLO_NATS_USER and APOLLO_NATS_PASSWORD, or APOLLO_NATS_TOKEN"
        )
    if isinstance(exc, nats.errors.InvalidUserCredentialsError):
        return f"NATS credentials ({security.describe()}) are not valid: {text}"
    if isinstance(exc, ssl.SSLCertVerificationError) or "certificate verify failed" in lowered:
        reason = getattr(exc, "verify_message", None) or text
        trusted = f"the CA bundle {security.ca_file}" if security.ca_file else "the system's CAs"
        return f"the TLS certificate of NATS at {url} is not trusted by {trusted}: {reason}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS with NATS at {url} failed: {_reason(exc)}"
    if isinstance(exc, nats.errors.SecureConnRequiredError) or "secure connection required" in lowered:
        return f"NATS at {url} requires TLS: set APOLLO_NATS_CA (its CA bundle) or use a tls:// URL"
    return None


def _reason(exc: BaseException) -> str:
    return getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _quiet_tls_close() -> None:
    """asyncio warns on every TLS connection nats-py closes (its reader protocol asks to keep
    the socket half open, which TLS cannot); that line says nothing to a user."""
    asyncio_log = logging.getLogger("asyncio")
    if not any(isinstance(f, _TlsCloseFilter) for f in asyncio_log.filters):
        asyncio_log.addFilter(_TlsCloseFilter())


class _TlsCloseFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "eof_received() has no effect when using ssl" not in record.getMessage()
