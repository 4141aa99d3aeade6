#!/usr/bin/env bash
# scripts/release.sh VERSION — the release files in dist/release/VERSION (out of git):
#   alisio-lsp-VERSION-OS-ARCH[.exe]   for linux, darwin and windows on amd64 and arm64 (-trimpath, versioned)
#   alisio-VERSION-TARGET.vsix          the VS Code extension per platform with its binary inside (no Go needed)
#   alisio-VERSION.vsix                 the universal extension (no binary: alisio-lsp from PATH or alisio.serverPath)
#   SHA256SUMS                          checksums of all of them
set -euo pipefail
version=${1:?usage: scripts/release.sh VERSION (e.g. 0.2.0)}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "release: VERSION must be MAJOR.MINOR.PATCH, got '$version'" >&2; exit 2; }
cd "$(dirname "$0")/.."
out=dist/release/$version
rm -rf "$out"; mkdir -p "$out"
export ALISIO_VERSION=$version
echo "release $version in $out:"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  goos=${target%/*} goarch=${target#*/}
  suffix=; [ "$goos" = windows ] && suffix=.exe
  bin=$out/alisio-lsp-$version-$goos-$goarch$suffix
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "-s -w -X main.releaseVersion=$version" -o "$bin" ./cmd/alisio-lsp
  echo "  $bin"
  vsos=$goos; [ "$goos" = windows ] && vsos=win32
  vsarch=$goarch; [ "$goarch" = amd64 ] && vsarch=x64
  echo "  $(scripts/package-vsix.sh "$out/alisio-$version-$vsos-$vsarch.vsix" "$vsos-$vsarch" "$bin")"
done
echo "  $(scripts/package-vsix.sh "$out/alisio-$version.vsix")"
(cd "$out" && sha256sum -- * > SHA256SUMS)
echo "  $out/SHA256SUMS"
