-- Neovim started without a file, in a directory that is in no project: a command says that the daemon starts
-- with a file of the workspace (not that it stopped), and how to start it here; :AlisioRestart then does;
-- :AlisioLog opens the log.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
vim.cmd('cd ' .. vim.fn.fnameescape(os.getenv('ALISIO_CWD')))
H.setup()
vim.cmd('AlisioContext')
H.wait(2000, function() return #H.notes > 0 end, 'a note')
H.record('note', H.notes[1].msg)
H.record('started', require('alisio').client_id() ~= nil)
vim.cmd('AlisioLog')
H.record('log_opened', vim.api.nvim_buf_get_name(0) == vim.lsp.get_log_path())
vim.cmd('AlisioRestart') -- starts it here, as the note says
H.wait(2000, function() return H.noted('started for') ~= nil end, 'a note from :AlisioRestart')
H.record('restart_note', H.noted('started for').msg)
-- Before the workspace has a session, :AlisioContext shows what the first request will hold.
local alisio = require('alisio')
H.wait(10000, function()
  local c = alisio.client_id() and vim.lsp.get_client_by_id(alisio.client_id())
  return c and c.initialized
end, 'the daemon')
vim.cmd('AlisioContext')
H.wait(5000, function() return vim.fn.bufwinid('alisio://context') ~= -1 end, 'the context view')
H.record('first_context', vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://context'), 0, -1, false))
-- With the daemon running, :AlisioLog opens the shared daemon's own log, which it names.
vim.cmd('AlisioLog')
H.record('daemon_log', vim.api.nvim_buf_get_name(0))
-- :'<,'>AlisioAdd puts the selected lines in the chat's input, :AlisioAdd the whole file.
vim.fn.writefile({ 'package main', '', 'func main() {', '\tprintln("hi")', '}' }, 'main.go')
vim.cmd('edit main.go')
vim.cmd('3,5AlisioAdd')
H.wait(5000, function() return require('alisio.chat').input_buf() ~= nil end, 'the chat input')
vim.cmd(vim.fn.bufwinnr('main.go') .. 'wincmd w') -- back to the file, which :AlisioAdd left for the input
vim.cmd('AlisioAdd')
H.record('input', vim.api.nvim_buf_get_lines(require('alisio.chat').input_buf(), 0, -1, false))
H.record('in_input', vim.api.nvim_get_current_buf() == require('alisio.chat').input_buf())
H.done()
