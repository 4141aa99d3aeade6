-- After startup: the file named on the command line is attached, and nothing tried to attach it unloaded.
local H = _G.alisio_test
H.wait(10000, function()
  return #vim.lsp.buf_get_clients(0) > 0
end, 'the file to be attached')
H.record('file', vim.fn.expand('%:t'))
H.record('unloaded_attaches', H.unloaded)
H.done()
