-- alisio.commands: what the user's commands do with the session — prompt, stop, compact, recover, the chat's
-- pages, and which session the meter and the commands use.
local chat = require('alisio.chat')
local client = require('alisio.client')
local state = require('alisio.state')
local statusline = require('alisio.statusline')
local util = require('alisio.util')

local M = {}
local levels = util.levels

--- compact runs a manual compaction with an optional focus (:AlisioCompact [focus]).
function M.compact(focus)
  state.compacting = true
  statusline.busy()
  client.request('alisio/compact', { session = state.session, focus = (focus ~= '' and focus) or nil }, function(err, res)
    state.compacting = false
    statusline.busy()
    if err then
      -- A skipped compaction (kind nothingToCompact) was already said by its event, and a request never sent
      -- (notSent) by what stopped it; with no session yet (noSession) nothing was tried, and the message says
      -- what to do.
      local kind = type(err) == 'table' and type(err.data) == 'table' and err.data.kind or nil
      if kind == 'noSession' then
        util.notify(util.err_message(err), levels.WARN)
      elseif kind ~= 'nothingToCompact' and kind ~= 'notSent' then
        util.notify('compaction failed: ' .. util.err_message(err), levels.ERROR)
      end
      return
    end
    state.session = res and res.session or state.session
    M.refresh_chat('compacted')
  end)
end

