-- Neovim started without a file: the daemon starts with the first file opened, and a command run before that
-- says so (not that the server stopped).
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
H.setup()
vim.cmd('AlisioContext')
H.wait(2000, function() return #H.notes > 0 end, 'a note')
H.record('note', H.notes[1].msg)
H.done()
