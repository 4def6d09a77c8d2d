"""Offline verification of the gate's decision attestations.

An attestation is an ES256 JSON Web Token (RFC 7519, RFC 7518 §3.4) that the
gate signs over a decision: its header is ``{"alg": "ES256", "kid": <RFC 7638
thumbprint>, "typ": "qwed-attestation+jwt"}`` and its claims name the node
(``iss`` = ``did:qwed:node:<node ID>``), the agent (``sub``), the action
(``jti``), the decision, the request digest and the decision's log position.
The gate publishes its public keys as a JWKS at ``/.well-known/jwks.json``.

:func:`verify_attestation` checks a token against a JWKS with no network and
no third-party dependency, in the order the gate's own verifier
(``agentgate verify-attestation``) does:

1. the token is at most :data:`MAX_TOKEN_BYTES` and its header is strict
   base64url JSON without ``crit``; no object of the header or the claims
   repeats a member name, exactly or in another case (the gate's rule);
2. ``alg`` is ``ES256`` (``none``, HMAC and every other algorithm are refused
   before any key is touched), ``typ`` is :data:`TYP`, ``kid`` names a key of
   the set;
3. the signature is 64 bytes ``r || s`` with ``1 <= r, s < n`` and
   ``s <= n/2`` (the low-S encoding the gate signs), and verifies with the
   key (ECDSA over P-256 with SHA-256, implemented here);
4. an ``exp`` claim, when present, has not passed;
5. ``iss`` is a node DID.

Every failure raises a subclass of :class:`AttestationError`. A JWKS that
cannot be used (not JSON, a key off the curve, a duplicate kid, no P-256 key)
raises :class:`InvalidJWKSError`.

The curve arithmetic works on public values only (verification holds no
secret), so it need not run in constant time. ``u1·G + u2·Q`` is summed from
4-bit window tables of G and of the key (each j·16^i·P in affine form, built
once per key and kept for the 16 most recent keys), so a verification is at
most 128 additions and no doubling; the first verification with a key pays
for its table (some twenty verifications' worth).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Mapping, Union

__all__ = [
    "TYP",
    "ISSUER_PREFIX",
    "MAX_TOKEN_BYTES",
    "MAX_JWKS_BYTES",
    "AttestationError",
    "MalformedTokenError",
    "AlgorithmError",
    "TokenTypeError",
    "UnknownKeyError",
    "SignatureError",
    "ExpiredError",
    "IssuerError",
    "InvalidJWKSError",
    "KeySet",
    "verify_attestation",
    "fetch_jwks",
    "jwk_thumbprint",
]

#: The JOSE ``typ`` header of a decision attestation (RFC 8725 §3.11).
TYP = "qwed-attestation+jwt"
#: The start of an attestation's ``iss`` claim: ``did:qwed:node:<node ID>``.
ISSUER_PREFIX = "did:qwed:node:"
#: The longest token :func:`verify_attestation` reads.
MAX_TOKEN_BYTES = 8 << 10
#: The largest JWKS document :class:`KeySet` parses.
MAX_JWKS_BYTES = 1 << 20

JWKS = Union[Mapping[str, Any], str, bytes]


class AttestationError(Exception):
    """An attestation that does not verify.

    ``reason`` names the check that failed (``"malformed"``, ``"algorithm"``,
    ``"type"``, ``"unknown_key"``, ``"signature"``, ``"expired"``,
    ``"issuer"``, ``"invalid_jwks"``). The message starts with the same
    words as the gate's own verifier's for the same failure (``agentgate
    verify-attestation``), then says what was found.
    """

    reason = "invalid"
    summary = "attestation is invalid"

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        self.message = f"{self.summary}: {detail}" if detail else self.summary
        super().__init__(self.message)


class MalformedTokenError(AttestationError):
    """Not a compact JWS: segments, base64url, JSON, a member name repeated
    (exactly or in another case), ``crit``, or size."""

    reason = "malformed"
    summary = "malformed attestation token"


class AlgorithmError(AttestationError):
    """An ``alg`` other than ES256 (``none``, ``HS256``, ``RS256`` …)."""

    reason = "algorithm"
    summary = "attestation algorithm is not ES256"


class TokenTypeError(AttestationError):
    """A ``typ`` other than :data:`TYP`."""

    reason = "type"
    summary = "token is not a qwed attestation"


class UnknownKeyError(AttestationError):
    """No ``kid``, or a ``kid`` the JWKS lacks."""

    reason = "unknown_key"
    summary = "attestation signing key is unknown"


class SignatureError(AttestationError):
    """A signature that does not verify, or one in its high-S encoding."""

    reason = "signature"
    summary = "attestation signature is invalid"


class ExpiredError(AttestationError):
    """An ``exp`` claim that has passed."""

    reason = "expired"
    summary = "attestation has expired"


class IssuerError(AttestationError):
    """An ``iss`` claim that is not a node DID."""

    reason = "issuer"
    summary = "attestation issuer is not a qwed node"


class InvalidJWKSError(AttestationError):
    """A JWKS that cannot be used: not JSON, too large, a malformed or
    off-curve key, a duplicate ``kid``, or no P-256 signing key at all."""

    reason = "invalid_jwks"
    summary = "invalid JWKS"


# --- P-256 (SEC 2 v2 §2.4.2, FIPS 186-4 D.1.2.3) -----------------------------

_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_GX = 0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296
_GY = 0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5
_COORD = 32

# A point in Jacobian coordinates (X, Y, Z) stands for (X/Z², Y/Z³); Z == 0
# is the point at infinity.
_Jac = tuple[int, int, int]
_INF: _Jac = (1, 1, 0)


def _on_curve(x: int, y: int) -> bool:
    """Reports whether (x, y) is a point of P-256: both coordinates reduced
    and y² = x³ - 3x + b. The cofactor is 1, so such a point has order n."""
    if not (0 <= x < _P and 0 <= y < _P):
        return False
    return (y * y - (x * x * x - 3 * x + _B)) % _P == 0


def _double(pt: _Jac) -> _Jac:
    """2·pt, with the a = -3 doubling formulas ("dbl-2001-b")."""
    x, y, z = pt
    if z == 0 or y == 0:
        return _INF
    delta = z * z % _P
    gamma = y * y % _P
    beta = x * gamma % _P
    alpha = 3 * (x - delta) * (x + delta) % _P
    x3 = (alpha * alpha - 8 * beta) % _P
    z3 = ((y + z) ** 2 - gamma - delta) % _P
    y3 = (alpha * (4 * beta - x3) - 8 * gamma * gamma) % _P
    return (x3, y3, z3)


def _add(p1: _Jac, p2: _Jac) -> _Jac:
    """p1 + p2 for any two points, doubling or infinity included."""
    x1, y1, z1 = p1
    x2, y2, z2 = p2
    if z1 == 0:
        return p2
    if z2 == 0:
        return p1
    z1z1 = z1 * z1 % _P
    z2z2 = z2 * z2 % _P
    u1 = x1 * z2z2 % _P
    u2 = x2 * z1z1 % _P
    s1 = y1 * z2 * z2z2 % _P
    s2 = y2 * z1 * z1z1 % _P
    if u1 == u2:
        return _double(p1) if s1 == s2 else _INF
    h = (u2 - u1) % _P
    r = (s2 - s1) % _P
    hh = h * h % _P
    hhh = h * hh % _P
    v = u1 * hh % _P
    x3 = (r * r - hhh - 2 * v) % _P
    y3 = (r * (v - x3) - s1 * hhh) % _P
    z3 = h * z1 * z2 % _P
    return (x3, y3, z3)


def _add_affine(p1: _Jac, x2: int, y2: int) -> _Jac:
    """p1 + (x2, y2), the second point affine (Z = 1: "madd", four
    multiplications fewer than _add)."""
    x1, y1, z1 = p1
    if z1 == 0:
        return (x2, y2, 1)
    z1z1 = z1 * z1 % _P
    u2 = x2 * z1z1 % _P
    s2 = y2 * z1 * z1z1 % _P
    if x1 == u2:
        return _double(p1) if y1 == s2 else _INF
    h = (u2 - x1) % _P
    r = (s2 - y1) % _P
    hh = h * h % _P
    hhh = h * hh % _P
    v = x1 * hh % _P
    x3 = (r * r - hhh - 2 * v) % _P
    y3 = (r * (v - x3) - y1 * hhh) % _P
    return (x3, y3, h * z1 % _P)


def _affine_x(pt: _Jac) -> int | None:
    """The affine x of pt, None for infinity."""
    x, _, z = pt
    if z == 0:
        return None
    zinv = pow(z, -1, _P)
    return x * zinv * zinv % _P


def _to_affine(points: list[_Jac]) -> list[tuple[int, int]]:
    """The affine forms of points (none at infinity), with one inversion
    for all (Montgomery's trick)."""
    prefix = [1]
    for _, _, z in points:
        prefix.append(prefix[-1] * z % _P)
    inv = pow(prefix[-1], -1, _P)
    out: list[tuple[int, int]] = [(0, 0)] * len(points)
    for i in range(len(points) - 1, -1, -1):
        x, y, z = points[i]
        zinv = inv * prefix[i] % _P  # 1/z_i
        inv = inv * z % _P  # 1/(z_0 … z_{i-1})
        zz = zinv * zinv % _P
        out[i] = (x * zz % _P, y * zz * zinv % _P)
    return out


# Scalars are taken 4 bits at a time: 64 windows of 256 bits.
_WINDOWS = 64


@functools.lru_cache(maxsize=16)
def _window_table(x: int, y: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """For the point P = (x, y): row i holds j·16^i·P for j = 1 … 15, in
    affine coordinates. With it a scalar multiple is at most 64 additions
    and no doubling. Built once per key (and for G) and kept: keys are
    few and long-lived, and public."""
    points: list[_Jac] = []
    base: _Jac = (x, y, 1)
    for _ in range(_WINDOWS):
        row = [base]
        for _ in range(14):
            row.append(_add(row[-1], base))
        points.extend(row)
        for _ in range(4):
            base = _double(base)
    # Each entry is j·16^i·P with 1 ≤ j·16^i ≤ 15·2^252 < n (n is prime and
    # P has order n), so none is the point at infinity.
    affine = _to_affine(points)
    return tuple(tuple(affine[15 * i : 15 * i + 15]) for i in range(_WINDOWS))


def _combine(u1: int, u2: int, qx: int, qy: int) -> _Jac:
    """u1·G + u2·Q (u1, u2 < n) from the window tables of G and Q."""
    g, q = _window_table(_GX, _GY), _window_table(qx, qy)
    acc = _INF
    for i in range(_WINDOWS):
        d = (u1 >> (4 * i)) & 15
        if d:
            acc = _add_affine(acc, *g[i][d - 1])
        d = (u2 >> (4 * i)) & 15
        if d:
            acc = _add_affine(acc, *q[i][d - 1])
    return acc


def _ecdsa_p256_verify(qx: int, qy: int, message: bytes, sig: bytes) -> bool:
    """Verifies an ECDSA P-256 SHA-256 signature r || s (FIPS 186-4 §6.4.2)
    over message with the public key (qx, qy), which the caller has checked
    to be on the curve."""
    if len(sig) != 2 * _COORD:
        return False
    r = int.from_bytes(sig[:_COORD], "big")
    s = int.from_bytes(sig[_COORD:], "big")
    if not (1 <= r < _N and 1 <= s < _N):
        return False
    # The digest has as many bits as n: no truncation.
    e = int.from_bytes(hashlib.sha256(message).digest(), "big")
    w = pow(s, -1, _N)
    x = _affine_x(_combine(e * w % _N, r * w % _N, qx, qy))
    return x is not None and x % _N == r


# --- base64url and JSON ---------------------------------------------------------

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def _b64url_decode(seg: str, what: str, error: type[AttestationError] = MalformedTokenError) -> bytes:
    """Decodes unpadded base64url strictly, as the gate does: no padding, no
    other alphabet, no length of 1 mod 4, and zero unused trailing bits (so
    each value has one encoding)."""
    if not _B64URL.fullmatch(seg) or len(seg) % 4 == 1:
        raise error(f"decoding {what}: not unpadded base64url")
    try:
        raw = base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4))
    except (binascii.Error, ValueError) as exc:
        raise error(f"decoding {what}: {exc}") from None
    if base64.urlsafe_b64encode(raw).decode().rstrip("=") != seg:
        raise error(f"decoding {what}: non-canonical base64url (trailing bits set)")
    return raw


