#!/usr/bin/env bash
# deploy/nftables/npuperf-connlimit.nft: nft accepts it, and in a private
# network namespace (the host's rules are never touched) a copy with the limit
# set to 4 on a test port lets one peer open 4 connections and refuses the 5th
# and 6th, while a 7th after closing one is accepted again.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RULES=$ROOT/deploy/nftables/npuperf-connlimit.nft
command -v nft >/dev/null || { echo "nftables_test: nft is missing (deploy/install-deps.sh installs nftables)"; exit 1; }
nft -c -f "$RULES"
echo "nftables_test: $RULES parses"

if [ "$(id -u)" -ne 0 ]; then
  echo "nftables_test: the limit check needs root (a private network namespace); syntax only"
  exit 0
fi
probe=$(mktemp /tmp/npuperf-nft.XXXXXX)
trap 'rm -f "$probe"' EXIT
sed 's/^define GRPC_PORT = .*/define GRPC_PORT = 47999/; s/ct count over 64/ct count over 4/' "$RULES" >"$probe"
grep -q "ct count over 4" "$probe"
unshare --net bash -euo pipefail -c '
  ip link set lo up
  nft -f "$1"
  python3 - <<PY
import socket, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 47999))
srv.listen(64)
held = []
threading.Thread(target=lambda: [held.append(srv.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
def connect():
    try:
        return socket.create_connection(("127.0.0.1", 47999), timeout=2)
    except ConnectionRefusedError:
        return None
conns = [connect() for _ in range(6)]
got = ["ok" if c else "refused" for c in conns]
assert got == ["ok"] * 4 + ["refused"] * 2, got
import time
for _ in range(50):
    if len(held) == 4:
        break
    time.sleep(0.1)
conns[0].close()
held[0].close()  # both ends closed: conntrack stops counting it
for _ in range(50):  # conntrack sees the close once both sides are done
    c = connect()
    if c:
        break
    time.sleep(0.1)
assert c, "a peer below the limit again must be accepted"
print("nftables_test: 4 accepted, 5th and 6th refused, accepted again after a close")
PY
' _ "$probe"
