#!/usr/bin/env bash
# Builds the binaries and vets every package (tests included) for each supported target; fails on any.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  export GOOS=${target%/*} GOARCH=${target#*/}
  echo "cross-check $target"
  go build -o /dev/null ./cmd/alisio-lsp
  go build -o /dev/null ./cmd/alisio-testprovider
  go vet ./...
done
