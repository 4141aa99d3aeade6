-- A long session (451 messages of history, most of them compacted): the chat opens on the last 200, says how
-- many earlier ones it does not show, and :AlisioEarlier and <CR> on its first line show them, keeping the
-- line the user was on.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup()
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.statusline():find('[%d.]+k?/') ~= nil end, 'the meter of the session')
vim.cmd('Alisio')
local chat = require('alisio.chat')
local function lines() return chat.buf() and vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false) or {} end
H.wait(5000, function() return (lines()[1] or ''):find('^▲') ~= nil end, 'the chat on its last page')
H.record('first_page', lines())
vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf()))
vim.fn.cursor(vim.fn.search('^question 223$'), 1)
H.record('reading', vim.api.nvim_get_current_line())
vim.cmd('AlisioEarlier')
H.wait(5000, function() return (lines()[1] or ''):find('^▲ 51 compacted') ~= nil end, 'the earlier messages')
H.record('second_page', lines())
H.record('still_reading', vim.api.nvim_get_current_line())
vim.api.nvim_win_set_cursor(0, { 1, 0 })
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
H.wait(5000, function() return (lines()[1] or ''):find('^▲') == nil end, 'every message after <CR> on the first line')
H.record('every', lines())
vim.cmd('AlisioEarlier')
H.wait(2000, function() return H.noted('already shows every message') ~= nil end, 'the note that nothing is left to show')
-- :AlisioContext from inside the chat opens beside it, every line of it visible (no fold of the chat's).
vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf()))
vim.cmd('AlisioContext')
H.wait(5000, function() return vim.fn.bufwinid('alisio://context') ~= -1 end, 'the context view in a window')
local win = vim.fn.bufwinid('alisio://context')
local hidden = 0
vim.api.nvim_win_call(win, function()
  for l = 1, vim.fn.line('$') do
    if vim.fn.foldclosed(l) ~= -1 then
      hidden = hidden + 1
    end
  end
end)
H.record('context_hidden_lines', hidden)
H.record('chat_still_shown', vim.fn.bufwinid(chat.buf()) ~= -1)
H.record('context_lines', vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://context'), 0, -1, false))
-- q closes the view; :AlisioContext from the chat's input does not take the input's window either.
vim.api.nvim_set_current_win(win)
vim.api.nvim_feedkeys('q', 'x', false)
H.record('closed_by_q', vim.fn.bufwinid('alisio://context') == -1)
H.record('input_height', vim.api.nvim_win_get_height(vim.fn.bufwinid(chat.input_buf())))
vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.input_buf()))
vim.cmd('AlisioContext')
H.wait(5000, function() return vim.fn.bufwinid('alisio://context') ~= -1 end, 'the context view again')
H.record('input_still_shown', vim.fn.bufwinid(chat.input_buf()) ~= -1)
-- The empty input shows how to send as a placeholder, gone once something is typed.
local ns = vim.api.nvim_create_namespace('alisio_input_hint')
local function hints() return #vim.api.nvim_buf_get_extmarks(chat.input_buf(), ns, 0, -1, {}) end
H.record('hint_empty', hints())
vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.input_buf()))
vim.api.nvim_feedkeys('ihello', 'xt', false)
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc>', true, false, true), 'xt', false)
vim.wait(200, function() return hints() == 0 end, 10)
H.record('hint_typed', hints())
vim.api.nvim_buf_set_lines(chat.input_buf(), 0, -1, false, {}) -- as a send empties it
vim.wait(200, function() return hints() == 1 end, 10)
H.record('hint_emptied', hints())
-- An input window closed by the user comes back with :Alisio.
vim.api.nvim_win_close(vim.fn.bufwinid(chat.input_buf()), true)
vim.cmd('Alisio')
H.record('input_back', vim.fn.bufwinid(chat.input_buf()) ~= -1)
H.done()
