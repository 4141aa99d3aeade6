-- alisio.chat.formatters.tool: a tool call as one line (name, what it ran, how it ended) with its arguments and
-- result folded below it. The daemon paired each call with its result: the outcome says where it is and how
-- the call ended.
local text = require('alisio.chat.text')

local M = {}

--- line is the one line a tool call shows: → name summary · result size (✗ when it failed, ⚠ when a crash
--- left it without result, running… while it has none yet). state is the outcome's state, exit_code a
--- command's exit status.
function M.line(call, result, state, exit_code)
  local line = string.format('→ %s %s', call.name or '?', text.summary(call.arguments))
  if state == 'uncertain' then
    return line .. ' · ⚠ outcome unknown (a crash cut it off)'
  elseif not result then
    return line .. ' · running…'
  elseif state == 'failed' then
    return line .. string.format(' · ✗ %s (%s chars)', exit_code and ('exit ' .. exit_code) or 'failed', text.human(text.chars(result.text)))
  end
  return line .. string.format(' · %s chars', text.human(text.chars(result.text)))
end

--- format adds call's line, and its arguments and result as a fold, to out. outcome = { result = index into
--- messages (0-based, -1: none), state = 'done' | 'failed' | 'uncertain' | 'running' }.
function M.format(out, call, outcome, messages)
  outcome = outcome or { result = -1, state = 'running' }
  local result = (outcome.result or -1) >= 0 and messages[outcome.result + 1] or nil
  out:add({ M.line(call, result, outcome.state, outcome.exitCode) })
  local first = out:next()
  out:add({ '    arguments: ' .. (call.arguments or '') })
  if result then
    out:add({ '    result:' })
    for _, l in ipairs(text.split(result.text)) do
      out:add({ '    ' .. l })
    end
  end
  out:fold(first)
end

return M
