-- Attach, the meter in the statusline (with tools.approval "auto": nothing asks), :AlisioPrompt streaming, :AlisioCompact parser changing the meter.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
-- tools.approval = 'auto' (set by the user) holds for this editor too: the command runs unasked.
local alisio = H.setup({ settings = { tools = { approval = 'auto' } } })
vim.o.statusline = "main.go%=%{v:lua.require'alisio'.statusline()} "
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.client_id() ~= nil end, 'the client')
H.record('before_prompt', alisio.statusline())
vim.cmd('AlisioPrompt run the build and say hello')
H.wait(20000, function()
  local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://chat'), 0, -1, false)
  return table.concat(lines, '\n'):find('hello from the test provider') ~= nil
end, 'the reply in the chat')
H.record('prompt_buffer', vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://chat'), 0, -1, false))
-- The meter of the finished turn: the prompt, the call, its 6000-char result and the reply.
H.wait(5000, function() local st = alisio.status() return st and st.messages >= 4 end, 'the meter of the whole turn')
local before = alisio.statusline()
H.record('before_compact', before)
H.record('rendered_before', vim.api.nvim_eval_statusline(vim.o.statusline, {}).str)
-- A small chat window: what it shows after the compaction is the boundary at the top, not the end of the turn.
local chat_win = vim.fn.bufwinid('alisio://chat')
vim.api.nvim_win_set_height(chat_win, 3)
vim.cmd('AlisioCompact parser')
H.wait(20000, function() return H.noted('compacted') ~= nil end, 'the compaction notification')
H.wait(5000, function() local st = alisio.status() return st and st.messages < 4 and alisio.statusline():find('[%d.]+k?/') ~= nil end, 'the meter after the compaction')
H.record('after_compact', alisio.statusline())
H.wait(5000, function()
  return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://chat'), 0, -1, false), '\n'):find('compacted into a checkpoint') ~= nil
end, 'the compaction boundary in the chat')
H.record('chat_top_after_compact', vim.api.nvim_win_call(chat_win, function() return vim.fn.getline(vim.fn.line('w0')) end))
H.record('rendered_after', vim.api.nvim_eval_statusline(vim.o.statusline, {}).str)
-- Again at once: nothing left to summarize, said once (the event's sentence), not also as an error.
local notes = #H.notes
vim.cmd('AlisioCompact')
H.wait(10000, function() return H.noted('compaction skipped') ~= nil or H.noted('compaction failed') ~= nil end, 'the second compaction said')
vim.wait(300)
local again = {}
for i = notes + 1, #H.notes do
  table.insert(again, { msg = H.notes[i].msg, level = H.notes[i].level })
end
H.record('compact_again', again)
local file = vim.api.nvim_get_current_buf()
vim.cmd('AlisioCheckpoint')
H.wait(5000, function() return vim.fn.bufnr('alisio://checkpoint') ~= -1 end, 'the checkpoint buffer')
H.record('checkpoint', vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://checkpoint'), 0, -1, false))
-- A view opens in a window of its own, read-only; q closes it and the file is still where it was.
H.record('view_beside_file', vim.fn.bufwinid(file) ~= -1 and vim.fn.bufwinid('alisio://checkpoint') ~= vim.fn.bufwinid(file))
H.record('view_modifiable', vim.bo.modifiable)
vim.api.nvim_feedkeys('q', 'x', false)
H.record('file_after_q', vim.fn.bufwinid(file) ~= -1 and vim.fn.bufwinid('alisio://checkpoint') == -1)
vim.cmd('AlisioContext')
H.wait(5000, function() return vim.fn.bufnr('alisio://context') ~= -1 end, 'the context buffer')
H.record('context', vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://context'), 0, -1, false))
vim.cmd('checkhealth alisio')
H.record('health', vim.api.nvim_buf_get_lines(0, 0, -1, false))
H.done()
