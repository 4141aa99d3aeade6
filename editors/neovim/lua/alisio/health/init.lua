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

-- provider_of is the provider the daemon uses: the one of the --config file cmd names, with the settings'
-- provider fields over it (as the daemon takes them).
local function provider_of(cmd, settings)
  local from_file = {}
  for i, a in ipairs(cmd) do
    if a == '--config' and cmd[i + 1] and vim.fn.filereadable(cmd[i + 1]) == 1 then
      local ok, doc = pcall(vim.fn.json_decode, table.concat(vim.fn.readfile(cmd[i + 1]), '\n'))
      if ok and type(doc) == 'table' and type(doc.provider) == 'table' then
        from_file = doc.provider
      end
    end
  end
  return vim.tbl_extend('force', from_file, settings.provider or {})
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
  -- The settings, checked by alisio-lsp itself (the same rules as the server's).
  local settings = cfg.settings or {}
  local file = vim.fn.tempname() .. '.json'
  vim.fn.writefile({ vim.fn.json_encode(next(settings) == nil and vim.empty_dict() or settings) }, file)
  local out = vim.fn.system({ bin, '--config', file, 'version' })
  vim.fn.delete(file)
  if vim.v.shell_error == 0 then
    h.ok('the settings are valid')
  else
    h.error('the settings are invalid: ' .. vim.trim(out), { "Fix require('alisio').setup({settings = ...}); alisio-lsp's README lists every field" })
  end
  -- The provider: does its model list answer?
  local p = provider_of(cfg.cmd, settings)
  if not p.kind or p.kind == '' then
    h.warn('no provider configured: prompts need one', { "settings = { provider = { kind = 'openai', baseURL = '...', model = '...' } }" })
  elseif vim.fn.executable('curl') ~= 1 then
    h.info('curl is not installed: the provider was not checked')
  else
    local base = (p.baseURL and p.baseURL ~= '') and p.baseURL:gsub('/+$', '') or (p.kind == 'anthropic' and 'https://api.anthropic.com/v1' or 'https://api.openai.com/v1')
    local key = p.apiKeyEnv and os.getenv(p.apiKeyEnv) or nil
    -- The key goes to curl on stdin (a header file), never on its command line.
    local header = key and (p.kind == 'anthropic' and ('x-api-key: ' .. key) or ('Authorization: Bearer ' .. key)) or ''
    local code = vim.fn.system({ 'curl', '-s', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', '-H', '@-', base .. '/models' }, header)
    if code == '200' then
      h.ok(string.format('the provider answers at %s (model %s)', base, p.model or '?'))
    elseif code == '000' then
      h.error(string.format('the provider does not answer at %s', base), { 'Is the server running? Check provider.baseURL' })
    else
      h.warn(string.format('the provider at %s answered HTTP %s to its model list', base, code),
        { code == '401' and ('Check the API key in $' .. (p.apiKeyEnv or '?')) or 'Check provider.baseURL and provider.kind' })
    end
  end
  if alisio.client_id() then
    local c = require('alisio.client').get()
    local root = c and c.config and c.config.root_dir
    h.ok('the server is running' .. (root and (' for the workspace ' .. vim.fn.fnamemodify(root, ':~')) or ''))
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
