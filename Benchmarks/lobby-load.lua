-- wrk script for Benchmarks/lobby-load: the request mix over a seeded plan, in 20 slots: 55 % beacon
-- resolution, 10 % invitations, 10 % answers, 10 % score submissions, 5 % statistics, 10 % board pages
-- (`nearplay lobby seed`, a text file named by $PLAN). Each thread takes every THREADS-th item of
-- each plan list, so no two requests use the same invitation, answer or score, and every request
-- is valid: any non-2xx answer is an error of the server.
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

local kinds = { T = "tokens", U = "usernames", B = "beacons", I = "invites", A = "answers", S = "scores", V = "stats", R = "recordings" }

function init(args)
  plan = { tokens = {}, usernames = {}, beacons = {}, invites = {}, answers = {}, scores = {}, stats = {}, recordings = {} }
  for line in io.lines(os.getenv("PLAN")) do
    local fields = {}
    for field in line:gmatch("%S+") do fields[#fields + 1] = field end
    local list = plan[kinds[fields[1]]]
    if #fields == 2 then
      list[#list + 1] = fields[2]
    else
      list[#list + 1] = { select(2, unpack(fields)) }
    end
  end
  stride = tonumber(os.getenv("THREADS"))
  counter = 0
  exhausted = 0
  cursors = { invites = index, answers = index, scores = index, stats = index }
  math.randomseed(os.time() + index)
end

local function take(name)
  local list = plan[name]
  local i = cursors[name]
  cursors[name] = i + stride
  if i >= #list then
    exhausted = exhausted + 1
    i = i % #list
  end
  return list[i + 1]
end

local function auth(player)
  return { ["Authorization"] = "Bearer " .. plan.tokens[tonumber(player)], ["Content-Type"] = "application/json" }
end

local boards = { "day", "week", "month", "all", "league" }

function request()
  counter = counter + 1
  local slot = counter % 20
  if slot >= 18 then
    -- Board reads: a random board, mostly the first page, one in four at a random depth.
    local offset = 0
    if math.random(4) == 1 then offset = math.random(0, 20000) end
    return wrk.format("GET", "/v1/leaderboards/" .. boards[math.random(#boards)] .. "?offset=" .. offset .. "&limit=20",
      auth(math.random(#plan.tokens)))
  end
  if slot < 11 then
    local viewer = math.random(#plan.tokens)
    return wrk.format("GET", "/v1/beacons/" .. plan.beacons[math.random(#plan.beacons)], auth(viewer))
  elseif slot < 13 then
    local item = take("invites")
    return wrk.format("POST", "/v1/invitations", auth(item[1]), '{"invitees":["' .. plan.usernames[tonumber(item[2])] .. '"]}')
  elseif slot < 15 then
    local item = take("answers")
    return wrk.format("POST", "/v1/invitations/" .. item[2] .. "/" .. item[3], auth(item[1]))
  elseif slot < 17 then
    local item = take("scores")
    local recording = plan.recordings[tonumber(item[4])]
    return wrk.format("POST", "/v1/games/" .. item[2] .. "/rounds/" .. item[3] .. "/scores", auth(item[1]),
      '{"score":' .. recording[1] .. ',"key":"' .. item[5] .. '","recording":' .. recording[2] .. '}')
  else
    local item = take("stats")
    return wrk.format("GET", "/v1/players/" .. plan.usernames[tonumber(item[2])] .. "/stats", auth(item[1]))
  end
end

function done(summary, latency, requests)
  local reused = 0
  for _, thread in ipairs(threads) do reused = reused + (thread:get("exhausted") or 0) end
  io.write(string.format("plan items reused: %d\n", reused))
end
