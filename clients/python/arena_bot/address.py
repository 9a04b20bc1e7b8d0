"""Server addresses as the SDK accepts them: HOST:PORT or unix:PATH, never without a port."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

PORT_MAX = 65535
SCHEMES = ("grpc://", "http://", "grpcs://", "https://", "tls://")
ADDRESS_HELP = "HOST:PORT (e.g. 127.0.0.1:50051, [::1]:50051) or unix:PATH"


def address_problem(text: str, least_port: int = 1, unix: bool = True) -> str | None:
    """What is wrong with a server address, or None. An address is HOST:PORT (an IPv6 host in
    brackets; grpc://, http://, grpcs://, https:// or tls:// in front) or unix:PATH: a port is never
    implied (gRPC would dial 443). The command line (arena/cli/common.py) and the Python SDK
    (clients/python/arena_bot/address.py) have this same function; tests/cli/test_bad_input.py
    holds them to it."""
    if unix and text.startswith("unix:"):
        return None if text.removeprefix("unix:").removeprefix("//") else "no path after unix:"
    rest = next((text[len(s) :] for s in SCHEMES if text.startswith(s)), text)
    if not rest.strip():
        return "no address"
    if rest != rest.strip():
        return "spaces around the address"
    if rest.startswith("["):
        host, bracket, tail = rest[1:].partition("]")
        if not bracket:
            return "no ']' after the IPv6 address"
        if not tail.startswith(":"):
            return "no port after the IPv6 address"
        number = tail[1:]
    else:
        host, colon, number = rest.rpartition(":")
        if not colon:
            return "no port"
        if ":" in host:
            return "an IPv6 address needs brackets, e.g. [::1]:50051"
    if not host:
        return "no host before the port"
    if any(c.isspace() or c in "/?#@" for c in host):
        return f"{host!r} is not a host name"
    if not number:
        return "no port after the ':'"
    if not (number.isascii() and number.isdigit()):
        return f"the port {number!r} is not a number"
    if not least_port <= int(number) <= PORT_MAX:
        lowest = "0 (a free one)" if least_port == 0 else str(least_port)
        return f"the port {int(number)} is not from {lowest} to {PORT_MAX}"
    return None


def check_address(address: str) -> str:
    """`address`, or a ValueError saying what is wrong with it and what an address looks like."""
    problem = address_problem(address)
    if problem is not None:
        raise ValueError(f"server address {address!r}: {problem}; expected {ADDRESS_HELP}")
    return address


def split_addresses(address: str | Sequence[str]) -> list[str]:
    """Server addresses from a list, or from one string with commas."""
    parts = address.split(",") if isinstance(address, str) else list(address)
    return [part.strip() for part in parts if part.strip()]


def balanced_target(addresses: Sequence[str]) -> str | None:
    """A gRPC target that `round_robin` balances over `addresses` (``ipv4:a:p,b:p`` or ``ipv6:…``),
    when all are plain-text IP literals of one family; None otherwise."""
    families = set()
    for address in addresses:
        text = address.removeprefix("grpc://").removeprefix("http://")
        if "://" in text:
            return None  # TLS: the SDK rotates over the addresses itself
        host, _, port = text.rpartition(":")
        if not port.isdigit():
            return None
        try:
            families.add(ipaddress.ip_address(host.strip("[]")).version)
        except ValueError:
            return None  # a host name
    if len(addresses) < 2 or len(families) != 1:
        return None
    scheme = "ipv4:" if families == {4} else "ipv6:"
    return scheme + ",".join(a.removeprefix("grpc://").removeprefix("http://") for a in addresses)
