-- alisio.nvim: the alisio-lsp context manager in Neovim (0.7.2 through 0.12; the API is chosen at run time).
local M = {}

local state = {
  config = nil,
  client_id = nil,
  ready = false, -- initialize has been answered; requests wait in pending until then
  pending = {},
  status = nil, -- the last alisio/status payload
  session = nil, -- the session the meter shows (the latest one the server reported)
  compacting = false,
  prompt_buf = nil,
}

M.defaults = {
  cmd = { 'alisio-lsp', 'serve' },
  settings = {}, -- the `alisio` settings section (see the README of alisio-lsp, Configuration)
  root_markers = { '.git', 'go.mod', 'package.json' },
  autostart = true,
}

local levels = vim.log.levels

local function notify(msg, level)
  vim.notify('Alisio: ' .. msg, level or levels.INFO)
end

-- find_root walks up from path to a directory holding one of markers; the current directory otherwise.
local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path ~= '' and path or vim.fn.getcwd(), ':p:h')
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. m) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function human(n)
  if not n then
    return '?'
  end
  if n >= 1000000 then
    return string.format('%.1fM', n / 1000000)
  elseif n >= 1000 then
    return string.format('%.0fk', n / 1000)
  end
  return tostring(n)
end

-- fraction is the share of the compaction threshold in use: the closer of the two rules (window, chars).
local function fraction(st)
  return math.max(st.windowFraction or 0, st.charsFraction or 0)
end

--- statusline returns a short meter for a statusline ("" before the first alisio/status).
function M.statusline()
  local st = state.status
  if not st then
    return ''
  end
  if state.compacting or st.compacting then
    return 'alisio: compacting…'
  end
  local s = string.format('alisio %d%%', math.floor(fraction(st) * 100 + 0.5))
  if st.lastCheckpointPartial then
    s = s .. ' partial'
  end
  if st.uncertainCalls and #st.uncertainCalls > 0 then
    s = s .. string.format(' ⚠%d uncertain', #st.uncertainCalls)
  end
  return s
end

--- status returns the last meter payload (nil before the first).
function M.status()
  return state.status
end

local function redraw()
  pcall(vim.cmd, 'redrawstatus!')
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'AlisioStatus', modeline = false })
end

local function append_prompt(lines)
  local buf = state.prompt_buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last, last, false, lines)
end

local function on_event(ev)
  local t = ev.type
  if t == 'compaction_started' then
    state.compacting = true
    redraw()
    notify(string.format('compacting (%s%s)…', ev.reason or 'auto', ev.rule and (', ' .. ev.rule) or ''))
  elseif t == 'compaction_completed' then
    state.compacting = false
    local msg = string.format('compacted %s → %s chars (%d messages summarized)', human(ev.beforeChars), human(ev.afterChars), ev.spanMessages or 0)
    for _, p in ipairs(ev.plugins or {}) do
      msg = msg .. string.format('; %s: %s', p.plugin, p.summary)
    end
    if ev.partial then
      notify(msg .. '. The checkpoint is partial: raise compaction.maxOutputTokens for complete checkpoints.', levels.WARN)
    else
      notify(msg)
    end
    redraw()
  elseif t == 'compaction_failed' then
    state.compacting = false
    notify('compaction failed: ' .. (ev.message or ev.error or '?'), levels.ERROR)
    redraw()
  elseif t == 'compaction_skipped' then
    state.compacting = false
    notify('compaction skipped: ' .. (ev.message or ''), levels.INFO)
    redraw()
  elseif t == 'context_reduced' then
    notify(string.format('%d large message(s) trimmed to fit the budget', ev.messages or 0))
  elseif t == 'plugin_hook_failed' then
    notify(string.format('plugin %s (%s) failed: %s', ev.plugin or '?', ev.hook or '?', ev.message or ''), levels.WARN)
  elseif t == 'delta' and ev.text and ev.text ~= '' then
    append_prompt(vim.split(ev.text, '\n', { plain = true }))
  elseif t == 'tool_call' then
    append_prompt({ string.format('→ %s %s', ev.name or '?', ev.arguments or '') })
  elseif t == 'tool_result' then
    append_prompt({ string.format('← %s%s (%d chars)', ev.name or '?', ev.isError and ' failed' or '', ev.chars or 0) })
  end
end

--- handlers are the client handlers of alisio's notifications (also used by lsp/alisio.lua).
M.handlers = {
  ['alisio/status'] = function(err, params)
    if err or not params then
      return
    end
    if state.session == nil or params.session == state.session then
      state.session = params.session
      state.status = params
      redraw()
    end
  end,
  ['alisio/event'] = function(err, params)
    if not err and params then
      on_event(params)
    end
  end,
}

