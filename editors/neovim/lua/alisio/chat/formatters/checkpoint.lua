-- alisio.chat.formatters.checkpoint: the compaction boundary — one line saying what the checkpoint replaced —
-- over a fold holding the checkpoint and the compacted originals it replaced.
local text = require('alisio.chat.text')

local M = {}

--- format adds the boundary of checkpoint m to out. originals are the compacted messages of the page, total
--- those of the whole history; message(o, prefix) formats one original.
function M.format(out, m, originals, total, message)
  local compacted = 0
  for _, o in ipairs(originals) do
    compacted = compacted + (o.chars or text.chars(o.text))
  end
  local sizes = #originals == total and string.format('%s → %s chars', text.human(compacted), text.human(m.chars or text.chars(m.text)))
    or string.format('now %s chars', text.human(m.chars or text.chars(m.text)))
  out:add({ string.format('── %s messages compacted into a checkpoint, %s%s ──', text.count(total), sizes,
    m.partial and ' · partial checkpoint' or '') })
  local first = out:next()
  out:add({ '### Checkpoint' .. (m.partial and ' (partial: raise compaction.maxOutputTokens for complete ones)' or ''), '' })
  out:add(text.split(m.text))
  if #originals == total then
    out:add({ '', '### The compacted originals (kept in the store)', '' })
  elseif #originals > 0 then
    out:add({ '', string.format('### The last %s of the %s compacted originals (kept in the store; :AlisioEarlier shows more)',
      text.count(#originals), text.count(total)), '' })
  end
  for _, o in ipairs(originals) do
    message(o, '#')
  end
  out:fold(first)
  out:add({ '' })
end

return M
