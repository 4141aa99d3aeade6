-- alisio.views: the read-only views a command opens in a window of its own — the checkpoint, what fills the
-- context, the tool sources (a picker that turns MCP servers and plugins on or off, live).
local chat = require('alisio.chat')
local client = require('alisio.client')
local config = require('alisio.config')
local state = require('alisio.state')
local util = require('alisio.util')

local M = {}

--- show makes buf the current window's buffer: the window that already shows it, else a window of its own;
--- it returns true when it opened one.
function M.show(buf)
  local shown = vim.fn.bufwinid(buf)
  if shown ~= -1 then
    vim.api.nvim_set_current_win(shown)
    return false
  end
  -- A view gets a window of its own, as :help does: never the chat's (its folds would hide lines) nor the
  -- input's (four lines, and no place left to type), nor the file the user was editing. It splits the window
  -- the user came from, or another one, or opens on the left when only the chat is shown.
  local function in_chat()
    local cur = vim.api.nvim_get_current_buf()
    return chat.buf() ~= nil and (cur == chat.buf() or cur == chat.input_buf())
  end
  if in_chat() then
    vim.cmd('silent! wincmd p')
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if not in_chat() then
        break
      end
      if vim.api.nvim_win_get_config(w).relative == '' then
        vim.api.nvim_set_current_win(w)
      end
    end
  end
  vim.cmd(in_chat() and 'topleft vsplit' or 'split')
  vim.cmd('buffer ' .. buf)
  vim.cmd('setlocal nofoldenable') -- local: a file opened in this window later keeps the user's folds
  return true
end

--- set_view puts lines in the read-only view buffer buf.
local function set_view(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

-- scratch shows lines in the view buffer name (created once), in a window of its own.
local function scratch(name, lines, ft)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  set_view(buf, lines)
  vim.bo[buf].filetype = ft or 'markdown'
  vim.bo[buf].bufhidden = 'hide'
  if not M.show(buf) then
    return buf
  end
  vim.cmd('setlocal wrap linebreak')
  vim.api.nvim_buf_set_keymap(buf, 'n', 'q', '', { noremap = true, silent = true, desc = 'Alisio: close this view', callback = function()
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.cmd('close')
    else
      vim.cmd('silent! buffer #')
    end
  end })
  return buf
end

local checkpoint_view = 'alisio://checkpoint'

--- checkpoint_lines are the lines of the checkpoint view for alisio/checkpoint's answer res.
local function checkpoint_lines(res)
  local written = res.createdAt or '?'
  local y, mo, d, h, mi = tostring(written):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+)')
  if y then -- the time in the user's zone, as the rest of Neovim shows times
    local utc = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi) })
    local offset = os.time() - os.time(os.date('!*t'))
    written = os.date('%Y-%m-%d %H:%M', utc + offset)
  end
  local lines = { '# Checkpoint' .. (res.partial and ' (partial: raise compaction.maxOutputTokens)' or ''),
    string.format('Written %s, replacing %d messages.', written, res.replacedMessages or 0), '' }
  vim.list_extend(lines, vim.split(res.text or '', '\n', { plain = true }))
  if res.relevantFilesChangedSince and #res.relevantFilesChangedSince > 0 then
    vim.list_extend(lines, { '', '## Changed since', unpack(res.relevantFilesChangedSince) })
  end
  return lines
end

--- checkpoint shows the current checkpoint (:AlisioCheckpoint). With refresh, it only brings an open view up
--- to date (after a compaction, an edit or an undo), without moving the cursor.
function M.checkpoint(refresh)
  local open = vim.fn.bufnr(checkpoint_view)
  if refresh and open == -1 then
    return
  end
  client.request('alisio/checkpoint', { session = state.session }, function(err, res)
    if refresh then
      if not err and vim.api.nvim_buf_is_valid(open) then
        local none = not res.checkpoint or res.checkpoint == vim.NIL
        set_view(open, none and { '# Checkpoint', 'This session has no checkpoint any more: its compaction was undone.' } or checkpoint_lines(res))
      end
      return
    end
    if err then
      util.notify(util.err_message(err), util.levels.ERROR)
      return
    end
    if not res.checkpoint or res.checkpoint == vim.NIL then
      util.notify('this session has no checkpoint yet: :AlisioCompact writes one')
      return
    end
    scratch(checkpoint_view, checkpoint_lines(res))
  end)
end


