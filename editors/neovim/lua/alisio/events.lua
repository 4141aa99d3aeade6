-- alisio.events: what the daemon's notifications do — the meter (alisio/status) and a turn's events
-- (alisio/event: the daemon's sentences for compactions, the streamed reply and tool calls into the chat).
local chat = require('alisio.chat')
local state = require('alisio.state')
local statusline = require('alisio.statusline')
local util = require('alisio.util')

local M = {}

-- streaming is true when ev belongs to the turn the chat shows.
local function streaming(ev)
  return state.turn ~= nil and (state.turn.session == nil or ev.session == nil or ev.session == state.turn.session)
end

-- writes are the paths of the edit and write calls running, by call ID: their buffers reload when they land.
local writes = {}

-- written is the path a file-writing call's arguments name.
local function written(arguments)
  local ok, args = pcall(vim.fn.json_decode, arguments or '')
  return ok and type(args) == 'table' and type(args.path) == 'string' and args.path or nil
end

local function on_event(ev)
  local t, levels = ev.type, util.levels
  if t == 'compaction_started' then
    state.compacting = true
    statusline.busy()
    util.notice(ev.summary, nil, 'compaction')
  elseif t == 'compaction_completed' then
    state.compacting = false
    statusline.busy()
    util.notice(ev.summary, ev.partial and levels.WARN or nil, 'compaction')
    statusline.redraw()
    require('alisio.checkpoint').changed(ev.session, 'a compaction')
  elseif t == 'compaction_failed' then
    state.compacting = false
    statusline.busy()
    util.notice(ev.summary, levels.ERROR, 'compaction')
    statusline.redraw()
  elseif t == 'compaction_skipped' then
    state.compacting = false
    statusline.busy()
    util.notice(ev.summary, nil, 'compaction')
    statusline.redraw()
  elseif t == 'context_reduced' then
    util.notice(ev.summary)
  elseif t == 'plugin_hook_failed' then
    util.notice(ev.summary, levels.WARN)
  elseif t == 'delta' and ev.text and ev.text ~= '' and streaming(ev) then
    state.turn.session = state.turn.session or ev.session
    chat.append(ev.text)
  elseif t == 'tool_call' then
    writes[ev.id or ''] = (ev.name == 'edit_file' or ev.name == 'write_file') and written(ev.arguments) or nil
    if streaming(ev) then
      chat.append_lines({ '', string.format('→ %s %s · running…', ev.name or '?', chat.summary(ev.arguments)) })
    end
  elseif t == 'tool_result' then
    local path = writes[ev.id or '']
    writes[ev.id or ''] = nil
    if path and not ev.isError then
      require('alisio.review').reload({ path }) -- no buffer shows the file as it was
    end
    if streaming(ev) then
      if ev.declined then -- its result only says that it did not run
        chat.append_lines({ '  ⊘ declined: not run', '' })
      else
        local how = ev.isError and (ev.exitCode and string.format('✗ exit %d,', ev.exitCode) or '✗ failed,') or '✓'
        chat.append_lines({ string.format('  %s %s chars', how, chat.human(ev.chars or 0)), '' })
      end
    end
  end
end

--- handlers are the client handlers of alisio's notifications (also used by lsp/alisio.lua).
M.handlers = {
  ['alisio/status'] = function(err, params)
    if err or not params then
      return
    end
    if state.session == nil or params.session == state.session then
      local first, before = state.session == nil, state.status
      state.session = params.session
      state.status = params
      statusline.redraw()
      if first then
        require('alisio.commands').refresh_chat() -- a chat opened before the daemon said which session is the workspace's
        require('alisio.commands').restore(params.session) -- the one chosen last here, when another
      elseif params.changedElsewhere and before and (before.messages ~= params.messages or before.epoch ~= params.epoch) then
        -- Another window or the command line ran a turn, a compaction or an undo in it: the chat shows it
        -- (not while a turn of this Neovim runs: it draws what it does).
        require('alisio.commands').refresh_chat()
      end
    end
  end,
  ['alisio/event'] = function(err, params)
    if not err and params then
      on_event(params)
    end
  end,
  -- Approval questions come as notifications: before 0.10 a handler of a server's request must answer at once.
  ['alisio/approve'] = function(err, params)
    if not err and params then
      vim.schedule(function() require('alisio.review').ask(params) end)
    end
  end,
  ['alisio/approvalWithdrawn'] = function(err, params)
    if not err and params then
      vim.schedule(function() require('alisio.review').withdrawn(params) end)
    end
  end,
}

return M
