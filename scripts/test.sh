#!/usr/bin/env bash
# Every test of the project: formatting, vet (for every supported OS and architecture), staticcheck, and the Go tests (unit, property, fuzz seeds,
# crash test, CLI against the built binary, provider against a local HTTP server).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
# Every process the tests start inherits this mark; the last step fails if one of them outlives the tests.
export ALISIO_TEST_RUN="$$-$(date +%s%N)"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi
go vet ./...
scripts/cross-check.sh
if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2); skipped"; fi
# Real MCP servers from npm for agent/mcp's tests (installed once; the tests skip with a note without them).
if [ ! -d test/mcp/node_modules ]; then (cd test/mcp && npm ci --no-audit --no-fund); fi
go test -count=1 ./...
# The concurrent parts again under the race detector.
go test -race -count=1 ./server/... ./agent/... ./relevantfiles/
# The daemon against the real vscode-languageserver-protocol client (npm ci in test/conformance first).
go build -o bin/alisio-lsp ./cmd/alisio-lsp
go build -o bin/alisio-testprovider ./cmd/alisio-testprovider
if [ ! -d test/conformance/node_modules ]; then (cd test/conformance && npm ci --no-audit --no-fund); fi
(cd test/conformance && ALISIO_BIN="$PWD/../../bin/alisio-lsp" ALISIO_TESTPROVIDER="$PWD/../../bin/alisio-testprovider" node --test conformance.test.js)
# The VS Code extension: type check, unit tests of its logic, the built bundle driving the real daemon through the
# real vscode-languageclient (fake `vscode` module), and the .vsix package.
if [ ! -d editors/vscode/node_modules ]; then (cd editors/vscode && npm ci --no-audit --no-fund); fi
(cd editors/vscode && ALISIO_BIN="$PWD/../../bin/alisio-lsp" ALISIO_TESTPROVIDER="$PWD/../../bin/alisio-testprovider" npm test)
# Real VS Code (code-server in headless Chromium), heavy: with ALISIO_E2E=1 (.ci/run sets it after
# scripts/vscode-e2e-setup.sh), on the linux-x64 platform .vsix that carries bin/alisio-lsp.
if [ "${ALISIO_E2E:-}" = 1 ]; then
  scripts/package-vsix.sh editors/vscode/dist/alisio-linux-x64.vsix linux-x64 bin/alisio-lsp >/dev/null
  (cd editors/vscode && ALISIO_BIN="$PWD/../../bin/alisio-lsp" ALISIO_TESTPROVIDER="$PWD/../../bin/alisio-testprovider" node --test test/e2e.test.js)
fi
# With ALISIO_TRIXIE_TESTS=1 (.ci/run sets it after scripts/trixie-setup.sh; root only), from a Debian trixie
# chroot: the Neovim plugin's tests again on Neovim 0.10, and the Windows build's tests under Wine 10 for the
# packages Wine carries (README, "Windows": the CLI's tests build the binary with go, which Wine lacks).
if [ "${ALISIO_TRIXIE_TESTS:-}" = 1 ]; then
  ALISIO_NVIM="$PWD/scripts/nvim-trixie" go test -count=1 ./editors/neovim/
  GOOS=windows GOARCH=amd64 go test -short -count=1 -exec "$PWD/scripts/wine-exec" ./transcript/... ./compaction/... \
    ./config/... ./storage/... ./relevantfiles/... ./agent/tools/... ./agent/provider/... ./agent/providertest/... ./server/...
  scripts/wine-exec --chroot wineserver -k 2>/dev/null || true
fi
# Nothing the tests started may outlive them (shared daemons included): wait a little for those that are
# shutting down, then name, kill and fail on the rest.
leftovers() {
  local e p
  survivors=()
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] && continue
    if grep -qzx "ALISIO_TEST_RUN=$ALISIO_TEST_RUN" "$e" 2>/dev/null; then survivors+=("$p"); fi
  done
  return 0
}
if [ -d /proc/self ]; then
  for _ in $(seq 40); do leftovers; [ ${#survivors[@]} = 0 ] && break; sleep 0.5; done
  if [ ${#survivors[@]} != 0 ]; then
    echo "FAIL: processes started by the tests are still running:"
    ps -o pid,etime,args -p "$(IFS=,; echo "${survivors[*]}")" || true
    kill -9 "${survivors[@]}" 2>/dev/null || true
    exit 1
  fi
  echo "no process started by the tests outlived them"
fi
