"""Signed render links (docs/render-links.md), signed exactly as the server checks them.

The signature is the lower-case hex HMAC-SHA256, keyed with the key's signing secret, of the query
string before ``&signature=``: the options in the order given, then ``key`` and ``expires``,
form-encoded as the WHATWG URLSearchParams serializer does (space as ``+``; only ``A-Z a-z 0-9 * - . _``
left as they are). Python's ``urllib.parse.quote_plus`` differs on ``~`` and ``*``, so the encoder is
written out here; ``clients/vectors/render-links.json`` pins it byte for byte.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["RENDER_PATH", "sign_render_link", "form_encode", "flatten_options", "render_link_signature"]

RENDER_PATH = "/api/render"

_UNRESERVED = frozenset(b"*-._0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

Options = Union[Mapping[str, Any], Sequence[Tuple[str, Any]]]


def _encode_component(text: str) -> str:
    out: List[str] = []
    for byte in text.encode("utf-8"):
        if byte in _UNRESERVED:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def form_encode(pairs: Iterable[Tuple[str, str]]) -> str:
    """``application/x-www-form-urlencoded`` exactly as URLSearchParams.toString() writes it."""
    return "&".join(f"{_encode_component(name)}={_encode_component(value)}" for name, value in pairs)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def flatten_options(options: Options) -> List[Tuple[str, str]]:
    """Capture options as link parameters, in order: booleans as ``true``/``false``, lists repeated
    (``hideSelectors``), objects with dotted names (``pdf.margin.top``); None is left out."""
    items = options.items() if isinstance(options, Mapping) else options
    pairs: List[Tuple[str, str]] = []

    def add(name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, Mapping):
            for child, child_value in value.items():
                add(f"{name}.{child}", child_value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                add(name, item)
        else:
            pairs.append((name, _text(value)))

    for name, value in items:
        add(name, value)
    return pairs


def render_link_signature(signed_query: str, signing_secret: str) -> str:
    return hmac.new(signing_secret.encode("utf-8"), signed_query.encode("utf-8"), hashlib.sha256).hexdigest()


def sign_render_link(
    origin: str,
    options: Options,
    *,
    key_id: str,
    signing_secret: str,
    expires: Optional[int] = None,
    expires_in: Optional[int] = None,
) -> str:
    """A signed ``GET /api/render`` link for ``<img src>``.

    ``origin`` is the API's address (``https://viewfinder.example.com``, a path prefix allowed);
    ``options`` the capture options, ``url`` first, as a dict or a list of pairs; ``key_id`` the key's
    id (``key_…``, never the key itself) and ``signing_secret`` its ``vfs_…`` secret. ``expires`` is a
    Unix time, or ``expires_in`` seconds from now; without either the link never expires.
    """
    if expires is not None and expires_in is not None:
        raise ValueError("give expires or expires_in, not both")
    if expires_in is not None:
        expires = int(time.time()) + int(expires_in)
    pairs = flatten_options(options)
    pairs.append(("key", key_id))
    if expires is not None:
        pairs.append(("expires", str(int(expires))))
    signed = form_encode(pairs)
    return f"{origin.rstrip('/')}{RENDER_PATH}?{signed}&signature={render_link_signature(signed, signing_secret)}"
