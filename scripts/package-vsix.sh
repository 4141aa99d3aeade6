#!/usr/bin/env bash
# scripts/package-vsix.sh OUT.vsix [TARGET BINARY] — packages the VS Code extension (built first) into OUT.vsix.
# With TARGET (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64) and BINARY, the package
# is for that platform and carries BINARY as server/alisio-lsp[.exe], which the extension runs unless the user
# set alisio.serverPath; without them it is the universal package (alisio-lsp from PATH). ALISIO_VERSION sets
# the extension's version (default: package.json's). The checkout is left as it was (staged in a temp dir).
set -euo pipefail
out=$(realpath -m "${1:?usage: scripts/package-vsix.sh OUT.vsix [TARGET BINARY]}")
target=${2:-} bin=${3:-}
[ -z "$target" ] || [ -f "$bin" ] || { echo "package-vsix: binary '$bin' not found" >&2; exit 2; }
ext=$(cd "$(dirname "$0")/../editors/vscode" && pwd)
[ -d "$ext/node_modules" ] || (cd "$ext" && npm ci --no-audit --no-fund)
(cd "$ext" && npm run --silent build)
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/dist" "$(dirname "$out")"
cp "$ext/README.md" "$ext/LICENSE" "$ext/.vscodeignore" "$stage/"
cp "$ext/dist/extension.js" "$ext/dist/chat.js" "$stage/dist/"
cp -r "$ext/media" "$ext/schemas" "$stage/"
node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync(process.argv[1]));if(process.argv[2])p.version=process.argv[2];fs.writeFileSync(process.argv[3],JSON.stringify(p,null,2))' \
  "$ext/package.json" "${ALISIO_VERSION:-}" "$stage/package.json"
if [ -n "$target" ]; then
  name=alisio-lsp; case $target in win32-*) name=alisio-lsp.exe ;; esac
  mkdir -p "$stage/server"; cp "$bin" "$stage/server/$name"; chmod 755 "$stage/server/$name"
fi
(cd "$stage" && "$ext/node_modules/.bin/vsce" package --no-dependencies ${target:+--target "$target"} --out "$out" >/dev/null)
echo "$out"
