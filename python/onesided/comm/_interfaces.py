"""This machine's IPv4 interfaces and their addresses, as the kernel reports
them (``SIOCGIFADDR``): where a coordinator other hosts must reach listens,
and what a rank publishes so that they find it.

Guarantees
----------
* :func:`ipv4_of` returns an interface's address, or None when it has none
  (down, IPv6 only, gone); it never raises.
* :func:`routable_ipv4` lists every address that is not loopback, in the
  kernel's interface order, each once.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct

__all__ = ["ipv4_of", "routable_ipv4"]

_SIOCGIFADDR = 0x8915


def ipv4_of(interface: str) -> str | None:
    """The IPv4 address of ``interface``, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            reply = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", interface.encode()[:15]))
        except OSError:
            return None
    return socket.inet_ntoa(reply[20:24])


def routable_ipv4() -> list[str]:
    """This machine's IPv4 addresses other than loopback."""
    found: list[str] = []
    for _, name in socket.if_nameindex():
        address = ipv4_of(name)
        if address is not None and not ipaddress.ip_address(address).is_loopback and address not in found:
            found.append(address)
    return found
