-- alisio.client: the alisio-lsp client — starting it for a workspace, attaching buffers, sending requests
-- (queued until initialize is answered), restarting it.
local config = require('alisio.config')
local state = require('alisio.state')
local statusline = require('alisio.statusline')
local util = require('alisio.util')

local M = {}

--- get is the running client (nil when none).
function M.get()
  if not state.client_id then
    return nil
  end
  return vim.lsp.get_client_by_id(state.client_id)
end

--- request sends method to the alisio client and calls cb(err, result); it works on 0.7 through 0.12. A request
--- made while the server is still starting waits for initialize to be answered; on_id gets the request's id.
function M.request(method, params, cb, on_id)
  -- A request that cannot be sent still answers cb (kind notSent, after the reason was said), so that what
  -- waits for it — a turn, a compaction — ends.
  local function not_sent()
    vim.schedule(function()
      cb({ message = 'alisio-lsp is not running, so nothing was sent', data = { kind = 'notSent' } }, nil)
    end)
  end
  local c = M.get()
  if not c and not state.client_id then
    if not M.start_here() then
      return not_sent()
    end
    c = M.get()
  end
  if not c then
    util.notify('alisio-lsp is not running: :AlisioRestart starts it (:checkhealth alisio says why it stopped)', util.levels.ERROR)
    return not_sent()
  end
  if not state.ready then
    table.insert(state.pending, function()
      M.request(method, params, cb, on_id)
    end)
    return
  end
  local _, id = util.client_call(c, 'request', method, util.obj(params), function(err, result)
    vim.schedule(function()
      cb(err, result)
    end)
  end)
  if on_id then
    on_id(id)
  end
end

--- notify_settings sends the settings in force to the running server (they apply live).
function M.notify_settings(settings)
  local c = M.get()
  if c then
    c.config.settings = { alisio = util.obj(settings) }
    util.client_call(c, 'notify', 'workspace/didChangeConfiguration', { settings = c.config.settings })
  end
end

--- cancel cancels request id of the running client.
function M.cancel(id)
  local c = M.get()
  if c then
    util.client_call(c, 'cancel_request', id)
  end
end