--- recover records that the session's uncertain tool calls have an unknown outcome (:AlisioRecover[!]); without
--- force it asks first, and only when there are some.
function M.recover(force)
  local function ack()
    client.request('alisio/recover', { session = state.session, acknowledge = true }, function(err, res)
      if err then
        util.notify('recovery failed: ' .. util.err_message(err), levels.ERROR)
        return
      end
      local n = res.recovered or 0
      util.notify(string.format('recorded that %d tool %s an unknown outcome; the session can continue', n, n == 1 and 'call has' or 'calls have'))
      M.refresh_chat()
    end)
  end
  client.request('alisio/status', { session = state.session }, function(err, st)
    if err then
      util.notify('nothing to recover: ' .. util.err_message(err))
      return
    end
    local calls = st and st.uncertainCalls or {}
    if #calls == 0 then
      util.notify('nothing to recover: no tool call of this session was cut off by a crash')
      return
    end
    if force or vim.fn.confirm(string.format('%d tool %s cut off by a crash (%s): %s outcome is unknown.\n'
      .. 'Record that, so the session can continue?', #calls, #calls == 1 and 'call was' or 'calls were', table.concat(calls, ', '),
      #calls == 1 and 'its' or 'their'), '&Yes\n&No', 2) == 1 then
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
  if not client.get() and not state.client_id and not client.start_here() then
    return
  end
  open_chat()
  M.refresh_chat()
end

--- MAX_ADDED_CHARS is the most of a file :AlisioAdd puts in a prompt whole; a larger one goes by its path.
local MAX_ADDED_CHARS = 20000

--- add puts the current buffer's lines first..last (the whole file without a range) in the chat's input, for
--- the next prompt (:AlisioAdd, :'<,'>AlisioAdd): its path, the lines, and the text fenced in its filetype.
function M.add(first, last, ranged)
  local src = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(src)
  if name == '' or vim.bo[src].buftype ~= '' then
    util.notify('open a file (and select lines, if you want only those); :AlisioAdd then puts it in the next prompt', util.levels.WARN)
    return
  end
  local where = vim.fn.fnamemodify(name, ':.')
  local lines = ranged and vim.api.nvim_buf_get_lines(src, first - 1, last, false) or vim.api.nvim_buf_get_lines(src, 0, -1, false)
  local block
  if not ranged and #table.concat(lines, '\n') > MAX_ADDED_CHARS then
    block = { string.format('The file `%s` (%d lines, too large to paste here: read it).', where, #lines) }
  else
    local fence = table.concat(lines, '\n'):find('```', 1, true) and '````' or '```'
    local span = not ranged and '' or first == last and string.format(' line %d', first) or string.format(' lines %d–%d', first, last)
    local lang = vim.bo[src].filetype ~= '' and vim.bo[src].filetype or vim.fn.fnamemodify(name, ':e')
    block = { string.format('`%s`%s:', where, span), fence .. lang }
    vim.list_extend(block, lines)
    table.insert(block, fence)
  end
  M.chat()
  if chat.input_buf() then -- (no chat when the daemon could not start: that said why)
    chat.add_to_input(block)
  end
end

--- EARLIER_PAGE is how many more messages :AlisioEarlier shows at a time.
local EARLIER_PAGE = 200

--- refresh_chat redraws the chat from the session's history (when the chat exists and no turn streams): the
--- last page the daemon gives, or from the earliest message the chat already showed; how is 'earlier' (one page
--- more, the view kept where it was) or 'compacted' (the compaction's boundary at the top of the view).
function M.refresh_chat(how)
  local earlier = how == 'earlier'
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
      util.notify('the chat already shows every message of this session')
      return
    end
    params.offset = earlier and math.max(0, shown.from - EARLIER_PAGE) or shown.from
    params.limit = 0
  end
  -- Only the answer to the latest request is drawn: an older one finishing later would show a stale window.
  state.chat_request = (state.chat_request or 0) + 1
  local mine = state.chat_request
  client.request('alisio/session', params, function(err, res)
    if not err and res and not state.turn and mine == state.chat_request then
      state.shown = { session = res.session.id, from = res.offset or 0 }
      local st = state.status
      local notices = st and st.session == res.session.id and st.notices or {}
      chat.show(res.messages or {}, notices, { earlier = res.offset or 0, compacted = res.compactedMessages or 0 },
        earlier and 'kept' or how == 'compacted' and 'boundary' or nil)
    end
  end)
end

--- earlier shows the chat's earlier messages (:AlisioEarlier, or <CR> on the chat's first line).
function M.earlier()
  if not chat.buf() then
    M.chat()
    return
  end
  M.refresh_chat('earlier')
end

--- stop cancels the running turn (<C-c> in the chat).
function M.stop()
  if not (client.get() and state.turn and state.turn.id) then
    util.notify('no turn is running')
    return
  end
  client.cancel(state.turn.id)
  -- Neovim never calls the request's handler for a cancelled request: the turn ends here.
  state.turn = nil
  statusline.busy()
  chat.append_lines({ '', '_The turn was stopped; what it did is kept, and the next prompt continues._', '' })
end

--- prompt sends text to the agent and streams the turn into the chat buffer (:AlisioPrompt {text}, or <CR> in
--- the chat's input).
function M.prompt(text)
  if state.turn then
    util.notify('a turn is already running: wait for it, or stop it with <C-c> in the chat', levels.WARN)
    return
  end
  if not chat.buf() then
    open_chat()
  end
  chat.clear_notes()
  chat.append_lines({ '## You', '' })
  chat.append_lines(vim.split(text, '\n', { plain = true }))
  chat.append_lines({ '', '## Alisio', '', '' })
  state.turn = { session = state.session }
  statusline.busy()
  client.request('alisio/prompt', { session = state.session, text = text }, function(err, res)
    state.turn = nil
    statusline.busy()
    if util.not_sent(err) then
      chat.append_lines({ '', '**Not sent:** alisio-lsp is not running (the message above says why); send it again once it runs.', '' })
      return
    elseif err then
      local msg = util.err_message(err)
      chat.append_lines({ '', '**Error:** ' .. msg:gsub('\n', ' '), '' })
      util.notify(msg, levels.ERROR)
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

--- use_session makes id the session the meter and the commands use.
function M.use_session(id)
  if id ~= state.session then
    chat.clear_notes() -- what they said is about the other session
  end
  state.session, state.status = id, nil
  client.request('alisio/status', { session = id }, function(err, st)
    if not err then
      state.status = st
      statusline.redraw()
    end
  end)
end

-- chosen_file keeps the session chosen last in each workspace (:AlisioSessions, :AlisioNew), by root, so that
-- the next Neovim there opens it again rather than the workspace's most recent.
local function chosen_file()
  return vim.fn.stdpath('data') .. '/alisio-sessions.json'
end

local function read_chosen()
  local ok, t = pcall(function() return vim.fn.json_decode(table.concat(vim.fn.readfile(chosen_file()), '\n')) end)
  return ok and type(t) == 'table' and t or {}
end

--- remember keeps id as the session chosen in the workspace of the running client (nil forgets it).
function M.remember(id)
  local c = client.get()
  local root = c and c.config.root_dir
  if not root then
    return
  end
  local t = read_chosen()
  t[root] = id
  vim.fn.mkdir(vim.fn.fnamemodify(chosen_file(), ':h'), 'p')
  pcall(vim.fn.writefile, { vim.fn.json_encode(vim.tbl_isempty(t) and vim.empty_dict() or t) }, chosen_file())
end

--- restore makes the session chosen last in the client's workspace the one in use when it still exists and
--- is not reported already (reported: the session the daemon's first meter is of).
function M.restore(reported)
  local c = client.get()
  local id = c and c.config.root_dir and read_chosen()[c.config.root_dir]
  if type(id) ~= 'string' or id == reported then
    return
  end
  client.request('alisio/status', { session = id }, function(err, st)
    if err or not st then
      M.remember(nil) -- deleted since: the workspace's most recent it is
      return
    end
    state.session, state.status = st.session, st
    statusline.redraw()
    M.refresh_chat()
  end)
end

--- new_session starts a session of the workspace, titled title when given, and makes it the one the chat, the
--- meter and the commands use (:AlisioNew).
function M.new_session(title)
  client.request('alisio/newSession', { title = title ~= '' and title or nil }, function(err, res)
    if err then
      util.notify(util.err_message(err), levels.ERROR)
      return
    end
    M.use_session(res.session)
    M.remember(res.session)
    M.refresh_chat()
    util.notify('started a new session' .. (title ~= '' and (' (' .. title .. ')') or '') .. ': the next prompt goes to it; :AlisioSessions switches back')
  end)
end

--- sessions picks the session the meter and the commands use (:AlisioSessions).
function M.sessions()
  client.request('alisio/sessions', {}, function(err, res)
    if err then
      util.notify(util.err_message(err), levels.ERROR)
      return
    end
    local list = res.sessions or {}
    if #list == 0 then
      util.notify('no sessions in this workspace yet: :AlisioPrompt starts one')
      return
    end
    vim.ui.select(list, {
      prompt = 'Alisio session',
      format_item = function(s)
        local when = (s.updatedAt or ''):gsub('T', ' '):gsub('%..*$', ''):gsub('Z$', '')
        -- The originals compactions replaced stay in the session's history (the chat's boundary shows them).
        local compacted = (s.compactedMessages or 0) > 0 and string.format('; %d more in its history', s.compactedMessages) or ''
        return string.format('%s%s  %s  (%d messages%s)', s.id == state.session and '● ' or '  ', when, s.title or s.id, s.messages or 0, compacted)
      end,
    }, function(choice)
      if choice then
        M.use_session(choice.id)
        M.remember(choice.id)
        M.refresh_chat()
      end
    end)
  end)
end

return M
