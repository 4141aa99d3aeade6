-- A long session (451 messages of history, most of them compacted): the chat opens on the last 200, says how
-- many earlier ones it does not show, and :AlisioEarlier and <CR> on its first line show them, keeping the
-- line the user was on.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup()
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.statusline():find('%%') ~= nil end, 'the meter of the session')
vim.cmd('Alisio')
local chat = require('alisio.chat')
local function lines() return chat.buf() and vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false) or {} end
H.wait(5000, function() return (lines()[1] or ''):find('earlier') ~= nil end, 'the chat on its last page')
H.record('first_page', lines())
vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf()))
vim.fn.cursor(vim.fn.search('^question 223$'), 1)
H.record('reading', vim.api.nvim_get_current_line())
vim.cmd('AlisioEarlier')
H.wait(5000, function() return (lines()[1] or ''):find('^▲ 51 earlier') ~= nil end, 'the earlier messages')
H.record('second_page', lines())
H.record('still_reading', vim.api.nvim_get_current_line())
vim.api.nvim_win_set_cursor(0, { 1, 0 })
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
H.wait(5000, function() return (lines()[1] or ''):find('earlier') == nil end, 'every message after <CR> on the first line')
H.record('every', lines())
H.done()