def _b64url_encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _refuse_constant(name: str) -> Any:
    """JSON has no NaN or Infinity; Python's decoder would accept them."""
    raise ValueError(f"{name} is not JSON")


def _fold_char(c: str) -> str:
    """c's simple case folding (Unicode's C and S mappings, as Go's
    decoder compares names): its full folding when one character (``K``,
    the Kelvin sign and ``k`` fold together, ``ſ`` with ``s``, ``ς`` with
    ``σ``), else its lower case when one character (``ẞ`` with ``ß``, never
    ``ß`` with ``ss``), else c. A lone surrogate is U+FFFD, as Go decodes it."""
    if "\ud800" <= c <= "\udfff":
        return "\ufffd"
    f = c.casefold()
    if len(f) == 1:
        return f
    f = c.lower()
    return f if len(f) == 1 else c


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The members of one JSON object of a token (json.loads'
    object_pairs_hook), refusing a name that repeats, exactly or in another
    case: json.loads keeps the last of two equal names and the gate's
    decoder matches claims without regard to case, so such a token could
    name one agent or decision here and another there."""
    seen: dict[str, str] = {}
    for name, _ in pairs:
        folded = "".join(map(_fold_char, name))
        if folded in seen:
            first = seen[folded]
            how = "appears twice" if first == name else f"repeats member {first!r} in another case"
            raise MalformedTokenError(f"member {name!r} {how}")
        seen[folded] = name
    return dict(pairs)


def _json_object(
    raw: bytes,
    what: str,
    error: type[AttestationError] = MalformedTokenError,
    null_ok: bool = False,
    unique: bool = False,
) -> dict[str, Any]:
    """raw as a JSON object; with null_ok, JSON null is an empty object (as
    Go's decoder into a map takes it); with unique, an object (at any depth)
    that repeats a member name, exactly or in another case, is refused."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant, object_pairs_hook=_unique_members if unique else None)
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"decoding {what}: {exc}") from None
    if value is None and null_ok:
        return {}
    if not isinstance(value, dict):
        raise error(f"decoding {what}: not a JSON object")
    return value


