-- wrk script for make bench (tests/bench/web.py): one client per wrk thread, every answer checked.
--
--   wrk -t N -c N ... -s wrk.lua URL -- EXPECTED_STATUS [CLIENTS_FILE | signed:PREFIX]
--
-- Without CLIENTS_FILE every connection sends the same GET. With it, thread n (one connection
-- each, -t equal to -c) sends the POST of line n: "<Cookie header value>\t<urlencoded form body>",
-- so every connection is its own person with its own session.
--
-- With cookie:VALUE every connection sends the same GET with that Cookie header (a signed-in
-- browser: tests/bench/scale.py).
--
-- With signed:PREFIX (tests/bench/webhook.py), thread n reads PREFIX-n.tsv, one webhook delivery
-- a line: "<X-Hub-Signature-256 value>\t<JSON body>", signed beforehand in Python (wrk's Lua has
-- no HMAC), and POSTs them in turn, a new one per request; past its last line it starts again
-- from the first, so those requests are redeliveries.
--
-- A response whose status is not EXPECTED_STATUS counts as bad; done() prints one "wrk-result"
-- line for web.py to read.

local threads = {}

function setup(thread)
   thread:set("number", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   expected = tonumber(args[1])
   bad = 0
   seen = " "  -- the unexpected statuses, each once
   local clients = args[2]
   if clients and clients:sub(1, 7) == "signed:" then
      deliveries_load(clients:sub(8) .. "-" .. number .. ".tsv")
   elseif clients and clients:sub(1, 7) == "cookie:" then
      wrk.headers["Cookie"] = clients:sub(8)
   elseif clients and clients:sub(1, 6) == "forms:" then
      forms_load(clients:sub(7) .. "-" .. number .. ".tsv")
   elseif clients then
      local n = 0
      for text in io.lines(clients) do
         n = n + 1
         if n == number then
            local cookie, body = text:match("^([^\t]*)\t(.*)$")
            wrk.method = "POST"
            wrk.body = body
            wrk.headers["Cookie"] = cookie
            wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
         end
      end
      if wrk.method ~= "POST" then
         error("no client line " .. number .. " in " .. clients)
      end
   end
end

-- Defines request() (so wrk asks for each request anew) only in the signed mode: the other modes
-- keep wrk's static request, built once.
function deliveries_load(path)
   local signatures, bodies = {}, {}
   for text in io.lines(path) do
      local signature, body = text:match("^([^\t]*)\t(.*)$")
      table.insert(signatures, signature)
      table.insert(bodies, body)
   end
   if #bodies == 0 then
      error("no deliveries in " .. path)
   end
   local headers, count, i = { ["Content-Type"] = "application/json" }, #bodies, 0
   request = function()
      i = i % count + 1
      headers["X-Hub-Signature-256"] = signatures[i]
      return wrk.format("POST", nil, headers, bodies[i])
   end
end

-- forms:PREFIX (tests/bench/scale.py): thread n reads PREFIX-n.tsv, one person a line,
-- "<Cookie header value>\t<urlencoded form body>", and POSTs them in turn, a new person per request.
function forms_load(path)
   local cookies, bodies = {}, {}
   for text in io.lines(path) do
      local cookie, body = text:match("^([^\t]*)\t(.*)$")
      table.insert(cookies, cookie)
      table.insert(bodies, body)
   end
   if #bodies == 0 then
      error("no forms in " .. path)
   end
   local headers, count, i = { ["Content-Type"] = "application/x-www-form-urlencoded" }, #bodies, 0
   request = function()
      i = i % count + 1
      headers["Cookie"] = cookies[i]
      return wrk.format("POST", nil, headers, bodies[i])
   end
end

function response(status, headers, body)
   if status ~= expected then
      bad = bad + 1
      if not seen:find(" " .. status .. " ", 1, true) then
         seen = seen .. status .. " "
      end
   end
end

function done(summary, latency, requests)
   local total_bad, statuses = 0, {}
   for _, thread in ipairs(threads) do
      total_bad = total_bad + thread:get("bad")
      for status in thread:get("seen"):gmatch("%d+") do
         statuses[status] = true
      end
   end
   local codes = {}
   for status in pairs(statuses) do
      table.insert(codes, status)
   end
   table.sort(codes)
   local e = summary.errors
   io.write(string.format(
      "wrk-result requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d bad=%d " ..
      "connect=%d read=%d write=%d timeout=%d statuses=%s\n",
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
      total_bad, e.connect, e.read, e.write, e.timeout, #codes > 0 and table.concat(codes, ",") or "-"))
end
