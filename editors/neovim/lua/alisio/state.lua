-- alisio.state: what the plugin's modules share while Neovim runs — the client, the meter's session and
-- payload, the running turn — in one table.
return {
  config = nil, -- setup's options over config.defaults
  client_id = nil,
  root = nil, -- the workspace of the last client started: :AlisioRestart starts the next one there
  ready = false, -- initialize has been answered; requests wait in pending until then
  pending = {},
  status = nil, -- the last alisio/status payload
  session = nil, -- the session the meter shows (the latest one the server reported)
  compacting = false,
  turn = nil, -- the running turn: { id = request id, session = ... }
  spinner = nil, -- the timer that redraws the statusline while a turn or a compaction runs
  shown = nil, -- what the chat shows: { session, from }
  chat_request = nil, -- numbers the chat's page requests: only the latest is drawn
}
