// The packaged extension (npm run package) holds the bundle and the manifest with every command.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

test('dist/alisio.vsix holds the bundle and the manifest', () => {
  const vsix = fs.readFileSync(path.join(__dirname, '..', 'dist', 'alisio.vsix'));
  for (const entry of ['extension/package.json', 'extension/dist/extension.js', 'extension/dist/chat.js', 'extension/media/chat.css', 'extension/media/alisio.svg', 'extension.vsixmanifest']) {
    assert.ok(vsix.includes(Buffer.from(entry)), `${entry} missing from the .vsix`);
  }
  assert.ok(!vsix.includes(Buffer.from('extension/src/extension.ts')), 'sources must not be packaged');
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json')));
  const titles = manifest.contributes.commands.map((c) => c.title);
  for (const t of ['Alisio: Compact', 'Alisio: Recover Uncertain Tool Calls', 'Alisio: Prompt', 'Alisio: New Session', 'Alisio: Switch Session',
    'Alisio: Show Checkpoint', 'Alisio: Show Context', 'Alisio: Restart Server', 'Alisio: Show Logs', 'Alisio: Open Chat', 'Alisio: Menu', 'Alisio: Show Tools',
    'Alisio: Accept the Proposal', 'Alisio: Reject the Proposal']) {
    assert.ok(titles.includes(t), `${t} is not contributed`);
  }
});
