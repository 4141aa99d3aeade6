-- :AlisioTools lists the MCP server with its problem; picking it disables it in the client's settings, live.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup({ settings = { mcpServers = { docs = { command = '/nonexistent/docs-mcp' } } } })
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.client_id() ~= nil end, 'the client')
local offered, prompt, pick
vim.ui.select = function(items, opts, on_choice)
  offered, prompt = vim.tbl_map(opts.format_item, items), opts.prompt
  for _, i in ipairs(items) do
    if pick(i) then return on_choice(i) end
  end
end
-- The built-in tools' line: always on, which picking it says.
pick = function(i) return vim.startswith(i.text, 'built-in') end
vim.cmd('AlisioTools')
H.wait(5000, function() return H.noted('always on') ~= nil end, 'the built-in tools said always on')
H.record('builtin_picked', H.noted('always on'))
H.record('prompt', prompt)
pick = function(i) return i.name == 'docs' end
vim.cmd('AlisioTools')
H.wait(5000, function() return H.noted('MCP server docs disabled') ~= nil end, 'the toggle')
H.record('offered', offered)
local settings = vim.lsp.get_client_by_id(alisio.client_id()).config.settings
H.record('disabled', settings.alisio.mcpServers.docs.disabled)
-- The server takes it (it pulls the settings after the change): the source leaves the catalog.
local names
for _ = 1, 50 do
  local sources
  vim.lsp.get_client_by_id(alisio.client_id()).request('alisio/tools', vim.empty_dict(), function(_, d) sources = d.sources end)
  H.wait(5000, function() return sources ~= nil end, 'the tools after the toggle')
  names = vim.tbl_map(function(s) return s.source end, sources)
  if not vim.tbl_contains(names, 'docs') then break end
  vim.wait(100)
end
H.record('sources_after', names)
H.done()
