-- alisio.chat.formatters.tool: a tool call as one line (name, what it ran, how it ended) with its arguments and
-- result folded below it. The daemon paired each call with its result: the outcome says where it is and how
-- the call ended.
local text = require('alisio.chat.text')

local M = {}

--- line is the one line a tool call shows: → name summary · result size (✗ when it failed, ⊘ when the user
--- did not approve it, ⚠ when a crash left it without result, running… while it has none yet). state is the outcome's state, exit_code a
--- command's exit status.
function M.line(call, result, state, exit_code)
  local line = string.format('→ %s %s', call.name or '?', text.summary(call.arguments))
  if state == 'uncertain' then
    return line .. ' · ⚠ outcome unknown (a crash cut it off)'
  elseif not result then
    return line .. ' · running…'
  elseif state == 'declined' then
    return line .. ' · ⊘ declined: not run'
  elseif state == 'failed' then
    return line .. string.format(' · ✗ %s (%s chars)', exit_code and ('exit ' .. exit_code) or 'failed', text.human(text.chars(result.text)))
  end
  return line .. string.format(' · %s chars', text.human(text.chars(result.text)))
end

--- body is what a call did, for people, as indented lines: an edit as a diff (- the old text, + the new), a
--- write as the file's new content, a command as itself; any other call's arguments as they were sent.
function M.body(call)
  local ok, args = pcall(vim.fn.json_decode, call.arguments or '')
  local function str(k)
    return ok and type(args) == 'table' and type(args[k]) == 'string' and args[k] or nil
  end
  local out = {}
  local function block(title, mark, s)
    if title then
      table.insert(out, '    ' .. title)
    end
    for _, l in ipairs(text.split((s:gsub('\n$', '')))) do
      table.insert(out, '    ' .. mark .. l)
    end
  end
  if call.name == 'edit_file' and str('oldText') and str('newText') then
    block('change to ' .. (str('path') or '?') .. ':', '-', str('oldText'))
    block(nil, '+', str('newText'))
  elseif call.name == 'write_file' and str('content') then
    block('new content of ' .. (str('path') or '?') .. ':', '  ', str('content'))
  elseif call.name == 'run_command' and str('command') then
    block('command:', '  ', str('command'))
  else
    out = { '    arguments: ' .. (call.arguments or '') }
  end
  return out
end

--- format adds call's line, and its arguments and result as a fold, to out. outcome = { result = index into
--- messages (0-based, -1: none), state = 'done' | 'failed' | 'declined' | 'uncertain' | 'running' }.
function M.format(out, call, outcome, messages)
  outcome = outcome or { result = -1, state = 'running' }
  local result = (outcome.result or -1) >= 0 and messages[outcome.result + 1] or nil
  out:add({ M.line(call, result, outcome.state, outcome.exitCode) })
  local first = out:next()
  out:add(M.body(call))
  if result then
    out:add({ '    result:' })
    for _, l in ipairs(text.split(result.text)) do
      out:add({ '    ' .. l })
    end
  end
  out:fold(first)
end

return M
