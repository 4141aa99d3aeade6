-- :AlisioMemories lists the workspace's memories, oldest first; picking one and answering "Delete it" deletes
-- it, and the list then lacks it.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup()
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.client_id() ~= nil end, 'the client')
local offered, prompts = {}, {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(prompts, opts.prompt)
  if opts.format_item then
    offered = vim.tbl_map(opts.format_item, items)
    return on_choice(items[1])
  end
  return on_choice('Delete it')
end
vim.cmd('AlisioMemories')
H.wait(10000, function() return H.noted('deleted the memory') ~= nil end, 'the deletion')
H.record('offered', offered)
H.record('prompts', prompts)
offered = nil
vim.cmd('AlisioMemories')
H.wait(10000, function() return offered ~= nil end, 'the list after the deletion')
H.record('after', offered)
H.done()
