-- alisio.config: the plugin's options, their defaults, and the ones in force.
local state = require('alisio.state')

local M = {}

M.defaults = {
  cmd = { 'alisio-lsp', 'serve' },
  settings = {}, -- the `alisio` settings section (see the README of alisio-lsp, Configuration)
  root_markers = { '.git', 'go.mod', 'package.json' },
  autostart = true,
}

--- get is the configuration in force: setup's, else the defaults.
function M.get()
  return state.config or M.defaults
end

return M
