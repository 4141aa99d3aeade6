-- The :Alisio chat buffer: the session's conversation as markdown in a split, a turn streaming in place, and an
-- input window below it (<CR> in normal mode sends, <C-c> stops the turn, q closes). Works on 0.7.2 and later.
local M = {}

local CHAT, INPUT = 'alisio://chat', 'alisio://input'

local function human(n)
  if n >= 1000000 then
    return string.format('%.1fM', n / 1000000)
  elseif n >= 1000 then
    return string.format('%.1fk', n / 1000)
  end
  return tostring(n)
end
M.human = human

-- count writes n with thousands separators (12,345).
local function count(n)
  local s = tostring(n)
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

local function split(text)
  return vim.split(text or '', '\n', { plain = true })
end

local function chars(text)
  return vim.fn.strchars(text or '')
end

-- summary is a tool call's arguments in one short line: the first string value of the JSON object (a command,
-- a path, a pattern), else the raw text, cut to 60 characters.
local function summary(arguments)
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
  if chars(s) > 60 then
    s = vim.fn.strcharpart(s, 0, 59) .. '…'
  end
  return s
end
M.summary = summary

--- tool_line is the one line a tool call shows: → name summary · result size (✗ when it failed, ⚠ when a crash
--- left it without result).
function M.tool_line(call, result)
  local line = string.format('→ %s %s', call.name or '?', summary(call.arguments))
  if not result then
    return line .. ' · ⚠ uncertain: no result (:AlisioRecover)'
  elseif result.isError then
    return line .. string.format(' · ✗ failed (%s chars)', human(chars(result.text)))
  end
  return line .. string.format(' · %s chars', human(chars(result.text)))
end

--- EARLIER_LINE starts the chat's first line when earlier messages are not shown.
M.EARLIER_LINE = '▲ '

