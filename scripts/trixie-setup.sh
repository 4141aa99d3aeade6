#!/usr/bin/env bash
# Builds a Debian trixie chroot (debootstrap, minbase) holding Wine 10 and Neovim 0.10, for the tests that
# need them on this bookworm machine: bookworm's Wine 8 cannot start Go >= 1.22 Windows binaries, and its
# Neovim is 0.7.2. Idempotent; needs root. The chroot goes to $ALISIO_TRIXIE (default /tmp/alisio-trixie), out
# of the checkout. scripts/wine-exec and scripts/nvim-trixie run programs from it.
set -euo pipefail
ROOT=${ALISIO_TRIXIE:-/tmp/alisio-trixie}
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" != 0 ]; then echo "trixie-setup: needs root (debootstrap, chroot)" >&2; exit 1; fi
mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -v -- -security | grep -m1 /debian/ || true)
mirror=${mirror:-http://deb.debian.org/debian/}
command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap; }
if [ ! -e "$ROOT/.debootstrap-ok" ]; then
  rm -rf "$ROOT"
  mkdir -p "$(dirname "$ROOT")"
  debootstrap --variant=minbase trixie "$ROOT" "$mirror" >"$ROOT.debootstrap.log" 2>&1 ||
    { tail -20 "$ROOT.debootstrap.log" >&2; exit 1; }
  touch "$ROOT/.debootstrap-ok"
fi
in_root() {
  unshare --mount --propagation private -- /bin/sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$ROOT" "$@"
}
if [ ! -x "$ROOT/usr/lib/wine/wine64" ] || [ ! -x "$ROOT/usr/bin/wine-stable" ] || [ ! -x "$ROOT/usr/bin/nvim" ]; then
  in_root apt-get update -qq
  in_root apt-get install -y -qq --no-install-recommends wine64 wine neovim 2>&1 | grep -v 'Can not write log' || true
  in_root apt-get clean
fi
[ -x "$ROOT/usr/bin/wine-stable" ] && [ -x "$ROOT/usr/bin/nvim" ] || { echo "trixie-setup: wine or neovim missing in $ROOT" >&2; exit 1; }
# The Wine prefix, once (wineboot returns before it is done; wineserver -w waits for it).
if [ ! -f "$ROOT/root/.wine/system.reg" ]; then
  ALISIO_TRIXIE=$ROOT "$(dirname "$0")/wine-exec" --chroot sh -c 'wine wineboot --init; wineserver -w' >/dev/null 2>&1 </dev/null
fi
echo "trixie chroot ready in $ROOT: $("$(dirname "$0")/nvim-trixie" --version | head -1), $(ALISIO_TRIXIE=$ROOT "$(dirname "$0")/wine-exec" --chroot wine --version 2>/dev/null)"
