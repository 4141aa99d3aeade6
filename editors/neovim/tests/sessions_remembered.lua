-- The session chosen last in a workspace (:AlisioSessions) is the one the next Neovim there uses, though another
-- is more recent. ALISIO_STEP 1 makes two sessions and picks the first; 2 starts again and reports which it uses.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = H.setup()
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.client_id() ~= nil and vim.lsp.get_client_by_id(alisio.client_id()).initialized end, 'the client')
if os.getenv('ALISIO_STEP') == '1' then
  vim.cmd('AlisioNew the chosen one')
  H.wait(10000, function() return H.noted('started a new session') ~= nil and alisio.status() ~= nil end, 'the first session')
  local chosen = alisio.session()
  vim.wait(1100) -- the second is more recent by its time
  H.notes = {}
  vim.cmd('AlisioNew a later one')
  H.wait(10000, function() return H.noted('started a new session') ~= nil and alisio.session() ~= chosen end, 'the second session')
  vim.ui.select = function(items, _, on_choice)
    for _, s in ipairs(items) do
      if s.id == chosen then return on_choice(s) end
    end
  end
  vim.cmd('AlisioSessions')
  H.wait(10000, function() return alisio.session() == chosen end, 'the first session picked')
  H.record('chosen', chosen)
else
  H.wait(10000, function() return alisio.status() ~= nil end, 'the meter')
  vim.wait(1000) -- the chosen session replaces the reported one
  H.record('used', alisio.session())
end
H.done()
