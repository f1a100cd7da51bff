"""A private network for fault tests: each member (etcd, every broker node, the clients) in its own network
namespace, all joined by veth pairs to a bridge in a hub namespace, with nftables and tc to break the links.

Addresses are 127.77.0.x (the house rule: servers on 127.x.y.z only). Loopback addresses are not routed between
interfaces by default, so each member namespace narrows its `lo` to 127.0.0.1/32 and sets `route_localnet`; the
root namespace never sees these addresses. The test's own thread joins the clients' namespace (`entered`), so stock
clients running in the test process (librdkafka's threads, JVMs it spawns) reach the members as a client host would.

Faults (all undone by `heal`), each applied in the sending member's namespace (its `output` hook), so that one
direction can be cut without the other:

- `cut(a, b)`: a's packets to b are dropped (`both_ways=True` cuts b to a as well); `reject=True` answers with a TCP
  reset instead (a firewall that rejects; a killed process looks the same from outside);
- `isolate(a, from_=...)`: cut a from each of those members both ways;
- `lossy(a, b, percent)`: drop that share of a's packets to b at random (nftables `numgen random`);
- `limit(a, rate)`: a token bucket (`tc qdisc tbf`) on a's link, both directions.

Everything is removed by `close` (namespace deletion takes the veth pairs and rules with it), also when a test fails.
The namespace names carry the creating process's pid (`kbf-<pid>-<n>-<member>`), so a run that was killed before its
cleanup leaves names that the next run deletes (their pid is gone).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

PREFIX = "kbf"
SUBNET = "127.77.0"
CLONE_NEWNET = 0x40000000
_counter = itertools.count(1)


class NetworkError(RuntimeError):
    pass


def _run(*args: str, input: str | None = None) -> str:
    result = subprocess.run(list(args), input=input, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise NetworkError(f"{' '.join(args)}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def available() -> str | None:
    """None if namespaces can be made here, else why not (a tool missing, not root)."""
    for tool in ("ip", "nft", "tc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt packages iproute2 and nftables)"
    if os.geteuid() != 0:
        return "network namespaces need root"
    return None


def remove_stale_namespaces() -> None:
    """Delete namespaces an earlier, killed test run left behind (their creator's pid is gone)."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        match = re.fullmatch(rf"{PREFIX}-(\d+)-\d+-.+", name)
        if match and not os.path.exists(f"/proc/{match.group(1)}"):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)


@dataclass(frozen=True)
class Member:
    name: str
    namespace: str
    address: str
    interface: str  # the veth end inside the member's namespace
    hub_interface: str  # its peer on the hub's bridge


