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

local function on_event(ev)
  local t, levels = ev.type, util.levels
  if t == 'compaction_started' then
    state.compacting = true
    statusline.busy()
    util.notify(ev.summary)
  elseif t == 'compaction_completed' then
    state.compacting = false
    statusline.busy()
    util.notify(ev.summary, ev.partial and levels.WARN or nil)
    statusline.redraw()
  elseif t == 'compaction_failed' then
    state.compacting = false
    util.notify(ev.summary, levels.ERROR)
    statusline.redraw()
  elseif t == 'compaction_skipped' then
    state.compacting = false
    state.skipped = ev.message
    util.notify(ev.summary, levels.INFO)
    statusline.redraw()
  elseif t == 'context_reduced' then
    util.notify(ev.summary)
  elseif t == 'plugin_hook_failed' then
    util.notify(ev.summary, levels.WARN)
  elseif t == 'delta' and ev.text and ev.text ~= '' and streaming(ev) then
    state.turn.session = state.turn.session or ev.session
    chat.append(ev.text)
  elseif t == 'tool_call' and streaming(ev) then
    chat.append_lines({ '', string.format('→ %s %s · running…', ev.name or '?', chat.summary(ev.arguments)) })
  elseif t == 'tool_result' and streaming(ev) then
    chat.append_lines({ string.format('  %s %s chars', ev.isError and '✗ failed,' or '✓', chat.human(ev.chars or 0)), '' })
  end
end

--- handlers are the client handlers of alisio's notifications (also used by lsp/alisio.lua).
M.handlers = {
  ['alisio/status'] = function(err, params)
    if err or not params then
      return
    end
    if state.session == nil or params.session == state.session then
      local first = state.session == nil
      state.session = params.session
      state.status = params
      statusline.redraw()
      if first then
        require('alisio.commands').refresh_chat() -- a chat opened before the daemon said which session is the workspace's
      end
    end
  end,
  ['alisio/event'] = function(err, params)
    if not err and params then
      on_event(params)
    end
  end,
}

return M