-- of_that_point is how far, in percent, the request is toward the point where compaction starts, counted in
-- the tokens the sentence gives (the rules' own fraction when the point is not known in them).
local function of_that_point(st)
  local at = (st.compactsAt or 0) * (st.limitTokens or 0)
  if at > 0 and (st.limitTokens or 0) == (st.window or 0) then
    return 100 * (st.tokens or 0) / at
  end
  return 100 * math.max(st.windowFraction or 0, st.charsFraction or 0)
end

--- context shows what fills the context (:AlisioContext).
function M.context()
  -- Before the workspace has a session: what its first request will hold (instructions, tool catalog).
  client.request('alisio/status', { session = state.session, firstRequest = true }, function(err, st)
    if err then
      util.notify(util.err_message(err), util.levels.ERROR)
      return
    end
    local total = (st.usedChars or 0) + (st.toolsChars or 0)
    local unknown_window = (st.windowSource or ''):find('^maxContextChars') ~= nil
    local starts = st.compactsAtText or string.format('compaction starts at %.0f%% of the window or of limits.maxContextChars', (st.threshold or 0) * 100)
    -- One row a part: its name, its size, then its share of the request as a bar (20 cells: the row fits a
    -- half-width window, and a narrower one cuts the bar, not the name).
    local function row(name, chars)
      local n = total > 0 and math.floor(20 * chars / total + 0.5) or 0
      return string.format('%-26s %11s  %s', name, util.human(chars) .. ' chars', string.rep('#', n) .. string.rep('.', 20 - n))
    end
    local lines = {
      (st.session or '') == '' and '# Context of the first request (no session yet: :AlisioPrompt or :Alisio starts one)'
        or '# Context of session ' .. st.session,
      '',
      string.format('A request sends %s chars; the bars are shares of it.', util.human(total)),
      '',
      row('instructions', (st.instructionsChars or 0) - (type(st.rules) == 'table' and st.rules.chars or 0)),
      row('transcript', st.transcriptChars or 0),
      row('tool catalog', st.toolsChars or 0),
      '',
      string.format('Hard limit: %s of %s chars (instructions and transcript; the tool catalog is sent besides).',
        util.human(st.usedChars), util.human(st.hardLimit)),
      unknown_window and string.format("%s tokens (%s); the model's window is unknown. %s (the session is at %.0f%% of that point).",
          util.human(st.tokens), st.tokensSource or 'estimated', util.capitalize(starts), (st.charsFraction or 0) * 100)
        or string.format('%s tokens (%s) of a %s-token window (%s): the request fills %.0f%% of it. %s (at %.0f%% of that point).',
          util.human(st.tokens), st.tokensSource or 'estimated', util.human(st.window), st.windowFrom or st.windowSource or '?',
          100 * (st.tokens or 0) / math.max(st.window or 1, 1), util.capitalize(starts), of_that_point(st)),
      'Next model call: ' .. (st.nextCall or ((st.nextAction or ''):find('^compact') and 'compacts first' or st.nextAction == 'reduce'
        and 'trims large tool outputs to fit' or 'sends as is')) .. '.',
    }
    local transcript_row = 7 -- the row under which the transcript's parts go
    if type(st.rules) == 'table' then -- the project's rules (AGENTS.md), a part of the instructions
      table.insert(lines, 6, row('project rules: ' .. st.rules.file .. (st.rules.cut and ' (cut)' or ''), st.rules.chars or 0))
      transcript_row = 8
    end
    if type(st.cache) == 'table' then
      table.insert(lines, st.cache.text:sub(1, 1):upper() .. st.cache.text:sub(2) .. '.')
    end
    for _, n in ipairs(st.notices or {}) do
      table.insert(lines, '⚠ ' .. n.text)
    end
    -- The transcript by kind, under its line (the daemon counts it: the transcript itself never comes here).
    client.request('alisio/context', { session = st.session ~= '' and st.session or nil }, function(cerr, ctx)
      if not cerr and ctx then
        local at = transcript_row
        for _, p in ipairs(ctx.parts or {}) do
          if p.chars > 0 then
            table.insert(lines, at, row('  ' .. p.name, p.chars))
            at = at + 1
          end
        end
      end
      scratch('alisio://context', lines)
    end)
  end)
end

--- tools lists the tool sources (built-in, each MCP server, each plugin) with their tool count, catalog size and
--- problem; picking an MCP server or a plugin turns it on or off, live (:AlisioTools).
function M.tools()
  client.request('alisio/tools', {}, function(err, d)
    if err then
      util.notify(util.err_message(err), util.levels.ERROR)
      return
    end
    local settings = config.get().settings
    local src = {}
    for _, s in ipairs(d.sources or {}) do
      src[s.source] = s
    end
    local items = {}
    if src['built-in'] then
      table.insert(items, { text = string.format('built-in: %d tools, %s chars', src['built-in'].count, util.human(src['built-in'].chars)) })
    end
    local names = vim.tbl_keys(settings.mcpServers or {})
    table.sort(names)
    for _, name in ipairs(names) do
      local s, off = src[name], settings.mcpServers[name].disabled == true
      local text = off and string.format('MCP server %s: disabled (pick to enable)', name)
        or string.format('MCP server %s: %d tools, %s chars (pick to disable)', name, s and s.count or 0, util.human(s and s.chars or 0))
      if s and s.problem and s.problem ~= '' then
        text = text .. ' ⚠ ' .. s.problem
      end
      table.insert(items, { text = text, kind = 'mcpServers', name = name, off = off })
    end
    for i, p in ipairs(settings.plugins or {}) do
      table.insert(items, { text = string.format('plugin %s: %s', p.name, p.disabled and 'disabled (pick to enable)' or 'on (pick to disable)'),
        kind = 'plugins', index = i, name = p.name, off = p.disabled == true })
    end
    table.insert(items, { text = string.format('tool catalog: %s chars in every request; %s', util.human(d.catalogChars), d.confinement or '') })
    local switchable = #items > 2 -- more than the built-in tools and the catalog's line
    local prompt = switchable and 'Alisio tool sources (pick an MCP server or a plugin to turn it on or off)'
      or 'Alisio tool sources (no MCP server or plugin is set: mcpServers and plugins in the settings add them)'
    vim.ui.select(items, { prompt = prompt, format_item = function(i) return i.text end }, function(choice)
      if not choice then
        return
      end
      if not choice.kind then -- the built-in tools, the catalog: always on
        util.notify(switchable and 'the built-in tools are always on; pick an MCP server or a plugin to turn it on or off'
          or 'the built-in tools are always on; only MCP servers and plugins (mcpServers, plugins in the settings) can be turned on or off')
        return
      end
      if choice.kind == 'mcpServers' then
        settings.mcpServers[choice.name].disabled = not choice.off
      else
        settings.plugins[choice.index].disabled = not choice.off
      end
      client.notify_settings(settings)
      util.notify(string.format('%s %s %s; it applies from the next model call', choice.kind == 'mcpServers' and 'MCP server' or 'plugin',
        choice.name, choice.off and 'enabled' or 'disabled'))
    end)
  end)
end

--- memories lists what the memory plugin saved for the workspace, oldest first, with those memory.maxChars
--- leaves out of a request marked; picking one asks whether to delete it (:AlisioMemories).
function M.memories()
  client.request('alisio/memories', vim.empty_dict(), function(err, res)
    if err then
      util.notify(util.err_message(err), util.levels.ERROR)
      return
    end
    local list = res.memories or {}
    if #list == 0 then
      util.notify('no memories for ' .. (res.workspace or 'this workspace') .. ' yet: the memory plugin saves them at each compaction (memory.enabled)')
      return
    end
    local from = #list - (res.sent or #list) -- the oldest ones a request leaves out
    local items = {}
    for i, m in ipairs(list) do
      -- vim.ui.select numbers the items itself.
      table.insert(items, { id = m.id, text = m.text, line = string.format('%s%s', (m.text or ''):gsub('%s*\n%s*', ' '),
        i <= from and ' (not sent: memory.maxChars)' or '') })
    end
    local prompt = string.format('Alisio memories of %s, oldest first; new sessions start with them (pick one to delete it)', res.workspace)
    vim.ui.select(items, { prompt = prompt, format_item = function(i) return i.line end }, function(choice)
      if not choice then
        return
      end
      vim.ui.select({ 'Delete it', 'Keep it' }, { prompt = 'Delete the memory "' .. choice.line .. '"?' }, function(answer)
        if answer ~= 'Delete it' then
          return
        end
        client.request('alisio/memories', { delete = choice.id }, function(derr)
          if derr then
            util.notify(util.err_message(derr), util.levels.ERROR)
            return
          end
          util.notify('deleted the memory; later sessions and compactions do not send it (:AlisioMemories lists the others)')
        end)
      end)
    end)
  end)
end

return M