class Network:
    """`with Network(["etcd", "n1", "n2", "n3", "client"]) as net:` ... `net.address("n1")`."""

    def __init__(self, members: Sequence[str]) -> None:
        self.id = f"{PREFIX}-{os.getpid()}-{next(_counter)}"
        tag = f"{os.getpid() % 100000}{next(_counter) % 100}"
        self.hub = f"{self.id}-hub"
        self.members: dict[str, Member] = {}
        for i, name in enumerate(members):
            self.members[name] = Member(
                name,
                f"{self.id}-{name}",
                f"{SUBNET}.{10 + i}",
                f"kf{tag}m{i}",
                f"kf{tag}h{i}",
            )
        self._namespaces: list[str] = []

    # ---- set-up and tear-down -------------------------------------------------------------------------------

    def open(self) -> Network:
        remove_stale_namespaces()
        try:
            self._add_namespace(self.hub)
            _run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
            _run("ip", "-n", self.hub, "link", "set", "br0", "up")
            for member in self.members.values():
                self._add_member(member)
        except BaseException:
            self.close()
            raise
        return self

    def _add_namespace(self, name: str) -> None:
        _run("ip", "netns", "add", name)
        self._namespaces.append(name)

    def _add_member(self, member: Member) -> None:
        ns = member.namespace
        self._add_namespace(ns)
        _run("ip", "link", "add", member.interface, "netns", ns, "type", "veth", "peer", "name",
             member.hub_interface, "netns", self.hub)  # fmt: skip
        _run("ip", "-n", self.hub, "link", "set", member.hub_interface, "master", "br0", "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        # 127.0.0.0/8 as a whole is local to lo; narrowed, the rest of it can be routed over the veth.
        _run("ip", "-n", ns, "addr", "del", "127.0.0.1/8", "dev", "lo")
        _run("ip", "-n", ns, "addr", "add", "127.0.0.1/32", "dev", "lo")
        _run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1",
             f"net.ipv4.conf.{member.interface}.route_localnet=1")  # fmt: skip
        _run("ip", "-n", ns, "addr", "add", f"{member.address}/24", "dev", member.interface)
        _run("ip", "-n", ns, "link", "set", member.interface, "up")
        _run("ip", "netns", "exec", ns, "nft", "-f", "-", input=_BASE_RULES)

    def close(self) -> None:
        """Delete every namespace (the veth pairs, rules and qdiscs go with them). Processes still inside are the
        caller's to stop first (by pid); a namespace outlives its name only as long as they do."""
        for name in reversed(self._namespaces):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)
        self._namespaces.clear()

    def __enter__(self) -> Network:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- addressing and entering ----------------------------------------------------------------------------

    def address(self, member: str) -> str:
        return self.members[member].address

    def exec_prefix(self, member: str) -> list[str]:
        """Prefix a command with this to run it inside the member's namespace (`ip netns exec` keeps the pid)."""
        return ["ip", "netns", "exec", self.members[member].namespace]

    @contextmanager
    def entered(self, member: str) -> Iterator[None]:
        """Run the calling thread (and every thread or process it starts meanwhile) inside the member's namespace."""
        previous = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(f"/run/netns/{self.members[member].namespace}", os.O_RDONLY)
        try:
            self._setns(target)
            yield
        finally:
            os.close(target)
            self._setns(previous)
            os.close(previous)

    @staticmethod
    def _setns(fd: int) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise NetworkError(f"setns: {os.strerror(ctypes.get_errno())}")

    # ---- faults ---------------------------------------------------------------------------------------------

    def _nft(self, member: str, command: str) -> None:
        _run("ip", "netns", "exec", self.members[member].namespace, "nft", command)

    def cut(self, a: str, b: str, *, both_ways: bool = True, reject: bool = False) -> None:
        """Drop (or reject, with a TCP reset) what `a` sends to `b`; with `both_ways`, also what b sends to a."""
        verdict = "reject with tcp reset" if reject else "drop"
        protocol = "ip protocol tcp " if reject else ""
        self._nft(a, f"add rule inet faults output {protocol}ip daddr {self.address(b)} {verdict}")
        if both_ways:
            self._nft(b, f"add rule inet faults output {protocol}ip daddr {self.address(a)} {verdict}")

    def isolate(self, a: str, from_: Sequence[str], *, reject: bool = False) -> None:
        for b in from_:
            self.cut(a, b, reject=reject)

    def lossy(self, a: str, b: str, percent: int, *, both_ways: bool = True) -> None:
        """Drop `percent` % of what a sends to b, at random."""
        self._nft(
            a,
            f"add rule inet faults output ip daddr {self.address(b)} numgen random mod 100 < {percent} drop",
        )
        if both_ways:
            self._nft(
                b,
                f"add rule inet faults output ip daddr {self.address(a)} numgen random mod 100 < {percent} drop",
            )

    def limit(self, a: str, rate: str = "1mbit") -> None:
        """A token bucket on a's link, both directions (egress of its veth end and of the hub's)."""
        member = self.members[a]
        tbf = ["root", "tbf", "rate", rate, "burst", "32kbit", "latency", "400ms"]
        _run("ip", "netns", "exec", member.namespace, "tc", "qdisc", "replace", "dev", member.interface, *tbf)
        _run("ip", "netns", "exec", self.hub, "tc", "qdisc", "replace", "dev", member.hub_interface, *tbf)

    def heal(self) -> None:
        """Undo every fault: flush the rules, remove the token buckets."""
        for member in self.members.values():
            self._nft(member.name, "flush chain inet faults output")
            for ns, dev in ((member.namespace, member.interface), (self.hub, member.hub_interface)):
                subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root"],
                               capture_output=True, timeout=30)  # fmt: skip

    def rules(self) -> str:
        """Every member's rules, for a failure message."""
        listing = ["nft", "list", "chain", "inet", "faults", "output"]
        return "\n".join(
            f"[{m.name}] " + _run("ip", "netns", "exec", m.namespace, *listing) for m in self.members.values()
        )


_BASE_RULES = """
table inet faults {
    chain output { type filter hook output priority 0; policy accept; }
}
"""
