-- Shared by the headless tests: captured notifications, waiting, results for the Go harness, and exits.
local H = {}
H.notes = {}
vim.notify = function(msg, level)
  table.insert(H.notes, { msg = msg, level = level })
end

function H.noted(pattern)
  for _, n in ipairs(H.notes) do
    if n.msg:find(pattern) then
      return n
    end
  end
end

function H.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    H.fail('timed out waiting for ' .. what)
  end
end

-- spinning: the statusline s shows the spinner of a running turn or compaction (each frame found as a whole
-- character: a Lua pattern class would match single bytes, which the meter's bar shares).
function H.spinning(s)
  for _, f in ipairs({ '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }) do
    if s:find(f, 1, true) then
      return true
    end
  end
  return false
end

H.results = {}
function H.record(key, value)
  H.results[key] = value
end

local function write()
  local f = io.open(os.getenv('ALISIO_OUT'), 'w')
  f:write(vim.fn.json_encode({ results = H.results, notes = H.notes }))
  f:close()
end

function H.fail(msg)
  H.record('failure', msg)
  write()
  vim.cmd('cquit 1')
end

function H.done()
  write()
  vim.cmd('qa!')
end

function H.setup(extra)
  local alisio = require('alisio')
  local settings = { limits = { maxContextChars = 20000 } }
  if os.getenv('ALISIO_URL') then
    settings.provider = { kind = 'openai', baseURL = os.getenv('ALISIO_URL'), model = 'alisio-test' }
  end
  local ok = alisio.setup(vim.tbl_deep_extend('force', { cmd = { os.getenv('ALISIO_BIN'), 'serve' }, settings = settings }, extra or {}))
  return alisio, ok
end

return H
