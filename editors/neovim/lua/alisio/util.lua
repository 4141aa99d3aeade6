-- alisio.util: small helpers every module uses — notifications, JSON objects, sizes for people, the project
-- root, and the one place that knows how each Neovim version calls a client's methods.
local chat = require('alisio.chat')

local M = {}

M.levels = vim.log.levels
M.uv = vim.uv or vim.loop -- vim.uv from 0.10

-- builtin_notify says whether vim.notify is Neovim's own, which writes on the command line (a plugin's, such as
-- nvim-notify's or noice's, shows a long message in a window of its own).
local function builtin_notify()
  local info = debug.getinfo(vim.notify, 'S')
  return info ~= nil and info.source:find('vim/_editor%.lua$') ~= nil
end

-- HIGHLIGHTS are the command line's colours of the levels that have one.
local HIGHLIGHTS = { [M.levels.WARN] = 'WarningMsg', [M.levels.ERROR] = 'ErrorMsg' }

-- MORE ends a line cut to the command line: where the whole of it is.
local MORE = '… (:Alisio shows all)'

-- say shows msg, prefixed with "Alisio: ": whole to a notification plugin; on Neovim's own command line cut to the
-- room that line has (a longer one would stop for Enter and take the next key typed), and then whole at the end
-- of the chat (chat.note) — always there when always is set (key: see chat.note).
local function say(msg, level, always, key)
  if always then
    chat.note(msg, key)
  end
  if not builtin_notify() then
    vim.notify('Alisio: ' .. msg, level or M.levels.INFO)
    return
  end
  local line = 'Alisio: ' .. msg:gsub('%s*\n%s*', ' ')
  local room = vim.v.echospace
  if vim.fn.strdisplaywidth(line) > room then
    if not always then
      chat.note(msg)
    end
    local more = room >= 50 and MORE or '…'
    local n = vim.fn.strchars(line)
    repeat
      n = n - 1
      line = vim.fn.strcharpart(line, 0, n)
    until vim.fn.strdisplaywidth(line .. more) < room
    line = line .. more
  end
  vim.api.nvim_echo({ { line, HIGHLIGHTS[level] } }, true, {})
end

--- notify shows msg, the answer to what the user just did: on the command line, and in the chat when it is
--- longer than the command line (see say).
function M.notify(msg, level)
  say(msg or '', level, false)
end

--- notice shows a sentence the daemon says on its own, maybe while the user types (a compaction's, a
--- plugin's): always in full at the end of the chat, and on the command line as notify does.
function M.notice(msg, level, key)
  say(msg, level, true, key)
end

--- obj makes an empty Lua table travel as a JSON object ({}), not as an array ([]), which the server refuses.
function M.obj(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- human is a size for people: 863, 6.4k, 1.2M ('?' when unknown).
function M.human(n)
  return n and chat.human(n) or '?'
end

--- capitalize is s with its first letter in upper case.
function M.capitalize(s)
  return (s:gsub('^%l', string.upper))
end

--- fraction is the share of the compaction threshold in use: the closer of the two rules (window, chars).
function M.fraction(st)
  return math.max(st.windowFraction or 0, st.charsFraction or 0)
end

--- not_sent says whether a request's error is that it was never sent (alisio-lsp not running: said already).
function M.not_sent(err)
  return type(err) == 'table' and type(err.data) == 'table' and err.data.kind == 'notSent'
end

--- err_message is what to show of a request's error.
function M.err_message(err)
  return type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
end

--- client_call calls a method of client c (request, notify, cancel_request, …): a method call from 0.11, a
--- field call before.
function M.client_call(c, method, ...)
  if vim.fn.has('nvim-0.11') == 1 then
    return c[method](c, ...)
  end
  return c[method](...)
end

--- find_root walks up from path (the current directory when empty) to a directory holding one of markers, and
--- says whether it found one; the current directory otherwise.
function M.find_root(path, markers)
  if path:find('^%a[%w+.-]*://') then
    path = '' -- not a file (alisio://chat, a plugin's buffer): the current directory's project
  end
  local dir = path ~= '' and vim.fn.fnamemodify(path, ':p:h') or vim.fn.getcwd()
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if M.uv.fs_stat(dir .. '/' .. m) then
        return dir, true
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd(), false
end

return M
