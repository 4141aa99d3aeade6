-- alisio.review: review before it lands. The daemon asks (alisio/approve, a notification here, answered by
-- alisio/approvalAnswer) before an edit, a write or a command runs: an edit opens in a tab as a diff — the file
-- against the proposed text — and a command in a small window; ga accepts (runs), gr rejects (skips), as do
-- :AlisioAccept and :AlisioReject. Buffers of files the agent changed are reloaded; :AlisioUndoTurn puts back
-- what the last turn wrote.
local client = require('alisio.client')
local state = require('alisio.state')
local util = require('alisio.util')

local M = {}

-- open is the question on screen: { approval, kind, path, tab, bufs }.
local open

local function close_view()
  if not open then
    return
  end
  local q = open
  open = nil
  if q.tab and vim.api.nvim_tabpage_is_valid(q.tab) and #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(q.tab))
  end
  for _, b in ipairs(q.bufs) do
    if vim.api.nvim_buf_is_valid(b) then
      vim.api.nvim_buf_delete(b, { force = true })
    end
  end
end

local function scratch(name, lines, ft)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = 'nofile', 'wipe', false
  if ft and ft ~= '' then
    vim.bo[buf].filetype = ft
  end
  vim.bo[buf].modifiable = false
  return buf
end

local function keys(buf, accept_desc, reject_desc)
  vim.api.nvim_buf_set_keymap(buf, 'n', 'ga', '', { noremap = true, silent = true, desc = accept_desc, callback = function() M.answer(true) end })
  vim.api.nvim_buf_set_keymap(buf, 'n', 'gr', '', { noremap = true, silent = true, desc = reject_desc, callback = function() M.answer(false) end })
end

