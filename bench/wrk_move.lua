-- wrk script for bench/load.py: POST /api/v1/games/{id}/moves over many games of one deal,
-- alternating "AC-f" and "undo" on each game (both are accepted actions). The games file
-- (GAMES_LUA) defines `token` and `games`; with thousands of games, a game is never acted on
-- twice at once by 64 connections. wrk calls `request` once at start and never sends what it
-- returns: that first call returns a read of a game and takes no turn, so that no game loses
-- its move (before, game 1's first move was never sent and its undo, a turn later, answered
-- `422 nothing_to_undo`: the one non-2xx answer of each run).
--
-- With KEY_PREFIX set, every request carries a fresh `Idempotency-Key: <KEY_PREFIX>-<n>`, as the
-- web client sends with every action; without it, no key. Run with one thread (-t1): the
-- counter, and so the game phases and the keys, belong to one Lua state.
dofile(os.getenv("GAMES_LUA"))
local prefix = os.getenv("KEY_PREFIX")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. token
local n = #games
local counter = 0
local bodies = {'{"card": "AC", "to": "f"}', '{"action": "undo"}'}
-- wrk.format uses the headers it is given instead of wrk.headers (adding Host and
-- Content-Length), so the keyed requests get their own table: wrk.headers and the key.
local keyed = nil
if prefix ~= nil and prefix ~= "" then
  keyed = {}
  for name, value in pairs(wrk.headers) do
    keyed[name] = value
  end
end
local primed = false
request = function()
  if not primed then
    primed = true
    return wrk.format("GET", "/api/v1/games/" .. games[1], wrk.headers, nil)
  end
  local g = counter % n
  local phase = math.floor(counter / n) % 2
  counter = counter + 1
  if keyed ~= nil then
    keyed["Idempotency-Key"] = prefix .. "-" .. counter
  end
  return wrk.format(nil, "/api/v1/games/" .. games[g + 1] .. "/moves", keyed, bodies[phase + 1])
end
