-- A file in no project, opened from the home directory: the daemon starts with the home directory as its
-- workspace, and says what that means.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
vim.cmd('cd ' .. vim.fn.fnameescape(os.getenv('HOME')))
local alisio = H.setup()
vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('HOME') .. '/notes.md'))
H.wait(5000, function() return alisio.client_id() ~= nil end, 'the client')
H.record('root', vim.lsp.get_client_by_id(alisio.client_id()).config.root_dir)
H.done()
