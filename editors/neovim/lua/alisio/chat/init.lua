-- The :Alisio chat buffer: the session's conversation as markdown in a split, a turn streaming in place, and an
-- input window below it (<CR> in normal mode sends, <C-c> stops the turn, q closes). Works on 0.7.2 and later.
-- What the lines say is render's (chat/render.lua, one formatter per message kind in chat/formatters/).
local text = require('alisio.chat.text')
local render = require('alisio.chat.render')

local M = {}

local CHAT, INPUT = 'alisio://chat', 'alisio://input'

M.human = text.human
M.summary = text.summary
M.render = render.render
M.EARLIER_LINE = render.EARLIER_LINE
local split = text.split

local state = { buf = nil, input = nil, levels = nil, notes = {}, share = nil }

-- MAX_NOTES is how many of the daemon's own sentences the chat keeps at its end.
local MAX_NOTES = 5

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

-- note_lines are the chat's lines of a note.
local function note_lines(text)
  return { 'ⓘ ' .. text:gsub('%s*\n%s*', ' '), '' }
end

--- note adds a sentence the daemon said on its own (a compaction's, a plugin's) at the end of the chat, where it
--- stays until the next prompt; a note of the same kind (key, when given) takes the place of the one before it
--- when the chat is drawn again (a compaction's start, then its end).
function M.note(text, key)
  M.drop_note(key)
  table.insert(state.notes, { key = key, text = text })
  if #state.notes > MAX_NOTES then
    table.remove(state.notes, 1)
  end
  M.append_lines(note_lines(text))
end

--- unsay removes the last line of the chat that is line, and the blank line after it when blank_after is set
--- (a note's).
function M.unsay(line, blank_after)
  if not valid(state.buf) then
    return
  end
  local lines = vim.api.nvim_buf_get_lines(state.buf, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == line then
      set_lines(i - 1, (blank_after and lines[i + 1] == '') and i + 1 or i, {})
      return
    end
  end
end

--- drop_note removes the note of kind key (a question answered, a compaction's start when it ends), from the
--- chat and from what it draws again.
function M.drop_note(key)
  for i, n in ipairs(state.notes) do
    if key and n.key == key then
      table.remove(state.notes, i)
      M.unsay(note_lines(n.text)[1], true)
      return
    end
  end
end

--- clear_notes forgets the notes (a prompt was sent: what they said is behind it).
function M.clear_notes()
  state.notes = {}
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

--- show replaces the chat with the session's conversation (notices and page: see render) and closes its folds.
--- place says what the window shows: 'kept' (earlier messages were loaded above) the lines the user was reading,
--- 'boundary' (after a compaction) the compaction's boundary at the top with what it kept below, and nil the end
--- of the conversation.
function M.show(messages, notices, page, place)
  if not valid(state.buf) then
    return
  end
  local before = vim.api.nvim_buf_line_count(state.buf)
  local w = win_of(state.buf)
  local row = w and vim.api.nvim_win_get_cursor(w)[1] or 1
  local top = w and vim.api.nvim_win_call(w, function() return vim.fn.line('w0') end) or 1
  local lines, folds, boundary = M.render(messages, notices, page)
  if #lines == 0 then
    lines = { '_No messages yet: type below and press <CR> (normal mode) to send; <C-c> stops a turn, q closes._' }
  end
  for _, n in ipairs(state.notes) do
    vim.list_extend(lines, note_lines(n.text))
  end
  state.levels = levels(#lines, folds)
  set_lines(0, -1, lines)
  if w then
    vim.api.nvim_win_call(w, function()
      vim.cmd('setlocal foldlevel=0')
      vim.cmd('normal! zx') -- recompute the folds from foldexpr and close them
      if place == 'kept' then
        -- The lines added above move what the user was reading down by as many: the view follows them.
        local added = #lines - before
        vim.fn.winrestview({ lnum = math.max(1, math.min(#lines, row + added)), col = 0,
          topline = math.max(1, math.min(#lines, top + added)) })
      elseif place == 'boundary' and boundary then
        vim.fn.winrestview({ lnum = boundary, col = 0, topline = boundary })
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
  -- Vim's markdown syntax marks every underscore inside a word (each tool name) as an error.
  vim.api.nvim_buf_call(buf, function() vim.cmd('silent! syntax clear markdownError') end)
  return buf
end

local hint

-- keep_share gives the chat its share of the screen's width again each time the screen is resized (Neovim
-- takes the columns a smaller terminal lost from the rightmost window first: the chat, down to one column),
-- and shares the rest out among the other windows.
local function keep_share()
  local group = vim.api.nvim_create_augroup('alisio_chat_width', { clear = true })
  vim.api.nvim_create_autocmd('VimResized', { group = group, callback = function()
    local w = win_of(state.buf)
    if w and state.share then
      local at_end = vim.api.nvim_win_get_cursor(w)[1] == vim.api.nvim_buf_line_count(state.buf)
      vim.api.nvim_win_set_width(w, math.max(1, math.floor(vim.o.columns * state.share)))
      -- The other windows share what is left (Neovim took it from one of them): the chat and the input keep
      -- their sizes (winfixwidth, winfixheight).
      vim.cmd('wincmd =')
      if at_end then
        -- Lines wrap anew at the new width: the end of the conversation stays at the bottom of the window
        -- (Neovim would keep the top line, and show the first message, or nothing but the last line).
        vim.api.nvim_win_call(w, function() vim.cmd('normal! Gzb') end)
      end
    end
  end })
end

-- open_input opens the input's window, four lines under the current one; they stay four when another window
-- closes ('equalalways' would share the height out).
local function open_input()
  vim.cmd('belowright 4split')
  vim.api.nvim_win_set_buf(0, state.input)
  -- Local values only (the split copied the chat's folds): a buffer opened here later gets the user's own.
  vim.cmd('setlocal winfixheight winfixwidth foldmethod=manual foldexpr=0')
end

--- open shows the chat split (creating it when needed) with the input window below, puts the cursor in the input,
--- and returns the chat buffer.
--- actions: { send = fn(text), stop = fn(), earlier = fn() }.
function M.open(actions)
  state.buf = scratch(CHAT, 'markdown')
  state.input = scratch(INPUT, 'markdown')
  vim.bo[state.buf].modifiable = false
  if not win_of(state.buf) then
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, state.buf)
    -- :setlocal, not :set — a file opened from this window later (:e, :tabnew) keeps the user's own options.
    -- winfixwidth: a split elsewhere does not take the chat's width.
    vim.cmd([[setlocal wrap linebreak nonumber winfixwidth foldmethod=expr foldlevel=0 foldexpr=v:lua.require'alisio.chat'.foldexpr(v:lnum)]])
    state.share = vim.api.nvim_win_get_width(0) / vim.o.columns
    keep_share()
    open_input()
  elseif not win_of(state.input) then -- the input's window was closed or given to another buffer
    vim.api.nvim_set_current_win(win_of(state.buf))
    open_input()
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
  vim.api.nvim_set_current_win(win_of(state.input)) -- :Alisio always lands in the input
  return state.buf
end

local HINT_NS = vim.api.nvim_create_namespace('alisio_input_hint')
M.INPUT_HINT = 'Ask here (i to type) · <CR> or <C-s> sends · <C-c> stops · q closes'

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

--- add_to_input puts lines at the end of the input (a blank line after what is there) and the cursor after them.
function M.add_to_input(lines)
  local buf = state.input
  local have = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local empty = #have <= 1 and (have[1] or '') == ''
  local at = empty and 0 or #have
  vim.api.nvim_buf_set_lines(buf, at, -1, false, empty and lines or vim.list_extend({ '' }, lines))
  local w = win_of(buf)
  if w then
    vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(buf), 0 })
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
