-- The chat buffer and the first minutes of a user: setup with a config file (no settings), the meter from the
-- start, every command in a fresh workspace, :Alisio + :AlisioPrompt streaming a multi-line reply, folds, the
-- spinner and $/progress during a turn, <C-c>, :AlisioCompact drawing the boundary, the server stopping, and
-- :AlisioRestart. Each defect of the first release has its check here.
local H = dofile(os.getenv('ALISIO_TESTS') .. '/helpers.lua')
local alisio = require('alisio')
alisio.setup({ cmd = { os.getenv('ALISIO_BIN'), '--config', os.getenv('ALISIO_CONFIG'), 'serve' } })
vim.o.statusline = "main.go%=%{v:lua.require'alisio'.statusline()} "
vim.cmd('edit ' .. os.getenv('ALISIO_WS') .. '/main.go')
H.wait(10000, function() return alisio.client_id() ~= nil and vim.lsp.get_client_by_id(alisio.client_id()).initialized end, 'the client')
vim.wait(500)
H.record('fresh_statusline', alisio.statusline())
-- Commands in a fresh workspace: clear answers, no invalid-params errors, no question from :AlisioRecover.
local asked = false
vim.fn.confirm = function() asked = true return 2 end
for _, c in ipairs({ 'AlisioSessions', 'AlisioContext', 'AlisioCheckpoint', 'AlisioRecover' }) do
  vim.cmd(c)