-- attach attaches a file's buffer to the client. A buffer named on the command line is not loaded yet when
-- setup runs from init.lua: its BufReadPost attaches it then.
local function attach(bufnr, id)
  if vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= '' and vim.api.nvim_buf_is_loaded(bufnr) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- installed says whether the configured alisio-lsp can be run; when it cannot, it says what to do (at setup,
--- and at each command that would start it, rather than Neovim's generic "Spawning language server" error).
--- With later (setup, while the user's init.lua runs) the message waits until Neovim has started, so that it
--- is not shown as an error of their init.lua.
function M.installed(later)
  local cmd = config.get().cmd[1]
  if vim.fn.executable(cmd) == 1 then
    return true
  end
  local msg = string.format(
    "'%s' was not found. Install it (in an alisio-lsp checkout: go build -o ~/.local/bin/alisio-lsp ./cmd/alisio-lsp) "
      .. "and make sure it is on PATH, or give its path: require('alisio').setup({cmd = {'/path/to/alisio-lsp', 'serve'}}). "
      .. ':checkhealth alisio checks it.', cmd)
  if later then
    vim.schedule(function() util.notify(msg, util.levels.ERROR) end)
  else
    util.notify(msg, util.levels.ERROR)
  end
  return false
end

--- start starts alisio-lsp for the workspace of bufnr, or for root when given (or attaches bufnr to the
--- running client).
function M.start(bufnr, root)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local cfg = config.get()
  local c = M.get()
  if c then
    attach(bufnr, c.id)
    return c.id
  end
  if not M.installed() then
    return nil
  end
  if not root then
    local found
    root, found = util.find_root(vim.api.nvim_buf_get_name(bufnr), cfg.root_markers)
    local home = (util.uv.os_homedir() or ''):gsub('/$', '')
    if not found and (root == home or root == '/') then
      -- No project above the file: the current directory is the workspace, and here that is a lot to hand over.
      util.notify(string.format("no project (%s) above %s: the workspace is %s, and the agent's tools can read and change "
        .. 'any file in it. Open files from a project directory to keep them to it.', table.concat(cfg.root_markers, ', '),
        vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t'), root == home and 'your home directory' or 'the whole file system'), util.levels.WARN)
    end
  end
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.window = capabilities.window or {}
  capabilities.window.workDoneProgress = true
  -- Approval questions are answered by alisio/approvalAnswer after an alisio/approve notification (review.lua).
  capabilities.experimental = { alisio = { approve = 'notification', editor = 'neovim' } }
  local conf = {
    name = 'alisio',
    cmd = cfg.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    settings = { alisio = util.obj(cfg.settings) },
    init_options = { alisio = util.obj(cfg.settings) },
    capabilities = capabilities,
    handlers = require('alisio.events').handlers,
    on_init = function()
      state.ready = true
      local pending = state.pending
      state.pending = {}
      vim.schedule(function()
        for _, send in ipairs(pending) do
          send()
        end
      end)
    end,
    on_exit = function(code, _, client_id)
      if client_id and state.client_id and client_id ~= state.client_id then
        return -- a client stopped by :AlisioRestart, after its successor started
      end
      state.client_id, state.ready, state.pending = nil, false, {}
      state.status, state.compacting, state.turn = nil, false, nil
      vim.schedule(function()
        statusline.busy()
        if code ~= 0 then
          util.notify('alisio-lsp exited with code ' .. tostring(code) .. ': :AlisioRestart starts it again (:AlisioLog shows its log)', util.levels.WARN)
        end
      end)
    end,
  }
  state.client_id = vim.lsp.start_client(conf)
  state.root = state.client_id and root or state.root
  if state.client_id then
    attach(bufnr, state.client_id)
  end
  return state.client_id
end

--- start_here starts alisio-lsp for the project of the current directory, when a command needs it before any
--- file of the workspace was opened; outside any project it says what to do instead, and returns false.
function M.start_here()
  local root, found = util.find_root('', config.get().root_markers)
  if not found then
    util.notify(string.format('alisio-lsp has not started: %s is in no project. Open a file of your project, or :AlisioRestart to start here.',
      vim.fn.fnamemodify(root, ':~')), util.levels.WARN)
    return false
  end
  if not M.start(vim.api.nvim_get_current_buf(), root) then
    return false
  end
  util.notify('alisio-lsp started for ' .. vim.fn.fnamemodify(root, ':~') .. ', the project of the current directory')
  return true
end

--- restart stops the server and starts it again (:AlisioRestart), for the same workspace when one ran.
function M.restart()
  local c = M.get()
  local started_before = state.client_id ~= nil
  local root = c and c.config.root_dir or state.root
  local function again()
    state.client_id = nil
    if M.start(vim.api.nvim_get_current_buf(), root) then
      root = vim.lsp.get_client_by_id(state.client_id).config.root_dir
      util.notify((started_before and 'alisio-lsp restarted for ' or 'alisio-lsp started for ') .. vim.fn.fnamemodify(root, ':~'))
      -- The meter at once, not at the next prompt.
      M.request('alisio/status', { session = state.session }, function(err, st)
        if not err and st then
          state.session, state.status = st.session, st
          statusline.redraw()
        end
      end)
    end
  end
  if not c then
    again()
    return
  end
  c.stop()
  vim.wait(3000, function()
    return state.client_id == nil
  end, 20)
  again()
end

--- log opens the log of Neovim's language clients, where alisio-lsp writes what went wrong (:AlisioLog).
function M.log()
  -- noautocmd: opening the log is not opening a file of a workspace, which would start the daemon there. From
  -- the chat or another of alisio's own windows, in a tab of its own: the chat keeps its windows.
  local here = vim.api.nvim_buf_get_name(0):find('^alisio://') and 'tabedit' or 'edit'
  -- The daemon's own log when it names one (the shared daemon's), else the language clients' log, where
  -- Neovim writes what the server printed.
  local c = M.get()
  local caps = c and c.server_capabilities or {}
  local alisio = type(caps.experimental) == 'table' and caps.experimental.alisio or {}
  local file = type(alisio) == 'table' and alisio.logFile or nil
  if not (file and vim.fn.filereadable(file) == 1) then
    file = vim.lsp.get_log_path()
  end
  vim.cmd('noautocmd ' .. here .. ' ' .. vim.fn.fnameescape(file))
  vim.bo.readonly = true
  if vim.fn.getfsize(file) == 0 then
    util.notify('the log is empty: alisio-lsp writes warnings and errors there (--log-level info in the server command writes more)')
  end
  vim.cmd('normal! G') -- the newest lines
end

return M
