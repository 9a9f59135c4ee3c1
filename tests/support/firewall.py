"""An nftables table of a test's own that drops ICMP echo requests to one
loopback address (the "host down" of the ping checks), removed when the
`with` block ends. They are dropped as they come in, so the request is
sent and never answered, as by a host that is down. Needs root and nft:
unavailable() says why not."""

from __future__ import annotations

import os
import shutil
import subprocess

NFT = shutil.which("nft") or "/usr/sbin/nft"


def unavailable() -> str:
    """Why a test cannot drop pings here, or ""."""
    if os.geteuid() != 0:
        return "dropping pings needs root (an nftables rule)"
    if not os.path.exists(NFT):
        return "nft (Debian's nftables) is not installed"
    result = subprocess.run(
        [NFT, "list", "tables"], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        return f"nft cannot change the firewall here: {result.stderr.strip()}"
    return ""


class DroppedPings:
    """Drops echo requests to `address`: all of them, or every other one
    (`every_other`: the first, third, ... are dropped)."""

    def __init__(self, address: str, *, every_other: bool = False) -> None:
        self.address = address
        self.table = f"netchecks_test_{os.getpid()}_{address.replace('.', '_')}"
        self.every_other = every_other

    def __enter__(self) -> DroppedPings:
        drop = "numgen inc mod 2 0 drop" if self.every_other else "drop"
        rules = (
            f"table ip {self.table} {{\n"
            "  chain input {\n"
            "    type filter hook input priority 0; policy accept;\n"
            f"    ip daddr {self.address} icmp type echo-request {drop}\n"
            "  }\n"
            "}\n"
        )
        subprocess.run([NFT, "-f", "-"], input=rules, text=True, check=True)
        return self

    def __exit__(self, *exc_info) -> None:
        subprocess.run([NFT, "delete", "table", "ip", self.table], check=False)
