-- alisio.statusline: the meter in the statusline, and its spinner while a turn or a compaction runs.
local state = require('alisio.state')
local util = require('alisio.util')

local M = {}

local frames = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

--- bar draws the request's share of the limit in cells, with where compaction starts as a mark: ▰▰▱▱▱▱▱│▱
--- (the threshold, or earlier in a window too small to keep the reply's room up to it).
function M.bar(st, cells)
  cells = cells or 8
  local used = (st.limitTokens or 0) > 0 and (st.tokens or 0) / st.limitTokens or util.fraction(st) * (st.threshold or 1)
  local full = math.min(cells, math.floor(used * cells + 0.5))
  local mark = math.floor((st.compactsAt or st.threshold or 1) * cells + 0.5)
  local out = {}
  for i = 0, cells - 1 do
    if i == mark then
      table.insert(out, '│')
    end
    table.insert(out, i < full and '▰' or '▱')
  end
  return table.concat(out)
end

--- text returns a short meter for a statusline: "" while no server runs, "alisio –" before the workspace has
--- a session, "alisio ▰▱▱▱▱▱▱│▱ 12.3k/128.0k" — the request's tokens of the window, the bar marking where
--- compaction starts — with a spinner while a turn runs, "alisio: compacting…".
function M.text()
  local st = state.status
  if not state.client_id then
    return ''
  end
  local spin = state.turn and (' ' .. frames[math.floor(util.uv.now() / 100) % #frames + 1]) or ''
  if state.compacting or (st and st.compacting) then
    return 'alisio: compacting…'
  end
  if not st then
    return 'alisio –' .. spin
  end
  local s = string.format('alisio %s %s/%s', M.bar(st), util.human(st.tokens), util.human(st.limitTokens)) .. spin
  if st.compactingInBackground then
    s = s .. ' compacting in background…'
  end
  if st.overHardLimit then
    s = s .. ' over limit'
  end
  if st.lastCheckpointPartial then
    s = s .. ' partial'
  end
  if st.uncertainCalls and #st.uncertainCalls > 0 then
    s = s .. string.format(' ⚠%d uncertain', #st.uncertainCalls)
  end
  return s
end

--- redraw redraws the statusline and tells other plugins (User AlisioStatus).
function M.redraw()
  pcall(vim.cmd, 'redrawstatus!')
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'AlisioStatus', modeline = false })
end

--- busy starts or stops the statusline's spinner (a turn or a compaction is running).
function M.busy()
  local on = state.turn ~= nil or state.compacting
  if on and not state.spinner then
    state.spinner = util.uv.new_timer()
    state.spinner:start(100, 100, vim.schedule_wrap(M.redraw))
  elseif not on and state.spinner then
    state.spinner:stop()
    state.spinner:close()
    state.spinner = nil
  end
  M.redraw()
end

return M
