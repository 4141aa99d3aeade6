-- alisio.chat.formatters.assistant: the model's text and tool calls; an assistant's consecutive messages share
-- one heading.
local text = require('alisio.chat.text')
local tool = require('alisio.chat.formatters.tool')

local M = {}

--- format adds the assistant's message m (the i-th of messages) to out; heading says whether it starts a reply.
function M.format(out, m, prefix, heading, messages)
  if heading then
    out:add({ prefix .. '## Alisio', '' })
  end
  if m.text and m.text ~= '' then
    out:add(text.split(m.text))
    out:add({ '' })
  end
  for k, c in ipairs(m.toolCalls or {}) do
    tool.format(out, c, (m.outcomes or {})[k], messages)
  end
  if m.toolCalls and #m.toolCalls > 0 then
    out:add({ '' })
  end
end

return M