# --- JWKS -----------------------------------------------------------------------


def jwk_thumbprint(x: str, y: str) -> str:
    """The RFC 7638 thumbprint of a P-256 key given by its base64url
    coordinates: the base64url SHA-256 of ``{"crv":"P-256","kty":"EC","x":x,"y":y}``
    (required members in lexicographic order, no whitespace). It is the
    ``kid`` of every key the gate creates."""
    canonical = json.dumps({"crv": "P-256", "kty": "EC", "x": x, "y": y}, separators=(",", ":"), sort_keys=True)
    return _b64url_encode(hashlib.sha256(canonical.encode()).digest())


@dataclass(frozen=True)
class _PublicKey:
    x: int
    y: int


def _public_key(index: int, key: Mapping[str, Any]) -> tuple[str, _PublicKey]:
    """Validates one EC JWK (RFC 7518 §6.2) and returns its kid and point."""
    kid = key.get("kid", "")

    def bad(why: str) -> InvalidJWKSError:
        return InvalidJWKSError(f"key {index} (kid {kid!r}): {why}")

    for member in ("kty", "crv", "x", "y", "use", "alg", "kid"):
        if member in key and not isinstance(key[member], str):
            raise bad(f"{member} is not a string")
    if not kid:
        raise bad("missing kid")
    if key.get("crv") != "P-256":
        raise bad(f"curve {key.get('crv')!r} is not P-256")
    if key.get("use", "") not in ("", "sig"):
        raise bad(f"use {key['use']!r} is not sig")
    if key.get("alg", "") not in ("", "ES256"):
        raise bad(f"alg {key['alg']!r} is not ES256")
    try:
        x = _b64url_decode(key.get("x", ""), "x", InvalidJWKSError)
        y = _b64url_decode(key.get("y", ""), "y", InvalidJWKSError)
    except InvalidJWKSError:
        x = y = b""
    if len(x) != _COORD or len(y) != _COORD:
        raise bad("x and y must be 32-byte base64url coordinates")
    pub = _PublicKey(int.from_bytes(x, "big"), int.from_bytes(y, "big"))
    if not _on_curve(pub.x, pub.y):
        raise bad("the point is not on the P-256 curve")
    return kid, pub