local function client()
  if not state.client_id then
    return nil
  end
  return vim.lsp.get_client_by_id(state.client_id)
end

-- request sends method to the alisio client and calls cb(err, result); it works on 0.7 through 0.12. A request
-- made while the server is still starting waits for initialize to be answered.
local function request(method, params, cb)
  local c = client()
  if not c then
    notify('alisio-lsp is not running (run :checkhealth alisio)', levels.ERROR)
    return
  end
  if not state.ready then
    table.insert(state.pending, function()
      request(method, params, cb)
    end)
    return
  end
  local handler = function(err, result)
    vim.schedule(function()
      cb(err, result)
    end)
  end
  if vim.fn.has('nvim-0.11') == 1 then
    c:request(method, params, handler)
  else
    c.request(method, params, handler)
  end
end

local function err_message(err)
  return type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
end

--- start starts alisio-lsp for the workspace of bufnr (or attaches bufnr to the running client).
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local cfg = state.config or M.defaults
  local c = client()
  if c then
    if vim.api.nvim_buf_get_option(bufnr, 'buftype') == '' then
      vim.lsp.buf_attach_client(bufnr, c.id)
    end
    return c.id
  end
  local root = find_root(vim.api.nvim_buf_get_name(bufnr), cfg.root_markers)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.window = capabilities.window or {}
  capabilities.window.workDoneProgress = true
  local conf = {
    name = 'alisio',
    cmd = cfg.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    settings = { alisio = cfg.settings },
    init_options = { alisio = cfg.settings },
    capabilities = capabilities,
    handlers = M.handlers,
    on_init = function()
      state.ready = true
      local pending = state.pending
      state.pending = {}
      vim.schedule(function()
        for _, send in ipairs(pending) do
          send()
        end
      end)
    end,
    on_exit = function(code)
      state.client_id, state.ready, state.pending = nil, false, {}
      if code ~= 0 then
        vim.schedule(function()
          notify('alisio-lsp exited with code ' .. tostring(code) .. ' (see :LspLog)', levels.WARN)
        end)
      end
    end,
  }
  state.client_id = vim.lsp.start_client(conf)
  if state.client_id and vim.api.nvim_buf_get_option(bufnr, 'buftype') == '' then
    vim.lsp.buf_attach_client(bufnr, state.client_id)
  end
  return state.client_id
end

--- setup configures the plugin and starts the server for the buffers opened from now on.
function M.setup(opts)
  state.config = vim.tbl_deep_extend('force', M.defaults, opts or {})
  if vim.fn.executable(state.config.cmd[1]) ~= 1 then
    notify(string.format(
      "'%s' was not found. Install it (in an alisio-lsp checkout: go build -o ~/.local/bin/alisio-lsp ./cmd/alisio-lsp) "
        .. "and make sure it is on PATH, or give its path: require('alisio').setup({cmd = {'/path/to/alisio-lsp', 'serve'}}).",
      state.config.cmd[1]), levels.ERROR)
    return false
  end
  if state.config.autostart then
    vim.cmd([[
      augroup alisio
        autocmd!
        autocmd BufReadPost,BufNewFile * lua require('alisio').start(tonumber(vim.fn.expand('<abuf>')))
      augroup END
    ]])
    if vim.api.nvim_buf_get_name(0) ~= '' then
      M.start(0)
    end
  end
  return true
end

--- compact runs a manual compaction with an optional focus (:AlisioCompact [focus]).
function M.compact(focus)
  state.compacting = true
  redraw()
  request('alisio/compact', { session = state.session, focus = (focus ~= '' and focus) or nil }, function(err, res)
    state.compacting = false
    redraw()
    if err then
      notify('compaction failed: ' .. err_message(err), levels.ERROR)
      return
    end
    state.session = res and res.session or state.session
  end)
end

--- recover records that the session's uncertain tool calls have an unknown outcome (:AlisioRecover[!]); without
--- force it lists them and asks first.
function M.recover(force)
  local function ack()
    request('alisio/recover', { session = state.session, acknowledge = true }, function(err, res)
      if err then
        notify('recovery failed: ' .. err_message(err), levels.ERROR)
        return
      end
      notify(string.format('recorded that %d tool call(s) have an unknown outcome; the session can continue', res.recovered or 0))
    end)
  end
  if force then
    ack()
    return
  end
  request('alisio/recover', { session = state.session }, function(err, res)
    if not err then
      notify('no uncertain tool calls in this session')
      return
    end
    local choice = vim.fn.confirm(err_message(err) .. '\n\nRecord that their outcome is unknown?', '&Yes\n&No', 2)
    if choice == 1 then
      ack()
    end
  end)