local function lines_of(text)
  local l = vim.split(text or '', '\n', { plain = true })
  if l[#l] == '' then
    table.remove(l) -- the text's last line break ends its last line
  end
  return l
end

-- WAITS is the chat's line under a call that waits for the user's review.
local WAITS = '  ⏸ waits for your review: ga accepts, gr rejects (:AlisioAccept, :AlisioReject)'

-- answered takes from the chat what said that a question waits: its note, and the line under its call.
local function answered()
  local chat = require('alisio.chat')
  chat.drop_note('approval')
  chat.unsay(WAITS)
end

-- deferred is a question that came while the user was typing: it opens when they leave insert mode.
local deferred

--- ask shows the question of an alisio/approve notification. While the user types (insert mode) it waits for
--- them to leave insert mode, saying so: opening its tab then would take the keys that follow.
function M.ask(p)
  if not p.noted and state.turn then
    -- The call's line in the chat says running…: it waits for the user, and the chat says so under it.
    p.noted = true
    require('alisio.chat').append_lines({ WAITS })
  end
  local mode = vim.api.nvim_get_mode().mode
  if mode:sub(1, 1) == 'i' or mode:sub(1, 1) == 'R' then
    deferred = p
    vim.api.nvim_create_autocmd('InsertLeave', { once = true, callback = function()
      vim.schedule(function()
        if deferred == p then
          deferred = nil
          M.ask(p)
        end
      end)
    end })
    util.notice(string.format('wants to %s: its review opens when you leave insert mode (Esc)',
      p.kind == 'edit' and ((p.exists and 'change ' or 'create ') .. (p.path or '')) or ('run ' .. (p.command or ''))), nil, 'approval')
    return
  end
  close_view() -- a question left open by a stopped turn
  local root = (client.get() and client.get().config.root_dir) or vim.fn.getcwd()
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local placeholder = vim.api.nvim_get_current_buf()
  open = { approval = p.approval, kind = p.kind, path = p.path, tab = tab, bufs = {} }
  if p.kind == 'edit' then
    local file = root .. '/' .. p.path
    local ok, ft = pcall(vim.filetype.match, { filename = file }) -- 0.8+; 0.7 shows the diff without a filetype
    ft = ok and ft or ''
    local left
    if p.exists then
      left = scratch('alisio://current/' .. p.path, lines_of(table.concat(vim.fn.readfile(file, 'b'), '\n')), ft)
    else
      left = scratch('alisio://current/' .. p.path .. ' (new file)', {}, ft)
    end
    local right = scratch('alisio://proposed/' .. p.path, lines_of(p.newText), ft)
    open.bufs = { left, right }
    vim.api.nvim_win_set_buf(0, left)
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    vim.api.nvim_win_set_buf(0, right)
    vim.cmd('diffthis')
    keys(left, 'Alisio: accept the change', 'Alisio: reject the change')
    keys(right, 'Alisio: accept the change', 'Alisio: reject the change')
    util.notice(string.format('wants to %s %s: ga accepts, gr rejects (:AlisioAccept, :AlisioReject)', p.exists and 'change' or 'create', p.path), nil, 'approval')
  else
    local buf = scratch('alisio://command', { 'Alisio wants to run, in ' .. vim.fn.fnamemodify(root, ':~') .. ':', '', '    ' .. (p.command or ''), '',
      'ga runs it · gr skips it (:AlisioAccept, :AlisioReject)' }, '')
    open.bufs = { buf }
    vim.api.nvim_win_set_buf(0, buf)
    keys(buf, 'Alisio: run the command', 'Alisio: skip the command')
    util.notice('wants to run: ' .. (p.command or '') .. ' — ga runs it, gr skips it (:AlisioAccept, :AlisioReject)', nil, 'approval')
  end
  if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= vim.api.nvim_get_current_buf() and vim.api.nvim_buf_get_name(placeholder) == '' then
    pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
  end
end

--- answer answers the question on screen (:AlisioAccept, :AlisioReject, ga, gr).
function M.answer(approved)
  local q = open or deferred
  if not q then
    util.notify('no change waits for an answer')
    return
  end
  deferred = nil
  close_view()
  answered()
  client.request('alisio/approvalAnswer', { approval = q.approval, approved = approved }, function(err)
    if err then
      util.notify(util.err_message(err), util.levels.WARN)
    end
  end)
end

--- withdrawn closes the question the daemon no longer waits for (no answer in time, the turn stopped).
function M.withdrawn(p)
  if deferred and deferred.approval == p.approval then
    answered()
    deferred = nil
    util.notice('the change no longer waits for an answer (no answer in time, or the turn stopped): it was not made', util.levels.WARN, 'approval')
  elseif open and open.approval == p.approval then
    answered()
    close_view()
    util.notify('the change no longer waits for an answer (no answer in time, or the turn stopped): it was not made', util.levels.WARN)
  end
end

--- pending is the question on screen, for the statusline and tests (nil when none; deferred: it waits for
--- the user to leave insert mode).
function M.pending()
  if deferred then
    return { kind = deferred.kind, path = deferred.path, deferred = true }
  end
  return open and { kind = open.kind, path = open.path } or nil
end

--- reload reloads the buffers of the files at paths (relative to the workspace) that have no unsaved changes,
--- so that no buffer shows a file the agent changed as it was; it says which buffers it could not.
function M.reload(paths)
  local root = (client.get() and client.get().config.root_dir) or vim.fn.getcwd()
  local dirty = {}
  for _, p in ipairs(paths or {}) do
    local buf = vim.fn.bufnr(vim.fn.fnamemodify(root .. '/' .. p, ':p'))
    if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
      if vim.bo[buf].modified then
        table.insert(dirty, p)
      else
        vim.api.nvim_buf_call(buf, function() vim.cmd('silent! edit') end)
      end
    end
  end
  if #dirty > 0 then
    util.notify(table.concat(dirty, ', ') .. ' changed on disk, and your buffer has unsaved changes: :e! takes the file, :w keeps yours',
      util.levels.WARN)
  end
end

--- undo_turn puts back the files the session's last turn wrote (:AlisioUndoTurn); with force (!) also those
--- changed since.
function M.undo_turn(force)
  client.request('alisio/undoTurn', { session = state.session, force = force or nil }, function(err, res)
    if err then
      util.notify(util.err_message(err), util.levels.WARN)
      return
    end
    local restored, changed = res.restored or {}, res.changedSince or {}
    M.reload(restored)
    if #restored > 0 then
      util.notify("undid the last turn's changes to " .. table.concat(restored, ', '))
    end
    if #changed > 0 then
      util.notify(table.concat(changed, ', ') .. ' changed after the turn wrote them and were left as they are: :AlisioUndoTurn! restores them too',
        util.levels.WARN)
    end
    require('alisio.commands').refresh_chat()
  end)
end

return M
