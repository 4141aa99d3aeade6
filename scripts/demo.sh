#!/usr/bin/env bash
# The main job on a fresh machine, no editor and no API key: generate a long coding-agent session, import it,
# measure it, and let alisio-lsp bring it under budget (automatic compaction + reduction), then show the
# checkpoint and the audit history. Uses a throwaway data directory.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/alisio-lsp
echo "== Building bin/alisio-lsp and bin/alisio-testprovider (go build). The first build on a machine downloads the"
echo "   Go modules and compiles them: several minutes and up to about 3 GB of memory (README, Install); later"
echo "   builds take seconds."
go build -o "$bin" ./cmd/alisio-lsp
go build -o bin/alisio-testprovider ./cmd/alisio-testprovider
data=$(mktemp -d)
provider_pid=""
trap '[ -n "$provider_pid" ] && kill "$provider_pid" 2>/dev/null; rm -rf "$data"' EXIT
run() { echo; echo "\$ alisio-lsp $*"; "$bin" --data-dir "$data" "$@"; }

echo "== 1. A long session: about 3000 messages of reads, searches and test runs, some outputs huge."
echo "   Its text is synthetic (random words in the shape of a coding session), so the checkpoints below read as word salad."
"$bin" sessions generate --messages 3000 > "$data/session.json"
echo "\$ alisio-lsp sessions import session.json"
id=$("$bin" --data-dir "$data" sessions import --title "demo: fix the storage bug" "$data/session.json")
echo "$id"

echo; echo "== 2. The context meter for a model with a 128k-token window: the window, not the 800k-char default of"
echo "   limits.maxContextChars, sets the limit here (about 4 chars a token, less what is kept for the reply)"
run context "$id" --context-window 128000

echo; echo "== 3. Before the next model call, as the agent does it, with a 100k-char budget: compaction keeps the last"
echo "   8 turns verbatim, then the huge tool outputs among them are trimmed in place so that the request fits the"
echo "   limit. Those 8 turns alone hold more than 85% of 100k, so the meter still calls for a compaction: only a"
echo "   smaller compaction.keepTurns or a larger budget would bring it under that point."
run context "$id" --context-window 128000 --keep-turns 8 --max-context-chars 100000 --apply

echo; echo "== 4. Invalid settings are refused with the field, the value and the range"
run context "$id" --threshold 1.5 || true

echo; echo "== 5. A manual compaction with a focus, as JSON Lines events"
run --json compact "$id" --focus "storage/store.go" || true

echo; echo "== 6. What the model receives next (first message: the checkpoint)"
"$bin" --data-dir "$data" sessions export "$id" | head -c 1500; echo " …"

echo; echo "== 7. Nothing is lost: the full history keeps every original, marked compacted"
"$bin" --data-dir "$data" sessions show "$id" --all | sed -n '1,6p'
"$bin" --data-dir "$data" sessions show "$id" --all --limit 0 > "$data/all.txt" # the whole history, not its last page
echo "  … $(awk '$3 ~ /compacted/' "$data/all.txt" | wc -l) messages marked compacted: kept for audit, no longer sent (the summarized"
echo "    ones, earlier checkpoints, and the untrimmed originals of $(awk '$3 ~ /truncated/' "$data/all.txt" | wc -l) tool outputs now sent trimmed)"

echo; echo "== 8. A real agent turn: the local test provider (scripted, OpenAI wire format) drives tools in a workspace"
mkdir -p "$data/ws"
printf 'package greet\n\nfunc Greeting() string { return "Hello" }\n' > "$data/ws/greet.go"
bin/alisio-testprovider --script testdata/demo/script.json > "$data/provider.url" &
provider_pid=$!
for _ in $(seq 50); do [ -s "$data/provider.url" ] && break; sleep 0.1; done
printf '{"provider":{"kind":"openai","baseURL":"%s","model":"alisio-test"}}' "$(cat "$data/provider.url")" > "$data/alisio.json"
echo "\$ alisio-lsp --config alisio.json prompt --workspace ws 'Make the greeting say Hello, world'"
"$bin" --data-dir "$data" --config "$data/alisio.json" prompt --workspace "$data/ws" "Make the greeting say Hello, world" 2> "$data/prompt.err"
cat "$data/prompt.err"
echo "  greet.go now: $(cat "$data/ws/greet.go" | tail -1)"
session=$(sed -n 's/^session //p' "$data/prompt.err")
echo; echo "\$ alisio-lsp --config alisio.json prompt --session $session 'Now try to read /etc/passwd through a relative path'"
"$bin" --data-dir "$data" --config "$data/alisio.json" prompt --session "$session" "Now try to read /etc/passwd through a relative path"

echo; echo "== 9. The daemon, driven over stdio by the vscode-languageserver-protocol client as an editor would:"
echo "   the meter (alisio/status), events and progress as they arrive"
if command -v node >/dev/null && command -v npm >/dev/null; then
  [ -d test/conformance/node_modules ] || (cd test/conformance && npm ci --no-audit --no-fund --silent)
  kill "$provider_pid" 2>/dev/null || true
  bin/alisio-testprovider --script testdata/demo/daemon-script.json > "$data/provider2.url" &
  provider_pid=$!
  for _ in $(seq 50); do [ -s "$data/provider2.url" ] && break; sleep 0.1; done
  ALISIO_BIN="$PWD/$bin" ALISIO_PROVIDER_URL="$(cat "$data/provider2.url")" node test/conformance/demo.js "$data/ws"
else
  echo "  (skipped: Node.js and npm are needed for this step)"
fi
