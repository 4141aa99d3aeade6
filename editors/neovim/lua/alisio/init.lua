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
  turn = nil, -- the running turn: { id = request id, session = ... }
  spinner = nil, -- the timer that redraws the statusline while a turn or a compaction runs
}

local chat = require('alisio.chat')

-- obj makes an empty Lua table travel as a JSON object ({}), not as an array ([]), which the server refuses.
local function obj(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

M.defaults = {
  cmd = { 'alisio-lsp', 'serve' },
  settings = {}, -- the `alisio` settings section (see the README of alisio-lsp, Configuration)
  root_markers = { '.git', 'go.mod', 'package.json' },
  autostart = true,
}

local levels = vim.log.levels
local uv = vim.uv or vim.loop -- vim.uv from 0.10

local function notify(msg, level)
  vim.notify('Alisio: ' .. (msg or ''), level or levels.INFO)
end

-- find_root walks up from path (the current directory when empty) to a directory holding one of markers, and
-- says whether it found one; the current directory otherwise.
local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path ~= '' and path or vim.fn.getcwd(), ':p:h')
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. m) then
        return dir, true
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd(), false
end

-- human is a size for people: 863, 6.4k, 1.2M ('?' when unknown).
local function human(n)
  return n and chat.human(n) or '?'
end

-- fraction is the share of the compaction threshold in use: the closer of the two rules (window, chars).
local function fraction(st)
  return math.max(st.windowFraction or 0, st.charsFraction or 0)
end

local frames = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

