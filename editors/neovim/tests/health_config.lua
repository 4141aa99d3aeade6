-- :checkhealth alisio with the provider in the --config file the command names, not in the settings.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
require('alisio').setup({ cmd = { os.getenv('ALISIO_BIN'), '--config', os.getenv('ALISIO_CONFIG'), 'serve' }, autostart = false })
vim.cmd('checkhealth alisio')
H.record('health', vim.api.nvim_buf_get_lines(0, 0, -1, false))
H.done()
