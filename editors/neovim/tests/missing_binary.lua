-- A missing binary gives one clear message, again at a command that would start it, and :checkhealth says what
-- to do.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = require('alisio')
local ok = alisio.setup({ cmd = { '/nonexistent/alisio-lsp', 'serve' } })
H.record('setup_ok', ok)
-- Said once Neovim has started, not while init.lua runs (where it read as an error of the user's init.lua).
H.record('noted_during_setup', #H.notes)
H.wait(2000, function() return #H.notes == 1 end, "setup's message")
vim.cmd('checkhealth alisio')
H.record('health', vim.api.nvim_buf_get_lines(0, 0, -1, false))
local ok_cmd, err = pcall(vim.cmd, 'AlisioPrompt hello')
H.record('prompt_error', ok_cmd and '' or tostring(err))
-- The prompt was not sent: the chat says so, and the next prompt is not refused as "a turn is already running".
H.wait(5000, function() return require('alisio.state').turn == nil end, 'the turn to end')
local chat_buf = require('alisio.chat').buf()
H.record('chat', chat_buf and vim.api.nvim_buf_get_lines(chat_buf, 0, -1, false) or {})
H.done()
