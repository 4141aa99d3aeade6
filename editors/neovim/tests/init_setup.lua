-- Run as a user's init.lua is (--cmd, before the files named on the command line are loaded): setup, with
-- every attach to a buffer that is not loaded yet counted (Neovim 0.7 logs each as a warning).
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
H.unloaded = 0
local attach = vim.lsp.buf_attach_client
vim.lsp.buf_attach_client = function(bufnr, id)
  if not vim.api.nvim_buf_is_loaded(bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr) then
    H.unloaded = H.unloaded + 1
  end
  return attach(bufnr, id)
end
_G.alisio_test = H
H.setup()
