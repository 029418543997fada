-- wrk script for bench/load.py: POST /api/v1/games/{id}/moves over many games of one deal,
-- alternating "AC-f" and "undo" on each game (both are accepted actions). The games file
-- (GAMES_LUA) defines `token` and `games`; with thousands of games, a game is never acted on
-- twice at once by 64 connections. wrk appears to consume one generated request at start, so
-- one game's first move is never sent and its undo answers 422 (1-2 non-2xx per run).
dofile(os.getenv("GAMES_LUA"))
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. token
local n = #games
local counter = 0
local bodies = {'{"card": "AC", "to": "f"}', '{"action": "undo"}'}
request = function()
  local g = counter % n
  local phase = math.floor(counter / n) % 2
  counter = counter + 1
  return wrk.format(nil, "/api/v1/games/" .. games[g + 1] .. "/moves", nil, bodies[phase + 1])
end
