-- :checkhealth alisio (vim.health on 0.10+, the health module before).
local M = {}

local function api()
  local h = vim.health or require('health')
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

function M.check()
  local h = api()
  local alisio = require('alisio')
  local cfg = alisio.config()
  h.start('alisio')
  if vim.fn.has('nvim-0.7.2') == 1 then
    h.ok('Neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '.' .. tostring(vim.version().patch))
  else
    h.error('Neovim 0.7.2 or later is required')
  end
  local bin = cfg.cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    h.error(string.format("'%s' was not found", bin), {
      'Build it in an alisio-lsp checkout: go build -o ~/.local/bin/alisio-lsp ./cmd/alisio-lsp',
      "Or give its path: require('alisio').setup({cmd = {'/path/to/alisio-lsp', 'serve'}})",
    })
    return
  end
  local version = vim.fn.system({ bin, 'version' })
  if vim.v.shell_error == 0 then
    h.ok(vim.trim(version) .. ' at ' .. vim.fn.exepath(bin))
  else
    h.error('`' .. bin .. ' version` failed: ' .. vim.trim(version))
  end
  if alisio.client_id() then
    h.ok('the server is running (client ' .. alisio.client_id() .. ')')
    local st = alisio.status()
    if st then
      h.ok('meter: ' .. alisio.statusline())
    else
      h.info('no meter yet: the workspace has no session (:AlisioPrompt starts one)')
    end
  else
    h.warn('the server is not running: open a file, or check require(\'alisio\').setup() was called')
  end
end

return M
