-- Commands of alisio.nvim; require('alisio').setup({...}) starts the server.
if vim.g.loaded_alisio then
  return
end
vim.g.loaded_alisio = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

cmd('AlisioCompact', function(o)
  require('alisio').compact(o.args)
end, { nargs = '?', desc = 'Compact the Alisio session now, with an optional focus' })
cmd('AlisioRecover', function(o)
  require('alisio').recover(o.bang)
end, { bang = true, desc = 'Record that uncertain tool calls have an unknown outcome (! skips the question)' })
cmd('AlisioPrompt', function(o)
  require('alisio').prompt(o.args)
end, { nargs = '+', desc = 'Send a prompt to the Alisio agent' })
cmd('AlisioCheckpoint', function()
  require('alisio').checkpoint()
end, { desc = 'Show the current checkpoint' })
cmd('AlisioContext', function()
  require('alisio').context()
end, { desc = 'Show what fills the context' })
cmd('AlisioSessions', function()
  require('alisio').sessions()
end, { desc = 'Pick the Alisio session' })
cmd('Alisio', function()
  require('alisio').chat()
end, { desc = 'Open the Alisio chat: the conversation, and an input to prompt the agent' })
cmd('AlisioEarlier', function()
  require('alisio').earlier()
end, { desc = 'Show earlier messages in the Alisio chat' })
cmd('AlisioLog', function()
  require('alisio').log()
end, { desc = "Open the language clients' log, where alisio-lsp writes what went wrong" })
cmd('AlisioRestart', function()
  require('alisio').restart()
end, { desc = 'Restart alisio-lsp' })
cmd('AlisioTools', function()
  require('alisio').tools()
end, { desc = 'Alisio tool sources: MCP servers and plugins, on or off' })
