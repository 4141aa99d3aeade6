-- alisio.chat.text: how the chat writes sizes, counts and a tool call's arguments for people.
local M = {}

--- human is a size for people: 863, 6.4k, 1.2M.
function M.human(n)
  if n >= 1000000 then
    return string.format('%.1fM', n / 1000000)
  elseif n >= 10000 then -- 12k, 220k: whole thousands, as VS Code writes them
    return string.format('%dk', math.floor(n / 1000 + 0.5))
  elseif n >= 1000 then -- 2.7k, 3k
    return (string.format('%.1fk', n / 1000):gsub('%.0k$', 'k'))
  end
  return tostring(n)
end

--- count writes n with thousands separators (12,345).
function M.count(n)
  local s = tostring(n)
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

--- split is text's lines.
function M.split(text)
  return vim.split(text or '', '\n', { plain = true })
end

--- chars counts text's characters (code points).
function M.chars(text)
  return vim.fn.strchars(text or '')
end

--- summary is a tool call's arguments in one short line: the first string value of the JSON object (a
--- command, a path, a pattern), else the raw text, cut to 60 characters.
function M.summary(arguments)
  local ok, args = pcall(vim.fn.json_decode, arguments or '')
  local s = arguments or ''
  if ok and type(args) == 'table' then
    for _, key in ipairs({ 'command', 'path', 'pattern', 'query', 'url' }) do
      if type(args[key]) == 'string' then
        s = args[key]
        break
      end
    end
  end
  s = s:gsub('%s+', ' ')
  if M.chars(s) > 60 then
    s = vim.fn.strcharpart(s, 0, 59) .. '…'
  end
  return s
end

return M