--- render turns the messages of alisio/session (with includeCompacted) into the chat's lines, and the folds
--- to close: the compacted originals and checkpoint behind their boundary line, each tool call's arguments and
--- result behind its line. uncertain lists the IDs of calls a crash left without result. page, when the
--- messages are the last ones of a longer history, says how many come before them ({ earlier = n }) and how
--- many messages of the whole history are compacted ({ compacted = n }).
function M.render(messages, uncertain, page)
  page = page or {}
  local lines, folds = {}, {}
  local function add(t)
    for _, l in ipairs(t) do
      table.insert(lines, l)
    end
  end
  -- Each call gets the result that follows it (IDs may be reused later in a session: SWE-agent numbers them).
  local results, open = {}, {}
  for _, id in ipairs(uncertain or {}) do
    open[id] = true
  end
  for i, m in ipairs(messages) do
    for _, c in ipairs(m.role == 'assistant' and m.toolCalls or {}) do
      for j = i + 1, #messages do
        local r = messages[j]
        if r.role == 'assistant' then
          break
        end
        if r.role == 'tool' and r.toolCallId == c.id then
          results[c] = r
          break
        end
      end
    end
  end
  -- The compacted originals come first in the history; they are gathered behind the checkpoint's boundary.
  local originals = {}
  for _, m in ipairs(messages) do
    if m.compacted then
      table.insert(originals, m)
    end
  end
  local last -- the role whose heading was written last: one heading for an assistant's consecutive messages
  local function message(m, prefix)
    if m.role == 'user' then
      add({ prefix .. '## You', '' })
      add(split(m.text))
      add({ '' })
      last = 'user'
    elseif m.role == 'assistant' then
      if last ~= 'assistant' then
        add({ prefix .. '## Alisio', '' })
      end
      last = 'assistant' 
      if m.text and m.text ~= '' then
        add(split(m.text))
        add({ '' })
      end
      for _, c in ipairs(m.toolCalls or {}) do
        local r = results[c]
        table.insert(lines, M.tool_line(c, not (open[c.id] and not r) and r or nil))
        local first = #lines + 1
        add({ '    arguments: ' .. (c.arguments or '') })
        if r then
          add({ '    result:' })
          for _, l in ipairs(split(r.text)) do
            table.insert(lines, '    ' .. l)
          end
        end
        table.insert(folds, { first, #lines })
      end
      if m.toolCalls and #m.toolCalls > 0 then
        add({ '' })
      end
    end
  end
  local compactedChars = 0
  for _, m in ipairs(originals) do
    compactedChars = compactedChars + chars(m.text)
  end
  local earlier = page.earlier or 0
  -- Every compacted message of the history, though only the last ones may be in this page.
  local total = math.max(page.compacted or 0, #originals)
  if earlier > 0 then
    -- The history starts with the compacted originals: often every earlier message is one of them.
    local what = total - #originals >= earlier and 'compacted original' or 'earlier message'
    add({ string.format('%s%s %s%s not shown · <CR> on this line or :AlisioEarlier shows %s more', M.EARLIER_LINE,
      count(earlier), what, earlier == 1 and '' or 's', count(math.min(earlier, 200))), '' })
  end
  -- The live checkpoint always heads the conversation (a compaction replaces a prefix), whatever its place in
  -- the history: its boundary comes first, over the originals it replaced.
  for _, m in ipairs(messages) do
    if m.summary and not m.compacted then
      local sizes = #originals == total and string.format('%s → %s chars', human(compactedChars), human(chars(m.text)))
        or string.format('now %s chars', human(chars(m.text)))
      table.insert(lines, string.format('── %s messages compacted into a checkpoint, %s%s ──', count(total), sizes,
        m.partial and ' · partial checkpoint' or ''))
      local first = #lines + 1
      add({ '### Checkpoint' .. (m.partial and ' (partial: raise compaction.maxOutputTokens for complete ones)' or ''), '' })
      add(split(m.text))
      if #originals == total then
        add({ '', '### The compacted originals (kept in the store)', '' })
      elseif #originals > 0 then
        add({ '', string.format('### The last %s of the %s compacted originals (kept in the store; :AlisioEarlier shows more)',
          count(#originals), count(total)), '' })
      end
      for _, o in ipairs(originals) do
        message(o, '#')
      end
      table.insert(folds, { first, #lines })
      add({ '' })
      last = nil
    end
  end
  for _, m in ipairs(messages) do
    if not m.compacted and not m.summary then
      message(m, '')
    end
  end
  if #(uncertain or {}) > 0 then
    add({ string.format('⚠ %d tool call(s) were cut off by a crash: :AlisioRecover records their outcome as unknown', #uncertain), '' })
  end
  return lines, folds
end

local state = { buf = nil, input = nil, levels = nil }

local function valid(buf)
  return buf and vim.api.nvim_buf_is_valid(buf)
end

local function win_of(buf)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
end

local function set_lines(first, last, lines)
  vim.bo[state.buf].modifiable = true
  vim.api.nvim_buf_set_lines(state.buf, first, last, false, lines)
  vim.bo[state.buf].modifiable = false
  local w = win_of(state.buf)
  if w then
    vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(state.buf), 0 })
  end
end

--- append adds text at the end of the chat as it streams: its first piece continues the last line, each
--- newline starts a new one.
function M.append(text)
  if not valid(state.buf) then
    return
  end
  local pieces = split(text)
  local n = vim.api.nvim_buf_line_count(state.buf)
  local last = vim.api.nvim_buf_get_lines(state.buf, n - 1, n, false)[1] or ''
  pieces[1] = last .. pieces[1]
  set_lines(n - 1, n, pieces)
end

--- append_lines adds whole lines at the end of the chat.
function M.append_lines(lines)
  if valid(state.buf) then
    local n = vim.api.nvim_buf_line_count(state.buf)
    set_lines(n, n, lines)
  end
end

-- levels turns fold ranges into foldexpr values per line (">N" where a fold of depth N starts, N inside).
local function levels(n, folds)
  local depth, starts = {}, {}
  for l = 1, n do
    depth[l] = 0
  end
  for _, f in ipairs(folds) do
    for l = f[1], math.min(f[2], n) do
      depth[l] = depth[l] + 1
    end
  end
  for _, f in ipairs(folds) do
    starts[f[1]] = true
  end
  local out = {}
  for l = 1, n do
    out[l] = (starts[l] and '>' or '') .. depth[l]
  end
  return out
end

--- foldexpr is the chat window's 'foldexpr': the folds of the last render, whatever window shows the buffer.
function M.foldexpr(lnum)
  return state.levels and state.levels[lnum] or '0'
end

--- show replaces the chat with the session's conversation (page: see render) and closes its folds. With
--- keep_place (earlier messages were loaded above) the cursor stays on what the user was reading; otherwise
--- the window shows the end of the conversation.
function M.show(messages, uncertain, page, keep_place)
  if not valid(state.buf) then
    return
  end
  local before = vim.api.nvim_buf_line_count(state.buf)
  local w = win_of(state.buf)
  local row = w and vim.api.nvim_win_get_cursor(w)[1] or 1
  local top = w and vim.api.nvim_win_call(w, function() return vim.fn.line('w0') end) or 1
  local lines, folds = M.render(messages, uncertain, page)
  if #lines == 0 then
    lines = { '_No messages yet: type below and press <CR> (normal mode) to send; <C-c> stops a turn, q closes._' }
  end
  state.levels = levels(#lines, folds)
  set_lines(0, -1, lines)
  if w then
    vim.api.nvim_win_call(w, function()
      vim.wo.foldlevel = 0
      vim.cmd('normal! zx') -- recompute the folds from foldexpr and close them
      if keep_place then
        -- The lines added above move what the user was reading down by as many: the view follows them.
        local added = #lines - before
        vim.fn.winrestview({ lnum = math.max(1, math.min(#lines, row + added)), col = 0,
          topline = math.max(1, math.min(#lines, top + added)) })
      else
        -- The end of the conversation at the bottom of the window, and as much of it above as fits.
        vim.cmd('normal! G')
        vim.cmd('normal! zb')
      end
    end)
  end
end

--- folds is the list of closed folds of the chat window ({first, last}), for tests.
function M.folds()
  local w = valid(state.buf) and win_of(state.buf)
  local out = {}
  if not w then
    return out
  end
  vim.api.nvim_win_call(w, function()
    local l, n = 1, vim.api.nvim_buf_line_count(state.buf)
    while l <= n do
      local e = vim.fn.foldclosedend(l)
      if e ~= -1 then
        table.insert(out, { l, e })
        l = e + 1
      else
        l = l + 1
      end
    end
  end)
  return out
end

local function scratch(name, ft)
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = ft
  return buf
end

local hint

--- open shows the chat split (creating it when needed) with the input window below, and returns the chat buffer.
--- actions: { send = fn(text), stop = fn(), earlier = fn() }.
function M.open(actions)
  state.buf = scratch(CHAT, 'markdown')
  state.input = scratch(INPUT, 'markdown')
  vim.bo[state.buf].modifiable = false
  if not win_of(state.buf) then
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, state.buf)
    local w = vim.api.nvim_get_current_win()
    vim.wo[w].wrap = true
    vim.wo[w].linebreak = true
    vim.wo[w].foldmethod = 'expr'
    vim.wo[w].foldexpr = "v:lua.require'alisio.chat'.foldexpr(v:lnum)"
    vim.wo[w].foldlevel = 0
    vim.wo[w].number = false
    vim.cmd('belowright 4split')
    vim.api.nvim_win_set_buf(0, state.input)
  elseif not win_of(state.input) then -- the input's window was closed or given to another buffer
    vim.api.nvim_set_current_win(win_of(state.buf))
    vim.cmd('belowright 4split')
    vim.api.nvim_win_set_buf(0, state.input)
  end
  local function map(buf, mode, lhs, fn, desc)
    vim.api.nvim_buf_set_keymap(buf, mode, lhs, '', { noremap = true, silent = true, callback = fn, desc = desc })
  end
  local function send()
    local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(state.input, 0, -1, false), '\n'))
    if text ~= '' then
      vim.api.nvim_buf_set_lines(state.input, 0, -1, false, {})
      actions.send(text)
    end
  end
  for _, buf in ipairs({ state.buf, state.input }) do
    map(buf, 'n', '<C-c>', actions.stop, 'Alisio: stop the turn')
    map(buf, 'n', 'q', M.close, 'Alisio: close the chat')
  end
  map(state.input, 'n', '<CR>', send, 'Alisio: send')
  -- <CR> in the chat: on the first line, shows earlier messages; on a fold (a tool call's details, the
  -- checkpoint) or the line above it (the tool call), opens or closes it; elsewhere, goes down a line.
  map(state.buf, 'n', '<CR>', function()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    if row == 1 and vim.startswith(vim.api.nvim_buf_get_lines(state.buf, 0, 1, false)[1] or '', M.EARLIER_LINE) then
      actions.earlier()
    elseif vim.fn.foldlevel(row) > 0 then
      vim.cmd('normal! za')
    elseif vim.fn.foldlevel(row + 1) > 0 then -- a tool call's line: its details are folded below it
      vim.cmd(string.format('%d%s', row + 1, vim.fn.foldclosed(row + 1) ~= -1 and 'foldopen' or 'foldclose'))
    else
      vim.cmd('normal! +')
    end
  end, 'Alisio: show earlier messages, or open/close a fold')
  map(state.input, 'i', '<C-s>', send, 'Alisio: send')
  hint(state.input)
  return state.buf
end

local HINT_NS = vim.api.nvim_create_namespace('alisio_input_hint')
M.INPUT_HINT = 'Ask here · <CR> or <C-s> sends · <C-c> stops · q closes'

-- hint shows M.INPUT_HINT in the empty input, as a placeholder (virtual text, not in the buffer), and takes it
-- away as soon as something is typed.
hint = function(buf)
  local function update()
    vim.api.nvim_buf_clear_namespace(buf, HINT_NS, 0, -1)
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    if #lines <= 1 and (lines[1] or '') == '' then
      vim.api.nvim_buf_set_extmark(buf, HINT_NS, 0, 0, { virt_text = { { M.INPUT_HINT, 'Comment' } }, virt_text_pos = 'overlay' })
    end
  end
  update()
  if not vim.b[buf].alisio_hint then
    vim.b[buf].alisio_hint = true
    -- Every change, typed or made by the plugin (the input is emptied when it sends).
    vim.api.nvim_buf_attach(buf, false, { on_lines = function()
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(buf) then
          update()
        end
      end)
    end })
  end
end

--- close closes the chat and input windows (the buffers stay for the next :Alisio).
function M.close()
  for _, buf in ipairs({ state.input, state.buf }) do
    local w = valid(buf) and win_of(buf)
    if w and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(w, true)
    end
  end
end

--- buf is the chat buffer (nil before the first :Alisio).
function M.buf()
  return valid(state.buf) and state.buf or nil
end

--- input_buf is the input buffer (nil before the first :Alisio).
function M.input_buf()
  return valid(state.input) and state.input or nil
end

return M