class KeySet:
    """A parsed JWKS: its ES256 public keys by ``kid``. Parse once, verify
    many tokens. Immutable, so safe to share between threads.

    Keys whose ``kty`` is not ``EC`` are skipped (they cannot verify ES256);
    an EC key must be a P-256 point with a ``kid``, and its ``use`` and
    ``alg``, when present, must be ``sig`` and ``ES256``.
    """

    __slots__ = ("_keys",)

    def __init__(self, jwks: JWKS) -> None:
        if isinstance(jwks, (str, bytes, bytearray)):
            if len(jwks) > MAX_JWKS_BYTES:
                raise InvalidJWKSError(f"document of {len(jwks)} bytes exceeds {MAX_JWKS_BYTES}")
            raw = jwks.encode() if isinstance(jwks, str) else bytes(jwks)
            doc: Mapping[str, Any] = _json_object(raw, "JWKS", InvalidJWKSError)
        elif isinstance(jwks, Mapping):
            doc = jwks
        else:
            raise InvalidJWKSError(f"a {type(jwks).__name__}, not a document")
        keys = doc.get("keys") or []
        if not isinstance(keys, list):
            raise InvalidJWKSError("keys is not an array")
        found: dict[str, _PublicKey] = {}
        for i, key in enumerate(keys):
            if not isinstance(key, Mapping):
                raise InvalidJWKSError(f"key {i} is not an object")
            if key.get("kty") != "EC":
                continue
            kid, pub = _public_key(i, key)
            if kid in found:
                raise InvalidJWKSError(f"kid {kid!r} appears more than once")
            found[kid] = pub
        if not found:
            raise InvalidJWKSError("no EC P-256 signing key")
        self._keys = found

    @property
    def kids(self) -> list[str]:
        """The key IDs of the set, sorted."""
        return sorted(self._keys)

    def __repr__(self) -> str:
        return f"KeySet(kids={self.kids!r})"

    def verify(self, token: str, *, now: float | None = None) -> dict[str, Any]:
        """Checks token against the set (see the module documentation) and
        returns its claims. ``now`` (Unix seconds) is the time the ``exp``
        claim is compared with; by default the wall clock. Raises an
        :class:`AttestationError` subclass naming the failed check."""
        if not isinstance(token, str):
            raise MalformedTokenError("not a string")
        if len(token) > MAX_TOKEN_BYTES:
            raise MalformedTokenError(f"{len(token)} bytes exceeds {MAX_TOKEN_BYTES}")
        header_seg, dot, _ = token.partition(".")
        if not dot:
            raise MalformedTokenError("not a compact JWS")
        # A header of JSON null has no alg: refused as the algorithm, as the gate does.
        header = _json_object(_b64url_decode(header_seg, "header"), "header", null_ok=True, unique=True)
        if "crit" in header:
            raise MalformedTokenError("critical header extensions are not supported")
        alg, typ, kid = header.get("alg"), header.get("typ"), header.get("kid")
        if alg != "ES256":
            raise AlgorithmError(f"alg {alg!r}")
        if typ != TYP:
            raise TokenTypeError(f"typ {typ!r}, want {TYP!r}")
        if not isinstance(kid, str) or not kid:
            raise UnknownKeyError("header has no kid")
        pub = self._keys.get(kid)
        if pub is None:
            raise UnknownKeyError(f"kid {kid!r} is not in the JWKS")

        parts = token.split(".")
        if len(parts) != 3:
            raise MalformedTokenError(f"{len(parts)} segments, want 3")
        claims = _json_object(_b64url_decode(parts[1], "claims"), "claims", unique=True)
        _check_claim_types(claims)
        sig = _b64url_decode(parts[2], "signature")
        if len(sig) == 2 * _COORD and int.from_bytes(sig[_COORD:], "big") > _N // 2:
            raise SignatureError("high-S signature (only s <= n/2 is accepted)")
        signed = (parts[0] + "." + parts[1]).encode("ascii")
        if not _ecdsa_p256_verify(pub.x, pub.y, signed, sig):
            raise SignatureError("the signature does not verify with the key")

        exp = claims.get("exp")
        if exp is not None:
            clock = time.time() if now is None else now
            if not clock < exp:
                raise ExpiredError(f"exp {exp}, now {int(clock)}")
        iss = claims.get("iss")
        if not isinstance(iss, str) or not iss.startswith(ISSUER_PREFIX) or iss == ISSUER_PREFIX:
            raise IssuerError(f"iss {iss!r}")
        return claims


