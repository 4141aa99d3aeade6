-- :AlisioEditCheckpoint, a bad save refused and a good one stored; :AlisioUndoCompact undoing the edit, then the
-- compaction, then saying there is nothing left.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup({ settings = { tools = { approval = 'auto' } } })
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.client_id() ~= nil end, 'the client')
vim.cmd('AlisioPrompt run the build and say hello')
H.wait(20000, function() local st = alisio.status() return st and st.messages >= 4 end, 'the turn')
vim.cmd('AlisioCompact')
H.wait(20000, function() return H.noted('compacted') ~= nil end, 'the compaction')
vim.cmd('AlisioEditCheckpoint')
local name
H.wait(5000, function()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find('alisio://edit-checkpoint/', 1, true) then
      name = vim.api.nvim_buf_get_name(b)
      return true
    end
  end
end, 'the checkpoint buffer')
local buf = vim.fn.bufnr(name)
H.record('buffer', vim.api.nvim_buf_get_lines(buf, 0, -1, false))
H.record('filetype', vim.bo[buf].filetype)
H.record('buftype', vim.bo[buf].buftype)
H.record('current_is_checkpoint', vim.api.nvim_get_current_buf() == buf)
-- A goal that is not a string: refused, said, the buffer still modified.
vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '  "goal": 5,' })
vim.cmd('write')
H.wait(5000, function() return H.noted('Nothing was saved') ~= nil end, 'the refusal')
H.record('refusal', H.noted('Nothing was saved'))
H.record('modified_after_refusal', vim.bo[buf].modified)
vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '  "goal": "Edited in Neovim",' })
vim.cmd('write')
H.wait(5000, function() return H.noted('checkpoint saved') ~= nil end, 'the save')
H.record('modified_after_save', vim.bo[buf].modified)
vim.cmd('AlisioCheckpoint')
H.wait(5000, function() return vim.fn.bufnr('alisio://checkpoint') ~= -1 end, 'the checkpoint view')
local view = vim.fn.bufnr('alisio://checkpoint')
H.record('view', vim.api.nvim_buf_get_lines(view, 0, -1, false))
local function text(b) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') end
-- :w! {file} writes a copy there: the checkpoint in force and the buffer's modified flag stay as they were.
local copy = vim.fn.tempname() .. '.json'
vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '  "goal": "Only in the copy",' })
vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
vim.cmd('write! ' .. vim.fn.fnameescape(copy))
H.wait(5000, function() return H.noted('wrote') ~= nil end, 'the copy written')
vim.wait(500) -- a save, were it sent, would have changed the view by now
H.record('copy', table.concat(vim.fn.readfile(copy), '\n'))
H.record('view_after_copy', text(view))
H.record('modified_after_copy', vim.bo[buf].modified)
-- Another window saves a checkpoint meanwhile: this buffer's edit began from the one before, so :w is refused
-- and the edit kept; :e! then shows the one in force.
local session = vim.api.nvim_buf_get_name(buf):match('edit%-checkpoint/(.-)%.json$')
local other
vim.lsp.get_client_by_id(alisio.client_id()).request('alisio/setCheckpoint',
  { session = session, checkpoint = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'):gsub('Only in the copy', 'Saved elsewhere') },
  function(err) other = err or true end)
H.wait(5000, function() return other ~= nil end, 'the save from another window')
vim.cmd('write')
H.wait(5000, function() return H.noted('changed since this edit began') ~= nil end, 'the stale save refused')
H.record('stale_refusal', H.noted('changed since this edit began'))
H.record('modified_after_stale', vim.bo[buf].modified)
vim.cmd('edit!')
H.wait(5000, function() return text(buf):find('Saved elsewhere', 1, true) ~= nil end, ':e! showing the checkpoint saved elsewhere')
-- A second save: the open view follows it.
vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '  "goal": "Edited twice",' })
vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
vim.cmd('write')
H.wait(5000, function() return text(view):find('Edited twice', 1, true) ~= nil end, 'the view showing the second save')
-- :AlisioEditCheckpoint again opens no second window on the buffer; :e! puts back what is saved.
vim.cmd('AlisioEditCheckpoint')
H.wait(5000, function() return vim.api.nvim_get_current_buf() == buf end, 'the edit buffer again')
H.record('windows_on_edit_buffer', #vim.fn.win_findbuf(buf))
vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '  "goal": "not saved",' })
vim.cmd('edit!') -- the edit buffer is the current one
H.wait(5000, function() return text(buf):find('Edited twice', 1, true) ~= nil end, ':e! reading the checkpoint again')
H.record('modified_after_reread', vim.bo[buf].modified)
vim.cmd('AlisioUndoCompact')
H.wait(5000, function() return H.noted('Undid the last checkpoint edit') ~= nil end, 'the undo of the edit')
H.record('undo_of_edits', H.noted('Undid the last checkpoint edit'))
H.wait(5000, function()
  return not text(buf):find('Edited', 1, true) and not text(view):find('Edited', 1, true)
end, 'the edit buffer and the view showing the checkpoint in force')
H.record('buffer_after_undo', vim.api.nvim_buf_get_lines(buf, 0, -1, false))
vim.cmd('AlisioUndoCompact')
H.wait(5000, function() return H.noted('Undid the last compaction') ~= nil end, 'the undo of the compaction')
vim.cmd('AlisioUndoCompact')
H.wait(5000, function() return H.noted('nothing to undo') ~= nil end, 'nothing left to undo')
-- Compacted again after the undo: the chat's boundary counts what this compaction replaced, not the undone
-- checkpoint or its edits.
local function compactions()
  local n = {}
  for _, note in ipairs(H.notes) do
    if note.msg:find('compacted %d+ messages') then table.insert(n, note.msg) end
  end
  return n
end
local before = #compactions()
vim.cmd('AlisioCompact')
H.wait(20000, function() return #compactions() > before end, 'the second compaction')
H.record('second_compaction', compactions()[#compactions()])
vim.cmd('Alisio')
H.wait(5000, function()
  local b = require('alisio.chat').buf()
  return b and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'):find('compacted into a checkpoint') ~= nil
end, 'the boundary in the chat')
for _, l in ipairs(vim.api.nvim_buf_get_lines(require('alisio.chat').buf(), 0, -1, false)) do
  if l:find('compacted into a checkpoint', 1, true) then H.record('boundary', l) end
end
H.done()
