-- wrk script for the bare baseline (bench/baseline_server.py): a move-shaped body, random game.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  local body = string.format('{"game_id": %d, "move": "7H-t5"}', math.random(1, 1000))
  return wrk.format(nil, "/move", nil, body)
end