# The claims the gate's verifier decodes into typed fields, with their JSON
# types: a token whose claim has another type is malformed there, so it is
# here. Numbers exclude booleans (JSON true is not a number).
_STRING_CLAIMS = (
    "iss", "sub", "jti", "decision", "request_digest", "agent_id", "conversation_id",
    "risk_level", "kind", "engine", "status", "outcome_digest", "corrected_digest",
)  # fmt: skip
_INT_CLAIMS = ("iat", "step", "seq", "partition")


def _check_claim_types(claims: Mapping[str, Any]) -> None:
    for name in _STRING_CLAIMS:
        if claims.get(name) is not None and not isinstance(claims[name], str):
            raise MalformedTokenError(f"claim {name} is not a string")
    for name in _INT_CLAIMS:
        value = claims.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise MalformedTokenError(f"claim {name} is not an integer")
    exp = claims.get("exp")
    if exp is not None and (isinstance(exp, bool) or not isinstance(exp, (int, float))):
        raise MalformedTokenError("claim exp is not a number")
    if isinstance(claims.get("seq"), int) and claims["seq"] < 0:
        raise MalformedTokenError("claim seq is negative")


def verify_attestation(token: str, jwks: JWKS | KeySet, *, now: float | None = None) -> dict[str, Any]:
    """Verifies the attestation ``token`` offline against ``jwks`` (a JWKS
    document as a mapping, JSON text or bytes, or a parsed :class:`KeySet`)
    and returns its claims. Raises an :class:`AttestationError` subclass
    (:class:`InvalidJWKSError` for an unusable JWKS). ``now`` (Unix seconds)
    replaces the wall clock for the ``exp`` check."""
    keys = jwks if isinstance(jwks, KeySet) else KeySet(jwks)
    return keys.verify(token, now=now)


def fetch_jwks(client: Any) -> dict[str, Any]:
    """Fetches the gate's JWKS through ``client`` (a :class:`qwed_sdk.QWEDClient`
    or anything with a ``jwks()`` method returning the document) and checks
    that it parses, so a bad document fails here rather than at the first
    verification. Keep the result and verify many tokens with it."""
    doc = client.jwks()
    KeySet(doc)
    return dict(doc)
