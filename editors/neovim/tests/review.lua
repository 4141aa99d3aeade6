-- Review before it lands: an edit opens as a diff (the file against the proposed text) in its own tab; ga in
-- it accepts, and the buffer of the edited file shows the change at once (no stale buffer, no warning on :w);
-- a new file rejected with gr is not written; :AlisioUndoTurn puts the file back and reloads its buffer.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup()
local ws = os.getenv('ALISIO_WS')
vim.cmd('edit ' .. ws .. '/main.go')
local main = vim.api.nvim_get_current_buf()
H.wait(10000, function() return alisio.client_id() ~= nil and vim.lsp.get_client_by_id(alisio.client_id()).initialized end, 'the client')
vim.cmd('Alisio') -- the chat, open while the turn runs: the call's line says it waits for the review
vim.cmd('AlisioPrompt mark main')
H.wait(15000, function() return alisio.review() ~= nil end, 'the edit to review')
H.record('edit_review', alisio.review())
H.record('chat_in_review', vim.api.nvim_buf_get_lines(require('alisio.chat').buf(), 0, -1, false))
H.record('tabs', #vim.api.nvim_list_tabpages())
local wins = vim.api.nvim_tabpage_list_wins(0)
local diff = {}
for _, w in ipairs(wins) do
  table.insert(diff, { name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)), ':t'), diff = vim.wo[w].diff,
    lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false) })
end
H.record('diff', diff)
vim.api.nvim_feedkeys('ga', 'x', false)
H.wait(15000, function() return alisio.review() ~= nil and alisio.review().path == 'new.txt' end, 'the new file to review')
H.record('tabs_after_accept', #vim.api.nvim_list_tabpages())
vim.api.nvim_feedkeys('gr', 'x', false)
H.wait(15000, function() return not H.spinning(alisio.statusline()) and alisio.status() ~= nil end, 'the end of the turn')
vim.wait(300)
H.record('chat_after_answers', vim.api.nvim_buf_get_lines(require('alisio.chat').buf(), 0, -1, false))
H.record('tabs_after_turn', #vim.api.nvim_list_tabpages())
H.record('main_after_turn', vim.api.nvim_buf_get_lines(main, 0, -1, false))
H.record('main_modified', vim.bo[main].modified)
H.record('new_exists', vim.loop.fs_stat(ws .. '/new.txt') ~= nil)
vim.cmd('AlisioUndoTurn')
H.wait(10000, function() return H.noted("undid the last turn's changes") ~= nil end, 'the undo')
vim.wait(200)
H.record('main_after_undo', vim.api.nvim_buf_get_lines(main, 0, -1, false))
-- In the chat, the edit's details are a diff and the write's the file's content, not their JSON.
vim.cmd('Alisio')
local chat = require('alisio.chat')
H.wait(5000, function()
  return chat.buf() and table.concat(vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false), '\n'):find('change to main.go:', 1, true) ~= nil
end, 'the edit in the chat')
H.record('chat', vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false))
-- :AlisioNew starts a session: the meter, the chat and the next prompt use it.
local first = alisio.session()
chat.note('the first session was compacted', 'compaction') -- as a compaction's notice puts it
vim.cmd('AlisioNew second try')
H.wait(10000, function() return H.noted('started a new session') ~= nil and alisio.status() ~= nil end, 'the new session')
vim.wait(200)
H.record('chat_of_new_session', vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false))
H.record('new_session', { first = first, now = alisio.session(), messages = alisio.status().messages, note = H.noted('started a new session').msg })
H.done()
