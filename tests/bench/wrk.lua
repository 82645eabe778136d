-- wrk script for make bench (tests/bench/web.py): one client per wrk thread, every answer checked.
--
--   wrk -t N -c N ... -s wrk.lua URL -- EXPECTED_STATUS [CLIENTS_FILE]
--
-- Without CLIENTS_FILE every connection sends the same GET. With it, thread n (one connection
-- each, -t equal to -c) sends the POST of line n: "<Cookie header value>\t<urlencoded form body>",
-- so every connection is its own person with its own session. A response whose status is not
-- EXPECTED_STATUS counts as bad; done() prints one "wrk-result" line for web.py to read.

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
   if clients then
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
