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
H.wait(2000, function() return #H.notes > 1 end, 'a note from :AlisioRestart')
H.record('restart_note', H.notes[2].msg)
H.done()