--- statusline returns a short meter for a statusline: "" while no server runs, "alisio –" before the workspace
--- has a session, "alisio 42%" (with a spinner while a turn runs), "alisio: compacting…".
function M.statusline()
  local st = state.status
  if not state.client_id then
    return ''
  end
  local spin = state.turn and (' ' .. frames[math.floor(uv.now() / 100) % #frames + 1]) or ''
  if state.compacting or (st and st.compacting) then
    return 'alisio: compacting…'
  end
  if not st then
    return 'alisio –' .. spin
  end
  local s = string.format('alisio %d%%', math.floor(fraction(st) * 100 + 0.5)) .. spin
  if st.overHardLimit then
    s = s .. ' over limit'
  end
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

-- busy starts or stops the statusline's spinner (a turn or a compaction is running).
local function busy()
  local on = state.turn ~= nil or state.compacting
  if on and not state.spinner then
    state.spinner = uv.new_timer()
    state.spinner:start(100, 100, vim.schedule_wrap(redraw))
  elseif not on and state.spinner then
    state.spinner:stop()
    state.spinner:close()
    state.spinner = nil
  end
  redraw()
end

-- streaming is true when ev belongs to the turn the chat shows.
local function streaming(ev)
  return state.turn ~= nil and (state.turn.session == nil or ev.session == nil or ev.session == state.turn.session)
end

local function on_event(ev)
  local t = ev.type
  if t == 'compaction_started' then
    state.compacting = true
    busy()
    notify(ev.summary)
  elseif t == 'compaction_completed' then
    state.compacting = false
    busy()
    notify(ev.summary, ev.partial and levels.WARN or nil)
    redraw()
  elseif t == 'compaction_failed' then
    state.compacting = false
    notify(ev.summary, levels.ERROR)
    redraw()
  elseif t == 'compaction_skipped' then
    state.compacting = false
    state.skipped = ev.message
    notify(ev.summary, levels.INFO)
    redraw()
  elseif t == 'context_reduced' then
    notify(ev.summary)
  elseif t == 'plugin_hook_failed' then
    notify(ev.summary, levels.WARN)
  elseif t == 'delta' and ev.text and ev.text ~= '' and streaming(ev) then
    state.turn.session = state.turn.session or ev.session
    chat.append(ev.text)
  elseif t == 'tool_call' and streaming(ev) then
    chat.append_lines({ '', string.format('→ %s %s · running…', ev.name or '?', chat.summary(ev.arguments)) })
  elseif t == 'tool_result' and streaming(ev) then
    chat.append_lines({ string.format('  %s %s chars', ev.isError and '✗ failed,' or '✓', chat.human(ev.chars or 0)), '' })
  end
end

--- handlers are the client handlers of alisio's notifications (also used by lsp/alisio.lua).
M.handlers = {
  ['alisio/status'] = function(err, params)
    if err or not params then
      return
    end
    if state.session == nil or params.session == state.session then
      local first = state.session == nil
      state.session = params.session
      state.status = params
      redraw()
      if first then
        M.refresh_chat() -- a chat opened before the daemon said which session is the workspace's
      end
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
local function request(method, params, cb, on_id)
  local c = client()
  if not c and not state.client_id then
    if not M.start_here() then
      return
    end
    c = client()
  end
  if not c then
    notify('alisio-lsp is not running: :AlisioRestart starts it (:checkhealth alisio says why it stopped)', levels.ERROR)
    return
  end
  if not state.ready then
    table.insert(state.pending, function()
      request(method, params, cb, on_id)
    end)
    return
  end
  local handler = function(err, result)
    vim.schedule(function()
      cb(err, result)
    end)
  end
  local _, id
  if vim.fn.has('nvim-0.11') == 1 then
    _, id = c:request(method, obj(params), handler)
  else
    _, id = c.request(method, obj(params), handler)
  end
  if on_id then
    on_id(id)
  end
end

local function err_message(err)
  return type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
end

-- attach attaches a file's buffer to the client. A buffer named on the command line is not loaded yet when
-- setup runs from init.lua: its BufReadPost attaches it then.
local function attach(bufnr, id)
  if vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= '' and vim.api.nvim_buf_is_loaded(bufnr) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- start starts alisio-lsp for the workspace of bufnr, or for root when given (or attaches bufnr to the
--- running client).
function M.start(bufnr, root)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local cfg = state.config or M.defaults
  local c = client()
  if c then
    attach(bufnr, c.id)
    return c.id
  end
  if not root then
    local found
    root, found = find_root(vim.api.nvim_buf_get_name(bufnr), cfg.root_markers)
    local home = (uv.os_homedir() or ''):gsub('/$', '')
    if not found and (root == home or root == '/') then
      -- No project above the file: the current directory is the workspace, and here that is a lot to hand over.
      notify(string.format("no project (%s) above %s: the workspace is %s, and the agent's tools can read and change "
        .. 'any file in it. Open files from a project directory to keep them to it.', table.concat(cfg.root_markers, ', '),
        vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t'), root == home and 'your home directory' or 'the whole file system'), levels.WARN)
    end
  end
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.window = capabilities.window or {}
  capabilities.window.workDoneProgress = true
  local conf = {
    name = 'alisio',
    cmd = cfg.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    settings = { alisio = obj(cfg.settings) },
    init_options = { alisio = obj(cfg.settings) },
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
    on_exit = function(code, _, client_id)
      if client_id and state.client_id and client_id ~= state.client_id then
        return -- a client stopped by :AlisioRestart, after its successor started
      end
      state.client_id, state.ready, state.pending = nil, false, {}
      state.status, state.compacting, state.turn = nil, false, nil
      vim.schedule(function()
        busy()
        if code ~= 0 then
          notify('alisio-lsp exited with code ' .. tostring(code) .. ': :AlisioRestart starts it again (:AlisioLog shows its log)', levels.WARN)
        end
      end)
    end,
  }
  state.client_id = vim.lsp.start_client(conf)
  if state.client_id then
    attach(bufnr, state.client_id)
  end
  return state.client_id
end

-- helptags makes :help alisio work when the plugin came without doc/tags (a plain copy of the directory).
local function helptags()
  local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h:h:h') .. '/doc'
  if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd, 'silent! helptags ' .. vim.fn.fnameescape(doc))
  end
end

--- setup configures the plugin and starts the server for the buffers opened from now on.
function M.setup(opts)
  helptags()
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

--- start_here starts alisio-lsp for the project of the current directory, when a command needs it before any
--- file of the workspace was opened; outside any project it says what to do instead, and returns false.
function M.start_here()
  local cfg = state.config or M.defaults
  local root, found = find_root('', cfg.root_markers)
  if not found then
    notify(string.format('alisio-lsp has not started: %s is in no project. Open a file of your project, or :AlisioRestart to start here.',
      vim.fn.fnamemodify(root, ':~')), levels.WARN)
    return false
  end
  if not M.start(vim.api.nvim_get_current_buf(), root) then
    return false
  end
  notify('alisio-lsp started for ' .. vim.fn.fnamemodify(root, ':~') .. ', the project of the current directory')
  return true
end

--- log opens the log of Neovim's language clients, where alisio-lsp writes what went wrong (:AlisioLog).
function M.log()
  -- noautocmd: opening the log is not opening a file of a workspace, which would start the daemon there.
  vim.cmd('noautocmd edit ' .. vim.fn.fnameescape(vim.lsp.get_log_path()))
  vim.bo.readonly = true
end

--- restart stops the server and starts it again (:AlisioRestart).
function M.restart()
  local c = client()
  local started_before = state.client_id ~= nil
  local function again()
    state.client_id = nil
    if M.start(vim.api.nvim_get_current_buf()) then
      local root = vim.lsp.get_client_by_id(state.client_id).config.root_dir
      notify((started_before and 'alisio-lsp restarted for ' or 'alisio-lsp started for ') .. vim.fn.fnamemodify(root, ':~'))
    end
  end
  if not c then
    again()
    return
  end
  c.stop()
  vim.wait(3000, function()
    return state.client_id == nil
  end, 20)
  again()
end

--- compact runs a manual compaction with an optional focus (:AlisioCompact [focus]).
function M.compact(focus)
  state.compacting = true
  busy()
  request('alisio/compact', { session = state.session, focus = (focus ~= '' and focus) or nil }, function(err, res)
    state.compacting = false
    busy()
    if err then
      if err_message(err) ~= state.skipped then -- a skip was already said
        notify('compaction failed: ' .. err_message(err), levels.ERROR)
      end
      return
    end
    state.session = res and res.session or state.session
    M.refresh_chat()
  end)
end

--- recover records that the session's uncertain tool calls have an unknown outcome (:AlisioRecover[!]); without
--- force it asks first, and only when there are some.
function M.recover(force)
  local function ack()
    request('alisio/recover', { session = state.session, acknowledge = true }, function(err, res)
      if err then
        notify('recovery failed: ' .. err_message(err), levels.ERROR)
        return
      end
      notify(string.format('recorded that %d tool call(s) have an unknown outcome; the session can continue', res.recovered or 0))
      M.refresh_chat()
    end)
  end
  request('alisio/status', { session = state.session }, function(err, st)
    if err then
      notify('nothing to recover: ' .. err_message(err))
      return
    end
    local calls = st and st.uncertainCalls or {}
    if #calls == 0 then
      notify('nothing to recover: no tool call of this session was cut off by a crash')
      return
    end
    if force or vim.fn.confirm(string.format('%d tool call(s) were cut off by a crash (%s): their outcome is unknown.\n'
      .. 'Record that, so the session can continue?', #calls, table.concat(calls, ', ')), '&Yes\n&No', 2) == 1 then
      ack()
    end
  end)
end

--- open_chat shows the chat windows, with the actions of its keys.
local function open_chat()
  chat.open({ send = M.prompt, stop = M.stop, earlier = M.earlier })
end

--- chat opens the chat buffer (:Alisio) with the session's conversation.
function M.chat()
  if not client() and not state.client_id and not M.start_here() then
    return
  end
  open_chat()
  M.refresh_chat()
end

--- EARLIER_PAGE is how many more messages :AlisioEarlier shows at a time.
local EARLIER_PAGE = 200

--- refresh_chat redraws the chat from the session's history (when the chat exists and no turn streams): the
--- last page the daemon gives, or from the earliest message the chat already showed, or with earlier one page
--- more.
function M.refresh_chat(earlier)
  if not chat.buf() or state.turn then
    return
  end
  if not state.session then
    chat.show({}, {})
    return
  end
  local params = { session = state.session, includeCompacted = true }
  local shown = state.shown
  if shown and shown.session == state.session then
    if earlier and shown.from == 0 then
      notify('the chat already shows every message of this session')
      return
    end
    params.offset = earlier and math.max(0, shown.from - EARLIER_PAGE) or shown.from
    params.limit = 0
  end
  -- Only the answer to the latest request is drawn: an older one finishing later would show a stale window.
  state.chat_request = (state.chat_request or 0) + 1
  local mine = state.chat_request
  request('alisio/session', params, function(err, res)
    if not err and res and not state.turn and mine == state.chat_request then
      state.shown = { session = res.session.id, from = res.offset or 0 }
      chat.show(res.messages or {}, res.uncertainCalls or {}, { earlier = res.offset or 0, compacted = res.compactedMessages or 0 }, earlier)
    end
  end)
end

--- earlier shows the chat's earlier messages (:AlisioEarlier, or <CR> on the chat's first line).
function M.earlier()
  if not chat.buf() then
    M.chat()
    return
  end
  M.refresh_chat(true)
end

--- stop cancels the running turn (<C-c> in the chat).
function M.stop()
  local c = client()
  if not (c and state.turn and state.turn.id) then
    notify('no turn is running')
    return
  end
  if vim.fn.has('nvim-0.11') == 1 then
    c:cancel_request(state.turn.id)
  else
    c.cancel_request(state.turn.id)
  end
  -- Neovim never calls the request's handler for a cancelled request: the turn ends here.
  state.turn = nil
  busy()
  chat.append_lines({ '', '_The turn was stopped; what it did is kept, and the next prompt continues._', '' })
end

local function scratch(name, lines, ft)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = ft or 'markdown'
  vim.bo[buf].bufhidden = 'hide'
  local shown = vim.fn.bufwinid(buf)
  if shown ~= -1 then
    vim.api.nvim_set_current_win(shown)
    return buf
  end
  -- A view gets a window of its own, as :help does: never the chat's (its folds would hide lines) nor the
  -- input's (four lines, and no place left to type), nor the file the user was editing. It splits the window
  -- the user came from, or another one, or opens on the left when only the chat is shown.
  local function in_chat()
    local cur = vim.api.nvim_get_current_buf()
    return chat.buf() ~= nil and (cur == chat.buf() or cur == chat.input_buf())
  end
  if in_chat() then
    vim.cmd('silent! wincmd p')
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if not in_chat() then
        break
      end
      if vim.api.nvim_win_get_config(w).relative == '' then
        vim.api.nvim_set_current_win(w)
      end
    end
  end
  vim.cmd(in_chat() and 'topleft vsplit' or 'split')
  vim.cmd('buffer ' .. buf)
  vim.wo.foldenable = false
  vim.wo.wrap, vim.wo.linebreak = true, true
  vim.api.nvim_buf_set_keymap(buf, 'n', 'q', '', { noremap = true, silent = true, desc = 'Alisio: close this view', callback = function()
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.cmd('close')
    else
      vim.cmd('silent! buffer #')
    end
  end })
  return buf
end

--- prompt sends text to the agent and streams the turn into the chat buffer (:AlisioPrompt {text}, or <CR> in
--- the chat's input).
function M.prompt(text)
  if state.turn then
    notify('a turn is already running: wait for it, or stop it with <C-c> in the chat', levels.WARN)
    return
  end
  if not chat.buf() then
    open_chat()
  end
  chat.append_lines({ '## You', '' })
  chat.append_lines(vim.split(text, '\n', { plain = true }))
  chat.append_lines({ '', '## Alisio', '', '' })
  state.turn = { session = state.session }
  busy()
  request('alisio/prompt', { session = state.session, text = text }, function(err, res)
    state.turn = nil
    busy()
    if err then
      local msg = err_message(err)
      chat.append_lines({ '', '**Error:** ' .. msg:gsub('\n', ' '), '' })
      notify(msg, levels.ERROR)
      return
    end
    state.session = res.session
    M.refresh_chat()
  end, function(id)
    if state.turn then
      state.turn.id = id
    end
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
    local total = (st.usedChars or 0) + (st.toolsChars or 0)
    local unknown_window = (st.windowSource or ''):find('^maxContextChars') ~= nil
    -- One row a part: its name, its size, then its share of the request as a bar (20 cells: the row fits a
    -- half-width window, and a narrower one cuts the bar, not the name).
    local function row(name, chars)
      local n = total > 0 and math.floor(20 * chars / total + 0.5) or 0
      return string.format('%-26s %11s  %s', name, human(chars) .. ' chars', string.rep('#', n) .. string.rep('.', 20 - n))
    end
    local lines = {
      '# Context of session ' .. (st.session or '?'),
      '',
      string.format('A request sends %s chars; the bars are shares of it.', human(total)),
      '',
      row('instructions', st.instructionsChars or 0),
      row('transcript', st.transcriptChars or 0),
      row('tool catalog', st.toolsChars or 0),
      '',
      string.format('Hard limit: %s of %s chars (instructions and transcript; the tool catalog is sent besides).',
        human(st.usedChars), human(st.hardLimit)),
      unknown_window and string.format("Estimated %s tokens; the model's window is unknown. Compaction starts past %.0f%% of "
          .. 'limits.maxContextChars (the session is at %.0f%% of that point).', human(st.estimatedTokens), (st.threshold or 0) * 100,
          (st.charsFraction or 0) * 100)
        or string.format('Estimated %s tokens of a %s-token window (%s). Compaction starts past %.0f%% of the window (the request '
          .. 'is at %.0f%% of that point) or of limits.maxContextChars (at %.0f%%).', human(st.estimatedTokens), human(st.window),
          st.windowSource or '?', (st.threshold or 0) * 100, (st.windowFraction or 0) * 100, (st.charsFraction or 0) * 100),
      'Next model call: ' .. ((st.nextAction or ''):find('^compact') and 'compacts first' or st.nextAction == 'reduce'
        and 'trims large tool outputs to fit' or 'sends as is') .. '.',
    }
    if st.uncertainCalls and #st.uncertainCalls > 0 then
      table.insert(lines, 'Uncertain tool calls: ' .. table.concat(st.uncertainCalls, ', ') .. ' (:AlisioRecover)')
    end
    -- The transcript by kind, under its line (the daemon counts it: the transcript itself never comes here).
    request('alisio/context', { session = st.session }, function(cerr, ctx)
      if not cerr and ctx then
        local at = 7 -- under the transcript's row
        for _, p in ipairs(ctx.parts or {}) do
          if p.chars > 0 then
            table.insert(lines, at, row('  ' .. p.name, p.chars))
            at = at + 1
          end
        end
      end
      scratch('alisio://context', lines)
    end)
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
        local when = (s.updatedAt or ''):gsub('T', ' '):gsub('%..*$', ''):gsub('Z$', '')
        return string.format('%s%s  %s  (%d messages)', s.id == state.session and '● ' or '  ', when, s.title or s.id, s.messages or 0)
      end,
    }, function(choice)
      if choice then
        M.use_session(choice.id)
        M.refresh_chat()
      end
    end)
  end)
end

--- tools lists the tool sources (built-in, each MCP server, each plugin) with their tool count, catalog size and
--- problem; picking an MCP server or a plugin turns it on or off, live (:AlisioTools).
function M.tools()
  request('alisio/tools', {}, function(err, d)
    if err then
      notify(err_message(err), levels.ERROR)
      return
    end
    local settings = (state.config or M.defaults).settings
    local src = {}
    for _, s in ipairs(d.sources or {}) do
      src[s.source] = s
    end
    local items = {}
    if src['built-in'] then
      table.insert(items, { text = string.format('built-in: %d tools, %s chars', src['built-in'].count, human(src['built-in'].chars)) })
    end
    local names = vim.tbl_keys(settings.mcpServers or {})
    table.sort(names)
    for _, name in ipairs(names) do
      local s, off = src[name], settings.mcpServers[name].disabled == true
      local text = off and string.format('MCP server %s: disabled (pick to enable)', name)
        or string.format('MCP server %s: %d tools, %s chars (pick to disable)', name, s and s.count or 0, human(s and s.chars or 0))
      if s and s.problem and s.problem ~= '' then
        text = text .. ' ⚠ ' .. s.problem
      end
      table.insert(items, { text = text, kind = 'mcpServers', name = name, off = off })
    end
    for i, p in ipairs(settings.plugins or {}) do
      table.insert(items, { text = string.format('plugin %s: %s', p.name, p.disabled and 'disabled (pick to enable)' or 'on (pick to disable)'),
        kind = 'plugins', index = i, name = p.name, off = p.disabled == true })
    end
    table.insert(items, { text = string.format('tool catalog: %s chars in every request; %s', human(d.catalogChars), d.confinement or '') })
    vim.ui.select(items, { prompt = 'Alisio tool sources', format_item = function(i) return i.text end }, function(choice)
      if not choice or not choice.kind then
        return
      end
      if choice.kind == 'mcpServers' then
        settings.mcpServers[choice.name].disabled = not choice.off
      else
        settings.plugins[choice.index].disabled = not choice.off
      end
      local c = client()
      if c then
        c.config.settings = { alisio = obj(settings) }
        if vim.fn.has('nvim-0.11') == 1 then
          c:notify('workspace/didChangeConfiguration', { settings = c.config.settings })
        else
          c.notify('workspace/didChangeConfiguration', { settings = c.config.settings })
        end
      end
      notify(string.format('%s %s %s; it applies from the next model call', choice.kind == 'mcpServers' and 'MCP server' or 'plugin',
        choice.name, choice.off and 'enabled' or 'disabled'))
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
