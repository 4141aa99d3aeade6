#!/usr/bin/env bash
# Builds the binaries for each supported target and vets every package (tests included) for each OS; fails on
# any. The project has no architecture-specific code, so arm64 is built but vetted once per OS (on amd64):
# vetting it again would compile every test dependency a second time for nothing (minutes on a cold cache).
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(git ls-files '*.go' | grep -E '_(amd64|arm64)(_test)?\.go$' || true)
arch="$arch$(git ls-files -z '*.go' | xargs -0 grep -lE '^//go:build .*(amd64|arm64)' || true)"
if [ -n "$arch" ]; then
  printf 'architecture-specific Go files: vet arm64 too in scripts/cross-check.sh\n%s\n' "$arch" >&2
  exit 1
fi
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  export GOOS=${target%/*} GOARCH=${target#*/}
  echo "cross-check $target"
  go build -o /dev/null ./cmd/alisio-lsp
  go build -o /dev/null ./cmd/alisio-testprovider
  if [ "$GOARCH" = amd64 ]; then go vet ./...; fi
done
