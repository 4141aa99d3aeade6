-- alisio.checkpoint: correcting and undoing compactions — :AlisioEditCheckpoint opens the checkpoint as a JSON
-- buffer that :w sends to the daemon (which checks it against the checkpoint schema and stores it as a new
-- version), and :AlisioUndoCompact puts the conversation back as it was before the last compaction.
local client = require('alisio.client')
local state = require('alisio.state')
local util = require('alisio.util')

local M = {}

-- The checkpoint's fields in the schema's order, and a relevant file's.
local fields = { 'goal', 'instructions', 'discoveries', 'accomplished', 'currentState', 'nextSteps', 'relevantFiles' }
local file_fields = { 'path', 'reason' }

--- pretty writes the editable checkpoint as indented JSON lines, its fields in the schema's order.
local function pretty(doc)
  local out = { '{' }
  local function str(s)
    return vim.fn.json_encode(s == vim.NIL and '' or s)
  end
  for i, name in ipairs(fields) do
    local v, comma = doc[name], i < #fields and ',' or ''
    if type(v) ~= 'table' then
      table.insert(out, string.format('  "%s": %s%s', name, str(v or ''), comma))
    elseif #v == 0 then
      table.insert(out, string.format('  "%s": []%s', name, comma))
    else
      table.insert(out, string.format('  "%s": [', name))
      for j, item in ipairs(v) do
        local sep = j < #v and ',' or ''
        if type(item) == 'table' then
          local parts = {}
          for _, k in ipairs(file_fields) do
            table.insert(parts, string.format('"%s": %s', k, str(item[k] or '')))
          end
          table.insert(out, '    { ' .. table.concat(parts, ', ') .. ' }' .. sep)
        else
          table.insert(out, '    ' .. str(item) .. sep)
        end
      end
      table.insert(out, '  ]' .. comma)
    end
  end
  table.insert(out, '}')
  return out
end

--- save sends buffer buf, the edited checkpoint of session, to the daemon as typed (:w); a refusal says why and
--- leaves the buffer modified.
local function save(buf, session)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  -- base: the checkpoint this edit began from; the daemon refuses the save when another is in force by now.
  client.request('alisio/setCheckpoint', { session = session, checkpoint = text, base = vim.b[buf].alisio_base }, function(err, res)
    if err then
      util.notify(util.err_message(err), util.levels.ERROR) -- the daemon's words say nothing was saved
      return
    end
    if vim.api.nvim_buf_is_valid(buf) then
      vim.bo[buf].modified = false
      vim.b[buf].alisio_base = res and res.id or nil -- the edit saved is the checkpoint in force now
    end
    util.notify('checkpoint saved; the next request sends it (:AlisioUndoCompact puts back the checkpoint as it was before your saves since the last message)')
    require('alisio.views').checkpoint(true)
    require('alisio.commands').refresh_chat()
  end)
end

--- write_elsewhere writes the lines of buf that a :w {file} names ('[ to ']) to that file, as Vim would (an
--- existing file only with !): a copy of the edit, which leaves the checkpoint in force and the buffer as they are.
local function write_elsewhere(buf, path)
  if vim.fn.filereadable(path) == 1 and vim.v.cmdbang ~= 1 then
    util.notify(string.format('%s exists: :w! %s overwrites it (the checkpoint is not saved by writing elsewhere; :w saves it)',
      path, vim.fn.fnameescape(path)), util.levels.ERROR)
    return
  end
  local first, last = vim.api.nvim_buf_get_mark(buf, '[')[1], vim.api.nvim_buf_get_mark(buf, ']')[1]
  local lines = vim.api.nvim_buf_get_lines(buf, math.max(0, first - 1), last > 0 and last or -1, false)
  if vim.fn.writefile(lines, path) ~= 0 then
    util.notify('could not write ' .. path, util.levels.ERROR)
    return
  end
  util.notify(string.format('wrote %d lines to %s; the checkpoint is not saved by writing elsewhere (:w saves it)', #lines, path))
end

local function buffer_name(session)
  return 'alisio://edit-checkpoint/' .. session .. '.json'
end

--- fill puts the editable checkpoint res into buffer buf, unmodified.
local function fill(buf, res)
  vim.b[buf].alisio_base = res.id
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, pretty(res.editable))
  vim.bo[buf].filetype = 'json'
  vim.bo[buf].modified = false
end

--- load puts session's checkpoint now in force into its edit buffer buf (a line saying there is none, when
--- there is none), unmodified: the buffer's read (:e!) and what follows a change made elsewhere.
local function load(buf, session)
  client.request('alisio/checkpoint', { session = session }, function(err, res)
    if err or not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    if type(res.editable) == 'table' then
      fill(buf, res)
    else
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '// this session has no checkpoint any more (the compaction was undone): :AlisioCompact writes one' })
      vim.bo[buf].modified = false
    end
  end)
end

--- edit opens the current checkpoint for editing (:AlisioEditCheckpoint), in the window that shows it already
--- when one does.
function M.edit()
  client.request('alisio/checkpoint', { session = state.session }, function(err, res)
    if err then
      util.notify(util.err_message(err), util.levels.ERROR)
      return
    end
    if type(res.editable) ~= 'table' then
      util.notify('this session has no checkpoint: it has not been compacted, or its compactions were undone (:AlisioCompact writes one)')
      return
    end
    local name = buffer_name(res.session)
    local buf = vim.fn.bufnr(name)
    if buf == -1 then
      buf = vim.api.nvim_create_buf(true, false)
      vim.api.nvim_buf_set_name(buf, name)
      vim.bo[buf].buftype = 'acwrite'
      vim.api.nvim_create_autocmd('BufWriteCmd', { buffer = buf, callback = function(a)
        if a.match == name then
          save(buf, res.session)
        else -- :w {file}: a copy, not a save
          write_elsewhere(buf, a.match)
        end
      end })
      vim.api.nvim_create_autocmd('BufReadCmd', { buffer = buf, callback = function() load(buf, res.session) end })
    end
    if vim.bo[buf].modified then
      util.notify('your unsaved edit of the checkpoint is kept: :w saves it, :e! shows the one in force', util.levels.WARN)
    else
      fill(buf, res)
    end
    if require('alisio.views').show(buf) then
      vim.cmd('setlocal nowrap')
    end
  end)
end

--- changed brings the views of session's checkpoint up to date after it changed (why: 'a compaction', 'an
--- undo'): the checkpoint view, and the edit buffer unless it holds an unsaved change, which is kept and said.
function M.changed(session, why)
  require('alisio.views').checkpoint(true)
  local buf = vim.fn.bufnr(buffer_name(session or ''))
  if buf == -1 then
    return
  end
  if vim.bo[buf].modified then
    util.notify(string.format('the checkpoint changed (%s); your unsaved edit is kept, but it began from the one before, so :w refuses it: '
      .. ':w FILE keeps a copy, :e! shows the one in force', why), util.levels.WARN)
    return
  end
  load(buf, session)
end

--- undo undoes the session's last compaction, reduction or checkpoint edit (:AlisioUndoCompact) and says what
--- the daemon did, as a warning when the restored conversation will be compacted again.
function M.undo()
  client.request('alisio/undoCompaction', { session = state.session }, function(err, res)
    if err then
      util.notify(util.err_message(err), util.levels.WARN)
      return
    end
    util.notify(res.message, (res.willCompact or res.overHardLimit) and util.levels.WARN or nil)
    M.changed(res.session, 'an undo')
    require('alisio.commands').refresh_chat()
  end)
end

return M
