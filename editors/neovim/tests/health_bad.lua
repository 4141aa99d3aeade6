-- :checkhealth alisio with invalid settings and a provider that does not answer.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
require('alisio').setup({ cmd = { os.getenv('ALISIO_BIN'), 'serve' }, autostart = false,
  settings = { compaction = { threshold = 5 }, provider = { kind = 'openai', baseURL = 'http://127.0.0.1:9/v1', model = 'm' } } })
vim.cmd('checkhealth alisio')
H.record('health', vim.api.nvim_buf_get_lines(0, 0, -1, false))
H.done()