end
-- (:AlisioContext answers with what the first request will hold, the others with a note.)
H.wait(5000, function() return #H.notes >= 3 and vim.fn.bufwinid('alisio://context') ~= -1 end, 'an answer to each command')
vim.api.nvim_win_close(vim.fn.bufwinid('alisio://context'), true)
H.record('recover_asked', asked)
local ok_help = pcall(vim.cmd, 'help alisio')
H.record('help', ok_help)
if ok_help then vim.cmd('close') end

vim.cmd('Alisio')
H.wait(2000, function() return require('alisio.chat').buf() ~= nil end, 'the chat buffer')
local chatbuf = require('alisio.chat').buf()
H.record('chat_filetype', vim.api.nvim_buf_get_option(chatbuf, 'filetype'))
-- A file opened from the chat's window or its input's gets the user's folds, not the chat's.
local leaked = {}
for i, b in ipairs({ chatbuf, require('alisio.chat').input_buf() }) do
  vim.api.nvim_set_current_win(vim.fn.bufwinid(b))
  vim.cmd('tabnew ' .. os.getenv('ALISIO_WS') .. '/notes' .. i .. '.md') -- a buffer never shown before
  table.insert(leaked, vim.wo.foldmethod .. ' ' .. vim.wo.foldexpr)
  vim.cmd('tabclose')
end
H.record('folds_of_a_file_opened_from_the_chat', leaked)
local function chat_text() return table.concat(vim.api.nvim_buf_get_lines(chatbuf, 0, -1, false), '\n') end
-- A turn: the first reply is slow (the spinner and the progress show), runs a tool, then a multi-line reply.
local spinner, progress = nil, nil
vim.api.nvim_set_current_win(vim.fn.bufwinid(require('alisio.chat').input_buf()))
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'run the build', 'and say hello' })
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc><CR>', true, false, true), 'x', false)
H.wait(10000, function()
  spinner = spinner or (H.spinning(alisio.statusline()) and alisio.statusline())
  if vim.lsp.status then
    local st = vim.lsp.status() -- reading it consumes the messages: once
    progress = progress or (st ~= '' and st)
  else
    for _, m in ipairs(vim.lsp.util.get_progress_messages()) do
      if m.title and m.title ~= 'empty title' then
        progress = progress or m.title
      end
    end
  end
  return spinner and progress
end, 'the spinner and the progress during the turn')
H.record('spinner', spinner)
H.record('progress', progress)
-- The command waits for the user: a small window says what it runs; :AlisioAccept runs it.
H.wait(10000, function() return alisio.review() ~= nil end, 'the question before the command')
H.record('review', alisio.review())
H.record('review_lines', vim.api.nvim_buf_get_lines(0, 0, -1, false))
alisio.accept()
H.wait(20000, function() return chat_text():find('Line two of the reply') ~= nil and not H.spinning(alisio.statusline()) end, 'the reply in the chat')
vim.wait(500)
H.record('chat_after_turn', vim.api.nvim_buf_get_lines(chatbuf, 0, -1, false))
H.record('folds_after_turn', require('alisio.chat').folds())
-- A turn stopped with <C-c>.
vim.cmd('AlisioPrompt take your time')
H.wait(5000, function() return H.spinning(alisio.statusline()) end, 'the second turn')
-- (<C-c> typed by feedkeys is Neovim's interrupt, not a key: the mapping is checked, then its action run.)
local map = vim.api.nvim_buf_call(chatbuf, function() return vim.fn.maparg('<C-c>', 'n', false, true) end)
H.record('stop_mapped', map.callback ~= nil)
require('alisio').stop()
H.wait(10000, function() return chat_text():find('turn was stopped') ~= nil and not H.spinning(alisio.statusline()) end, 'the stopped turn')
-- A compaction draws its boundary, the originals folded behind it.
vim.cmd('AlisioCompact')
H.wait(20000, function() return chat_text():find('compacted into a checkpoint') ~= nil end, 'the compaction boundary in the chat')
H.record('chat_after_compact', vim.api.nvim_buf_get_lines(chatbuf, 0, -1, false))
H.record('folds_after_compact', require('alisio.chat').folds())
-- What the chat's window shows then: each screen line's text (a closed fold by its first line), and its height.
vim.wait(300)
local chatwin = vim.fn.bufwinid(chatbuf)
H.record('visible_after_compact', vim.api.nvim_win_call(chatwin, function()
  local out, l = {}, vim.fn.line('w0')
  while l <= vim.fn.line('w$') do
    table.insert(out, vim.fn.getline(l))
    l = vim.fn.foldclosed(l) ~= -1 and vim.fn.foldclosedend(l) + 1 or l + 1
  end
  return out
end))
H.record('chat_height', vim.api.nvim_win_get_height(chatwin))
-- q closes the chat.
vim.api.nvim_set_current_win(vim.fn.bufwinid(chatbuf))
vim.api.nvim_feedkeys('q', 'x', false)
H.record('chat_closed', vim.fn.bufwinid(chatbuf) == -1)
-- Reopened, the chat shows the same conversation with the same folds (they were stale manual folds once).
vim.cmd('Alisio')
H.wait(5000, function() return vim.fn.bufwinid(chatbuf) ~= -1 end, 'the chat reopened')
vim.wait(300)
H.record('folds_reopened', require('alisio.chat').folds())
-- A turn run on the command line into the session, through the shared daemon: the open chat shows it (the
-- script is spent, so the turn fails; its prompt is kept all the same).
local shell = vim.fn.jobstart({ os.getenv('ALISIO_BIN'), '--data-dir', os.getenv('XDG_DATA_HOME') .. '/alisio', '--config', os.getenv('ALISIO_CONFIG'),
  'prompt', '--session', alisio.session(), 'asked from the shell' }, { cwd = os.getenv('ALISIO_WS') })
H.wait(20000, function() return vim.fn.jobwait({ shell }, 0)[1] ~= -1 end, 'the prompt on the command line')
H.wait(10000, function()
  return table.concat(vim.api.nvim_buf_get_lines(chatbuf, 0, -1, false), '\n'):find('asked from the shell', 1, true) ~= nil
end, 'the command line\'s turn in the open chat')
vim.cmd('wincmd j')
vim.api.nvim_feedkeys('q', 'x', false)
-- The server stops: the meter goes; :AlisioRestart brings it back.
H.wait(5000, function() return alisio.statusline():find('alisio %S+ [%d.]+k?/') ~= nil end, 'the meter after the compaction')
H.record('before_stop', alisio.statusline())
vim.lsp.get_client_by_id(alisio.client_id()).stop()
H.wait(5000, function() return alisio.client_id() == nil end, 'the client to stop')
H.record('after_stop', alisio.statusline())
vim.cmd('AlisioRestart')
H.wait(10000, function() return alisio.statusline():find('alisio %S+ [%d.]+k?/') ~= nil end, 'the meter after :AlisioRestart')
H.record('after_restart', alisio.statusline())
-- :AlisioRestart from the chat's input keeps the workspace (it once started the agent in "." — the daemon's /).
local function root() return vim.lsp.get_client_by_id(alisio.client_id()).config.root_dir end
vim.cmd('Alisio')
H.wait(5000, function() return vim.api.nvim_buf_get_name(0):find('alisio://input', 1, true) ~= nil end, 'the chat input focused')
vim.cmd('AlisioRestart')
H.wait(10000, function() return alisio.client_id() ~= nil and alisio.statusline() ~= '' end, 'the restart from the input')
H.record('root_after_restart_in_input', root())
-- And after the server stopped, from the input: the workspace it had, never ".".
vim.lsp.get_client_by_id(alisio.client_id()).stop()
H.wait(5000, function() return alisio.client_id() == nil end, 'the client to stop again')
vim.cmd('AlisioRestart')
H.wait(10000, function() return alisio.client_id() ~= nil end, 'the start from the input')
H.record('root_after_start_in_input', root())
H.done()