end

local function scratch(name, lines, ft)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.api.nvim_buf_set_option(buf, 'modifiable', true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'filetype', ft or 'markdown')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.cmd('buffer ' .. buf)
  return buf
end

--- prompt sends text to the agent and streams the turn into a scratch buffer (:AlisioPrompt {text}).
function M.prompt(text)
  state.prompt_buf = scratch('alisio://prompt', { '# ' .. text, '' })
  request('alisio/prompt', { session = state.session, text = text }, function(err, res)
    if err then
      append_prompt({ '', 'Error: ' .. err_message(err) })
      notify(err_message(err), levels.ERROR)
      return
    end
    state.session = res.session
    append_prompt({ '', '---', res.reply or '' })
  end)
end

--- checkpoint shows the current checkpoint (:AlisioCheckpoint).
function M.checkpoint()
  request('alisio/checkpoint', { session = state.session }, function(err, res)
    if err then
      notify(err_message(err), levels.ERROR)
      return
    end
    if not res.checkpoint or res.checkpoint == vim.NIL then
      notify('this session has no checkpoint yet')
      return
    end
    local lines = { '# Checkpoint' .. (res.partial and ' (partial: raise compaction.maxOutputTokens)' or ''),
      string.format('Written %s, replacing %d messages.', res.createdAt or '?', res.replacedMessages or 0), '' }
    vim.list_extend(lines, vim.split(res.text or '', '\n', { plain = true }))
    if res.relevantFilesChangedSince and #res.relevantFilesChangedSince > 0 then
      vim.list_extend(lines, { '', '## Changed since', unpack(res.relevantFilesChangedSince) })
    end
    scratch('alisio://checkpoint', lines)
  end)
end

--- context shows what fills the context (:AlisioContext).
function M.context()
  request('alisio/status', { session = state.session }, function(err, st)
    if err then
      notify(err_message(err), levels.ERROR)
      return
    end
    local function bar(part, total)
      local n = total > 0 and math.floor(40 * part / total + 0.5) or 0
      return string.rep('#', n) .. string.rep('.', 40 - n)
    end
    local total = (st.usedChars or 0) + (st.toolsChars or 0)
    local lines = {
      '# Context of session ' .. (st.session or '?'),
      '',
      string.format('%s  instructions  %s chars', bar(st.instructionsChars or 0, total), human(st.instructionsChars)),
      string.format('%s  transcript    %s chars', bar(st.transcriptChars or 0, total), human(st.transcriptChars)),
      string.format('%s  tool catalog  %s chars', bar(st.toolsChars or 0, total), human(st.toolsChars)),
      '',
      string.format('Hard limit: %s of %s chars. Estimated %s tokens of a %s-token window (%s).', human(st.usedChars), human(st.hardLimit),
        human(st.estimatedTokens), human(st.window), st.windowSource or '?'),
      string.format('Threshold %.0f%%: window rule at %.0f%%, chars rule at %.0f%%. Next: %s.', (st.threshold or 0) * 100,
        (st.windowFraction or 0) * 100, (st.charsFraction or 0) * 100, st.nextAction or '?'),
    }
    if st.uncertainCalls and #st.uncertainCalls > 0 then
      table.insert(lines, 'Uncertain tool calls: ' .. table.concat(st.uncertainCalls, ', ') .. ' (:AlisioRecover)')
    end
    scratch('alisio://context', lines)
  end)
end

--- sessions picks the session the meter and the commands use (:AlisioSessions).
function M.sessions()
  request('alisio/sessions', {}, function(err, res)
    if err then
      notify(err_message(err), levels.ERROR)
      return
    end
    local list = res.sessions or {}
    if #list == 0 then
      notify('no sessions in this workspace yet: :AlisioPrompt starts one')
      return
    end
    vim.ui.select(list, {
      prompt = 'Alisio session',
      format_item = function(s)
        return string.format('%s  %s  (%d messages)', s.updatedAt or '', s.title or s.id, s.messages or 0)
      end,
    }, function(choice)
      if choice then
        M.use_session(choice.id)
      end
    end)
  end)
end

--- use_session makes id the session the meter and the commands use.
function M.use_session(id)
  state.session, state.status = id, nil
  request('alisio/status', { session = id }, function(err, st)
    if not err then
      state.status = st
      redraw()
    end
  end)
end

--- session is the session the commands use (nil: the server's latest for the workspace).
function M.session()
  return state.session
end

--- client_id is the running client's id (nil when not running).
function M.client_id()
  return state.client_id
end

--- config is the configuration in force.
function M.config()
  return state.config or M.defaults
end

return M
