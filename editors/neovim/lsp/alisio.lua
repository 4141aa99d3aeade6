-- For Neovim 0.11+: vim.lsp.enable('alisio') with this runtime file on the runtimepath. Settings go under
-- `settings = { alisio = { ... } }` through vim.lsp.config('alisio', {...}).
return {
  cmd = { 'alisio-lsp', 'serve' },
  root_markers = { '.git', 'go.mod', 'package.json' },
  capabilities = { window = { workDoneProgress = true }, experimental = { alisio = { approve = 'notification' } } },
  handlers = require('alisio').handlers,
  settings = { alisio = {} },
}
