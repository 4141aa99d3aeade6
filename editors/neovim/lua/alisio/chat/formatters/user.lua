-- alisio.chat.formatters.user: a message the user wrote, under its heading.
local text = require('alisio.chat.text')

local M = {}

--- format adds the user's message m to out (prefix deepens the heading inside the compaction boundary).
function M.format(out, m, prefix)
  out:add({ prefix .. '## You', '' })
  out:add(text.split(m.text))
  out:add({ '' })
end

return M
