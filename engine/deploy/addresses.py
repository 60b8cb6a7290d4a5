"""A scheduler's address, checked before anything is dialled: ``PROTOCOL://HOST:PORT``.

>>> check_scheduler_address("127.0.0.1:8786")
'tcp://127.0.0.1:8786'
>>> check_scheduler_address("tcp://headnode")
Traceback (most recent call last):
...
stealsearch.engine.core.errors.InputError: scheduler address 'tcp://headnode' has no port: expected PROTOCOL://HOST:PORT, e.g. tcp://127.0.0.1:8786
"""
from __future__ import annotations

import ipaddress
import re

from ..core.errors import InputError

#: Protocols a scheduler address may name: distributed's comm backends, less
#: ``inproc`` (reachable only from inside the process that created it).
PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")

_HOSTNAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")


def check_scheduler_address(address) -> str:
    """The normalised ``PROTOCOL://HOST:PORT`` of a scheduler, or InputError.

    Follows distributed's own parsing (``distributed.comm.addressing``): no protocol
    means ``tcp``; the host and port are required (distributed would otherwise fall
    back to a default port and hang on a name such as ``foo``).
    """
    from distributed.comm.addressing import parse_host_port

    if not isinstance(address, str) or not address.strip():
        raise InputError(f"scheduler address must be PROTOCOL://HOST:PORT, got {address!r}")
    if address != address.strip() or any(c.isspace() for c in address):
        raise InputError(f"scheduler address {address!r} contains white space")
    protocol, sep, location = address.partition("://")
    if not sep:
        protocol, location = "tcp", address
    if protocol not in PROTOCOLS:
        raise InputError(f"scheduler address {address!r}: unsupported protocol {protocol!r} "
                         f"(expected one of {', '.join(p + '://' for p in PROTOCOLS)})")
    try:
        host, port = parse_host_port(location)
    except ValueError as exc:
        if "missing port" in str(exc):
            raise InputError(f"scheduler address {address!r} has no port: expected "
                             "PROTOCOL://HOST:PORT, e.g. tcp://127.0.0.1:8786") from None
        raise InputError(f"scheduler address {address!r} is malformed: {exc}") from None
    if not 1 <= port <= 65535:
        raise InputError(f"scheduler address {address!r}: port {port} is not in 1..65535")
    if not _valid_host(host):
        raise InputError(f"scheduler address {address!r}: {host!r} is not a host name or IP address")
    return f"{protocol}://{location}"


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return bool(_HOSTNAME.match(host)) and len(host) <= 253
