-- Neovim started without a file in a project's directory: :Alisio starts the daemon for that project, says so,
-- and opens the chat on the workspace's session; the empty buffer is not attached.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
vim.cmd('cd ' .. vim.fn.fnameescape(os.getenv('ALISIO_WS')))
local alisio = H.setup()
vim.cmd('Alisio')
H.wait(10000, function()
  local id = alisio.client_id()
  return id and vim.lsp.get_client_by_id(id) and vim.lsp.get_client_by_id(id).initialized
end, 'the daemon')
H.wait(2000, function() return require('alisio.chat').buf() ~= nil end, 'the chat')
local chat = require('alisio.chat')
H.wait(5000, function()
  return table.concat(vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false), '\n'):find('the answer to the question') ~= nil
end, "the workspace's session in the chat")
vim.cmd('AlisioContext')
H.wait(5000, function() return vim.fn.bufwinid('alisio://context') ~= -1 end, 'the context view')
H.record('context', vim.api.nvim_buf_get_lines(vim.fn.bufnr('alisio://context'), 0, -1, false))
H.record('root', vim.lsp.get_client_by_id(alisio.client_id()).config.root_dir)
H.record('attached_buffers', #vim.tbl_keys(vim.lsp.get_buffers_by_client_id(alisio.client_id())))
H.done()
