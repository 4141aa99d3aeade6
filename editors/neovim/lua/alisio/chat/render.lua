-- alisio.chat.render: alisio/session's page as the chat's lines and folds. One formatter per message kind
-- (formatters/); this module orders them: the earlier-messages line, the compaction boundary, the conversation,
-- the daemon's notices.
local text = require('alisio.chat.text')
local user = require('alisio.chat.formatters.user')
local assistant = require('alisio.chat.formatters.assistant')
local checkpoint = require('alisio.chat.formatters.checkpoint')

local M = {}

--- EARLIER_LINE starts the chat's first line when earlier messages are not shown.
M.EARLIER_LINE = '▲ '

-- Output collects lines and the folds over them.
local Output = {}
Output.__index = Output

function Output:add(t)
  for _, l in ipairs(t) do
    table.insert(self.lines, l)
  end
end

--- next is the number of the line the next add writes.
function Output:next()
  return #self.lines + 1
end

--- fold folds the lines from first to the last one written.
function Output:fold(first)
  table.insert(self.folds, { first, #self.lines })
end

--- render turns the messages of alisio/session (with includeCompacted; each assistant message carries the
--- outcomes of its tool calls) into the chat's lines, and the folds to close: the compacted originals and
--- checkpoint behind their boundary line, each tool call's arguments and result behind its line. notices are the
--- daemon's sentences about the session (status.notices). page, when the messages are the last ones of a longer
--- history, says how many come before them ({ earlier = n }) and how many originals of the whole history are
--- compacted ({ compacted = n }). The third value is the line of the compaction boundary (nil: no checkpoint).
function M.render(messages, notices, page)
  page = page or {}
  local out = setmetatable({ lines = {}, folds = {} }, Output)
  local last -- the role whose heading was written last: one heading for an assistant's consecutive messages
  local function message(m, prefix)
    if m.role == 'user' then
      user.format(out, m, prefix)
    elseif m.role == 'assistant' then
      assistant.format(out, m, prefix, last ~= 'assistant', messages)
    else
      return
    end
    last = m.role
  end
  -- The compacted originals come first in the history; they are gathered behind the checkpoint's boundary.
  -- Only what the user and the model said counts as an original: not an earlier or undone checkpoint, nor a
  -- reduced copy (its original is in the history too).
  local originals = {}
  for _, m in ipairs(messages) do
    if m.compacted and not m.summary and not m.truncated and not m.undone then
      table.insert(originals, m)
    end
  end
  local earlier = page.earlier or 0
  -- Every compacted original of the history (the daemon counts them), though only the last ones may be in
  -- this page.
  local total = #originals
  if earlier > 0 then
    total = math.max(page.compacted or 0, #originals)
    -- The history starts with the compacted originals: often every earlier message is one of them.
    local what = total - #originals >= earlier and 'compacted original' or 'earlier message'
    out:add({ string.format('%s%s %s%s not shown · <CR> on this line or :AlisioEarlier shows %s more', M.EARLIER_LINE,
      text.count(earlier), what, earlier == 1 and '' or 's', text.count(math.min(earlier, 200))), '' })
  end
  -- The live checkpoint always heads the conversation (a compaction replaces a prefix), whatever its place in
  -- the history: its boundary comes first, over the originals it replaced.
  local boundary
  for _, m in ipairs(messages) do
    if m.summary and not m.compacted then
      boundary = out:next()
      checkpoint.format(out, m, originals, total, message)
      last = nil
    end
  end
  for _, m in ipairs(messages) do
    if not m.compacted and not m.summary then
      message(m, '')
    end
  end
  for _, n in ipairs(notices or {}) do
    out:add({ '⚠ ' .. n.text, '' })
  end
  return out.lines, out.folds, boundary
end

return M
