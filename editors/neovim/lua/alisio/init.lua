-- alisio.nvim: the alisio-lsp context manager in Neovim (0.7.2 through 0.12; the API is chosen at run time).
-- This module only wires the others, by concern:
--   alisio.config      options and defaults           alisio.state       what the modules share
--   alisio.client      start, requests, restart       alisio.events      the daemon's notifications
--   alisio.commands    prompt, stop, compact, …       alisio.views       checkpoint, context, tools
--   alisio.statusline  the meter                      alisio.chat        the chat buffer and its input
--   alisio.util        helpers                        alisio.health      :checkhealth alisio
local checkpoint = require('alisio.checkpoint')
local client = require('alisio.client')
local commands = require('alisio.commands')
local config = require('alisio.config')
local events = require('alisio.events')
local state = require('alisio.state')
local statusline = require('alisio.statusline')
local util = require('alisio.util')
local review = require('alisio.review')
local views = require('alisio.views')

local M = {}

M.defaults = config.defaults
--- handlers are the client handlers of alisio's notifications (also used by lsp/alisio.lua).
M.handlers = events.handlers

-- helptags makes :help alisio work when the plugin came without doc/tags (a plain copy of the directory).
local function helptags()
  local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h:h:h') .. '/doc'
  if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd, 'silent! helptags ' .. vim.fn.fnameescape(doc))
  end
end

--- setup configures the plugin and starts the server for the buffers opened from now on.
function M.setup(opts)
  helptags()
  state.config = vim.tbl_deep_extend('force', config.defaults, opts or {})
  if not client.installed(true) then
    return false
  end
  if state.config.autostart then
    vim.cmd([[
      augroup alisio
        autocmd!
        autocmd BufReadPost,BufNewFile * lua require('alisio').start(tonumber(vim.fn.expand('<abuf>')))
      augroup END
    ]])
    if vim.api.nvim_buf_get_name(0) ~= '' then
      client.start(0)
    end
  end
  return true
end

-- The public functions, each where its concern lives.
M.start = client.start
M.start_here = client.start_here
M.restart = client.restart
M.log = client.log
M.statusline = statusline.text
M.compact = commands.compact
M.recover = commands.recover
M.chat = commands.chat
M.add = commands.add
M.refresh_chat = commands.refresh_chat
M.earlier = commands.earlier
M.stop = commands.stop
M.prompt = commands.prompt
M.use_session = commands.use_session
M.sessions = commands.sessions
M.new_session = commands.new_session
M.checkpoint = views.checkpoint
M.context = views.context
M.tools = views.tools
M.memories = views.memories
M.undo_turn = review.undo_turn
M.edit_checkpoint = checkpoint.edit
M.undo_compaction = checkpoint.undo
M.review = review.pending

--- accept accepts the change (runs the command) Alisio waits on (:AlisioAccept, ga in the review).
function M.accept()
  review.answer(true)
end

--- reject rejects the change (skips the command) Alisio waits on (:AlisioReject, gr in the review).
function M.reject()
  review.answer(false)
end

--- status returns the last meter payload (nil before the first).
function M.status()
  return state.status
end

--- session is the session the commands use (nil: the server's latest for the workspace).
function M.session()
  return state.session
end

--- client_id is the running client's id (nil when not running).
function M.client_id()
  return state.client_id
end

--- config is the configuration in force.
M.config = config.get

return M
